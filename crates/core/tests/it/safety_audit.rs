//! The audit log: the writer's chain across reopen and rotation, its head in `sessions.redb`,
//! and `verify_chain` naming each kind of tampering (a property test over random logs).

use std::path::Path;
use std::sync::Arc;

use fuseforks_core::safety::{
    AuditEntry, AuditEvent, AuditLog, BreakKind, GENESIS, HeadCheck, VerifyError, verify_chain,
};
use fuseforks_core::sessions::SessionStore;
use proptest::prelude::*;

fn event(i: usize) -> AuditEvent {
    AuditEvent::new(
        "rec",
        "root",
        "file_write",
        &format!("notes/{i}.md"),
        i.to_string().as_bytes(),
    )
}

/// A chained log of `n` lines, written as text, and its head.
fn chained(n: usize) -> (Vec<String>, (u64, String)) {
    let (mut lines, mut prev) = (Vec::new(), GENESIS.to_owned());
    for i in 0..n {
        let entry = AuditEntry::chain(event(i), i as u64 + 1, 1_700_000_000_000 + i as i64, &prev);
        prev = entry.sha256.clone();
        lines.push(entry.line());
    }
    (lines, (n as u64, prev))
}

fn write(dir: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    if !lines.is_empty() {
        text.push('\n');
    }
    std::fs::write(dir.join("audit.jsonl"), text).unwrap();
}

fn kind_at(dir: &Path, head: &(u64, String)) -> (BreakKind, u64) {
    match verify_chain(dir, Some(head)) {
        Err(VerifyError::Broken { kind, line, .. }) => (kind, line),
        other => panic!("not broken: {other:?}"),
    }
}

#[tokio::test]
async fn the_writer_chains_across_reopen_and_rotation_and_stores_the_head() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SessionStore::open(&dir.path().join("sessions.redb")).unwrap());
    {
        let log = AuditLog::open(dir.path(), Some(store.clone()), 600).unwrap();
        for i in 0..5 {
            assert_eq!(log.append(event(i)).await.unwrap(), i as u64 + 1);
        }
    }
    let log = AuditLog::open(dir.path(), Some(store.clone()), 600).unwrap();
    assert_eq!(
        log.append(event(5)).await.unwrap(),
        6,
        "the chain goes on after a reopen"
    );
    drop(log);
    let head = store.audit_head().unwrap().unwrap();
    assert_eq!(head.0, 6);
    let report = verify_chain(dir.path(), Some(&head)).unwrap();
    assert_eq!(report.lines, 6);
    assert_eq!(report.head, HeadCheck::Matches);
    assert!(report.files > 1, "600 bytes rotate: {report:?}");
    // A rotated file removed: the first line left does not start the chain.
    let first = fuseforks_core::safety::audit_files(dir.path()).unwrap();
    std::fs::remove_file(&first[0]).unwrap();
    let err = verify_chain(dir.path(), Some(&head)).unwrap_err();
    assert!(
        matches!(
            err,
            VerifyError::Broken {
                kind: BreakKind::Deleted,
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_torn_tail_is_cut_at_open_and_a_head_ahead_of_the_file_is_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let (lines, head) = chained(3);
    let mut text = lines.join("\n");
    text.push_str("\n{\"seq\":4,\"tsMs\"");
    std::fs::write(dir.path().join("audit.jsonl"), &text).unwrap();
    assert!(matches!(
        verify_chain(dir.path(), Some(&head)),
        Err(VerifyError::Broken {
            kind: BreakKind::Truncated,
            line: 4,
            ..
        })
    ));
    let log = AuditLog::open(dir.path(), None, u64::MAX).unwrap();
    assert_eq!(log.append(event(3)).await.unwrap(), 4);
    drop(log);
    let report = verify_chain(dir.path(), None).unwrap();
    assert_eq!(report.lines, 4);
    // The stored head says 9 lines: the log lost its end.
    let (kind, _) = kind_at(dir.path(), &(9, "x".repeat(64)));
    assert_eq!(kind, BreakKind::Truncated);
}

#[test]
fn an_intact_log_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let (lines, head) = chained(50);
    write(dir.path(), &lines);
    let report = verify_chain(dir.path(), Some(&head)).unwrap();
    assert_eq!((report.lines, report.head), (50, HeadCheck::Matches));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn an_edited_line_is_named(n in 2usize..40, pick in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), ch in proptest::char::range('!', '~')) {
        let dir = tempfile::tempdir().unwrap();
        let (mut lines, head) = chained(n);
        let i = pick.index(n);
        // Any character after the seq ("{\"seq\":N,") changed to another.
        let start = lines[i].find(',').unwrap() + 1;
        let bytes: Vec<char> = lines[i].chars().collect();
        let j = start + at.index(bytes.len() - start);
        prop_assume!(bytes[j] != ch);
        let mut changed = bytes.clone();
        changed[j] = ch;
        lines[i] = changed.into_iter().collect();
        write(dir.path(), &lines);
        let (kind, line) = kind_at(dir.path(), &head);
        prop_assert_eq!(line, i as u64 + 1);
        prop_assert!(matches!(kind, BreakKind::Edited | BreakKind::Malformed), "{:?}", kind);
    }

    #[test]
    fn a_deleted_line_is_named(n in 3usize..40, pick in any::<prop::sample::Index>()) {
        let dir = tempfile::tempdir().unwrap();
        let (mut lines, head) = chained(n);
        let i = pick.index(n - 1); // not the last: that is truncation
        lines.remove(i);
        write(dir.path(), &lines);
        prop_assert_eq!(kind_at(dir.path(), &head), (BreakKind::Deleted, i as u64 + 1));
    }

    #[test]
    fn reordered_lines_are_named(n in 3usize..40, pick in any::<prop::sample::Index>(), gap in 1usize..5) {
        let dir = tempfile::tempdir().unwrap();
        let (mut lines, head) = chained(n);
        let i = pick.index(n - 1);
        let j = (i + gap).min(n - 1);
        lines.swap(i, j);
        write(dir.path(), &lines);
        prop_assert_eq!(kind_at(dir.path(), &head), (BreakKind::Reordered, i as u64 + 1));
    }

    #[test]
    fn a_truncated_log_is_named(n in 2usize..40, keep in any::<prop::sample::Index>(), torn in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let (lines, head) = chained(n);
        let k = keep.index(n); // lines kept: 0..n-1
        if torn {
            let mut text = lines[..k].join("\n");
            if k > 0 { text.push('\n'); }
            text.push_str(&lines[k][..lines[k].len() / 2]);
            std::fs::write(dir.path().join("audit.jsonl"), text).unwrap();
        } else {
            write(dir.path(), &lines[..k]);
        }
        prop_assert_eq!(kind_at(dir.path(), &head).0, BreakKind::Truncated);
    }
}

/// A line as written before `approvedBy` existed: the field and its hash taken out.
fn without_approved_by(line: &str) -> String {
    let body =
        line[..line.find(",\"sha256\"").unwrap()].replacen(",\"approvedBy\":\"none\"", "", 1);
    let hash = fuseforks_core::safety::sha256_hex(format!("{body}}}").as_bytes());
    format!("{body},\"sha256\":\"{hash}\"}}")
}

/// A log whose first lines were written before `approvedBy` existed: the writer goes on after
/// them with the field, and the whole chain verifies.
#[tokio::test]
async fn old_lines_without_approved_by_and_new_lines_with_it_verify_as_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let (mut lines, mut prev) = (Vec::new(), GENESIS.to_owned());
    for i in 0..3 {
        let new = AuditEntry::chain(event(i), i as u64 + 1, 1_700_000_000_000, &prev).line();
        let old = without_approved_by(&new);
        assert!(!old.contains("approvedBy"));
        prev = serde_json::from_str::<AuditEntry>(&old).unwrap().sha256;
        lines.push(old);
    }
    write(dir.path(), &lines);
    assert_eq!(
        verify_chain(dir.path(), None).unwrap().lines,
        3,
        "old lines alone"
    );
    {
        let log = AuditLog::open(dir.path(), None, 1 << 20).unwrap();
        let by = fuseforks_core::safety::ApprovedBy::RunRule;
        assert_eq!(log.append(event(3).approved_by(by)).await.unwrap(), 4);
    }
    let text = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("\"approvedBy\":\"rule:run.json\"")
    );
    assert_eq!(verify_chain(dir.path(), None).unwrap().lines, 4);
}
