//! Schedule probes with real child processes: each outcome, the extra lines and their bound,
//! the cleared environment, the timeout that ends the group; and the one approval writer
//! (`probe_approvals.json`: key, 0600, atomic, unknown fields kept).

use std::path::Path;
use std::time::{Duration, Instant};

use fuseforks_core::probe::{
    ApprovalState, EXTRA_MAX_LINES, Outcome, ProbeContext, approval_state, approve_probe,
    approve_probes, execute_probe, run_probe,
};
use fuseforks_core::village::{ScheduleProbe, ShelfStore};

const VILLAGE_ID: &str = "v-1";

fn probe(command: &str, args: &[&str], expect: &str) -> ScheduleProbe {
    serde_json::from_value(serde_json::json!({
        "command": command, "args": args, "expect": expect, "timeoutSecs": 10
    }))
    .unwrap()
}

/// A data folder with its workspace.
fn data_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("workspace")).unwrap();
    dir
}

/// Runs `p` approved first (the approval written through the one writer).
async fn approved_run(dir: &Path, p: &ScheduleProbe) -> fuseforks_core::probe::Report {
    let shelf = ShelfStore::new(dir);
    approve_probe(&shelf, p, VILLAGE_ID).unwrap();
    let workspace = dir.join("workspace");
    let ctx = ProbeContext {
        workspace: &workspace,
        village_id: VILLAGE_ID,
        shelf: &shelf,
    };
    run_probe(p, &ctx).await
}

#[tokio::test]
async fn the_first_line_trimmed_equal_to_expect_is_a_match_and_the_rest_is_appended() {
    let dir = data_dir();
    let p = probe("printf", &["  ready \\nextra 1\\nextra 2\\n"], "ready");
    let report = approved_run(dir.path(), &p).await;
    assert_eq!(report.outcome, Outcome::Match, "{report:?}");
    assert_eq!(report.first_line.as_deref(), Some("ready"));
    assert_eq!(report.extra_lines, ["extra 1", "extra 2"]);
    assert_eq!(report.appended_text().as_deref(), Some("extra 1\nextra 2"));
    assert_eq!(report.exit_code, Some(0));
}

#[tokio::test]
async fn another_first_line_is_no_match_whatever_the_exit_code() {
    let dir = data_dir();
    let report = approved_run(dir.path(), &probe("echo", &["not yet"], "ready")).await;
    assert_eq!(report.outcome, Outcome::NoMatch, "{report:?}");
    assert_eq!(report.excerpt(), "not yet");
    // The exit code is ignored: a failing command that prints the line matches.
    let p = probe("sh", &["-c", "echo ready; exit 3"], "ready");
    let report = approved_run(dir.path(), &p).await;
    assert_eq!(
        (report.outcome, report.exit_code),
        (Outcome::Match, Some(3))
    );
    let silent = approved_run(dir.path(), &probe("true", &[], "ready")).await;
    assert_eq!(silent.outcome, Outcome::NoMatch);
    assert!(silent.reason.contains("no stdout"), "{}", silent.reason);
}

#[tokio::test]
async fn a_missing_command_or_cwd_is_an_error_with_its_reason() {
    let dir = data_dir();
    let report = approved_run(dir.path(), &probe("fuseforks-no-such-cmd", &[], "x")).await;
    assert_eq!(report.outcome, Outcome::Error);
    assert_eq!(report.reason, "command not found");
    let mut p = probe("echo", &["x"], "x");
    p.cwd = Some("/no/such/folder/anywhere".into());
    let report = approved_run(dir.path(), &p).await;
    assert_eq!(
        (report.outcome, report.reason.as_str()),
        (Outcome::Error, "cwd is not a folder")
    );
}

#[tokio::test]
async fn a_relative_cwd_is_under_the_workspace() {
    let dir = data_dir();
    std::fs::create_dir(dir.path().join("workspace/sub")).unwrap();
    let mut p = probe("pwd", &[], "");
    p.cwd = Some("sub".into());
    let report = execute_probe(&p, &dir.path().join("workspace")).await;
    let expected = dir.path().join("workspace/sub");
    assert_eq!(
        report.first_line.as_deref(),
        Some(expected.to_str().unwrap())
    );
}

#[tokio::test]
async fn a_timeout_ends_the_whole_group_and_keeps_what_was_written() {
    let dir = data_dir();
    let mut p = probe(
        "sh",
        &["-c", "sleep 60 & echo $! > child.pid; echo started; wait"],
        "done",
    );
    p.timeout_secs = 1;
    let started = Instant::now();
    let report = approved_run(dir.path(), &p).await;
    assert_eq!(report.outcome, Outcome::Timeout, "{report:?}");
    assert!(report.reason.contains("1 s"), "{}", report.reason);
    assert_eq!(report.first_line.as_deref(), Some("started"));
    assert!(started.elapsed() < Duration::from_secs(6));
    let pid = std::fs::read_to_string(dir.path().join("workspace/child.pid")).unwrap();
    assert!(
        gone_within(pid.trim(), Duration::from_secs(3)),
        "the sleeping grandchild {pid} outlived the probe"
    );
}

/// Whether the process is gone (or a zombie) within `limit`.
fn gone_within(pid: &str, limit: Duration) -> bool {
    let gone = || {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit(')').next().map(|r| r.trim().to_owned()));
        state.is_none_or(|rest| rest.starts_with('Z') || rest.starts_with('X'))
    };
    fuseforks_testkit::eventually_blocking(format!("pid {pid} to end"), limit, gone);
    true
}

#[tokio::test]
async fn an_unapproved_probe_does_not_run() {
    let dir = data_dir();
    let shelf = ShelfStore::new(dir.path());
    let workspace = dir.path().join("workspace");
    let ctx = ProbeContext {
        workspace: &workspace,
        village_id: VILLAGE_ID,
        shelf: &shelf,
    };
    let p = probe("touch", &["ran"], "x");
    let report = run_probe(&p, &ctx).await;
    assert_eq!(report.outcome, Outcome::Unapproved);
    assert!(!workspace.join("ran").exists(), "an unapproved probe ran");
    // Approved for another village: still unapproved here.
    approve_probe(&shelf, &p, "another-village").unwrap();
    assert_eq!(run_probe(&p, &ctx).await.outcome, Outcome::Unapproved);
    // A broken approvals file approves nothing.
    std::fs::write(dir.path().join("probe_approvals.json"), "{broken").unwrap();
    let report = run_probe(&p, &ctx).await;
    assert_eq!(report.outcome, Outcome::Unapproved);
    assert!(
        report.reason.contains("cannot be read"),
        "{}",
        report.reason
    );
    assert!(!workspace.join("ran").exists());
}

#[tokio::test]
async fn extra_lines_are_bounded() {
    let dir = data_dir();
    let report = approved_run(dir.path(), &probe("seq", &["1", "500"], "1")).await;
    assert_eq!(report.outcome, Outcome::Match);
    assert_eq!(report.extra_lines.len(), EXTRA_MAX_LINES);
    assert!(report.extra_truncated);
    assert!(
        report
            .appended_text()
            .unwrap()
            .ends_with("[more output left out]")
    );
}

/// Set in the re-executed test process that holds the canary secret.
const CHILD_MARK: &str = "FUSEFORKS_PROBE_ENV_TEST_CHILD";
const CANARY: &str = "sk-probe-canary-7f3a";

#[tokio::test]
async fn the_environment_is_cleared_no_secret_of_the_parent_reaches_the_probe() {
    if std::env::var_os(CHILD_MARK).is_some() {
        assert_eq!(
            std::env::var("FUSEFORKS_SECRET_OPENAI").as_deref(),
            Ok(CANARY)
        );
        let dir = data_dir();
        let report = approved_run(dir.path(), &probe("env", &[], "never")).await;
        let seen = report.excerpt();
        assert!(seen.contains("PATH="), "{seen}");
        for leak in [CANARY, "FUSEFORKS_SECRET", "OTHER_PARENT_VAR", CHILD_MARK] {
            assert!(!seen.contains(leak), "the probe saw {leak}: {seen}");
        }
        return;
    }
    // Re-run this test in a child test process whose environment holds a secret.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "probes::the_environment_is_cleared_no_secret_of_the_parent_reaches_the_probe",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD_MARK, "1")
        .env("FUSEFORKS_SECRET_OPENAI", CANARY)
        .env("OTHER_PARENT_VAR", "visible?")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_approval_key_is_the_sha256_of_the_canonical_json_without_expect() {
    let dir = data_dir();
    let shelf = ShelfStore::new(dir.path());
    let mut p = probe("git", &["status", "--short"], "clean");
    // printf '%s' '{"args":["status","--short"],"command":"git","cwd":null,"villageId":"v-1"}' | sha256sum
    let key = "9c314a19b81ca9b55c5a69dafdd7e369545fc15f1c2337a38d2b8841682b2ffa";
    assert_eq!(approve_probe(&shelf, &p, VILLAGE_ID).unwrap().key, key);
    p.expect = "dirty".into();
    p.timeout_secs = 5;
    assert_eq!(
        approval_state(&shelf, &p, VILLAGE_ID),
        ApprovalState::Approved,
        "expect and timeout are not part of the key"
    );
    p.args.reverse();
    assert_eq!(
        approval_state(&shelf, &p, VILLAGE_ID),
        ApprovalState::Unapproved
    );
}

#[cfg(unix)]
#[test]
fn the_approval_file_is_written_owner_only_atomically_keeping_unknown_fields() {
    use std::os::unix::fs::PermissionsExt;
    let dir = data_dir();
    let file = dir.path().join("probe_approvals.json");
    std::fs::write(&file, r#"{"hashes": [], "note": "kept"}"#).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let shelf = ShelfStore::new(dir.path());
    let p = probe("echo", &["ok"], "ok");
    let first = approve_probe(&shelf, &p, VILLAGE_ID).unwrap();
    assert!(!first.already);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["note"], "kept");
    assert_eq!(written["hashes"], serde_json::json!([first.key]));
    // Again: nothing to add, nothing written twice.
    assert!(approve_probe(&shelf, &p, VILLAGE_ID).unwrap().already);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.ends_with(".tmp")),
        "a temp file was left: {names:?}"
    );
    // A file that does not read is never written over.
    std::fs::write(&file, "{broken").unwrap();
    let err = approve_probe(&shelf, &probe("echo", &["2"], "2"), VILLAGE_ID).unwrap_err();
    assert_eq!(fuseforks_core::Coded::code(&err), err.code());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{broken");
}

#[test]
fn approving_several_probes_writes_the_file_once_with_every_new_key_in_order() {
    let dir = data_dir();
    let file = dir.path().join("probe_approvals.json");
    let shelf = ShelfStore::new(dir.path());
    let (a, b) = (probe("echo", &["a"], "a"), probe("echo", &["b"], "b"));
    let a_key = approve_probe(&shelf, &a, VILLAGE_ID).unwrap().key;
    let written = approve_probes(&shelf, &[a.clone(), b.clone(), b.clone()], VILLAGE_ID).unwrap();
    let already: Vec<bool> = written.iter().map(|w| w.already).collect();
    assert_eq!(
        already,
        [true, false, true],
        "a known key and a repeat add nothing"
    );
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        on_disk["hashes"],
        serde_json::json!([a_key, written[1].key])
    );
    assert_eq!(
        approval_state(&shelf, &b, VILLAGE_ID),
        ApprovalState::Approved
    );
    // Nothing new: the file is not rewritten (a broken file stays as it is, and is reported).
    std::fs::write(&file, "{broken").unwrap();
    assert!(approve_probes(&shelf, &[a], VILLAGE_ID).is_err());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{broken");
}

#[tokio::test]
async fn a_probe_that_exits_leaving_a_child_holding_stdout_is_not_a_timeout_and_leaves_nothing() {
    let dir = data_dir();
    let mut p = probe(
        "sh",
        &["-c", "sleep 60 & echo $! > child.pid; echo ready"],
        "ready",
    );
    p.timeout_secs = 20;
    let started = Instant::now();
    let report = approved_run(dir.path(), &p).await;
    assert_eq!(report.outcome, Outcome::Match, "{report:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let pid = std::fs::read_to_string(dir.path().join("workspace/child.pid")).unwrap();
    assert!(
        gone_within(pid.trim(), Duration::from_secs(3)),
        "the probe's background child {pid} was left running"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_probe_is_confined_like_run_writing_only_in_its_cwd() {
    if !fuseforks_testkit::landlock(1) {
        return;
    }
    let dir = data_dir();
    let outside = dir.path().join("outside");
    let p = probe(
        "sh",
        &[
            "-c",
            &format!("touch inside; touch {} ; echo done", outside.display()),
        ],
        "done",
    );
    let report = approved_run(dir.path(), &p).await;
    assert_eq!(report.outcome, Outcome::Match, "{report:?}");
    assert!(dir.path().join("workspace/inside").exists());
    assert!(!outside.exists(), "the probe wrote outside its cwd");
}
