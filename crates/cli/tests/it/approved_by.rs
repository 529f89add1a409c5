//! `approvedBy` on every audit line of an effect (docs/formats/audit.jsonl.md): a `run` that
//! `run.json` allows names the rule, a file write names nobody, and the chain still verifies.

use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::json;

use crate::headless::U;
use crate::safety::{ask, audit_lines, call, dir, working_village};
use crate::{cli, stderr};

const WIRE: fuseforks_core::llm::Wire = fuseforks_core::llm::Wire::OpenAiCompat;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_effect_line_names_who_approved_it_and_the_chain_verifies() {
    let calls = [
        call(
            "c1",
            "file",
            json!({"op": "write", "path": "new.md", "content": "x"}),
        ),
        call(
            "c2",
            "run",
            json!({"command": "sh", "args": ["-c", "true"]}),
        ),
    ];
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(WIRE, &calls, U),
        wire_replies::text(WIRE, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    let _work = working_village(&data, stub.base_url());
    let out = ask(&data, "").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = audit_lines(&data);
    let by = |action: &str| {
        lines
            .iter()
            .find(|l| l["action"] == action)
            .map(|l| l["approvedBy"].clone())
    };
    assert_eq!(by("file_write"), Some(json!("none")), "{lines:#?}");
    assert_eq!(by("run"), Some(json!("rule:run.json")), "{lines:#?}");
    assert!(
        lines.iter().all(|l| l["approvedBy"].is_string()),
        "every line carries it: {lines:#?}"
    );
    let verified = cli(&format!("audit verify --data-dir {}", dir(&data)));
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
}
