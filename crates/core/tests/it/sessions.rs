//! Conversations in a real `sessions.redb`: append, restore after reopening, fork, export,
//! delete, the lock, and records of kinds this version does not know.

use fuseforks_core::sessions::{
    AgentMessage, Endpoint, Record, SessionError, SessionMeta, SessionStore, SessionTarget,
    SessionWriter, StoreOp, StoredRecord, TurnRecord, TurnStop,
};
use fuseforks_testkit::TempDataDir;

fn message(n: u32) -> Record {
    said(n, format!("hello {n}"))
}

fn said(n: u32, content: String) -> Record {
    Record::Message(AgentMessage {
        id: format!("m{n}"),
        from: Endpoint::User,
        to: Endpoint::Agent { id: "a1".into() },
        content,
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
            let to = SessionTarget::Existing(id);
            writer.append(to, vec![message(n)], 5).await.unwrap()
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

/// Set in the child run of the next test: the store the child appends to.
const CHILD_STORE: &str = "FUSEFORKS_TEST_SESSIONS_CHILD_STORE";
/// The id of the conversation the child's append would create.
const NEW_ID: &str = "0b5e55ed-0000-4000-8000-000000000001";

/// A conversation the writer creates with its first records: the row and the records land in
/// one transaction, so a batch that fails (here: the file may not grow, a real `EFBIG` in a
/// child process under `ulimit -f`) leaves neither the conversation nor any record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_conversation_and_its_first_records_are_one_commit() {
    if let Ok(path) = std::env::var(CHILD_STORE) {
        let store = std::sync::Arc::new(SessionStore::open(path.as_ref()).unwrap());
        let writer = SessionWriter::spawn(store.clone()).unwrap();
        let big = said(2, "x".repeat(8 << 20));
        let to = SessionTarget::New {
            id: NEW_ID.into(),
            meta: SessionMeta::fresh("doomed", 7),
        };
        let err = writer
            .append(to, vec![message(1), big], 8)
            .await
            .unwrap_err();
        assert_eq!(err.code(), "SESSION_STORE_FAILED", "{err}");
        return;
    }
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.workspace()).unwrap();
    let path = data.workspace().join("sessions.redb");
    let kept = {
        let store = std::sync::Arc::new(SessionStore::open(&path).unwrap());
        let writer = SessionWriter::spawn(store.clone()).unwrap();
        let id = "0b5e55ed-0000-4000-8000-000000000000".to_owned();
        let to = SessionTarget::New {
            id: id.clone(),
            meta: SessionMeta::fresh("A title longer than thirty characters", 3),
        };
        let seqs = writer
            .append(to, vec![message(0), turn()], 4)
            .await
            .unwrap();
        assert_eq!(seqs, [0, 1]);
        // Created already: a second `New` for the same id appends, it does not start over.
        let again = SessionTarget::New {
            id: id.clone(),
            meta: SessionMeta::fresh("other", 5),
        };
        assert_eq!(
            writer.append(again, vec![message(1)], 6).await.unwrap(),
            [2]
        );
        let meta = store.meta(&id).unwrap();
        assert_eq!(
            (
                meta.title.chars().count(),
                meta.created_at,
                meta.updated_at,
                meta.record_count
            ),
            (30, 3, 6, 3)
        );
        id
    };
    let size = std::fs::metadata(&path).unwrap().len();
    // The child may write no byte past the file's size plus 256 KiB; its 8 MiB record needs more.
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            r#"trap '' XFSZ; ulimit -f "$1" && exec "$0" "${@:2}""#,
        ])
        .arg(std::env::current_exe().unwrap())
        .arg((size / 1024 + 256).to_string())
        .args([
            "sessions::a_new_conversation_and_its_first_records_are_one_commit",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD_STORE, &path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = SessionStore::open(&path).unwrap();
    assert_eq!(
        store.meta(NEW_ID).unwrap_err().code(),
        "SESSION_NOT_FOUND",
        "the failed batch left no conversation"
    );
    drop(store);
    let db = redb::Database::create(&path).unwrap();
    let records: redb::TableDefinition<(&str, u64), &[u8]> = redb::TableDefinition::new("records");
    let txn = redb::ReadableDatabase::begin_read(&db).unwrap();
    let table = txn.open_table(records).unwrap();
    let left = table
        .range((NEW_ID, 0)..=(NEW_ID, u64::MAX))
        .unwrap()
        .count();
    assert_eq!(left, 0, "the failed batch left no record");
    let before = table
        .range((kept.as_str(), 0)..=(kept.as_str(), u64::MAX))
        .unwrap()
        .count();
    assert_eq!(before, 3, "the earlier conversation is whole");
}
