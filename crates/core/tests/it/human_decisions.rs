//! What a surface (the GUI) changes in a running village through the orchestrator: pending
//! `run` requests approved exactly, by pattern, or rejected (run.json written, the entry
//! dropped, audited), "approve and continue" resuming the agent, and `world.json` edits that
//! take effect only once written — a refused one changes neither the file nor the village.

use std::time::Duration;

use fuseforks_core::llm::Wire;
use fuseforks_core::orchestrator::PendingDecision;
use fuseforks_core::tools::RunApproval;
use fuseforks_core::village::AgentId;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use serde_json::json;

use crate::orch_support::Village;

const WIRE: Wire = Wire::OpenAiCompat;
const U: ScriptUsage = ScriptUsage {
    prompt: 100,
    completion: 5,
    cache_read: 0,
    reasoning: 0,
};

fn run_call(args: &[&str]) -> fuseforks_testkit::stub::StubReply {
    let call = ScriptCall {
        id: "c1".into(),
        name: "run".into(),
        args: json!({"command": "echo", "args": args}),
    };
    wire_replies::tool_calls(WIRE, &[call], U)
}

fn policy(v: &Village) -> serde_json::Value {
    let text = std::fs::read_to_string(v.data.workspace().join("agents/a1/run.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_requests_are_decided_and_approve_and_continue_resumes_the_agent() {
    let stub = StubServer::start(vec![
        run_call(&["one"]),
        wire_replies::text(WIRE, "waiting", U),
        run_call(&["two"]),
        wire_replies::text(WIRE, "waiting again", U),
        run_call(&["one"]),
        wire_replies::text(WIRE, "resumed and ran", U),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    v.data
        .edit_world(|w| w.agents[0].enabled_tools = Some(vec!["run".into()]));
    let orch = v.open();
    orch.set_run_approval(RunApproval::Required, fuseforks_core::safety::Channel::Api);
    orch.start_agent("a1").unwrap();
    orch.ask_external_outcome("t", "first").await;
    orch.ask_external_outcome("t", "second").await;
    assert_eq!(policy(&v)["pending"].as_array().unwrap().len(), 2);
    let one = ["one".to_owned()];
    let two = ["two".to_owned()];
    let err = orch
        .decide_pending(
            "a1",
            "echo",
            &["three".to_owned()],
            PendingDecision::ApproveExact,
            fuseforks_core::safety::Channel::Api,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "RUN_PENDING_NOT_FOUND");
    let left = orch
        .decide_pending(
            "a1",
            "echo",
            &two,
            PendingDecision::Reject,
            fuseforks_core::safety::Channel::Api,
        )
        .await
        .unwrap();
    assert_eq!(left, 1);
    let left = orch
        .decide_pending(
            "a1",
            "echo",
            &one,
            PendingDecision::ApproveExact,
            fuseforks_core::safety::Channel::Api,
        )
        .await
        .unwrap();
    assert_eq!(left, 0);
    let p = policy(&v);
    assert_eq!(p["allow"], json!(["echo one"]));
    assert_eq!(p["deny"], json!(["echo two"]));
    assert_eq!(p["pending"], json!([]));
    // Continue: the System message goes out, the agent runs the now-allowed command.
    orch.resume_after_approval("a1").await.unwrap();
    stub.wait_requests(6).await;
    let resumed = stub.requests()[4].body.to_string();
    assert!(
        resumed.contains("A human approved the command"),
        "{resumed}"
    );
    let log = v.log();
    assert!(
        log.contains("run decision: agent=a1 command=echo decision=rejected pending_left=1"),
        "{log}"
    );
    assert!(
        log.contains("resume after approval: agent=a1 pending_left=0"),
        "{log}"
    );
    orch.close(Duration::from_secs(1)).await;
    drop(orch);
    let audit = std::fs::read_to_string(v.data.workspace().join("audit.jsonl")).unwrap();
    for word in ["\"rejected\"", "\"approved_exact\""] {
        assert!(audit.contains(word), "{audit}");
    }
}

#[tokio::test]
async fn a_world_edit_takes_effect_once_written_and_a_refused_one_changes_nothing() {
    let stub = StubServer::start(vec![]).await;
    let v = Village::new(WIRE, stub.base_url(), Some(1_000));
    let orch = v.open();
    let before = std::fs::read(v.data.workspace().join("world.json")).unwrap();
    let refused = orch
        .update_world(|w| {
            w.token_budget = Some(0);
            Ok(())
        })
        .unwrap_err();
    assert_eq!(refused.code(), "INVALID_TOKEN_BUDGET");
    assert_eq!(
        std::fs::read(v.data.workspace().join("world.json")).unwrap(),
        before
    );
    assert_eq!(orch.world().token_budget, Some(1_000), "memory unchanged");
    orch.update_world(|w| {
        w.token_budget = Some(5_000);
        w.ask_timeout_secs = Some(120);
        Ok(())
    })
    .unwrap();
    assert_eq!(orch.world().token_budget, Some(5_000));
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(v.data.workspace().join("world.json")).unwrap())
            .unwrap();
    assert_eq!(
        (
            on_disk["tokenBudget"].as_u64(),
            on_disk["askTimeoutSecs"].as_u64()
        ),
        (Some(5_000), Some(120))
    );
    assert!(orch.world().agent(&AgentId::new("a1").unwrap()).is_some());
}

/// Edits from many threads at once (two tabs, a schedule's write) are applied one at a time:
/// none is lost, and the file and the registry in memory end equal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_world_edits_lose_nothing() {
    let stub = StubServer::start(vec![]).await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let orch = orch.clone();
            std::thread::spawn(move || {
                for i in 0..8 {
                    orch.update_world(|w| {
                        w.topology_positions
                            .insert(format!("n{t}-{i}"), Default::default());
                        Ok(())
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        orch.world().topology_positions.len(),
        48,
        "an edit was lost"
    );
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(v.data.workspace().join("world.json")).unwrap())
            .unwrap();
    assert_eq!(on_disk["topologyPositions"].as_object().unwrap().len(), 48);
}
