//! The kill switch in the engine: an abort cuts the turn running now (its `run` child's group
//! ended) and leaves the agent taking new work — an abort while idle touches no later turn —,
//! and pause holds a model call until resume.

use std::time::{Duration, Instant};

use fuseforks_core::llm::Wire;
use fuseforks_core::orchestrator::PlanTaskState;
use fuseforks_core::safety::{Channel, SwitchCommand, SwitchState};
use fuseforks_core::tools::RunApproval;
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use serde_json::json;

use crate::orch_support::Village;

const WIRE: Wire = Wire::OpenAiCompat;
const U: ScriptUsage = ScriptUsage {
    prompt: 400,
    completion: 10,
    cache_read: 0,
    reasoning: 0,
};

fn text(t: &str) -> StubReply {
    wire_replies::text(WIRE, t, U)
}

fn run_call(args: serde_json::Value) -> StubReply {
    let call = ScriptCall {
        id: "c1".into(),
        name: "run".into(),
        args,
    };
    wire_replies::tool_calls(WIRE, &[call], U)
}

async fn until(what: &str, done: impl FnMut() -> bool) {
    fuseforks_testkit::eventually(what, fuseforks_testkit::DEADLINE, done).await;
}

/// A `run` child that outlives its section's grace after an abort
/// (`fuseforks_core::safety::RUN_ABORT_GRACE`, docs/threat-model.md) is killed then, the abort
/// answers once it is, and the turn ends interrupted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_cuts_the_running_turn_and_its_child_and_the_agent_takes_new_work() {
    let script = "echo $$ > sleeper.pid; exec sleep 30";
    let stub = StubServer::start(vec![
        text("after an idle abort"),
        run_call(json!({"command": "sh", "args": ["-c", script]})),
        text("next answer"),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    v.data
        .edit_world(|w| w.agents[0].enabled_tools = Some(vec!["run".into()]));
    let orch = v.open();
    orch.set_run_approval(
        RunApproval::NoApproval,
        fuseforks_core::safety::Channel::Api,
    );
    orch.start_agent("a1").unwrap();
    // An abort while nothing runs touches no later turn.
    assert_eq!(
        orch.control(SwitchCommand::Abort, Channel::Api).await,
        SwitchState::Running
    );
    let (answer, state) = orch.ask_external_outcome("t", "hi").await;
    assert_eq!(
        (answer.as_deref(), state),
        (Some("after an idle abort"), PlanTaskState::Answered)
    );

    let asking = tokio::spawn({
        let orch = orch.clone();
        async move { orch.ask_external_outcome("t", "sleep").await }
    });
    let pid_file = v.data.data_dir().join("work/sleeper.pid");
    until("the run child", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'))
    })
    .await;
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let started = Instant::now();
    assert_eq!(
        orch.control(SwitchCommand::Abort, Channel::Api).await,
        SwitchState::Running
    );
    let waited = started.elapsed();
    let grace = fuseforks_core::safety::RUN_ABORT_GRACE;
    assert!(
        waited >= grace && waited < grace + Duration::from_secs(3),
        "the abort waited {waited:?} for a child inside its section"
    );
    let (_, state) = tokio::time::timeout(Duration::from_secs(5), asking)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(state, PlanTaskState::Interrupted);
    until("the run child's end", || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z"))
    })
    .await;
    assert!(
        started.elapsed() < grace + Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(stub.requests().len(), 2, "the cut turn sent nothing more");
    let (answer, state) = orch.ask_external_outcome("t", "again").await;
    assert_eq!(
        (answer.as_deref(), state),
        (Some("next answer"), PlanTaskState::Answered)
    );
    let log = v.log();
    assert!(
        log.contains("kill switch: command=abort from=running to=aborting channel=api"),
        "{log}"
    );
    assert!(
        log.contains("kill switch: command=abort from=aborting to=running channel=api"),
        "{log}"
    );
    assert!(log.contains("turn interrupted: agent=a1"), "{log}");
    orch.close(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_holds_the_model_call_until_resume() {
    let stub = StubServer::start(vec![text("held answer")]).await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    assert_eq!(
        orch.control(SwitchCommand::Pause, Channel::Api).await,
        SwitchState::Paused
    );
    let asking = tokio::spawn({
        let orch = orch.clone();
        async move { orch.ask_external_outcome("t", "hi").await }
    });
    // The turn has begun: its model call comes next, through the gate. The call's arrival
    // after the resume (below) is the proof that the gate held it.
    until("the turn's start", || {
        v.log().contains("turn start: agent=a1")
    })
    .await;
    assert!(
        stub.requests().is_empty(),
        "a model call started while paused"
    );
    let resumed_at = Instant::now();
    assert_eq!(
        orch.control(SwitchCommand::Resume, Channel::Api).await,
        SwitchState::Running
    );
    let (answer, _) = tokio::time::timeout(Duration::from_secs(10), asking)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answer.as_deref(), Some("held answer"));
    assert!(
        stub.requests()[0].at >= resumed_at,
        "a model call started while paused"
    );
    orch.close(Duration::from_secs(1)).await;
}

/// The approvals and their mode are audited: a mode change, an unknown command recorded for a
/// human (`run_approval` `pending`, then the refused `run`), and under auto-approve the allow
/// line added (`auto_approved`) before the call that ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_and_their_mode_are_audit_lines() {
    let stub = StubServer::start(vec![
        run_call(json!({"command": "true"})),
        text("recorded for approval"),
        run_call(json!({"command": "true"})),
        text("ran"),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    v.data
        .edit_world(|w| w.agents[0].enabled_tools = Some(vec!["run".into()]));
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    orch.set_run_approval(RunApproval::Required, fuseforks_core::safety::Channel::Api);
    let (answer, _) = orch.ask_external_outcome("t", "run it").await;
    assert_eq!(answer.as_deref(), Some("recorded for approval"));
    orch.set_run_approval(
        RunApproval::AutoApprove,
        fuseforks_core::safety::Channel::Api,
    );
    let (answer, _) = orch.ask_external_outcome("t", "run it again").await;
    assert_eq!(answer.as_deref(), Some("ran"));
    orch.close(Duration::from_secs(1)).await;
    drop(orch);
    let audit = std::fs::read_to_string(v.data.workspace().join("audit.jsonl")).unwrap();
    let lines: Vec<[String; 4]> = audit
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap().to_owned();
            [s("action"), s("target"), s("outcome"), s("approvedBy")]
        })
        .collect();
    let t = |a: &str, b: &str, c: &str, d: &str| [a, b, c, d].map(str::to_owned);
    assert_eq!(
        lines,
        vec![
            t("run_approval_mode", "required", "ok", "person:api"),
            t("run_approval", "true", "pending", "none"),
            t("run", "true", "failed", "none"),
            t("run_approval_mode", "auto_approve", "ok", "person:api"),
            t("run_approval", "true", "auto_approved", "mode:auto_approve"),
            t("run", "true", "ok", "mode:auto_approve"),
        ],
        "{audit}"
    );
}

/// A command that changes nothing (pause while paused, resume while running, halt while
/// halted) writes no audit line, sends no event and cuts nothing; a real change writes exactly
/// one line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_command_writes_no_second_audit_line() {
    let stub = StubServer::start(vec![]).await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    let mut events = orch.events();
    use SwitchCommand as C;
    for (command, after) in [
        (C::Pause, SwitchState::Paused),
        (C::Pause, SwitchState::Paused),
        (C::Resume, SwitchState::Running),
        (C::Resume, SwitchState::Running),
        (C::Halt, SwitchState::Halted),
        (C::Halt, SwitchState::Halted),
        (C::Pause, SwitchState::Halted),
        (C::Resume, SwitchState::Running),
    ] {
        assert_eq!(
            orch.control(command, Channel::Api).await,
            after,
            "{command:?}"
        );
    }
    orch.close(Duration::from_secs(1)).await;
    let audit = std::fs::read_to_string(v.data.workspace().join("audit.jsonl")).unwrap();
    let changes: Vec<String> = audit
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["action"] == "kill_switch")
        .map(|l| l["target"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        changes,
        ["paused", "running", "halted", "running"],
        "{audit}"
    );
    let mut said = 0;
    while let Ok(event) = events.try_recv() {
        said += usize::from(matches!(
            event,
            fuseforks_core::events::CoreEvent::KillSwitchChanged { .. }
        ));
    }
    assert_eq!(said, 4, "one event per real change");
    let log = v.log();
    assert_eq!(
        log.matches("command=halt from=running to=halted").count(),
        1,
        "{log}"
    );
    assert!(
        log.contains("kill switch: command=halt unchanged state=halted channel=api"),
        "{log}"
    );
}
