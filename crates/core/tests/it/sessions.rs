//! Conversations in a real `sessions.redb`: append, restore after reopening, fork, export,
//! delete, the lock, and records of kinds this version does not know.

use fuseforks_core::sessions::{
    AgentMessage, Endpoint, Record, SessionError, SessionStore, StoreOp, StoredRecord, TurnRecord,
    TurnStop,
};
use fuseforks_testkit::TempDataDir;

fn message(n: u32) -> Record {
    Record::Message(AgentMessage {
        id: format!("m{n}"),
        from: Endpoint::User,
        to: Endpoint::Agent { id: "a1".into() },
        content: format!("hello {n}"),
        tokens: 0,
        ts_ms: 1000 + i64::from(n),
        hop: 0,
        co_recipients: Vec::new(),
        grounding: None,
        reasoning_summary: Vec::new(),
        attachments: Vec::new(),
        quotes: Vec::new(),
    })
}

fn turn() -> Record {
    Record::Turn(TurnRecord {
        agent_id: "a1".into(),
        ts_ms: 5,
        hop: 0,
        rounds: 3,
        waves: 0,
        stop: TurnStop::Repeat {
            tool: "grep".into(),
        },
        prompt: 100,
        cached: 40,
        completion: 20,
        reasoning: 5,
        cache_write: 10,
        cache_write_1h: 10,
        model: "m".into(),
        backend: "anthropic".into(),
        elapsed_ms: 1234,
        usage_unknown: false,
        skill: None,
    })
}

#[test]
fn records_survive_a_reopen_and_history_reads_only_its_kinds() {
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.workspace()).unwrap();
    let path = data.workspace().join("sessions.redb");
    let id = {
        let store = SessionStore::open(&path).unwrap();
        let id = store
            .create("A very long title that will be cut short", 1)
            .unwrap();
        assert_eq!(store.append(&id, &message(1), 2).unwrap(), 0);
        let exchange = Record::Exchange {
            agent_id: "a1".into(),
            sent: "hello 1".into(),
            replied: "hi".into(),
        };
        assert_eq!(store.append(&id, &exchange, 3).unwrap(), 1);
        assert_eq!(store.append(&id, &turn(), 4).unwrap(), 2);
        id
    };
    let store = SessionStore::open(&path).unwrap();
    let meta = store.meta(&id).unwrap();
    assert_eq!(
        (
            meta.record_count,
            meta.updated_at,
            meta.title.chars().count()
        ),
        (3, 4, 30)
    );
    let records = store.records(&id).unwrap();
    assert_eq!(records.len(), 3);
    assert_eq!(
        records[2],
        (2, StoredRecord::Known(turn())),
        "every field of a turn record round-trips"
    );
    let kinds: Vec<&str> = store
        .history(&id)
        .unwrap()
        .iter()
        .map(|(_, r)| r.kind())
        .collect();
    assert_eq!(
        kinds,
        ["message", "exchange"],
        "turn records do not restore history"
    );
}

#[test]
fn fork_export_delete_and_list() {
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.workspace()).unwrap();
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let id = store.create("first", 1).unwrap();
    for n in 0..4 {
        store.append(&id, &message(n), 10 + i64::from(n)).unwrap();
    }
    let fork = store.fork(&id, 2, 100).unwrap();
    let forked = store.records(&fork).unwrap();
    assert_eq!(
        forked.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        [0, 1],
        "records before the fork point"
    );
    let meta = store.meta(&fork).unwrap();
    assert_eq!(
        (meta.parent_id.as_deref(), meta.forked_at_seq),
        (Some(id.as_str()), Some(2))
    );
    assert_eq!(
        store.append(&fork, &message(9), 101).unwrap(),
        2,
        "the fork continues its own numbering"
    );
    assert_eq!(
        store.records(&id).unwrap().len(),
        4,
        "the original is untouched"
    );

    let listed: Vec<String> = store.list().unwrap().into_iter().map(|(i, _)| i).collect();
    assert_eq!(listed, [fork.clone(), id.clone()], "most recent first");

    let file = store.export_jsonl(&id, &data.workspace()).unwrap();
    assert_eq!(file, data.workspace().join(format!("exports/{id}.jsonl")));
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 4);
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["kind"], "message");
    }

    store.delete(&id).unwrap();
    assert_eq!(store.records(&id).unwrap_err().code(), "SESSION_NOT_FOUND");
    assert_eq!(store.list().unwrap().len(), 1);
    assert_eq!(
        store.records(&fork).unwrap().len(),
        3,
        "the fork keeps its copies"
    );
}

#[test]
fn an_unknown_record_kind_is_skipped_not_a_failure() {
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.workspace()).unwrap();
    let path = data.workspace().join("sessions.redb");
    let id = {
        let store = SessionStore::open(&path).unwrap();
        let id = store.create("t", 1).unwrap();
        store.append(&id, &message(1), 2).unwrap();
        id
    };
    {
        // A newer version wrote a record of a kind this one does not know.
        let db = redb::Database::create(&path).unwrap();
        let records: redb::TableDefinition<(&str, u64), &[u8]> =
            redb::TableDefinition::new("records");
        let txn = db.begin_write().unwrap();
        txn.open_table(records)
            .unwrap()
            .insert((id.as_str(), 1), br#"{"kind":"hologram","x":1}"#.as_slice())
            .unwrap();
        txn.commit().unwrap();
    }
    let store = SessionStore::open(&path).unwrap();
    store.append(&id, &message(2), 3).unwrap();
    let records = store.records(&id).unwrap();
    assert_eq!(
        records[1],
        (
            1,
            StoredRecord::Unknown {
                kind: "hologram".into()
            }
        )
    );
    assert_eq!(store.history(&id).unwrap().len(), 2);
    let exported =
        std::fs::read_to_string(store.export_jsonl(&id, &data.workspace()).unwrap()).unwrap();
    assert!(
        exported.contains("hologram"),
        "an export keeps what this version cannot read"
    );
}

#[test]
fn a_store_open_elsewhere_is_reported_as_locked() {
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.workspace()).unwrap();
    let path = data.workspace().join("sessions.redb");
    let _first = SessionStore::open(&path).unwrap();
    let err = SessionStore::open(&path).unwrap_err();
    assert_eq!(err.code(), "SESSION_STORE_LOCKED");
}

/// A file that is not a redb database fails to open with the operation, the path and redb's
/// own error kept as the source.
#[test]
fn a_store_that_is_not_redb_names_the_operation_the_file_and_keeps_redbs_error() {
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.workspace()).unwrap();
    let path = data.workspace().join("sessions.redb");
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let err = SessionStore::open(&path).unwrap_err();
    assert_eq!(err.code(), "SESSION_STORE_FAILED");
    match &err {
        SessionError::Storage { op, path: at, .. } => {
            assert_eq!(*op, StoreOp::Open);
            assert_eq!(at, &path);
        }
        other => panic!("not a storage failure: {other:?}"),
    }
    let source = std::error::Error::source(&err).expect("redb's error as the source");
    assert!(
        source.downcast_ref::<Box<redb::Error>>().is_some()
            || source.downcast_ref::<redb::Error>().is_some(),
        "{source:?}"
    );
    assert!(err.to_string().contains("sessions.redb") && err.to_string().contains("open"));
}

#[test]
fn one_commit_for_many_records_and_a_missing_session_does_not_sink_the_others() {
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.workspace()).unwrap();
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let a = store.create("a", 1).unwrap();
    let b = store.create("b", 1).unwrap();
    let (m1, m2, m3) = (message(1), message(2), message(3));
    let results = store
        .append_many(&[(&a, &m1), ("missing", &m2), (&b, &m3), (&a, &m2)], 9)
        .unwrap();
    assert_eq!(results[0].as_ref().unwrap(), &0);
    assert_eq!(results[1].as_ref().unwrap_err().code(), "SESSION_NOT_FOUND");
    assert_eq!(results[2].as_ref().unwrap(), &0);
    assert_eq!(
        results[3].as_ref().unwrap(),
        &1,
        "sequence numbers continue within one transaction"
    );
    assert_eq!(store.meta(&a).unwrap().record_count, 2);
}

#[tokio::test]
async fn the_writer_groups_appends_and_closes_the_file_when_dropped() {
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.workspace()).unwrap();
    let path = data.workspace().join("sessions.redb");
    let store = std::sync::Arc::new(SessionStore::open(&path).unwrap());
    let id = store.create("t", 1).unwrap();
    let writer = fuseforks_core::sessions::SessionWriter::spawn(store.clone()).unwrap();
    let mut handles = Vec::new();
    let writer = std::sync::Arc::new(writer);
    for n in 0..50u32 {
        let (writer, id) = (writer.clone(), id.clone());
        handles.push(tokio::spawn(async move {
            writer.append(vec![(id, message(n))], 5).await.unwrap()
        }));
    }
    let mut seqs: Vec<u64> = Vec::new();
    for h in handles {
        seqs.extend(h.await.unwrap());
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (0..50).collect::<Vec<u64>>());
    drop(writer);
    drop(store);
    SessionStore::open(&path).expect("the writer released the file");
}
