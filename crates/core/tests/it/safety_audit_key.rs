//! The keyed audit chain: the writer's marks and recorded heads (`sessions.redb` and the shelf's
//! `audit-head.json`), and `verify_keyed`'s rules — a mark that does not hold is forged, a line
//! without one where marks are due is unkeyed, lines past the head or no head at all are refused
//! unless accepted, a head whose mark does not hold is set aside.

use std::path::Path;
use std::sync::Arc;

use fuseforks_core::safety::{
    AuditEntry, AuditEvent, AuditKey, AuditLog, AuditLogOptions, BreakKind, GENESIS, HeadCheck,
    RecordedHead, VerifyError, VerifyOptions, VerifyReport, read_session_heads, read_shelf_head,
    verify_keyed,
};
use fuseforks_core::sessions::SessionStore;

fn key() -> AuditKey {
    AuditKey::from_bytes([5; 32])
}

fn event(i: u64) -> AuditEvent {
    AuditEvent::new("rec", "root", "file_write", &format!("notes/{i}.md"), b"{}")
}

/// `n` lines after `prev` from `first`, marked with `key` when given; their last hash.
fn lines(first: u64, n: u64, prev: &str, key: Option<&AuditKey>) -> (Vec<String>, String) {
    let (mut out, mut prev) = (Vec::new(), prev.to_owned());
    for seq in first..first + n {
        let mut entry = AuditEntry::chain(event(seq), seq, 1_700_000_000_000, &prev);
        if let Some(key) = key {
            entry = entry.sign(key);
        }
        prev.clone_from(&entry.sha256);
        out.push(entry.line());
    }
    (out, prev)
}

fn write(dir: &Path, lines: &[String]) {
    std::fs::write(dir.join("audit.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn check(
    dir: &Path,
    heads: Vec<RecordedHead>,
    key: Option<&AuditKey>,
    accept: bool,
) -> Result<VerifyReport, VerifyError> {
    let options = VerifyOptions {
        heads,
        key,
        accept_ahead: accept,
        accept_unrecorded_head: accept,
    };
    verify_keyed(dir, &options)
}

fn kind(result: Result<VerifyReport, VerifyError>) -> (BreakKind, u64) {
    match result {
        Err(VerifyError::Broken { kind, line, .. }) => (kind, line),
        other => panic!("not broken: {other:?}"),
    }
}

#[tokio::test]
async fn the_writer_marks_lines_and_records_keyed_heads_in_both_places() {
    let data = tempfile::tempdir().unwrap();
    let ws = data.path().join("workspace");
    std::fs::create_dir(&ws).unwrap();
    let store = Arc::new(SessionStore::open(&ws.join("sessions.redb")).unwrap());
    let open = || {
        AuditLog::open_with(
            &ws,
            AuditLogOptions {
                head_store: Some(store.clone()),
                shelf: Some(data.path().to_path_buf()),
                key: Some(key()),
                max_bytes: u64::MAX,
            },
        )
        .unwrap()
    };
    for round in 0..2 {
        let log = open();
        for i in 0..3 {
            log.append(event(i)).await.unwrap();
        }
        drop(log);
        let shelf = read_shelf_head(data.path()).unwrap().unwrap();
        assert_eq!(shelf.seq, 3 * (round + 1));
        assert_eq!(shelf.keyed_from, Some(1), "kept across reopen");
        assert!(shelf.mac_holds(&key()));
        assert_eq!(read_session_heads(&store), vec![shelf]);
    }
    let heads = read_session_heads(&store);
    let report = check(&ws, heads, Some(&key()), false).unwrap();
    assert_eq!((report.lines, report.head), (6, HeadCheck::Matches));
    assert_eq!((report.keyed, report.unkeyed_lines), (true, 0));
}

#[test]
fn marks_are_checked_from_the_first_marked_line_on() {
    let dir = tempfile::tempdir().unwrap();
    let k = key();
    let (old, prev) = lines(1, 2, GENESIS, None);
    let (new, last) = lines(3, 2, &prev, Some(&k));
    let all = [old.clone(), new.clone()].concat();
    write(dir.path(), &all);
    let head = RecordedHead::new(4, &last, Some(3), Some(&k));
    let report = check(dir.path(), vec![head.clone()], Some(&k), false).unwrap();
    assert_eq!((report.unkeyed_lines, report.head), (2, HeadCheck::Matches));
    // Another key's marks are forged.
    let other = AuditKey::from_bytes([6; 32]);
    let (forged, _) = lines(3, 2, &prev, Some(&other));
    write(dir.path(), &[old.clone(), forged].concat());
    assert_eq!(
        kind(check(dir.path(), vec![head.clone()], Some(&k), true)),
        (BreakKind::Forged, 3)
    );
    // An unmarked line after marked ones is unkeyed, with or without the key.
    let (plain, _) = lines(5, 1, &last, None);
    write(dir.path(), &[all.clone(), plain].concat());
    assert_eq!(
        kind(check(dir.path(), vec![head.clone()], Some(&k), true)),
        (BreakKind::Unkeyed, 5)
    );
    assert_eq!(
        kind(check(dir.path(), vec![], None, true)),
        (BreakKind::Unkeyed, 5)
    );
    // The head's first keyed seq makes marks due even when every mark was stripped.
    let (stripped, stripped_last) = lines(1, 4, GENESIS, None);
    write(dir.path(), &stripped);
    let head4 = RecordedHead::new(4, &stripped_last, Some(3), Some(&k));
    assert_eq!(
        kind(check(dir.path(), vec![head4], Some(&k), true)),
        (BreakKind::Unkeyed, 3)
    );
}

#[test]
fn lines_past_the_head_and_a_missing_head_are_refused_unless_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let k = key();
    let (text, _) = lines(1, 5, GENESIS, Some(&k));
    write(dir.path(), &text);
    let entry: AuditEntry = serde_json::from_str(&text[2]).unwrap();
    let head3 = RecordedHead::new(3, &entry.sha256, Some(1), Some(&k));
    assert_eq!(
        kind(check(dir.path(), vec![head3.clone()], Some(&k), false)),
        (BreakKind::Ahead, 4)
    );
    let accepted = check(dir.path(), vec![head3.clone()], Some(&k), true).unwrap();
    assert_eq!(accepted.head, HeadCheck::Ahead(2));
    assert_eq!(
        kind(check(dir.path(), vec![], Some(&k), false)),
        (BreakKind::UnrecordedHead, 5)
    );
    assert_eq!(
        check(dir.path(), vec![], Some(&k), true).unwrap().head,
        HeadCheck::NotStored
    );
    // Truncated below the head.
    write(dir.path(), &text[..2]);
    assert_eq!(
        kind(check(dir.path(), vec![head3.clone()], Some(&k), true)).0,
        BreakKind::Truncated
    );
    // A head whose mark does not hold is set aside: no head is left.
    write(dir.path(), &text);
    let mut bad = head3.clone();
    bad.seq = 5;
    assert_eq!(
        kind(check(dir.path(), vec![bad.clone()], Some(&k), false)).0,
        BreakKind::UnrecordedHead
    );
    let report = check(dir.path(), vec![bad, head3.clone()], Some(&k), true).unwrap();
    assert_eq!(
        (report.head, report.heads_refused),
        (HeadCheck::Ahead(2), 1)
    );
    // An unmarked head counts only where nothing is marked.
    let plain = RecordedHead::new(5, "x", None, None);
    let report = check(dir.path(), vec![plain], Some(&k), true).unwrap();
    assert_eq!(
        (report.head, report.heads_refused),
        (HeadCheck::NotStored, 1)
    );
    let (old, old_last) = lines(1, 3, GENESIS, None);
    write(dir.path(), &old);
    let plain = RecordedHead::new(3, &old_last, None, None);
    let report = check(dir.path(), vec![plain], Some(&k), false).unwrap();
    assert_eq!((report.head, report.unkeyed_lines), (HeadCheck::Matches, 3));
    // A lower head must still match its line.
    let wrong = RecordedHead::new(2, &"0".repeat(64), Some(1), Some(&k));
    write(dir.path(), &text);
    let five: AuditEntry = serde_json::from_str(&text[4]).unwrap();
    let top = RecordedHead::new(5, &five.sha256, Some(1), Some(&k));
    assert_eq!(
        kind(check(dir.path(), vec![top, wrong], Some(&k), false)),
        (BreakKind::Edited, 2)
    );
}
