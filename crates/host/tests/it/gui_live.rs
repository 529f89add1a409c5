//! The GUI's live side through the router: an interrupt ending a slow turn at its round
//! boundary, the connection map and its saved positions, a tool call's details from memory,
//! the running budgets, concurrent saves that never tear `world.json`, and the pages' files
//! (ja/en key parity, Japanese words for every documented code, the village page's weight).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use fuseforks_core::llm::Wire;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::text;
use serde_json::{Value, json};

use crate::gui::{Fx, U, until};

/// `interrupt` ends a turn at its next round boundary (the call in flight is paid, so it is
/// let finish and recorded): a model answering a tool call slowly gets no further round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_ends_a_slow_turn_at_its_next_round() {
    let call = fuseforks_testkit::wire_replies::ScriptCall {
        id: "c1".into(),
        name: "room_log".into(),
        args: json!({}),
    };
    let slow = fuseforks_testkit::wire_replies::tool_calls(Wire::OpenAiCompat, &[call], U)
        .after(Duration::from_millis(800));
    let stub = StubServer::start(vec![slow, text(Wire::OpenAiCompat, "Too slow.", U)]).await;
    let fx = Fx::new(&stub).await;
    let mut events = fx.state.orchestrator.events();
    fx.command(json!({"type": "startAgent", "agentId": "rec"}))
        .await;
    fx.command(json!({"type": "sendMessage", "agentId": "rec", "text": "Take your time"}))
        .await;
    until("the model call", async || stub.requests().len() == 1).await;
    assert_eq!(
        fx.command(json!({"type": "interrupt", "agentId": "rec"}))
            .await
            .0,
        StatusCode::OK
    );
    loop {
        let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .expect("no turnInterrupted")
            .unwrap();
        if matches!(
            event,
            fuseforks_core::events::CoreEvent::TurnInterrupted { .. }
        ) {
            break;
        }
    }
    assert_eq!(stub.requests().len(), 1, "no round after the interrupt");
}

/// The pages' dictionaries have the same keys in both languages, and every text is non-empty
/// (ja/en parity); the first load's and the later pages' share no key.
#[test]
fn the_two_languages_have_the_same_keys() {
    let dictionary = |path: &str| -> serde_json::Map<String, Value> {
        let (_, _, bytes) = fuseforks_host::gui::ASSETS
            .iter()
            .find(|(p, _, _)| *p == path)
            .unwrap();
        serde_json::from_slice(bytes).unwrap()
    };
    let keys = |d: &serde_json::Map<String, Value>| {
        d.keys().cloned().collect::<std::collections::BTreeSet<_>>()
    };
    // The first load's words, then the later pages' words (none in both).
    let mut seen = std::collections::BTreeSet::new();
    for part in ["", "pages-"] {
        let en = dictionary(&format!("/i18n/{part}en.json"));
        let ja = dictionary(&format!("/i18n/{part}ja.json"));
        assert_eq!(
            keys(&en),
            keys(&ja),
            "{part}en and {part}ja differ in their keys"
        );
        assert!(en.len() > 50, "{} keys", en.len());
        for (k, v) in en.iter().chain(ja.iter()) {
            assert!(
                v.as_str().is_some_and(|t| !t.trim().is_empty()),
                "{k} is empty"
            );
        }
        for k in keys(&en) {
            assert!(seen.insert(k.clone()), "{k} is in both dictionaries");
        }
    }
}

/// Every code the server can send has Japanese words (`gui/i18n/codes-ja.json`, loaded when the
/// page is in Japanese): its keys are exactly the codes of `docs/codes.md`'s table, whose
/// meaning and fix columns are the English side (the server's own words), each with a
/// non-empty message and, when given, a non-empty fix.
#[test]
fn every_documented_code_has_japanese_words() {
    let (_, _, bytes) = fuseforks_host::gui::ASSETS
        .iter()
        .find(|(p, _, _)| *p == "/i18n/codes-ja.json")
        .expect("gui/i18n/codes-ja.json is served");
    let ja: serde_json::Map<String, Value> = serde_json::from_slice(bytes).unwrap();
    let table = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/codes.md"),
    )
    .unwrap();
    let documented: std::collections::BTreeSet<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(code, _)| code.to_owned())
        .collect();
    assert!(documented.len() > 150, "{} codes", documented.len());
    let words: std::collections::BTreeSet<String> = ja.keys().cloned().collect();
    let missing: Vec<_> = documented.difference(&words).collect();
    let stale: Vec<_> = words.difference(&documented).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "codes-ja.json: no Japanese for {missing:?}; not in docs/codes.md: {stale:?}"
    );
    for (code, entry) in &ja {
        let text = |k: &str| entry.get(k).map(|v| v.as_str().unwrap_or(""));
        assert!(
            text("message").is_some_and(|m| !m.trim().is_empty()),
            "{code}: no message"
        );
        assert!(
            text("fix").is_none_or(|f| !f.trim().is_empty()),
            "{code}: an empty fix"
        );
        assert!(
            entry
                .as_object()
                .is_some_and(|o| o.keys().all(|k| k == "message" || k == "fix")),
            "{code}: only message and fix"
        );
    }
}

/// The modules a module imports statically (`… from '/x.js'`, `import '/x.js'`; an
/// `import('/x.js')` loads later).
fn static_imports(code: &str) -> Vec<String> {
    code.split("from '")
        .skip(1)
        .chain(code.split("import '").skip(1))
        .filter_map(|rest| rest.split_once('\'').map(|(path, _)| path.to_string()))
        .filter(|path| path.starts_with('/') && path.ends_with(".js"))
        .collect()
}

/// The village page stays small: the shell, the style, one dictionary, and the scripts it
/// loads at once (`app.js` and every module it imports statically, followed through).
#[test]
fn the_village_page_weighs_under_100_kb() {
    let asset = |path: &str| {
        fuseforks_host::gui::ASSETS
            .iter()
            .find(|(p, _, _)| *p == path)
            .map(|(_, _, b)| *b)
    };
    let mut first = vec![
        "/index.html".to_string(),
        "/style.css".into(),
        "/i18n/en.json".into(),
    ];
    let mut todo = vec!["/app.js".to_string()];
    while let Some(module) = todo.pop() {
        if first.contains(&module) {
            continue;
        }
        let bytes =
            asset(&module).unwrap_or_else(|| panic!("{module} is imported but not embedded"));
        todo.extend(static_imports(&String::from_utf8_lossy(bytes)));
        first.push(module);
    }
    assert!(first.len() > 5, "{first:?}");
    let total: usize = first.iter().map(|p| asset(p).map_or(0, <[u8]>::len)).sum();
    assert!(
        total > 10_000 && total <= 100 * 1024,
        "{total} bytes: {first:?}"
    );
}

/// The map (server-side layout, a moved node saved to `topologyPositions`), a tool call's
/// details from memory, and the running roots with their budgets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_map_the_tool_details_and_the_running_budgets() {
    let call = fuseforks_testkit::wire_replies::ScriptCall {
        id: "c7".into(),
        name: "room_log".into(),
        args: json!({}),
    };
    let stub = StubServer::start(vec![
        fuseforks_testkit::wire_replies::tool_calls(Wire::OpenAiCompat, &[call], U),
        text(Wire::OpenAiCompat, "Done.", U).after(Duration::from_millis(1500)),
    ])
    .await;
    let fx = Fx::new(&stub).await;
    let (_, village) = fx.read("/api/village").await;
    let nodes = village["map"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert!(
        nodes
            .iter()
            .all(|n| n["x"].is_number() && n["y"].is_number())
    );
    let moved = fx
        .command(json!({"type": "setPosition", "agentId": "rec", "x": 120.0, "y": 80.0}))
        .await;
    assert_eq!(moved.0, StatusCode::OK, "{moved:?}");
    let world: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.data.workspace().join("world.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        world["topologyPositions"]["rec"],
        json!({"x": 120.0, "y": 80.0})
    );
    let (_, village) = fx.read("/api/village").await;
    assert_eq!(
        (
            village["map"]["nodes"][0]["x"].as_f64(),
            village["map"]["nodes"][0]["y"].as_f64()
        ),
        (Some(120.0), Some(80.0))
    );
    assert_eq!(
        fx.command(json!({"type": "setPosition", "agentId": "zz", "x": 1.0, "y": 1.0}))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    fx.command(json!({"type": "setPosition", "agentId": "b2", "x": 5000.0, "y": -3.0}))
        .await;
    let world: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.data.workspace().join("world.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        world["topologyPositions"]["b2"],
        json!({"x": 800.0, "y": 0.0}),
        "kept inside the map"
    );
    assert_eq!(village["roots"], json!([]), "nothing running");
    fx.command(json!({"type": "startAgent", "agentId": "rec"}))
        .await;
    fx.command(json!({"type": "sendMessage", "agentId": "rec", "text": "go"}))
        .await;
    until("the second round", async || stub.requests().len() == 2).await;
    let (_, village) = fx.read("/api/village").await;
    let roots = village["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 1, "{village}");
    assert!(
        roots[0]["remaining"]
            .as_u64()
            .is_some_and(|r| r < 1_000_000),
        "{roots:?}"
    );
    let (status, detail) = fx.read("/api/tools/rec/c7").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (detail["tool"].as_str(), detail["args"].as_str()),
        (Some("room_log"), Some("{}"))
    );
    assert!(
        detail["result"].as_str().is_some_and(|r| !r.is_empty()),
        "{detail}"
    );
    assert_eq!(
        fx.read("/api/tools/rec/nope").await.0,
        StatusCode::NOT_FOUND
    );
    until("the end of the request", async || {
        fx.read("/api/village").await.1["roots"] == json!([])
    })
    .await;
}

/// Two tabs (here: 40 commands at once) changing `world.json` never tear it or lose a change:
/// each change is applied to the registry in effect and written whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_saves_never_corrupt_or_lose_a_change() {
    let stub = StubServer::start(vec![]).await;
    let fx = Arc::new(Fx::new(&stub).await);
    let mut tasks = Vec::new();
    for i in 0..40_u32 {
        let fx = Arc::clone(&fx);
        tasks.push(tokio::spawn(async move {
            let body = if i % 2 == 0 {
                json!({"type": "setPosition", "agentId": if i % 4 == 0 { "rec" } else { "b2" }, "x": f64::from(i), "y": 1.0})
            } else {
                json!({"type": "setVillageLimits", "tokenBudget": 1000 + i, "askTimeoutSecs": 60})
            };
            fx.command(body).await.0
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), StatusCode::OK);
    }
    let text = std::fs::read_to_string(fx.data.workspace().join("world.json")).unwrap();
    let world: Value = serde_json::from_str(&text).expect("world.json is whole");
    assert!(
        world["topologyPositions"]["rec"]["x"].is_number()
            && world["topologyPositions"]["b2"]["x"].is_number(),
        "{text}"
    );
    assert_eq!(world["askTimeoutSecs"], 60);
    let memory = fx.state.orchestrator.world();
    assert_eq!(
        memory.token_budget,
        world["tokenBudget"].as_u64(),
        "memory and file agree"
    );
    assert_eq!(memory.topology_positions.len(), 2);
}

/// A plan wave waiting for review: listed in the approvals, dispatched from the page with an
/// edited task (the servant gets the edited text), and a second one discarded (nothing sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposed_plan_is_edited_and_dispatched_or_discarded_from_the_page() {
    use fuseforks_testkit::wire_replies::{ScriptCall, tool_calls};
    let plan = |a: &str, b: &str| {
        let call = ScriptCall {
            id: "p1".into(),
            name: "plan".into(),
            args: json!({"tasks": [{"to": "b2", "message": a}, {"to": "c3", "message": b}]}),
        };
        tool_calls(Wire::OpenAiCompat, &[call], U)
    };
    let stub = StubServer::start(vec![
        plan("original", "also"),
        text(Wire::OpenAiCompat, "Waiting for review.", U),
        text(Wire::OpenAiCompat, "B did it.", U),
        text(Wire::OpenAiCompat, "Got the bundle.", U),
        plan("x", "y"),
        text(Wire::OpenAiCompat, "Waits again.", U),
    ])
    .await;
    let fx = Fx::new_with(&stub, |w| {
        let mut c3 = w.agents[1].clone();
        c3.id = fuseforks_core::village::AgentId::new("c3").unwrap();
        c3.name = "Cy".into();
        w.agents.push(c3);
        w.agents[0].plan_review = true;
        w.agents[0].connected_agents = ["b2", "c3"]
            .iter()
            .map(|i| fuseforks_core::village::AgentId::new(*i).unwrap())
            .collect();
    })
    .await;
    fx.command(json!({"type": "startBatch"})).await;
    for id in ["rec", "b2", "c3"] {
        fx.command(json!({"type": "startAgent", "agentId": id}))
            .await;
    }
    fx.command(json!({"type": "sendMessage", "agentId": "rec", "text": "plan it"}))
        .await;
    until("the proposal", async || {
        fx.read("/api/approvals").await.1["plans"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
    })
    .await;
    let (_, approvals) = fx.read("/api/approvals").await;
    let first = approvals["plans"][0].clone();
    assert_eq!(
        first["tasks"][0],
        json!({"to": "b2", "message": "original"})
    );
    assert_eq!(fx.read("/api/village").await.1["pendingCount"], 1);
    let plan_id = first["planId"].as_str().unwrap().to_owned();
    let dispatched = fx
        .command(json!({"type": "dispatchPlan", "planId": plan_id, "tasks": [{"to": "b2", "message": "edited"}]}))
        .await;
    assert_eq!(dispatched.0, StatusCode::OK, "{dispatched:?}");
    until("the bundle back", async || stub.requests().len() >= 4).await;
    assert!(
        stub.requests()
            .iter()
            .any(|r| r.body.to_string().contains("edited")),
        "the edited task was sent"
    );
    fx.command(json!({"type": "sendMessage", "agentId": "rec", "text": "again"}))
        .await;
    until("the second proposal", async || {
        fx.read("/api/approvals").await.1["plans"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
    })
    .await;
    let second = fx.read("/api/approvals").await.1["plans"][0]["planId"]
        .as_str()
        .unwrap()
        .to_owned();
    // The turn that proposed the wave makes one more call ("Waits again."): counted first, so
    // that only what the discard would send is measured.
    until("the proposing turn's answer", async || {
        stub.requests().len() >= 6
    })
    .await;
    let sent = stub.requests().len();
    assert_eq!(
        fx.command(json!({"type": "discardPlan", "planId": second}))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(fx.read("/api/approvals").await.1["plans"], json!([]));
    // A wave is sent only through its dispatch, which says so in the log before it sends
    // anything: the discard, done when its command answers, must not have.
    let log = std::fs::read_to_string(fx.data.workspace().join("fuseforks.log")).unwrap();
    assert!(
        log.contains(&format!("plan discard: plan={second}")),
        "{log}"
    );
    assert!(
        !log.contains(&format!("plan={second} tasks=")),
        "a discarded wave was dispatched: {log}"
    );
    assert_eq!(
        stub.requests().len(),
        sent,
        "a discarded wave sends nothing"
    );
}

/// The chat's Dry-run switch (a labelled checkbox on the page) sends `sendMessage` with
/// `dryRun: true`: the request is a dry-run (`Memory.md` unchanged) and each effect it would
/// have had comes as a `dryRunEffect` event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_dry_run_switch_makes_the_request_a_dry_run_with_its_effects_as_events() {
    let page = {
        let (_, _, bytes) = fuseforks_host::gui::ASSETS
            .iter()
            .find(|(p, _, _)| *p == "/index.html")
            .unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    };
    assert!(
        page.contains(r#"<label class="check"><input type="checkbox" id="chat-dry-run""#)
            && page.contains(r#"data-i18n="chat.dryRun">Dry-run</span></label>"#),
        "the switch is a checkbox named by its label"
    );
    let call = fuseforks_testkit::wire_replies::ScriptCall {
        id: "c1".into(),
        name: "remember".into(),
        args: json!({"note": "dry"}),
    };
    let stub = StubServer::start(vec![
        fuseforks_testkit::wire_replies::tool_calls(Wire::OpenAiCompat, &[call], U),
        text(Wire::OpenAiCompat, "Noted.", U),
    ])
    .await;
    let fx = Fx::new_with(&stub, |w| {
        w.agents[0].enabled_tools = Some(vec!["remember".into()]);
    })
    .await;
    let memory = fx.data.workspace().join("agents/rec/Memory.md");
    let before = std::fs::read(&memory).ok();
    let mut events = fx.state.orchestrator.events();
    fx.command(json!({"type": "startAgent", "agentId": "rec"}))
        .await;
    let (status, _) = fx
        .command(
            json!({"type": "sendMessage", "agentId": "rec", "text": "note it", "dryRun": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let mut effects = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .expect("no messageSent")
            .unwrap();
        match event {
            fuseforks_core::events::CoreEvent::DryRunEffect { agent_id, effect } => {
                effects.push((agent_id, effect));
            }
            fuseforks_core::events::CoreEvent::MessageSent { .. } => break,
            _ => {}
        }
    }
    assert_eq!(effects.len(), 1, "{effects:?}");
    assert_eq!(effects[0].0, "rec");
    assert_eq!(
        (effects[0].1.tool.as_str(), effects[0].1.target.as_str()),
        ("remember", "Memory.md")
    );
    assert_eq!(
        std::fs::read(&memory).ok(),
        before,
        "a dry-run wrote Memory.md"
    );
}
