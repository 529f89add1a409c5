//! The keyed audit chain through the binary (docs/threat-model.md, "The audit chain"): lines forged
//! without the key (appended with a recomputed plain chain, or a whole rewrite), truncation
//! with both recorded heads gone, and genuine lines past a rolled-back head all exit 13 from
//! `audit verify`, the last two passing only with their explicit flag; the key itself never
//! leaves the secret store.

use std::path::PathBuf;
use std::process::Output;

use fuseforks_core::safety::{AuditEntry, AuditEvent};
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::Value;

use crate::headless::{U, ask_args, command, log, stub_village};
use crate::{stderr, stdout, words};

/// The audit key of these tests (never to be seen outside the environment).
const AUDIT_KEY: &str = "00112233445566778899aabbccddeeff0123456789abcdef0f1e2d3c4b5a6978";
const KEY_VAR: &str = "FUSEFORKS_SECRET_AUDIT_KEY";

/// A village on a stub that answers `asks` requests.
async fn stub_and_village(asks: usize) -> (StubServer, TempDataDir) {
    let replies = (0..asks)
        .map(|i| wire_replies::text(fuseforks_core::llm::Wire::OpenAiCompat, &format!("a{i}"), U))
        .collect();
    let stub = StubServer::start(replies).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    (stub, data)
}

fn dir(data: &TempDataDir) -> String {
    data.data_dir().display().to_string()
}

/// One `ask` with the audit key in the environment when `keyed`.
fn ask(data: &TempDataDir, keyed: bool) -> Output {
    let mut c = command(ask_args(&dir(data), &[], "hi"), true);
    c.env_remove(KEY_VAR);
    if keyed {
        c.env(KEY_VAR, AUDIT_KEY);
    }
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

/// `audit verify --secrets env --json` plus `extra`, with the key when `keyed`.
fn verify(data: &TempDataDir, extra: &str, keyed: bool) -> Output {
    let line = format!(
        "audit verify --data-dir {} --secrets env --json {extra}",
        dir(data)
    );
    let mut c = command(words(&line), false);
    c.env_remove(KEY_VAR);
    if keyed {
        c.env(KEY_VAR, AUDIT_KEY);
    }
    c.output().unwrap()
}

fn report(out: &Output) -> Value {
    serde_json::from_str(stdout(out).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

fn audit_path(data: &TempDataDir) -> PathBuf {
    data.workspace().join("audit.jsonl")
}

fn shelf_head(data: &TempDataDir) -> PathBuf {
    data.data_dir().join("audit-head.json")
}

fn redb(data: &TempDataDir) -> PathBuf {
    data.workspace().join("sessions.redb")
}

fn lines(data: &TempDataDir) -> Vec<String> {
    std::fs::read_to_string(audit_path(data))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The lines `first_seq..first_seq + n` of a plain SHA-256 chain after `prev` (what someone
/// without the key can compute).
fn plain_chain(first_seq: u64, prev: &str, n: u64, target: &str) -> Vec<String> {
    let mut prev = prev.to_owned();
    (0..n)
        .map(|i| {
            let event = AuditEvent::new("rec", "-", "file_write", target, b"{}");
            let entry = AuditEntry::chain(event, first_seq + i, 1_700_000_000_000, &prev);
            prev.clone_from(&entry.sha256);
            entry.line()
        })
        .collect()
}

fn field(line: &str, name: &str) -> Value {
    serde_json::from_str::<Value>(line).unwrap()[name].clone()
}

fn assert_broken(out: &Output, reason: &str) {
    assert_eq!(
        out.status.code(),
        Some(13),
        "{}\n{}",
        stdout(out),
        stderr(out)
    );
    assert!(
        stderr(out).contains("AUDIT_CHAIN_BROKEN"),
        "{}",
        stderr(out)
    );
    assert_eq!(report(out)["reason"], reason, "{}", stdout(out));
}

/// Two asks written with the key: every line carries a mac, both heads are recorded, and the
/// chain verifies with the key.
async fn keyed_village() -> (StubServer, TempDataDir) {
    let (stub, data) = stub_and_village(2).await;
    ask(&data, true);
    ask(&data, true);
    let written = lines(&data);
    assert!(written.len() >= 2, "{written:?}");
    for line in &written {
        let mac = field(line, "mac");
        assert_eq!(mac.as_str().map(str::len), Some(64), "{line}");
        assert!(line.find("\"sha256\"") < line.find("\"mac\""), "{line}");
    }
    assert!(shelf_head(&data).is_file(), "the shelf head is recorded");
    let ok = verify(&data, "", true);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let r = report(&ok);
    assert_eq!(r["head"], "matches", "{r}");
    assert_eq!(r["keyed"], true, "{r}");
    assert_eq!(r["unkeyedLines"], 0, "{r}");
    (stub, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_lines_appended_with_a_recomputed_plain_chain_are_refused() {
    let (_stub, data) = keyed_village().await;
    let written = lines(&data);
    let last = written.last().unwrap();
    let seq = field(last, "seq").as_u64().unwrap();
    let prev = field(last, "sha256");
    let forged = plain_chain(seq + 1, prev.as_str().unwrap(), 50, "forged.md");
    let text = std::fs::read_to_string(audit_path(&data)).unwrap() + &forged.join("\n") + "\n";
    std::fs::write(audit_path(&data), text).unwrap();
    assert_broken(&verify(&data, "", true), "unkeyed");
    assert_broken(&verify(&data, "--accept-ahead", true), "unkeyed");
    // Without the key: unmarked lines after marked ones are still refused.
    let unkeyed = verify(&data, "", false);
    assert_broken(&unkeyed, "unkeyed");
    assert!(
        stderr(&unkeyed).contains("AUDIT_UNKEYED"),
        "{}",
        stderr(&unkeyed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncation_with_both_heads_deleted_passes_only_with_the_flag_and_genuine_lines() {
    let (_stub, data) = keyed_village().await;
    let written = lines(&data);
    std::fs::remove_file(redb(&data)).unwrap();
    std::fs::remove_file(shelf_head(&data)).unwrap();
    std::fs::write(audit_path(&data), format!("{}\n", written[0])).unwrap();
    let refused = verify(&data, "", true);
    assert_broken(&refused, "unrecorded_head");
    assert!(
        stderr(&refused).contains("--accept-unrecorded-head"),
        "{}",
        stderr(&refused)
    );
    let accepted = verify(&data, "--accept-unrecorded-head", true);
    assert_eq!(accepted.status.code(), Some(0), "{}", stderr(&accepted));
    assert_eq!(report(&accepted)["head"], "not_stored");
    // A forged line after the genuine one: the flag does not accept it.
    let prev = field(&written[0], "sha256");
    let forged = plain_chain(2, prev.as_str().unwrap(), 1, "x.md");
    std::fs::write(
        audit_path(&data),
        format!("{}\n{}\n", written[0], forged[0]),
    )
    .unwrap();
    assert_broken(&verify(&data, "--accept-unrecorded-head", true), "unkeyed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_rewrite_without_the_key_is_refused() {
    let (_stub, data) = keyed_village().await;
    let n = lines(&data).len() as u64;
    // sessions.redb gone: the head on the shelf still holds.
    std::fs::remove_file(redb(&data)).unwrap();
    let plain = plain_chain(1, fuseforks_core::safety::GENESIS, n, "rewritten.md");
    std::fs::write(audit_path(&data), plain.join("\n") + "\n").unwrap();
    assert_broken(&verify(&data, "", true), "unkeyed");
    // The same with a garbage mac on every line.
    let garbage: Vec<String> = plain
        .iter()
        .map(|l| format!("{},\"mac\":\"{}\"}}", &l[..l.len() - 1], "ab".repeat(32)))
        .collect();
    std::fs::write(audit_path(&data), garbage.join("\n") + "\n").unwrap();
    assert_broken(&verify(&data, "", true), "forged");
    // Both heads gone as well: refused without the flag.
    std::fs::remove_file(shelf_head(&data)).unwrap();
    assert_broken(&verify(&data, "", true), "forged");
    std::fs::write(audit_path(&data), plain.join("\n") + "\n").unwrap();
    assert_broken(&verify(&data, "", true), "unrecorded_head");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn genuine_lines_past_a_rolled_back_head_pass_only_with_accept_ahead() {
    let (_stub, data) = stub_and_village(2).await;
    ask(&data, true);
    let before = lines(&data).len();
    let old_redb = std::fs::read(redb(&data)).unwrap();
    let old_head = std::fs::read(shelf_head(&data)).unwrap();
    ask(&data, true);
    let after = lines(&data).len();
    assert!(after > before);
    // As after a crash: the recorded heads behind the file.
    std::fs::write(redb(&data), old_redb).unwrap();
    std::fs::write(shelf_head(&data), old_head).unwrap();
    let refused = verify(&data, "", true);
    assert_broken(&refused, "ahead");
    let err = stderr(&refused);
    assert!(
        err.contains("--accept-ahead") && err.contains("every second") && err.contains("crash"),
        "{err}"
    );
    let accepted = verify(&data, "--accept-ahead", true);
    assert_eq!(accepted.status.code(), Some(0), "{}", stderr(&accepted));
    let want = format!("ahead_by_{}", after - before);
    assert_eq!(report(&accepted)["head"], want.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_never_leaves_the_secret_store() {
    let (_stub, data) = stub_and_village(1).await;
    let asked = ask(&data, true);
    let verified = verify(&data, "", true);
    let mut seen = vec![
        ("ask stdout", stdout(&asked)),
        ("ask stderr", stderr(&asked)),
        ("verify stdout", stdout(&verified)),
        ("verify stderr", stderr(&verified)),
        ("log", log(&data)),
    ];
    for path in [audit_path(&data), shelf_head(&data), redb(&data)] {
        let bytes = std::fs::read(&path).unwrap();
        seen.push(("file", String::from_utf8_lossy(&bytes).into_owned()));
    }
    for (what, text) in seen {
        let lower = text.to_lowercase();
        assert!(
            !lower.contains(AUDIT_KEY),
            "the key is in the {what}: {text}"
        );
        assert!(
            !lower.contains(&AUDIT_KEY[..16]),
            "part of the key is in the {what}"
        );
    }
    assert!(lines(&data).iter().all(|l| field(l, "mac").is_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_variable_the_chain_is_unkeyed_and_the_log_says_so_once() {
    let (_stub, data) = stub_and_village(2).await;
    ask(&data, false);
    let text = log(&data);
    assert_eq!(
        text.matches("audit: the chain is not keyed").count(),
        1,
        "{text}"
    );
    assert!(text.contains(KEY_VAR), "{text}");
    assert!(lines(&data).iter().all(|l| field(l, "mac").is_null()));
    let unkeyed = verify(&data, "", false);
    assert_eq!(unkeyed.status.code(), Some(0), "{}", stderr(&unkeyed));
    assert!(
        stderr(&unkeyed).contains("AUDIT_UNKEYED"),
        "{}",
        stderr(&unkeyed)
    );
    assert_eq!(report(&unkeyed)["keyed"], false);
    // An old village taking the key: its earlier lines are counted as unkeyed.
    let old = lines(&data).len();
    ask(&data, true);
    let ok = verify(&data, "", true);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let r = report(&ok);
    assert_eq!(r["unkeyedLines"], old as u64, "{r}");
    assert_eq!(r["head"], "matches", "{r}");
}

/// A keyed chain continued by a run without the key (`--secrets env`, no variable): the run
/// says on stderr, before anything is written, that its lines will carry no mark and how to
/// avoid it, instead of leaving `audit verify` to call them tampered with later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_the_key_of_a_keyed_chain_says_so_on_stderr() {
    let (stub, data) = keyed_village().await;
    stub.push([wire_replies::text(
        fuseforks_core::llm::Wire::OpenAiCompat,
        "ok",
        U,
    )]);
    let out = ask(&data, false);
    let err = stderr(&out);
    assert!(
        err.contains("warn: [AUDIT_UNKEYED] this village's audit log is keyed")
            && err.contains("--secrets keyring"),
        "{err}"
    );
    // A fresh village without the key writes an unkeyed chain quietly (nothing to continue).
    let (_stub, fresh) = stub_and_village(1).await;
    assert!(!stderr(&ask(&fresh, false)).contains("AUDIT_UNKEYED"));
}
