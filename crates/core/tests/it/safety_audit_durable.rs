//! When an audit line is on disk: an awaited append returns only after the file's fdatasync
//! covers it; a detached line is written at once and synced with the next sync of the file
//! (an awaited batch, a rotation, or the close); the shelf head is rewritten only when it moved.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fuseforks_core::safety::{
    AUDIT_HEAD_FILE, AuditEvent, AuditLog, AuditLogOptions, HeadCheck, read_session_heads,
    read_shelf_head, verify_chain,
};
use fuseforks_core::sessions::SessionStore;

fn event(action: &str, i: usize) -> AuditEvent {
    AuditEvent::new("-", "-", action, &format!("t{i}"), i.to_string().as_bytes())
}

/// Waits (bounded) until the writer has written through `seq`.
fn wait_written(log: &AuditLog, seq: u64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while log.written_seq() < seq {
        assert!(Instant::now() < deadline, "line {seq} never written");
        std::thread::yield_now();
    }
}

fn open(ws: &Path, data: &Path, store: &Arc<SessionStore>, max_bytes: u64) -> AuditLog {
    AuditLog::open_with(
        ws,
        AuditLogOptions {
            head_store: Some(store.clone()),
            shelf: Some(data.to_path_buf()),
            key: None,
            max_bytes,
        },
    )
    .unwrap()
}

fn village() -> (tempfile::TempDir, std::path::PathBuf, Arc<SessionStore>) {
    let data = tempfile::tempdir().unwrap();
    let ws = data.path().join("workspace");
    std::fs::create_dir(&ws).unwrap();
    let store = Arc::new(SessionStore::open(&ws.join("sessions.redb")).unwrap());
    (data, ws, store)
}

#[tokio::test]
async fn a_detached_line_rides_in_the_next_awaited_sync_and_both_survive_a_reopen() {
    let (data, ws, store) = village();
    let log = open(&ws, data.path(), &store, u64::MAX);
    log.append_detached(event("run_approval_mode", 1));
    wait_written(&log, 1);
    assert_eq!(log.synced_seq(), 0, "a detached line alone is not synced");
    assert!(
        store.audit_head().unwrap().is_none(),
        "no head past the synced lines"
    );
    let seq = log.append(event("file_write", 2)).await.unwrap();
    assert_eq!(seq, 2);
    assert!(
        log.synced_seq() >= 2,
        "an append returns only once its line (and the detached one before it) is synced"
    );
    drop(log);
    let head = store.audit_head().unwrap().unwrap();
    assert_eq!(head.0, 2);
    let report = verify_chain(&ws, Some(&head)).unwrap();
    assert_eq!((report.lines, report.head), (2, HeadCheck::Matches));
    // Reopened, the chain goes on after both.
    let log = open(&ws, data.path(), &store, u64::MAX);
    assert_eq!(log.append(event("file_write", 3)).await.unwrap(), 3);
    drop(log);
    let report = verify_chain(&ws, store.audit_head().unwrap().as_ref()).unwrap();
    assert_eq!((report.lines, report.head), (3, HeadCheck::Matches));
}

#[tokio::test]
async fn detached_lines_are_synced_at_the_close_and_before_a_rotation() {
    let (data, ws, store) = village();
    let log = open(&ws, data.path(), &store, u64::MAX);
    log.append_detached(event("plan_dispatch", 1));
    drop(log);
    let shelf = read_shelf_head(data.path()).unwrap().unwrap();
    assert_eq!(
        shelf.seq, 1,
        "the close syncs the line and records its head"
    );
    assert_eq!(read_session_heads(&store), vec![shelf]);
    // 300 bytes rotate after each line: the old file is synced before it is renamed.
    let log = open(&ws, data.path(), &store, 300);
    log.append_detached(event("plan_discard", 2));
    wait_written(&log, 2);
    let deadline = Instant::now() + Duration::from_secs(10);
    while log.synced_seq() < 2 {
        assert!(
            Instant::now() < deadline,
            "the rotated line was never synced"
        );
        std::thread::yield_now();
    }
    drop(log);
    let report = verify_chain(&ws, store.audit_head().unwrap().as_ref()).unwrap();
    assert_eq!((report.lines, report.head), (2, HeadCheck::Matches));
    assert!(report.files > 1, "{} files", report.files);
}

#[tokio::test]
async fn a_close_with_no_new_line_leaves_the_shelf_head_alone() {
    let (data, ws, store) = village();
    let shelf_file = data.path().join(AUDIT_HEAD_FILE);
    let log = open(&ws, data.path(), &store, u64::MAX);
    log.append(event("file_write", 1)).await.unwrap();
    drop(log);
    // Each shelf write renames a new file into place: a new inode.
    let written = std::fs::metadata(&shelf_file).unwrap().ino();
    drop(open(&ws, data.path(), &store, u64::MAX));
    assert_eq!(
        std::fs::metadata(&shelf_file).unwrap().ino(),
        written,
        "nothing moved: the shelf head is not rewritten"
    );
    let log = open(&ws, data.path(), &store, u64::MAX);
    log.append_detached(event("run_approval_mode", 2));
    drop(log);
    assert_ne!(std::fs::metadata(&shelf_file).unwrap().ino(), written);
    assert_eq!(read_shelf_head(data.path()).unwrap().unwrap().seq, 2);
}
