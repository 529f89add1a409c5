//! The default verifier of a scheduled chain in virtual time over a real
//! orchestrator and the stub LLM: a firing with `autoApprovePlans` whose target plans one wave
//! sends the bundle to the world's `defaultVerifier` and hands its verdict back to the planner;
//! no verifier without `defaultVerifier`, a fixed line when the verifier is not running or
//! cannot answer, and none for a wave outside a firing.

use std::sync::Arc;

use fuseforks_core::llm::Wire;
use fuseforks_core::log::VillageLog;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::schedule::{FiringReport, ManualClock, RunnerConfig, ScheduleRunner};
use fuseforks_core::sessions::Endpoint;
use fuseforks_core::village::{AgentId, ShelfStore};
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies;
use serde_json::json;

use crate::orch_support::Village;
use crate::orchestrator::U1;

/// 2026-03-10 09:00 UTC.
const DUE: i64 = 1_773_133_200_000;
const WIRE: Wire = Wire::OpenAiCompat;
const INSTRUCTION: &str = "Check the results of plan wave 1.";
const VERDICT: &str = "OK VERDICT-7f3";

struct Setup {
    v: Village,
    stub: StubServer,
    orch: Orchestrator,
}

impl Setup {
    /// `a1` connected to `b2` and `c3`; `verifier` the world's default verifier, `v9` started
    /// when `start_verifier`; a daily schedule with `autoApprovePlans` to `a1`.
    async fn new(verifier: Option<&str>, start_verifier: bool) -> Self {
        let stub = StubServer::start(Vec::new()).await;
        let v = Village::new(WIRE, stub.base_url(), Some(1_000_000));
        let store = v.store();
        let mut world = store.load_world().unwrap().value;
        for id in ["c3", "v9"] {
            let mut peer = world.agents[1].clone();
            peer.id = AgentId::new(id).unwrap();
            peer.name = format!("Peer {id}");
            world.agents.push(peer);
        }
        world.agents[0]
            .connected_agents
            .push(AgentId::new("c3").unwrap());
        world.default_verifier = verifier.map(|id| AgentId::new(id).unwrap());
        store.save_world(&world).unwrap();
        let schedule = json!([{
            "id": "s1", "to": "a1", "message": "Tidy the notes.",
            "recurrence": {"kind": "daily", "hour": 9, "minute": 0},
            "createdAtMs": DUE - 86_400_000 * 3, "autoApprovePlans": true
        }]);
        std::fs::write(
            v.data.workspace().join("schedules.json"),
            serde_json::to_string_pretty(&schedule).unwrap(),
        )
        .unwrap();
        let orch = v.open();
        for id in ["a1", "b2", "c3"] {
            orch.start_agent(id).unwrap();
        }
        if start_verifier {
            orch.start_agent("v9").unwrap();
        }
        Self { v, stub, orch }
    }

    async fn fire(&self) -> FiringReport {
        let workspace = self.v.data.workspace();
        let log = Arc::new(VillageLog::open(&workspace.join("fuseforks.log")).unwrap());
        let mut runner = ScheduleRunner::new(RunnerConfig {
            orchestrator: self.orch.clone(),
            workspace,
            village_id: "v-verify".into(),
            shelf: ShelfStore::new(self.v.data.data_dir()),
            zone: jiff::tz::TimeZone::UTC,
            clock: Arc::new(ManualClock::new(DUE + 60_000)),
            log,
        });
        let firing = runner.tick().pop().expect("the schedule is due");
        runner.fire(firing).await
    }

    fn bodies(&self) -> Vec<String> {
        self.stub
            .requests()
            .iter()
            .map(|r| r.body.to_string())
            .collect()
    }
}

fn plan_call() -> StubReply {
    wire_replies::tool_calls(
        WIRE,
        &[crate::orchestrator::call(
            "p1",
            "plan",
            json!({"tasks": [{"to": "b2", "message": "one"}, {"to": "c3", "message": "two"}]}),
        )],
        U1,
    )
}

/// The plan call, the two parts, then `rest` in order.
fn script(s: &Setup, rest: &[&str]) {
    let mut replies = vec![
        plan_call(),
        wire_replies::text(WIRE, "part done", U1),
        wire_replies::text(WIRE, "part done", U1),
    ];
    replies.extend(rest.iter().map(|t| wire_replies::text(WIRE, t, U1)));
    s.stub.push(replies);
}

#[tokio::test]
async fn the_default_verifier_checks_a_fired_wave_and_the_planner_reads_its_verdict() {
    let s = Setup::new(Some("v9"), true).await;
    script(&s, &[VERDICT, "all done"]);
    let report = s.fire().await;
    assert_eq!(report.skipped, None, "{report:?}");
    let bodies = s.bodies();
    assert_eq!(bodies.len(), 5, "plan, two parts, verifier, planner");
    let to_verifier: Vec<&String> = bodies.iter().filter(|b| b.contains(INSTRUCTION)).collect();
    assert_eq!(to_verifier.len(), 1, "one request to the verifier");
    assert!(
        to_verifier[0].contains("### b2 (answered)") && to_verifier[0].contains("### c3"),
        "the verifier's request holds the bundle: {}",
        to_verifier[0]
    );
    let last = bodies.last().unwrap();
    assert!(
        last.contains(&format!("### verifier (v9): {VERDICT}")),
        "the planner's next request holds the verdict: {last}"
    );
    let log = s.v.log();
    assert!(
        log.contains("verifier: plan=") && log.contains("wave=1 verifier=v9 outcome=answered"),
        "{log}"
    );
    assert!(!log.contains("defaultVerifier=not_supported_yet"), "{log}");
    assert!(!log.contains(VERDICT), "the verdict reached the log");
}

#[tokio::test]
async fn without_a_default_verifier_no_verifier_is_asked() {
    let s = Setup::new(None, true).await;
    script(&s, &["all done"]);
    let report = s.fire().await;
    assert_eq!(report.skipped, None, "{report:?}");
    let bodies = s.bodies();
    assert_eq!(bodies.len(), 4, "plan, two parts, planner");
    assert!(!bodies.iter().any(|b| b.contains(INSTRUCTION)));
    assert!(!bodies.last().unwrap().contains("### verifier"));
    assert!(!s.v.log().contains("verifier: plan="), "{}", s.v.log());
}

#[tokio::test]
async fn a_verifier_not_running_leaves_a_fixed_line_and_never_blocks_the_wave() {
    let s = Setup::new(Some("v9"), false).await;
    script(&s, &["all done"]);
    let report = s.fire().await;
    assert_eq!(report.skipped, None, "{report:?}");
    assert_eq!(report.deliveries, 1);
    let bodies = s.bodies();
    assert_eq!(bodies.len(), 4, "plan, two parts, planner");
    let last = bodies.last().unwrap();
    assert!(
        last.contains("### verifier (v9): not checked: the verifier is not running."),
        "{last}"
    );
    assert!(
        s.v.log().contains("wave=1 verifier=v9 outcome=not_running"),
        "{}",
        s.v.log()
    );
}

#[tokio::test]
async fn a_wave_outside_a_firing_has_no_verifier() {
    let s = Setup::new(Some("v9"), true).await;
    script(&s, &["all done"]);
    s.orch
        .deliver_and_wait("a1", Endpoint::User, "plan it")
        .await
        .unwrap();
    let bodies = s.bodies();
    assert_eq!(bodies.len(), 4, "plan, two parts, planner");
    assert!(!bodies.iter().any(|b| b.contains(INSTRUCTION)));
    assert!(!s.v.log().contains("verifier: plan="), "{}", s.v.log());
}

#[tokio::test]
async fn a_verifier_that_cannot_answer_leaves_a_fixed_line() {
    // The planner as its own verifier: a request back into the waiting chain is refused.
    let s = Setup::new(Some("a1"), true).await;
    script(&s, &["all done"]);
    let report = s.fire().await;
    assert_eq!(report.skipped, None, "{report:?}");
    let bodies = s.bodies();
    assert_eq!(bodies.len(), 4, "plan, two parts, planner");
    assert!(
        bodies
            .last()
            .unwrap()
            .contains("### verifier (a1): not checked: the verifier did not answer."),
        "{}",
        bodies.last().unwrap()
    );
    assert!(
        s.v.log().contains("wave=1 verifier=a1 outcome=failed"),
        "{}",
        s.v.log()
    );
}
