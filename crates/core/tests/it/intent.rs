//! `intent` records: one is committed before every paid model call, the turn record completes
//! them, and stats count an intent no turn record follows as a call of unknown usage. Readers
//! skip the kind like any other they do not restore.

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{
    Endpoint, IntentRecord, Record, SessionStore, StoredRecord, TurnRecord, TurnStop,
};
use fuseforks_core::stats::{Period, aggregate};
use fuseforks_core::village::World;
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use serde_json::json;

use crate::orch_support::{Village, unknown_calls};

const U: ScriptUsage = ScriptUsage {
    prompt: 500,
    completion: 20,
    cache_read: 0,
    reasoning: 0,
};

fn intent(agent: &str, ts_ms: i64) -> Record {
    Record::Intent(IntentRecord {
        agent_id: agent.into(),
        ts_ms,
        round: 1,
        model: "m".into(),
        backend: "open_ai_compat".into(),
        reserved: 5_000,
    })
}

fn turn(agent: &str, ts_ms: i64) -> Record {
    Record::Turn(TurnRecord {
        agent_id: agent.into(),
        ts_ms,
        hop: 0,
        rounds: 1,
        waves: 0,
        stop: TurnStop::Completed,
        prompt: 100,
        cached: 0,
        completion: 10,
        reasoning: 0,
        cache_write: 0,
        cache_write_1h: 0,
        model: "m".into(),
        backend: "open_ai_compat".into(),
        elapsed_ms: 1,
        usage_unknown: false,
        skill: None,
    })
}

#[tokio::test]
async fn every_call_is_preceded_by_an_intent_that_the_turn_completes() {
    let wire = Wire::OpenAiCompat;
    let call = ScriptCall {
        id: "c1".into(),
        name: "grep".into(),
        args: json!({"pattern": "error"}),
    };
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(wire, &[call], U),
        wire_replies::text(wire, "done", U),
    ])
    .await;
    let v = Village::new(wire, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    orch.deliver_and_wait("a1", Endpoint::User, "go")
        .await
        .unwrap();
    let session = orch.current_session().unwrap();
    let store = orch.sessions().unwrap();
    let kinds: Vec<String> = store
        .records(&session)
        .unwrap()
        .into_iter()
        .map(|(_, r)| match r {
            StoredRecord::Known(r) => r.kind().to_owned(),
            StoredRecord::Unknown { kind } => kind,
        })
        .collect();
    assert_eq!(
        kinds,
        ["message", "intent", "intent", "exchange", "message", "turn"],
        "one intent per paid call, before the call"
    );
    assert!(
        store
            .history(&session)
            .unwrap()
            .iter()
            .all(|(_, r)| !matches!(r, Record::Intent(_))),
        "intents never restore history"
    );
    assert_eq!(unknown_calls(store), 0);
    assert_eq!(stub.requests().len(), 2);
}

#[test]
fn an_intent_without_its_turn_record_is_unknown_usage() {
    let data = TempDataDir::new();
    let store = SessionStore::open(&data.data_dir().join("sessions.redb")).unwrap();
    let s = store.create("x", 0).unwrap();
    // A crashed turn of a (intent 1), then a turn of a that started at 2 with two calls, then
    // an open call of b and one of a after a's turn record.
    for r in [
        intent("a", 1),
        intent("a", 2),
        intent("a", 3),
        turn("a", 2),
        intent("b", 4),
        intent("a", 5),
    ] {
        store.append(&s, &r, 6).unwrap();
    }
    // The turn completes its own two calls only: a@1 (the crash), b@4 and a@5 stay open.
    let report = aggregate(
        &store,
        &World::default(),
        Period::All,
        &jiff::tz::TimeZone::UTC,
    )
    .unwrap();
    assert_eq!(report.totals.unknown_usage_calls, 3);
    let open: Vec<(&str, i64)> = report
        .unknown_usage
        .iter()
        .map(|u| (u.agent_id.as_str(), u.ts_ms))
        .collect();
    assert_eq!(open, [("a", 1), ("b", 4), ("a", 5)]);
    assert_eq!(report.totals.turns, 1, "turns are counted as before");
    // An intent of another conversation is never completed by this one's turn.
    let t = store.create("y", 0).unwrap();
    store.append(&t, &turn("b", 0), 7).unwrap();
    assert_eq!(unknown_calls(&store), 3);
}

#[test]
fn an_intent_is_plain_json_in_the_original_style() {
    let v = serde_json::to_value(intent("a", 7)).unwrap();
    assert_eq!(
        v,
        json!({"kind": "intent", "agentId": "a", "tsMs": 7, "round": 1, "model": "m",
               "backend": "open_ai_compat", "reserved": 5000})
    );
}
