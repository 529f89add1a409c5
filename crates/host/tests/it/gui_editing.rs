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
        "/api/files/world.json",
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
    let (status, stats) = fx.read("/api/stats").await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["assist"][0]["calls"], 1);
    assert_eq!(stats["totals"]["turns"], 0);
    let (status, body) = fx.read("/api/stats?period=2026-13").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}
