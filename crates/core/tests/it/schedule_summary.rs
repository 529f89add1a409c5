//! `summarizeAfter` in virtual time (a `ManualClock`) over a real orchestrator and the stub
//! LLM: one extra call after the chain (no tools, through the agent's template), a `summary`
//! record, the next request carrying the summary in place of what it covers (the system
//! prompt unchanged); none without the option; a failed summary logged, nothing stored, the
//! firing still counted.

use std::sync::Arc;

use fuseforks_core::llm::Wire;
use fuseforks_core::log::VillageLog;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::schedule::{ManualClock, RunnerConfig, ScheduleRunner};
use fuseforks_core::sessions::{Endpoint, Record};
use fuseforks_core::village::ShelfStore;
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies;
use serde_json::{Value, json};

use crate::orch_support::Village;
use crate::orchestrator::U1;

/// 2026-03-10 09:00 UTC.
const DUE: i64 = 1_773_133_200_000;
const WIRE: Wire = Wire::OpenAiCompat;
const SUMMARY: &str = "SUMMARY-7f3: the notes were tidied.";

struct Setup {
    v: Village,
    stub: StubServer,
    orch: Orchestrator,
    clock: Arc<ManualClock>,
}

impl Setup {
    /// A daily 09:00 UTC schedule to `a1` (`summarizeAfter` as given), the clock one minute
    /// after today's due, `a1` started.
    async fn new(summarize: bool, replies: Vec<StubReply>) -> Self {
        let stub = StubServer::start(replies).await;
        let v = Village::new(WIRE, stub.base_url(), Some(1_000_000));
        let mut schedule = json!({
            "id": "s1", "to": "a1", "message": "Tidy the notes.",
            "recurrence": {"kind": "daily", "hour": 9, "minute": 0},
            "createdAtMs": DUE - 86_400_000 * 3
        });
        if summarize {
            schedule["summarizeAfter"] = json!(true);
        }
        std::fs::write(
            v.data.workspace().join("schedules.json"),
            serde_json::to_string_pretty(&json!([schedule])).unwrap(),
        )
        .unwrap();
        let orch = v.open();
        orch.start_agent("a1").unwrap();
        let clock = Arc::new(ManualClock::new(DUE + 60_000));
        Self {
            v,
            stub,
            orch,
            clock,
        }
    }

    /// Ticks once and runs the firing to its end.
    async fn fire_once(&self) -> fuseforks_core::schedule::FiringReport {
        let workspace = self.v.data.workspace();
        let log = Arc::new(VillageLog::open(&workspace.join("fuseforks.log")).unwrap());
        let mut runner = ScheduleRunner::new(RunnerConfig {
            orchestrator: self.orch.clone(),
            workspace,
            village_id: "v-sum".into(),
            shelf: ShelfStore::new(self.v.data.data_dir()),
            zone: jiff::tz::TimeZone::UTC,
            clock: self.clock.clone(),
            log,
        });
        let firing = runner.tick().pop().expect("due");
        runner.fire(firing).await
    }

    fn consumed(&self) -> Option<i64> {
        let text = std::fs::read_to_string(self.v.data.workspace().join("schedules.json")).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        doc[0]["lastConsumedDueMs"].as_i64()
    }

    /// The history records of the current conversation.
    fn history(&self) -> Vec<(u64, Record)> {
        let session = self.orch.current_session().expect("a conversation");
        self.orch.sessions().unwrap().history(&session).unwrap()
    }

    fn summaries(&self) -> Vec<(u64, String, u64)> {
        self.history()
            .into_iter()
            .filter_map(|(seq, r)| match r {
                Record::Summary {
                    text,
                    covers_up_to_seq,
                    ..
                } => Some((seq, text, covers_up_to_seq)),
                _ => None,
            })
            .collect()
    }
}

fn reply(text: &str) -> StubReply {
    wire_replies::text(WIRE, text, U1)
}

fn messages(body: &Value) -> &Vec<Value> {
    body["messages"].as_array().expect("messages")
}

#[tokio::test]
async fn a_firing_with_summarize_after_makes_one_summary_call_and_the_next_turn_reads_it() {
    let s = Setup::new(
        true,
        vec![reply("answer one"), reply(SUMMARY), reply("answer two")],
    )
    .await;
    let report = s.fire_once().await;
    assert_eq!(report.skipped, None, "{report:?}");
    assert_eq!(report.deliveries, 1);
    let requests = s.stub.requests();
    assert_eq!(requests.len(), 2, "exactly one extra call after the chain");
    let summary_call = &requests[1].body;
    assert!(
        summary_call
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)),
        "the summary call offers no tools: {summary_call}"
    );
    assert!(summary_call.to_string().contains("Tidy the notes."));
    assert!(summary_call.to_string().contains("answer one"));
    assert_eq!(requests[1].path, requests[0].path, "the agent's template");

    let history = s.history();
    let summaries = s.summaries();
    assert_eq!(summaries.len(), 1, "{history:?}");
    let (at, text, covers) = &summaries[0];
    assert_eq!(text, SUMMARY);
    let last_covered = history
        .iter()
        .map(|(seq, _)| *seq)
        .filter(|seq| seq < at)
        .max()
        .unwrap();
    assert_eq!(*covers, last_covered, "covers up to the last record");
    let log = s.v.log();
    assert!(
        log.contains(&format!(
            "summary: agent=a1 covers={covers} chars={}",
            SUMMARY.chars().count()
        )),
        "{log}"
    );
    assert!(!log.contains("not_supported_yet"), "{log}");
    // Recorded like any paid call: its `intent` is closed by its `turn` record.
    let store = s.orch.sessions().unwrap();
    assert_eq!(crate::orch_support::unknown_calls(store), 0);
    assert!(
        !log.contains("the notes were tidied"),
        "the summary reached the log"
    );

    // The next turn: the summary stands in for the covered exchange; the system prompt is the
    // same bytes as before.
    s.orch
        .deliver_and_wait("a1", Endpoint::User, "What next?")
        .await
        .unwrap();
    let requests = s.stub.requests();
    assert_eq!(requests.len(), 3);
    let next = &requests[2].body;
    let text = next.to_string();
    assert!(text.contains("SUMMARY-7f3"), "{text}");
    assert!(
        !text.contains("Tidy the notes."),
        "covered message resent: {text}"
    );
    assert!(!text.contains("answer one"), "covered reply resent: {text}");
    assert_eq!(messages(next)[0], messages(&requests[0].body)[0]);
    assert_eq!(messages(next).len(), 4, "system, summary pair, the request");
}

#[tokio::test]
async fn without_summarize_after_no_extra_call_is_made() {
    let s = Setup::new(false, vec![reply("answer one"), reply(SUMMARY)]).await;
    let report = s.fire_once().await;
    assert_eq!(report.deliveries, 1, "{report:?}");
    assert_eq!(s.stub.requests().len(), 1);
    assert!(s.summaries().is_empty());
    assert!(!s.v.log().contains("summary"), "{}", s.v.log());
}

#[tokio::test]
async fn a_failed_summary_is_logged_stores_nothing_and_the_firing_still_counts() {
    let s = Setup::new(
        true,
        vec![
            reply("answer one"),
            wire_replies::error(WIRE, 400, "no summaries today", None),
            reply("answer two"),
        ],
    )
    .await;
    let report = s.fire_once().await;
    assert_eq!(report.skipped, None, "{report:?}");
    assert_eq!(report.deliveries, 1);
    assert_eq!(s.consumed(), Some(DUE));
    assert_eq!(s.stub.requests().len(), 2, "one summary call, not retried");
    assert!(s.summaries().is_empty());
    let log = s.v.log();
    assert!(
        log.contains("summary failed: agent=a1 schedule=s1 reason=llm:"),
        "{log}"
    );
    assert!(!log.contains("no summaries today"), "{log}");
    // Nothing stored: the next turn still reads the exchange itself.
    s.orch
        .deliver_and_wait("a1", Endpoint::User, "What next?")
        .await
        .unwrap();
    let next = s.stub.requests()[2].body.to_string();
    assert!(next.contains("Tidy the notes."), "{next}");
}
