//! The scheduler's tick loop in virtual time (a `ManualClock`) over a real orchestrator and the
//! stub LLM: fire once, the consume written before the delivery, a broken `schedules.json`
//! kept and never rewritten, a stopped target skipped, a pre-check `no_match` skipping the
//! firing, and the acceptance retries (count, no retry on `error`).

use std::sync::Arc;

use fuseforks_core::llm::Wire;
use fuseforks_core::log::VillageLog;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::probe::{Outcome, approve_probe};
use fuseforks_core::schedule::{ManualClock, RunnerConfig, ScheduleRunner};
use fuseforks_core::sessions::Endpoint;
use fuseforks_core::village::{AgentId, ScheduleProbe, ShelfStore};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptUsage};
use serde_json::{Value, json};

use crate::orch_support::Village;
use crate::orchestrator::U1;

/// 2026-03-10 09:00 UTC.
const DUE: i64 = 1_773_133_200_000;
const VILLAGE_ID: &str = "v-sched";
const WIRE: Wire = Wire::OpenAiCompat;

struct Setup {
    v: Village,
    stub: StubServer,
    orch: Orchestrator,
    clock: Arc<ManualClock>,
}

impl Setup {
    /// A village whose `schedules.json` holds `schedule` (daily 09:00 UTC to `a1`), the clock
    /// one minute after today's due; `a1` started when `start`.
    async fn new(schedule: Value, replies: usize, start: bool) -> Self {
        Self::with_budget(schedule, replies, start, Some(1_000_000), U1).await
    }

    async fn with_budget(
        schedule: Value,
        replies: usize,
        start: bool,
        budget: Option<u64>,
        usage: ScriptUsage,
    ) -> Self {
        Self::build(schedule, replies, start, budget, usage, false).await
    }

    /// `plan_review`: every agent's plans wait for review (`a1` and `b2` both started).
    async fn build(
        schedule: Value,
        replies: usize,
        start: bool,
        budget: Option<u64>,
        usage: ScriptUsage,
        plan_review: bool,
    ) -> Self {
        let stub = StubServer::start(
            (0..replies)
                .map(|i| wire_replies::text(WIRE, &format!("done {i}"), usage))
                .collect(),
        )
        .await;
        let v = Village::new(WIRE, stub.base_url(), budget);
        write_schedules(&v, &json!([schedule]));
        if plan_review {
            let store = v.store();
            let mut world = store.load_world().unwrap().value;
            // A wave needs two peers: `c3`, a copy of `b2`.
            let mut c3 = world.agents[1].clone();
            c3.id = AgentId::new("c3").unwrap();
            c3.name = "Cy".into();
            world.agents.push(c3);
            for agent in &mut world.agents {
                agent.plan_review = true;
            }
            world.agents[0]
                .connected_agents
                .push(AgentId::new("c3").unwrap());
            store.save_world(&world).unwrap();
        }
        let orch = v.open();
        if start {
            orch.start_agent("a1").unwrap();
        }
        if plan_review {
            orch.start_agent("b2").unwrap();
            orch.start_agent("c3").unwrap();
        }
        let clock = Arc::new(ManualClock::new(DUE + 60_000));
        Self {
            v,
            stub,
            orch,
            clock,
        }
    }

    fn runner(&self) -> ScheduleRunner {
        ScheduleRunner::new(self.runner_config())
    }

    fn runner_config(&self) -> RunnerConfig {
        let workspace = self.v.data.workspace();
        let log = Arc::new(VillageLog::open(&workspace.join("fuseforks.log")).unwrap());
        RunnerConfig {
            orchestrator: self.orch.clone(),
            workspace,
            village_id: VILLAGE_ID.into(),
            shelf: ShelfStore::new(self.v.data.data_dir()),
            zone: jiff::tz::TimeZone::UTC,
            clock: self.clock.clone(),
            log,
        }
    }

    fn approve(&self, probe: &Value) {
        let probe: ScheduleProbe = serde_json::from_value(probe.clone()).unwrap();
        approve_probe(&ShelfStore::new(self.v.data.data_dir()), &probe, VILLAGE_ID).unwrap();
    }

    fn consumed(&self) -> Option<i64> {
        let text = std::fs::read_to_string(self.v.data.workspace().join("schedules.json")).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        doc[0]["lastConsumedDueMs"].as_i64()
    }

    fn requests_naming(&self, needle: &str) -> usize {
        self.stub
            .requests()
            .iter()
            .filter(|r| r.body.to_string().contains(needle))
            .count()
    }
}

fn write_schedules(v: &Village, doc: &Value) {
    std::fs::write(
        v.data.workspace().join("schedules.json"),
        serde_json::to_string_pretty(doc).unwrap(),
    )
    .unwrap();
}

fn daily(id: &str) -> Value {
    json!({
        "id": id, "to": "a1", "message": "Tidy the notes.",
        "recurrence": {"kind": "daily", "hour": 9, "minute": 0},
        "createdAtMs": DUE - 86_400_000 * 3
    })
}

fn probe(command: &str, args: &[&str], expect: &str) -> Value {
    json!({"command": command, "args": args, "expect": expect, "timeoutSecs": 10})
}

#[tokio::test]
async fn a_due_schedule_fires_once_and_its_consume_is_on_disk_before_the_delivery() {
    let s = Setup::new(daily("s1"), 2, true).await;
    let mut runner = s.runner();
    assert_eq!(s.consumed(), None);
    let firings = runner.tick();
    assert_eq!(firings.len(), 1);
    // The consume is written by the tick; nothing has been delivered yet.
    assert_eq!(s.consumed(), Some(DUE));
    assert_eq!(s.stub.requests().len(), 0, "delivered before the consume");
    let report = runner.fire(firings.into_iter().next().unwrap()).await;
    assert_eq!(report.skipped, None, "{report:?}");
    assert_eq!(report.deliveries, 1);
    assert_eq!(s.requests_naming("[Scheduled task s1]"), 1);
    // Later ticks, and a clock set back, never fire that due again.
    s.clock.advance(30_000);
    assert!(runner.tick().is_empty());
    s.clock.set(DUE - 3_600_000);
    assert!(runner.tick().is_empty());
    let log = s.v.log();
    assert!(
        log.contains(&format!(
            "schedule fire: id=s1 target=a1 due={DUE} session=continue"
        )),
        "{log}"
    );
    assert!(
        !log.contains("Tidy the notes"),
        "the message reached the log"
    );
}

#[tokio::test]
async fn a_broken_schedules_file_is_reported_once_kept_and_never_rewritten() {
    let s = Setup::new(daily("s1"), 0, true).await;
    let mut runner = s.runner();
    s.clock.set(DUE - 60_000);
    assert!(runner.tick().is_empty(), "nothing due yet");
    let path = s.v.data.workspace().join("schedules.json");
    let broken = "[{\"id\": \"s1\", \"to\": ";
    std::fs::write(&path, broken).unwrap();
    s.clock.set(DUE + 60_000);
    assert!(runner.tick().is_empty());
    assert!(runner.tick().is_empty());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    let log = s.v.log();
    let reported: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("schedules unreadable: code="))
        .collect();
    assert_eq!(reported.len(), 1, "{log}");
    assert!(reported[0].contains("kept=1 firing=paused"), "{log}");
    assert!(
        reported[0].contains("schedules.json"),
        "names the file: {log}"
    );
    // Mended: the owed due fires (within grace).
    write_schedules(&s.v, &json!([daily("s1")]));
    assert_eq!(runner.tick().len(), 1);
    assert!(s.v.log().contains("schedules readable again"));
}

#[tokio::test]
async fn a_target_that_is_not_running_is_consumed_and_logged_as_stopped() {
    let s = Setup::new(daily("s1"), 0, false).await;
    let mut runner = s.runner();
    assert!(runner.tick().is_empty());
    assert_eq!(s.consumed(), Some(DUE));
    assert!(
        s.v.log()
            .contains("schedule skip: id=s1 reason=target_stopped")
    );
}

#[tokio::test]
async fn a_pre_check_other_than_match_skips_the_firing_and_match_appends_its_lines() {
    let no = probe("echo", &["not yet"], "ready");
    let mut schedule = daily("s1");
    schedule["probe"] = no.clone();
    let s = Setup::new(schedule, 1, true).await;
    s.approve(&no);
    let mut runner = s.runner();
    let firing = runner.tick().pop().unwrap();
    let report = runner.fire(firing).await;
    assert_eq!(report.skipped.as_deref(), Some("probe_no_match"));
    assert_eq!(s.stub.requests().len(), 0);
    let log = s.v.log();
    assert!(
        log.contains("schedule probe: id=s1 outcome=no_match"),
        "{log}"
    );
    assert!(log.contains("schedule skip: id=s1 reason=probe_no_match"));

    // An unapproved probe never runs: skipped as unapproved.
    let mut other = daily("s2");
    other["probe"] = probe("printf", &["ready\\nline two\\n"], "ready");
    write_schedules(&s.v, &json!([other]));
    let firing = runner.tick().pop().unwrap();
    let report = runner.fire(firing).await;
    assert_eq!(report.skipped.as_deref(), Some("probe_unapproved"));
    // Approved: it matches, fires, and its extra line rides with the request.
    s.approve(&other["probe"]);
    write_schedules(&s.v, &json!([other]));
    let firing = runner.tick().pop().unwrap();
    let report = runner.fire(firing).await;
    assert_eq!(report.skipped, None, "{report:?}");
    assert_eq!(s.requests_naming("line two"), 1);
    // Each probe that ran is an audit line with its outcome (the unapproved one never ran).
    s.orch.close(std::time::Duration::from_secs(1)).await;
    let audit = std::fs::read_to_string(s.v.data.workspace().join("audit.jsonl")).unwrap();
    let runs: Vec<(String, String)> = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["action"] == "probe_run")
        .map(|l| {
            (
                l["target"].as_str().unwrap().to_owned(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        runs,
        [
            pair("s1", "no_match"),
            pair("s2", "unapproved"),
            pair("s2", "match")
        ],
        "{audit}"
    );
}

#[tokio::test]
async fn acceptance_no_match_resends_up_to_max_attempts_and_error_never_retries() {
    let failing = probe("echo", &["still broken"], "ok");
    let mut schedule = daily("s1");
    schedule["acceptance"] = failing.clone();
    schedule["acceptance"]["maxAttempts"] = json!(3);
    let s = Setup::new(schedule, 3, true).await;
    s.approve(&failing);
    let mut runner = s.runner();
    let firing = runner.tick().pop().unwrap();
    let report = runner.fire(firing).await;
    assert_eq!(report.deliveries, 3, "{report:?}");
    assert_eq!(report.acceptance, Some(Outcome::NoMatch));
    assert_eq!(
        s.requests_naming("still broken"),
        2,
        "retries carry the excerpt"
    );
    let log = s.v.log();
    for a in 1..=3 {
        assert!(
            log.contains(&format!(
                "acceptance: schedule=s1 attempt={a}/3 outcome=no_match"
            )),
            "{log}"
        );
    }

    // A probe that cannot run is `error`: no retry.
    let missing = probe("/nonexistent/fuseforks-probe", &[], "ok");
    let mut other = daily("s2");
    other["acceptance"] = missing.clone();
    write_schedules(&s.v, &json!([other]));
    s.approve(&missing);
    s.stub.push([wire_replies::text(WIRE, "done", U1)]);
    let firing = runner.tick().pop().unwrap();
    let report = runner.fire(firing).await;
    assert_eq!(report.deliveries, 1, "{report:?}");
    assert_eq!(report.acceptance, Some(Outcome::Error));
    assert!(
        s.v.log()
            .contains("acceptance: schedule=s2 attempt=1/2 outcome=error")
    );
}

#[tokio::test]
async fn acceptance_retries_share_the_firings_budget() {
    let failing = probe("echo", &["still broken"], "ok");
    let mut schedule = daily("s1");
    schedule["acceptance"] = failing.clone();
    schedule["acceptance"]["maxAttempts"] = json!(3);
    // 50,030 effective tokens a call, each reserving about 37,000 (its request and the whole
    // output cap): in a budget of 120,000 the first and one retry are admitted, a third call
    // is not — with a fresh budget per delivery all three would run.
    let heavy = ScriptUsage {
        prompt: 50_000,
        ..U1
    };
    let s = Setup::with_budget(schedule, 3, true, Some(120_000), heavy).await;
    s.approve(&failing);
    let mut runner = s.runner();
    let firing = runner.tick().pop().unwrap();
    let report = runner.fire(firing).await;
    assert_eq!(s.stub.requests().len(), 2, "{report:?}");
    let log = s.v.log();
    assert!(
        log.contains("acceptance: schedule=s1 attempt=2/3 outcome=no_match"),
        "{log}"
    );
    assert!(!log.contains("attempt=3/3"), "{log}");
}

#[tokio::test]
async fn auto_approve_plans_skips_review_for_the_fired_chain_only() {
    let mut schedule = daily("s1");
    schedule["autoApprovePlans"] = json!(true);
    let plan = plan_call();
    let s = Setup::build(schedule, 0, true, Some(1_000_000), U1, true).await;
    s.stub.push([
        plan,
        wire_replies::text(WIRE, "part done", U1),
        wire_replies::text(WIRE, "part done", U1),
        wire_replies::text(WIRE, "all done", U1),
    ]);
    let mut runner = s.runner();
    let firing = runner.tick().pop().unwrap();
    let report = runner.fire(firing).await;
    assert_eq!(report.skipped, None);
    let log = s.v.log();
    assert!(
        log.contains("plan review skipped: agent=a1 reason=schedule"),
        "{log}"
    );
    assert!(!log.contains("plan pending:"), "{log}");
    assert_eq!(s.stub.requests().len(), 4, "the wave ran in the chain");
    // A request from elsewhere in the same village: its plan waits for review.
    s.stub
        .push([plan_call(), wire_replies::text(WIRE, "waiting", U1)]);
    s.orch
        .deliver_and_wait("a1", Endpoint::User, "plan it")
        .await
        .unwrap();
    assert!(
        s.v.log().contains("plan pending: agent=a1"),
        "{}",
        s.v.log()
    );
}

fn plan_call() -> fuseforks_testkit::stub::StubReply {
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

#[tokio::test]
async fn session_mode_fresh_fires_into_a_new_conversation_and_continue_keeps_it() {
    let mut schedule = daily("s1");
    schedule["sessionMode"] = json!("fresh");
    schedule["summarizeAfter"] = json!(true);
    let s = Setup::new(schedule, 4, true).await;
    let first = s
        .orch
        .deliver_and_wait("a1", Endpoint::User, "hello")
        .await
        .unwrap()
        .session_id
        .unwrap();
    let mut runner = s.runner();
    let firing = runner.tick().pop().unwrap();
    runner.fire(firing).await;
    let fired = s.orch.current_session().unwrap();
    assert_ne!(fired, first, "fresh: a new conversation");
    let log = s.v.log();
    assert!(log.contains("session=fresh"), "{log}");
    assert!(log.contains("summary: agent=a1 covers="), "{log}");
    // `continue` (the default): the current conversation.
    write_schedules(&s.v, &json!([daily("s2")]));
    let firing = runner.tick().pop().unwrap();
    runner.fire(firing).await;
    assert_eq!(s.orch.current_session().unwrap(), fired);
}

#[tokio::test]
async fn the_loop_wakes_at_the_earliest_due_ahead_at_most_a_second_later() {
    let mut schedule = daily("s1");
    schedule["lastConsumedDueMs"] = json!(DUE - 86_400_000);
    let s = Setup::new(schedule, 0, true).await;
    let mut runner = s.runner();
    s.clock.set(DUE - 300);
    assert!(runner.tick().is_empty());
    assert_eq!(runner.next_wait(), std::time::Duration::from_millis(301));
    s.clock.set(DUE - 3_600_000);
    assert!(runner.tick().is_empty());
    assert_eq!(runner.next_wait(), fuseforks_core::schedule::TICK);
}

/// A pause holds a firing; on resume it fires if its due is still within grace, and is
/// skipped (`late_after_pause`, nothing delivered) once the grace has gone by. Every firing
/// and its end are audit lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_firing_fires_on_resume_within_grace_and_is_skipped_after_it() {
    use fuseforks_core::safety::{Channel, SwitchCommand};
    for (held_ms, fires) in [(60_000, true), (5 * 60_000, false)] {
        let s = Setup::new(daily("s1"), 2, true).await;
        let mut runner = s.runner();
        s.orch.control(SwitchCommand::Pause, Channel::Api).await;
        let firing = runner.tick().into_iter().next().unwrap();
        let config = s.runner_config();
        // Run here up to its first wait: the pause's gate. A firing the pause does not hold
        // is delivered on resume even once late, which the second case catches.
        let held = fuseforks_testkit::spawn_started(async move {
            ScheduleRunner::new(config).fire(firing).await
        });
        assert!(!held.is_finished(), "a pause holds the firing");
        assert_eq!(s.stub.requests().len(), 0);
        s.clock.advance(held_ms);
        s.orch.control(SwitchCommand::Resume, Channel::Api).await;
        let report = held.await.unwrap();
        if fires {
            assert_eq!((report.skipped, report.deliveries), (None, 1));
        } else {
            assert_eq!(report.skipped.as_deref(), Some("late_after_pause"));
            assert_eq!(
                s.stub.requests().len(),
                0,
                "nothing delivered after the grace"
            );
            assert!(s.v.log().contains("schedule skip: id=s1"), "{}", s.v.log());
        }
        s.orch.close(std::time::Duration::from_secs(1)).await;
        let audit = std::fs::read_to_string(s.v.data.workspace().join("audit.jsonl")).unwrap();
        assert_eq!(audit.contains("\"schedule_fire\""), fires, "{audit}");
    }
}
