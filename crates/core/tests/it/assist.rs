//! The drafting assistant against the stub on each wire family: a question, then a draft
//! through `submit_draft` with the history sent back as the replies appended it; a forced draft
//! (tool forced, or auto plus the fixed line where the wire cannot force); a judge draft the
//! parser refuses, then accepts (attempts 2, the finding's place fed back); no budget, no turn,
//! and `assist` records without any text; malformed requests refused before any call.

use fuseforks_core::Coded;
use fuseforks_core::assist::{AssistReply, AssistRequest, AssistTarget, DraftKind};
use fuseforks_core::llm::Wire;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::sessions::{Record, StoredRecord};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::orch_support::Village;

pub(crate) const U: ScriptUsage = ScriptUsage {
    prompt: 700,
    completion: 60,
    cache_read: 0,
    reasoning: 0,
};
const CANARY: &str = "canary-ask-3e1";

pub(crate) fn submit(content: &str) -> ScriptCall {
    ScriptCall {
        id: "d1".into(),
        name: "submit_draft".into(),
        args: json!({"content": content, "notes": "assumed a friendly tone"}),
    }
}

pub(crate) fn request(kind: DraftKind, id: &str, input: Option<&str>) -> AssistRequest {
    AssistRequest {
        target: AssistTarget {
            kind,
            id: id.into(),
        },
        template_id: "stub".into(),
        history: Vec::new(),
        input: input.map(str::to_owned),
        force_draft: false,
        current: String::new(),
    }
}

/// A judge `gate`, switched on, in the village's world.
pub(crate) fn with_gate(v: &Village) {
    v.data.edit_world(|w| {
        w.judges
            .push(fuseforks_testkit::judge_spec("gate", "Gate", true));
    });
}

/// The orchestrator with a conversation open (the assist records go there).
pub(crate) fn open(v: &Village) -> Orchestrator {
    let orch = v.open();
    let id = orch.sessions().unwrap().create("t", 0).unwrap();
    orch.continue_conversation(&id).unwrap();
    orch
}

pub(crate) fn records(orch: &Orchestrator) -> Vec<Record> {
    let session = orch.current_session().unwrap();
    orch.sessions()
        .unwrap()
        .records(&session)
        .unwrap()
        .into_iter()
        .filter_map(|(_, r)| match r {
            StoredRecord::Known(r) => Some(r),
            StoredRecord::Unknown { .. } => None,
        })
        .collect()
}

pub(crate) async fn ask(orch: &Orchestrator, req: &AssistRequest) -> AssistReply {
    orch.assist_draft(req, CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", e.code()))
        .reply
}

#[tokio::test]
async fn a_question_then_a_draft_on_every_wire_family() {
    for wire in [
        Wire::OpenAiCompat,
        Wire::Anthropic,
        Wire::Gemini,
        Wire::OpenAiResponses,
        Wire::OllamaNative,
    ] {
        let stub = StubServer::start(vec![
            wire_replies::text(wire, "Which tone should Ada take?", U),
            wire_replies::tool_calls(wire, &[submit("# Steps\n1. Read the notes.\n")], U),
        ])
        .await;
        let v = Village::new(wire, stub.base_url(), Some(1_000));
        let orch = open(&v);
        let mut events = orch.events();
        let mut req = request(
            DraftKind::Skill,
            "a1",
            Some(&format!("Write her skill {CANARY}")),
        );
        let AssistReply::Question { appended, text } = ask(&orch, &req).await else {
            panic!("{wire:?}: a question first")
        };
        assert_eq!(text, "Which tone should Ada take?");
        assert_eq!(
            appended.len(),
            2,
            "{wire:?}: the user's message and the answer"
        );
        req.history = appended;
        req.input = Some("Friendly.".into());
        let reply = ask(&orch, &req).await;
        let AssistReply::Draft {
            appended,
            content,
            notes,
            validation,
            attempts,
            draft_chars,
            ..
        } = reply
        else {
            panic!("{wire:?}: then a draft, got {reply:?}")
        };
        assert_eq!(content, "# Steps\n1. Read the notes.\n");
        assert_eq!(notes.as_deref(), Some("assumed a friendly tone"));
        assert_eq!((validation, attempts, draft_chars), (None, 1, 27));
        assert_eq!(appended.len(), 3, "{wire:?}: user, the call, its result");

        let sent = stub.requests();
        let second = String::from_utf8_lossy(&sent[1].raw_body).into_owned();
        assert!(
            second.contains("Which tone should Ada take?"),
            "{wire:?}: the history went back"
        );
        assert!(
            second.contains("submit_draft"),
            "{wire:?}: the tool is offered"
        );
        assert!(
            second.contains("Village facts"),
            "{wire:?}: the facts section"
        );
        assert!(
            !second.contains("Check the notes first"),
            "not the file drafted"
        );
        assert!(
            second.contains("You keep notes"),
            "{wire:?}: the saved Construct.md"
        );

        // Nothing charged: no causal root ran (the budget of 1,000 would not have held the
        // 1,520 tokens of the two calls), and no agent's running totals moved.
        assert!(orch.running_roots().is_empty(), "{wire:?}");
        while let Ok(event) = events.try_recv() {
            assert!(
                !matches!(
                    event,
                    fuseforks_core::events::CoreEvent::AgentStatsUpdated { .. }
                ),
                "{wire:?}: {event:?}"
            );
        }
        // Two calls, two records, no turn and no intent: nothing charged.
        let all = records(&orch);
        let assists: Vec<_> = all
            .iter()
            .filter(|r| matches!(r, Record::Assist(_)))
            .collect();
        assert_eq!(assists.len(), 2, "{wire:?}: {all:?}");
        assert!(
            all.iter().all(|r| matches!(r, Record::Assist(_))),
            "{wire:?}: {all:?}"
        );
        let Record::Assist(first) = assists[0] else {
            unreachable!()
        };
        assert_eq!(
            (
                first.draft_kind.as_str(),
                first.outcome.as_str(),
                first.prompt
            ),
            ("skill", "question", 700)
        );
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        assert!(
            (now_ms - 60_000..=now_ms).contains(&first.ts_ms),
            "{}",
            first.ts_ms
        );
        let report = fuseforks_core::stats::aggregate(
            orch.sessions().unwrap(),
            &orch.world(),
            fuseforks_core::stats::Period::All,
            &fuseforks_core::stats::TimeZone::UTC,
        )
        .unwrap();
        assert_eq!(
            (report.assist.rows.len(), report.totals.turns),
            (1, 0),
            "{wire:?}: apart"
        );
        assert_eq!(
            (
                report.assist.rows[0].calls,
                report.assist.rows[0].usage.prompt
            ),
            (2, 1_400)
        );
        assert_eq!(report.assist.total.calls, 2, "{wire:?}: the total");
        let json = serde_json::to_string(&all).unwrap();
        for body in [CANARY, "Which tone", "Read the notes", "friendly tone"] {
            assert!(
                !json.contains(body),
                "{wire:?}: no text in the records ({body})"
            );
        }
        let log = v.log();
        assert!(log.contains("assist: kind=skill model=stub-model attempt=1 forced=no outcome=question prompt=700"), "{log}");
        assert!(log.contains("outcome=draft prompt=700"), "{log}");
        assert!(
            !log.contains(CANARY) && !log.contains("Read the notes"),
            "no text in the log"
        );
    }
}

#[tokio::test]
async fn a_forced_draft_forces_the_tool_or_falls_back_with_the_fixed_line() {
    for (wire, thinking, forced) in [
        (Wire::OpenAiCompat, false, "yes"),
        // Anthropic never gets a forced tool, thinking or not (docs/decisions/0010-assist.md).
        (Wire::Anthropic, false, "fallback"),
        (Wire::Anthropic, true, "fallback"),
        (Wire::MetaResponses, false, "fallback"),
    ] {
        let stub = StubServer::start(vec![wire_replies::tool_calls(
            wire,
            &[submit("You are calm.\n")],
            U,
        )])
        .await;
        let v = Village::new(wire, stub.base_url(), None);
        v.data.edit_world(|w| {
            let t = &mut w.model_templates[0];
            // Provider skills on the template are never sent with an assist call.
            (t.google_search, t.xai_web_search, t.openai_web_search) = (true, true, true);
            (t.meta_web_search, t.perplexity_web_search) = (true, true);
            if thinking {
                t.effort = Some(fuseforks_core::village::Effort::High);
                t.max_output_tokens = 4_096;
            }
        });
        let orch = open(&v);
        let mut req = request(DraftKind::Construct, "a1", None);
        req.force_draft = true;
        let reply = ask(&orch, &req).await;
        assert_eq!(reply.kind(), "draft", "{wire:?}");
        let body = &stub.requests()[0].body;
        let text = body.to_string();
        assert!(
            text.contains("Write the draft now"),
            "{wire:?}: the fixed line"
        );
        let choice = body["tool_choice"].to_string();
        match forced {
            "yes" => assert!(choice.contains("submit_draft"), "{wire:?}: {choice}"),
            _ => assert!(!choice.contains("submit_draft"), "{wire:?}: {choice}"),
        }
        for skill in ["web_search", "google_search", "search_parameters"] {
            assert!(
                !text.contains(skill),
                "{wire:?}: a provider skill sent: {skill}"
            );
        }
        if wire == Wire::Anthropic {
            // The cache breakpoint ends the guidance and the facts; the editor text follows.
            let system = body["system"].as_array().expect("system blocks");
            assert!(system[0]["cache_control"].is_object(), "{body}");
            let stable = system[0]["text"].as_str().unwrap();
            assert!(stable.contains("Village facts") && !stable.contains("What the user wrote"));
            assert!(
                system[1]["text"]
                    .as_str()
                    .unwrap()
                    .starts_with("## What the user wrote")
            );
        }
        assert!(
            v.log().contains(&format!("forced={forced} outcome=draft")),
            "{}",
            v.log()
        );
    }
}

#[tokio::test]
async fn a_judge_draft_is_checked_corrected_and_accepted_in_two_rounds() {
    let wire = Wire::OpenAiCompat;
    let good = fuseforks_core::judge::starter_template("a1", fuseforks_core::village::Language::En);
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(wire, &[submit("[questions.x]\nkind = 7\n")], U),
        wire_replies::tool_calls(wire, &[submit(&good)], U),
    ])
    .await;
    let v = Village::new(wire, stub.base_url(), None);
    with_gate(&v);
    let orch = open(&v);
    let reply = ask(
        &orch,
        &request(DraftKind::Judge, "gate", Some("route bugs to Ada")),
    )
    .await;
    let AssistReply::Draft {
        validation,
        attempts,
        content,
        appended,
        ..
    } = reply
    else {
        panic!("{reply:?}")
    };
    let last = serde_json::to_string(appended.last().unwrap()).unwrap();
    assert!(last.contains("The draft was shown to the user"), "{last}");
    assert_eq!(attempts, 2);
    assert_eq!(content, good);
    assert!(validation.unwrap().valid);
    let second = String::from_utf8_lossy(&stub.requests()[1].raw_body).into_owned();
    let at = second
        .find("failed the parser's check at ")
        .expect("the finding fed back");
    let place = &second[at + 29..at + 33];
    assert!(
        place.contains(':') && place.starts_with(|c: char| c.is_ascii_digit()),
        "{place}"
    );
    let log = v.log();
    assert!(
        log.contains("kind=judge model=stub-model attempt=1 forced=no outcome=invalid"),
        "{log}"
    );
    assert!(log.contains("attempt=2 forced=no outcome=draft"), "{log}");
}

#[tokio::test]
async fn a_judge_draft_that_never_passes_ends_after_three_rounds_with_the_last_error() {
    let wire = Wire::OpenAiCompat;
    let bad = |n: usize| {
        wire_replies::tool_calls(wire, &[submit(&format!("[questions.x{n}]\nkind = 7\n"))], U)
    };
    let stub = StubServer::start(vec![bad(1), bad(2), bad(3), bad(4)]).await;
    let v = Village::new(wire, stub.base_url(), None);
    with_gate(&v);
    let orch = open(&v);
    let reply = ask(&orch, &request(DraftKind::Judge, "gate", Some("x"))).await;
    let AssistReply::Draft {
        validation,
        attempts,
        content,
        appended,
        ..
    } = reply
    else {
        panic!("{reply:?}")
    };
    let last = serde_json::to_string(appended.last().unwrap()).unwrap();
    assert!(last.contains("No more check rounds"), "{last}");
    let validation = validation.unwrap();
    assert_eq!((attempts, validation.valid), (3, false));
    assert!(validation.location.unwrap().contains(':'));
    assert!(
        validation.message.unwrap().contains("type"),
        "the parser's words"
    );
    assert!(content.contains("x3"), "the last draft");
    assert_eq!(stub.requests().len(), 3, "no fourth round");
    assert!(
        v.log()
            .contains("attempt=3 forced=no outcome=draft_invalid")
    );
}

/// The tool result that closes a draft (shown; or no more rounds), a call of another name
/// never taken for a draft, the judge's example only in a judge prompt, the limits exact, and
/// a failure after a refused draft still giving that draft (its round counted).
#[tokio::test]
async fn the_edges_of_an_exchange() {
    let wire = Wire::OpenAiCompat;
    let other = ScriptCall {
        id: "o1".into(),
        name: "web_search".into(),
        args: json!({"content": "not a draft"}),
    };
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(wire, &[submit("Be brief.\n")], U),
        wire_replies::tool_calls(wire, &[other], U),
        wire_replies::text(wire, "ok", U),
        wire_replies::tool_calls(wire, &[submit("[questions.x]\nkind = 7\n")], U),
        wire_replies::error(wire, 400, "bad request", None),
    ])
    .await;
    let v = Village::new(wire, stub.base_url(), None);
    with_gate(&v);
    let orch = open(&v);
    let tool_text = |m: &fuseforks_core::llm::ChatMessage| serde_json::to_string(m).unwrap();
    // A good draft is answered "shown to the user"; the skill prompt has no judge example.
    let AssistReply::Draft { appended, .. } =
        ask(&orch, &request(DraftKind::Skill, "a1", Some("x"))).await
    else {
        panic!("a draft")
    };
    assert!(tool_text(appended.last().unwrap()).contains("The draft was shown to the user"));
    assert!(!stub.requests()[0].body.to_string().contains("servant-id"));
    // A call of another name with a `content` is answered as ignored, never a draft: with no
    // text beside it, the answer is empty.
    let e = orch
        .assist_draft(
            &request(DraftKind::Skill, "a1", Some("x")),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), "ASSIST_EMPTY", "{e}");
    // The limits are exact: at the limit accepted, one over refused before any call.
    let mut req = request(
        DraftKind::Skill,
        "a1",
        Some(&"i".repeat(fuseforks_core::assist::MAX_INPUT_CHARS)),
    );
    req.current = "c".repeat(fuseforks_core::assist::MAX_CURRENT_CHARS);
    ask(&orch, &req).await;
    let sent = stub.requests().len();
    req.current.push('c');
    let e = orch
        .assist_draft(&req, CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "INVALID_ASSIST_REQUEST");
    req.current.pop();
    req.input = Some("i".repeat(fuseforks_core::assist::MAX_INPUT_CHARS + 1));
    let e = orch
        .assist_draft(&req, CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "INVALID_ASSIST_REQUEST");
    assert_eq!(stub.requests().len(), sent, "refused before any call");
    // A judge prompt carries the example; a failure after a refused draft gives that draft.
    let AssistReply::Draft {
        attempts,
        validation,
        ..
    } = ask(&orch, &request(DraftKind::Judge, "gate", Some("x"))).await
    else {
        panic!("the refused draft")
    };
    assert_eq!((attempts, validation.map(|v| v.valid)), (1, Some(false)));
    assert!(stub.requests()[3].body.to_string().contains("servant-id"));
}

#[tokio::test]
async fn malformed_requests_are_refused_before_any_call() {
    let stub = StubServer::start(Vec::new()).await;
    let v = Village::new(Wire::OpenAiCompat, stub.base_url(), None);
    let orch = open(&v);
    let refused = |req: AssistRequest| {
        let orch = orch.clone();
        async move {
            orch.assist_draft(&req, CancellationToken::new())
                .await
                .unwrap_err()
        }
    };
    let e = refused(request(DraftKind::Skill, "nobody", Some("x"))).await;
    assert_eq!(
        (e.code(), e.to_string().starts_with("target.id")),
        ("INVALID_ASSIST_REQUEST", true),
        "{e}"
    );
    let e = refused(request(DraftKind::Judge, "a1", Some("x"))).await;
    assert_eq!(
        e.code(),
        "INVALID_ASSIST_REQUEST",
        "an agent is not a judge: {e}"
    );
    let mut big = request(DraftKind::Skill, "a1", Some("x"));
    big.current = "a".repeat(100_001);
    let e = refused(big).await;
    assert!(e.to_string().contains("100000"), "the limit is named: {e}");
    let e = refused(request(DraftKind::Skill, "a1", None)).await;
    assert_eq!(e.code(), "INVALID_ASSIST_REQUEST");
    let mut bad_history = request(DraftKind::Skill, "a1", Some("x"));
    bad_history.history = vec![
        serde_json::from_value::<fuseforks_core::llm::ChatMessage>(
            json!({"role": "system", "content": [{"type": "text", "text": "obey"}]}),
        )
        .unwrap(),
    ];
    assert_eq!(refused(bad_history).await.code(), "INVALID_ASSIST_REQUEST");
    let mut other = request(DraftKind::Skill, "a1", Some("x"));
    other.template_id = "nope".into();
    assert_eq!(refused(other).await.code(), "INVALID_ASSIST_REQUEST");
    drop(orch);
    v.data
        .edit_world(|w| w.model_templates[0].use_tools = false);
    let orch2 = v.open();
    let e = orch2
        .assist_draft(
            &request(DraftKind::Skill, "a1", Some("x")),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("useTools"), "{e}");
    assert!(stub.requests().is_empty(), "nothing was sent");
    let _: Value = json!(null);
}

#[tokio::test]
async fn a_missing_key_is_secret_missing_and_nothing_is_sent() {
    let stub = StubServer::start(Vec::new()).await;
    let v = Village::new(Wire::OpenAiCompat, stub.base_url(), None);
    v.data.edit_world(|w| {
        w.model_templates[0].id = fuseforks_core::village::TemplateId::new("keyless").unwrap();
        for a in &mut w.agents {
            a.model_template_id = fuseforks_core::village::TemplateId::new("keyless").unwrap();
        }
    });
    let orch = v.open();
    let mut req = request(DraftKind::Skill, "a1", Some("x"));
    req.template_id = "keyless".into();
    let e = orch
        .assist_draft(&req, CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(e.code(), "SECRET_MISSING", "{e}");
    assert!(stub.requests().is_empty());
}

/// A running agent's connected MCP servers come with their tools' names; a
/// stopped agent's servers by name only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_agents_mcp_servers_are_named_with_their_tools() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![wire_replies::text(wire, "Which tone?", U); 6]).await;
    let v = Village::new(wire, stub.base_url(), None);
    let script = fuseforks_testkit::mcp_script("child_stdio.py");
    let config =
        serde_json::json!({"mcpServers": {"kid": {"command": "python3", "args": [script]}}});
    v.store()
        .agent_files(&fuseforks_core::village::AgentId::new("a1").unwrap())
        .unwrap()
        .save_mcp(&serde_json::from_value(config).unwrap())
        .unwrap();
    let orch = open(&v);
    let system = |i: usize| stub.requests()[i].body["messages"][0]["content"].to_string();
    ask(&orch, &request(DraftKind::Skill, "a1", Some("hi"))).await;
    assert!(
        system(0).contains("kid") && !system(0).contains("noop"),
        "{}",
        system(0)
    );
    orch.start_agent("a1").unwrap();
    let connected = || v.log().contains("server=kid outcome=connected");
    fuseforks_testkit::eventually("the kid's connect", fuseforks_testkit::DEADLINE, connected)
        .await;
    // The tools are noted right after the connect's log line: ask until they are there.
    let mut asked = 0;
    fuseforks_testkit::eventually_async(
        "the kid's tools in the prompt",
        fuseforks_testkit::DEADLINE,
        async || {
            asked += 1;
            stub.push([wire_replies::text(wire, "Which tone?", U)]);
            ask(&orch, &request(DraftKind::Skill, "a1", Some("hi"))).await;
            system(asked).contains("kid (noop)")
        },
    )
    .await;
    orch.stop_agent("a1", std::time::Duration::from_secs(10))
        .await;
}
