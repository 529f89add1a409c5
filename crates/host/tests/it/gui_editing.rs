//! The editors' API through the router: the list of editable files, a file read with its
//! problems, a path outside the list refused (404, traversal included), `checkFile` with its
//! server time, `saveFile` saving a good text and refusing a broken one (422, nothing
//! written), the assistant through `assist`, and `/api/stats` with the assistant apart.

use axum::http::StatusCode;
use fuseforks_core::llm::Wire;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use serde_json::json;

use crate::gui::Fx;

const U: ScriptUsage = ScriptUsage {
    prompt: 300,
    completion: 30,
    cache_read: 0,
    reasoning: 0,
};

#[tokio::test]
async fn files_are_listed_read_checked_saved_and_refused_outside_the_list() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new_with(&stub, |w| {
        w.judges.push(
            serde_json::from_value(
                json!({"id": "gate", "name": "Gate", "order": 0, "enabled": false}),
            )
            .unwrap(),
        );
    })
    .await;
    let (status, list) = fx.read("/api/files").await;
    assert_eq!(status, StatusCode::OK);
    let paths: Vec<&str> = list["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"agents/rec/SKILL.md") && paths.contains(&"judges/gate/judge.toml"),
        "{paths:?}"
    );
    for bad in [
        "/api/files/sessions.redb",
        "/api/files/agents/../world.json",
        "/api/files/agents/zz/SKILL.md",
    ] {
        let (status, body) = fx.read(bad).await;
        assert_eq!(
            (status, Fx::code(&body)),
            (StatusCode::NOT_FOUND, "FILE_NOT_EDITABLE"),
            "{bad}"
        );
    }
    let (status, body) = fx.command(json!({"type": "checkFile", "path": "judges/gate/judge.toml", "text": "[questions.k]\ntype = 7\n"})).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body["findings"][0]["line"].as_u64().unwrap() >= 1, "{body}");
    assert!(body["checkMicros"].is_u64());
    let (status, body) = fx.command(json!({"type": "saveFile", "path": "judges/gate/judge.toml", "text": "[questions.k]\ntype = 7\n"})).await;
    assert_eq!(
        (status, Fx::code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "FILE_INVALID"),
        "{body}"
    );
    assert!(
        !fx.data.workspace().join("judges/gate/judge.toml").exists(),
        "nothing written"
    );
    let (status, _) = fx
        .command(
            json!({"type": "saveFile", "path": "agents/rec/SKILL.md", "text": "1. Be kind.\n"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, file) = fx.read("/api/files/agents/rec/SKILL.md").await;
    assert_eq!(file["text"], "1. Be kind.\n");
    let log = std::fs::read_to_string(fx.data.workspace().join("audit.jsonl")).unwrap_or_default();
    assert!(
        log.contains("file_save") && log.contains("agents/rec/SKILL.md"),
        "audited"
    );
}

#[tokio::test]
async fn the_assistant_drafts_through_a_command_and_stats_keep_it_apart() {
    let call = ScriptCall {
        id: "d1".into(),
        name: "submit_draft".into(),
        args: json!({"content": "Be kind.\n"}),
    };
    let stub = StubServer::start(vec![wire_replies::tool_calls(
        Wire::OpenAiCompat,
        &[call],
        U,
    )])
    .await;
    let fx = Fx::new(&stub).await;
    let id = fx
        .state
        .orchestrator
        .sessions()
        .unwrap()
        .create("t", 0)
        .unwrap();
    fx.state.orchestrator.continue_conversation(&id).unwrap();
    let request = json!({"target": {"kind": "construct", "id": "rec"}, "templateId": "stub", "history": [], "input": null, "forceDraft": true, "current": ""});
    let (status, body) = fx
        .command(json!({"type": "assist", "request": request}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let reply = &body["reply"];
    assert_eq!(
        (reply["type"].as_str(), reply["content"].as_str()),
        (Some("draft"), Some("Be kind.\n"))
    );
    assert_eq!(reply["usage"]["prompt"], 300);
    let (_, file) = fx.read("/api/files/agents/rec/Construct.md").await;
    assert_ne!(file["text"], "Be kind.\n", "never saved by itself");
    // A kind that does not exist, or a field of the wrong type, is the core's refusal code,
    // and the text sent never comes back in it.
    let mut wrong = request.clone();
    wrong["target"]["kind"] = json!("poem");
    wrong["history"] = json!("secret-draft-text-41");
    let (status, body) = fx
        .command(json!({"type": "assist", "request": wrong}))
        .await;
    assert_eq!(
        (status, Fx::code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "INVALID_ASSIST_REQUEST"),
        "{body}"
    );
    wrong["target"]["kind"] = json!("skill");
    let (_, body) = fx
        .command(json!({"type": "assist", "request": wrong}))
        .await;
    assert_eq!(Fx::code(&body), "INVALID_ASSIST_REQUEST", "{body}");
    assert!(!body.to_string().contains("secret-draft-text-41"), "{body}");
    let (status, stats) = fx.read("/api/stats").await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["assist"]["rows"][0]["turns"], 1, "{stats}");
    assert_eq!(stats["assist"]["total"]["turns"], 1, "{stats}");
    assert_eq!(stats["totals"]["turns"], 0);
    let (status, body) = fx.read("/api/stats?period=2026-13").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = fx.read("/api/stats?period=2026-11&closing=15").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = fx.read("/api/stats?period=2026-11&closing=40").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn an_mcp_secret_is_write_only_and_only_for_a_referenced_name() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    let mcp = r#"{"mcpServers": {"gh": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${secret:GH_TOKEN}"}}}}"#;
    let (status, body) = fx
        .command(json!({"type": "saveFile", "path": "mcp.json", "text": mcp}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, file) = fx.read("/api/files/mcp.json").await;
    assert_eq!(
        file["secrets"],
        json!([{"name": "GH_TOKEN", "hasValue": false}])
    );
    // A referenced name reaches the store; this fixture's store is the read-only environment,
    // whose refusal says so (the value itself never comes back either way).
    let (status, body) = fx
        .command(json!({"type": "setMcpSecret", "name": "GH_TOKEN", "value": "ghp-canary-91"}))
        .await;
    assert_eq!(
        (status, Fx::code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "SECRET_STORE_READ_ONLY"),
        "{body}"
    );
    assert!(!body.to_string().contains("ghp-canary-91"));
    let (status, body) = fx
        .command(json!({"type": "setMcpSecret", "name": "OTHER", "value": "x"}))
        .await;
    assert_eq!(
        (status, Fx::code(&body)),
        (StatusCode::NOT_FOUND, "SECRET_NOT_REFERENCED")
    );
}

#[tokio::test]
async fn cast_edits_go_through_one_command_and_a_running_servant_is_not_deleted() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    let ok = |a: &(StatusCode, serde_json::Value)| assert_eq!(a.0, StatusCode::OK, "{}", a.1);
    ok(&fx.command(json!({"type": "cast", "edit": {"op": "create", "agentId": "c3", "name": "Cy", "roleId": null}})).await);
    ok(&fx.command(json!({"type": "cast", "edit": {"op": "connect", "from": "rec", "to": "c3", "connected": true}})).await);
    ok(&fx.command(json!({"type": "cast", "edit": {"op": "settings", "agentId": "c3", "settings": {"maxToolIterations": 9}}})).await);
    let (_, cast) = fx.read("/api/cast").await;
    let c3 = cast["servants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "c3")
        .unwrap()
        .clone();
    assert_eq!(c3["maxToolIterations"], 9);
    let bad = fx.command(json!({"type": "cast", "edit": {"op": "create", "agentId": "c3", "name": "Again", "roleId": null}})).await;
    assert_eq!(
        (bad.0, Fx::code(&bad.1)),
        (StatusCode::UNPROCESSABLE_ENTITY, "INVALID_CAST_CHANGE")
    );
    ok(&fx
        .command(json!({"type": "startAgent", "agentId": "c3"}))
        .await);
    let running = fx
        .command(json!({"type": "cast", "edit": {"op": "delete", "agentId": "c3"}}))
        .await;
    assert_eq!(
        (running.0, Fx::code(&running.1)),
        (StatusCode::CONFLICT, "AGENT_RUNNING")
    );
    ok(&fx
        .command(json!({"type": "stopAgent", "agentId": "c3"}))
        .await);
    ok(&fx
        .command(json!({"type": "cast", "edit": {"op": "delete", "agentId": "c3"}}))
        .await);
    let (_, village) = fx.read("/api/village").await;
    assert!(
        village["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["id"] != "c3")
    );
}

#[tokio::test]
async fn world_json_is_edited_as_text_and_put_in_effect() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    let (_, file) = fx.read("/api/files/world.json").await;
    let mut world: serde_json::Value =
        serde_json::from_str(file["text"].as_str().unwrap()).unwrap();
    world["modelTemplates"][0]["model"] = json!("stub-model-2");
    world["modelTemplates"][0]["futureField"] = json!("kept");
    let (status, body) = fx
        .command(json!({"type": "saveFile", "path": "world.json", "text": world.to_string()}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        fx.state.orchestrator.world().model_templates[0].model,
        "stub-model-2",
        "in effect"
    );
    let on_disk = std::fs::read_to_string(fx.data.workspace().join("world.json")).unwrap();
    assert!(on_disk.contains("futureField"), "unknown fields kept");
    // The answer is the file as written (the editor shows it) with the hash a next save names.
    assert_eq!(body["text"].as_str(), Some(on_disk.as_str()));
    let (_, reread) = fx.read("/api/files/world.json").await;
    assert_eq!(body["hash"], reread["hash"]);
    world["agents"][0]["modelTemplateId"] = json!("nope");
    let (status, body) = fx
        .command(json!({"type": "saveFile", "path": "world.json", "text": world.to_string()}))
        .await;
    assert_eq!(
        (status, Fx::code(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, "FILE_INVALID"),
        "{body}"
    );
    assert_eq!(
        fx.state.orchestrator.world().agents[0]
            .model_template_id
            .as_str(),
        "stub",
        "nothing changed"
    );
}

#[tokio::test]
async fn plain_mcp_values_never_reach_the_page_and_a_stale_save_is_refused() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    let disk =
        r#"{"mcpServers": {"tool": {"command": "echo", "env": {"TOKEN": "plain-canary-55"}}}}"#;
    std::fs::write(fx.data.workspace().join("mcp.json"), disk).unwrap();
    let (_, file) = fx.read("/api/files/mcp.json").await;
    assert!(
        !file.to_string().contains("plain-canary-55"),
        "masked: {file}"
    );
    let masked = file["text"].as_str().unwrap().to_owned();
    let hash = file["hash"].as_str().unwrap().to_owned();
    // Saved from the masked text: the value on disk is kept, the edit lands.
    let edited = masked.replace("\"echo\"", "\"cat\"");
    let (status, body) = fx
        .command(json!({"type": "saveFile", "path": "mcp.json", "text": edited, "baseHash": hash}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let now = std::fs::read_to_string(fx.data.workspace().join("mcp.json")).unwrap();
    assert!(
        now.contains("plain-canary-55") && now.contains("\"cat\""),
        "{now}"
    );
    // The old hash is stale now: a second tab's save is refused and nothing is written.
    let (status, body) = fx
        .command(json!({"type": "saveFile", "path": "mcp.json", "text": masked, "baseHash": hash}))
        .await;
    assert_eq!(
        (status, Fx::code(&body)),
        (StatusCode::CONFLICT, "FILE_CHANGED"),
        "{body}"
    );
    assert_eq!(
        std::fs::read_to_string(fx.data.workspace().join("mcp.json")).unwrap(),
        now
    );
}
