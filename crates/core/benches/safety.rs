//! The audit log's figures: the append cost per tool call, amortised, when 1, 8 and
//! 64 calls are in flight at once (group commit: one `write` + one fsync per batch, the head
//! committed non-durably; target ≤ 50 µs amortised = wall time of all appends / lines), and `verify` speed on a 200,000-line log (target ≥
//! 200,000 lines/s). Real files in a temporary folder; `sessions.redb` holds the head.
//!
//! Run with `cargo bench -p fuseforks-core --bench safety`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::sync::Arc;
use std::time::Instant;

use fuseforks_core::safety::{AuditEntry, AuditEvent, AuditLog, GENESIS, sha256_hex, verify_chain};
use fuseforks_core::sessions::SessionStore;

fn event(i: usize) -> AuditEvent {
    AuditEvent::new(
        "coder",
        "4f1c0a",
        "file_write",
        &format!("src/file_{i}.rs"),
        i.to_string().as_bytes(),
    )
}

fn appends(in_flight: usize, total: usize) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SessionStore::open(&dir.path().join("sessions.redb")).unwrap());
    let log = Arc::new(AuditLog::open(dir.path(), Some(store), u64::MAX).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    runtime.block_on(async {
        let mut tasks = Vec::new();
        for worker in 0..in_flight {
            let log = Arc::clone(&log);
            tasks.push(tokio::spawn(async move {
                for i in 0..total / in_flight {
                    log.append(event(worker * 1_000_000 + i)).await.unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    let per = started.elapsed().as_secs_f64() * 1e6 / total as f64;
    println!(
        "audit append, {in_flight:>2} in flight, {total} lines: {per:>9.1} µs per line (amortised)"
    );
}

fn verify(lines: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (mut text, mut prev) = (String::new(), GENESIS.to_owned());
    for i in 0..lines {
        let entry = AuditEntry::chain(event(i), i as u64 + 1, 1_700_000_000_000, &prev);
        text.push_str(&entry.line());
        text.push('\n');
        prev = entry.sha256;
    }
    // The floor: SHA-256 of every line once, nothing else (what verify cannot go below).
    let started = Instant::now();
    let hashed = text
        .lines()
        .map(|l| sha256_hex(l.as_bytes()).len())
        .sum::<usize>();
    let floor = started.elapsed().as_secs_f64();
    assert_eq!(hashed, lines * 64);
    println!(
        "sha256 of each line alone (floor), {lines} lines: {:.0} lines/s",
        lines as f64 / floor
    );
    std::fs::write(dir.path().join("audit.jsonl"), text).unwrap();
    let head = (lines as u64, prev);
    let started = Instant::now();
    let report = verify_chain(dir.path(), Some(&head)).unwrap();
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(report.lines, lines as u64);
    println!(
        "audit verify, {lines} lines: {:.0} lines/s ({secs:.3} s)",
        lines as f64 / secs
    );
}

fn main() {
    appends(1, 500);
    appends(8, 4_000);
    appends(64, 16_000);
    verify(200_000);
}
