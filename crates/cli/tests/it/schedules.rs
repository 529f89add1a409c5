//! `schedules` and `schedules approve`: the listing's JSON shape, the refusal without a
//! terminal unless `--yes`, and the preflight's `PROBE_UNAPPROVED` gone once approved.

use fuseforks_testkit::TempDataDir;
use serde_json::{Value, json};

use crate::headless::stub_village;
use crate::{cli, stderr, stdout};

/// A village (agent `rec`) with two schedules: `s1` daily with a probe and an acceptance
/// probe, `s2` every 15 minutes, disabled, without probes.
fn village_with_schedules() -> (TempDataDir, String) {
    let data = TempDataDir::new();
    stub_village("http://127.0.0.1:9/v1").write(&data);
    std::fs::create_dir_all(data.workspace().join("sub")).unwrap();
    let schedules = json!([
        {"id": "s1", "to": "rec", "message": "morning", "createdAtMs": 0,
         "recurrence": {"kind": "daily", "hour": 9, "minute": 5},
         "lastConsumedDueMs": 1_764_550_800_000_i64,
         "probe": {"command": "echo", "args": ["ready", "a b"], "expect": "ready a b"},
         "acceptance": {"command": "true", "expect": "done", "maxAttempts": 3, "cwd": "sub"}},
        {"id": "s2", "to": "rec", "message": "tick", "createdAtMs": 0, "enabled": false,
         "recurrence": {"kind": "interval", "everyMinutes": 15}}
    ]);
    std::fs::write(
        data.workspace().join("schedules.json"),
        serde_json::to_string_pretty(&schedules).unwrap(),
    )
    .unwrap();
    let dir = data.data_dir().display().to_string();
    (data, dir)
}

fn listing(dir: &str) -> Value {
    let out = cli(&format!("schedules --data-dir {dir} --json"));
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn unapproved_findings(dir: &str) -> Vec<String> {
    let out = cli(&format!(
        "check --for serve --data-dir {dir} --start rec --secrets env --json"
    ));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "PROBE_UNAPPROVED")
        .map(|f| f["message"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_json_listing_names_each_schedule_its_recurrence_and_its_approvals() {
    let (_data, dir) = village_with_schedules();
    let list = listing(&dir);
    assert!(
        list["timeZone"].is_string() || list["timeZone"].is_null(),
        "{list}"
    );
    let rows = list["schedules"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let s1 = &rows[0];
    assert_eq!(s1["id"], "s1");
    assert_eq!(s1["to"], "rec");
    assert_eq!(s1["enabled"], true);
    assert_eq!(s1["recurrence"], "daily at 09:05");
    assert_eq!(s1["lastConsumedDueMs"], 1_764_550_800_000_i64);
    let last = s1["lastConsumed"].as_str().unwrap();
    assert!(
        last.starts_with("2025-12-01T") && last.len() == 25,
        "ISO 8601 with an offset: {last}"
    );
    assert_eq!(
        s1["probe"],
        json!({"command": "echo", "args": ["ready", "a b"], "cwd": null,
               "expect": "ready a b", "timeoutSecs": 60, "approval": "unapproved"})
    );
    assert_eq!(s1["acceptance"]["maxAttempts"], 3);
    assert_eq!(s1["acceptance"]["cwd"], "sub");
    assert_eq!(s1["acceptance"]["approval"], "unapproved");
    let s2 = &rows[1];
    assert_eq!(
        (
            &s2["recurrence"],
            &s2["enabled"],
            &s2["probe"],
            &s2["lastConsumed"]
        ),
        (
            &json!("every 15 minutes"),
            &json!(false),
            &Value::Null,
            &Value::Null
        )
    );
    let human = cli(&format!("schedules --data-dir {dir}"));
    let text = stdout(&human);
    assert!(
        text.contains("s1  -> rec  daily at 09:05") && text.contains("echo (unapproved)"),
        "{text}"
    );
}

#[test]
fn approve_refuses_without_a_terminal_unless_yes_then_the_preflight_finding_is_gone() {
    let (data, dir) = village_with_schedules();
    assert_eq!(unapproved_findings(&dir).len(), 2, "probe and acceptance");

    // `cli` gives the binary no stdin: not a terminal.
    let refused = cli(&format!("schedules approve --data-dir {dir} s1"));
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let err = stderr(&refused);
    assert!(err.contains("[CONFIRMATION_REQUIRED]"), "{err}");
    assert!(err.contains("Fix: ") && err.contains("--yes"), "{err}");
    assert!(
        stdout(&refused).contains("command:    echo ready 'a b'"),
        "the exact command line is shown: {}",
        stdout(&refused)
    );
    assert!(!data.data_dir().join("probe_approvals.json").exists());
    assert_eq!(unapproved_findings(&dir).len(), 2);

    let approved = cli(&format!("schedules approve --data-dir {dir} s1 --yes"));
    assert!(approved.status.success(), "{}", stderr(&approved));
    let shown = stdout(&approved);
    let village_id = std::fs::read_to_string(data.workspace().join("village_id")).unwrap();
    assert!(
        shown.contains(&format!("village id: {}", village_id.trim())),
        "{shown}"
    );
    assert!(
        shown.contains("(the workspace)") && shown.contains("approved: probe"),
        "{shown}"
    );
    let left = unapproved_findings(&dir);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].contains("acceptance"), "{left:?}");
    assert_eq!(
        listing(&dir)["schedules"][0]["probe"]["approval"],
        "approved"
    );

    let acceptance = cli(&format!(
        "schedules approve --data-dir {dir} s1 --acceptance --yes --secrets env"
    ));
    assert!(acceptance.status.success(), "{}", stderr(&acceptance));
    assert!(unapproved_findings(&dir).is_empty());
    let again = cli(&format!("schedules approve --data-dir {dir} s1 --yes"));
    assert!(
        stdout(&again).contains("already approved"),
        "{}",
        stdout(&again)
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(data.data_dir().join("probe_approvals.json")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    }
}

#[test]
fn approve_names_an_unknown_schedule_or_a_missing_probe() {
    let (data, dir) = village_with_schedules();
    let unknown = cli(&format!("schedules approve --data-dir {dir} nope --yes"));
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("[SCHEDULE_NOT_FOUND]"));
    let missing = cli(&format!("schedules approve --data-dir {dir} s2 --yes"));
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("[SCHEDULE_PROBE_MISSING]"));
    std::fs::write(data.workspace().join("schedules.json"), "{broken").unwrap();
    let broken = cli(&format!("schedules --data-dir {dir} --json"));
    assert_eq!(broken.status.code(), Some(5));
    assert!(
        stderr(&broken).contains("schedules.json"),
        "{}",
        stderr(&broken)
    );
    assert!(stdout(&broken).is_empty());
    let no_village = cli("schedules --data-dir /nonexistent/fuseforks-village --json");
    assert_eq!(no_village.status.code(), Some(5));
    assert!(stdout(&no_village).is_empty());
}

/// `schedules approve` on a terminal (a pseudo-terminal made by util-linux `script`): `n`
/// declines (exit 8, nothing written), `y` approves. Skipped where `script` is absent.
#[test]
fn on_a_terminal_approve_asks_and_takes_the_answer() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let here = Command::new("script").arg("--version").output().is_ok();
    if !fuseforks_testkit::needs(here, "util-linux `script`", "FUSEFORKS_REQUIRE_SCRIPT") {
        return;
    }
    let (data, dir) = village_with_schedules();
    let answer = |text: &str| {
        let line = format!(
            "{} schedules approve --data-dir {dir} s1",
            env!("CARGO_BIN_EXE_fuseforks-cli")
        );
        let mut child = Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let declined = answer("n\n");
    assert_eq!(declined.status.code(), Some(8), "{}", stdout(&declined));
    assert!(stdout(&declined).contains("[y/N]"), "{}", stdout(&declined));
    assert!(stdout(&declined).contains("[APPROVAL_DECLINED]"));
    assert!(!data.data_dir().join("probe_approvals.json").exists());
    let approved = answer("y\n");
    assert_eq!(approved.status.code(), Some(0), "{}", stdout(&approved));
    assert_eq!(
        listing(&dir)["schedules"][0]["probe"]["approval"],
        "approved"
    );
}

#[test]
fn approve_refuses_a_probe_with_hidden_characters_or_a_cwd_through_a_symlink() {
    let data = TempDataDir::new();
    stub_village("http://127.0.0.1:9/v1").write(&data);
    std::os::unix::fs::symlink(data.data_dir(), data.workspace().join("linkout")).unwrap();
    let schedules = json!([
        {"id": "hid", "to": "rec", "message": "m", "createdAtMs": 0,
         "recurrence": {"kind": "daily", "hour": 9, "minute": 5},
         "probe": {"command": "sh", "args": ["-c", "echo ok\u{1b}]0; touch PWNED;\u{7}"], "expect": "ok"}},
        {"id": "link", "to": "rec", "message": "m", "createdAtMs": 0,
         "recurrence": {"kind": "daily", "hour": 9, "minute": 5},
         "probe": {"command": "true", "cwd": "linkout", "expect": "ok"}}
    ]);
    std::fs::write(
        data.workspace().join("schedules.json"),
        serde_json::to_string(&schedules).unwrap(),
    )
    .unwrap();
    let dir = data.data_dir().display().to_string();
    for id in ["hid", "link"] {
        let out = cli(&format!("schedules approve --data-dir {dir} {id} --yes"));
        assert_eq!(out.status.code(), Some(2), "{id}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("[PROBE_NOT_PLAIN]"),
            "{}",
            stderr(&out)
        );
        assert!(
            !stdout(&out).contains("PWNED"),
            "nothing shown as approvable"
        );
    }
    assert!(
        !data.data_dir().join("probe_approvals.json").exists(),
        "nothing written"
    );
}

/// The audit lines of the log, as (action, target, argsSha256).
fn audit_lines(data: &TempDataDir) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(data.workspace().join("audit.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap().to_owned();
            (s("action"), s("target"), s("argsSha256"))
        })
        .collect()
}

/// The key `schedules approve` printed, `(key …)`.
fn printed_key(out: &std::process::Output) -> String {
    let text = stdout(out);
    let at = text.find("(key ").unwrap() + 5;
    text[at..at + 64].to_owned()
}

/// A probe approval is an audit line, written here with nothing running (under the village
/// lock) and by the running process over its socket while `serve` runs; the chain verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_an_audit_line_with_or_without_a_running_process() {
    let (data, dir) = village_with_schedules();
    // The same secret store as `serve` below: a line marked with the keyring's audit key
    // followed by serve's unmarked ones would be refused as unkeyed.
    let approved = cli(&format!(
        "schedules approve --data-dir {dir} s1 --yes --secrets env"
    ));
    assert!(approved.status.success(), "{}", stderr(&approved));
    assert!(
        !stderr(&approved).contains("AUDIT_NOT_WRITTEN"),
        "{}",
        stderr(&approved)
    );
    let key = printed_key(&approved);
    let hashed = fuseforks_core::safety::sha256_hex(key.as_bytes());
    assert_eq!(
        audit_lines(&data),
        vec![("probe_approve".to_owned(), "s1/probe".to_owned(), hashed)]
    );

    let mut serving = fuseforks_testkit::KillOnDrop::new(
        crate::headless::command(
            crate::words(&format!("serve --data-dir {dir} --start rec --secrets env")),
            true,
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap(),
    );
    let socket = data.data_dir().join("control/fuseforks.sock");
    let opened = || socket.exists();
    fuseforks_testkit::eventually(
        "serve to open its socket",
        fuseforks_testkit::DEADLINE,
        opened,
    )
    .await;
    let approved = cli(&format!(
        "schedules approve --data-dir {dir} s1 --acceptance --yes --secrets env"
    ));
    assert!(approved.status.success(), "{}", stderr(&approved));
    assert!(
        !stderr(&approved).contains("AUDIT_NOT_WRITTEN"),
        "{}",
        stderr(&approved)
    );
    let key = printed_key(&approved);
    let served = crate::headless::signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(served.status.code(), Some(0), "{}", stderr(&served));
    // serve's own lines (the approval mode it started with) are in the same chain.
    let lines: Vec<_> = audit_lines(&data)
        .into_iter()
        .filter(|l| l.0 == "probe_approve")
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[1],
        (
            "probe_approve".to_owned(),
            "s1/acceptance".to_owned(),
            fuseforks_core::safety::sha256_hex(key.as_bytes())
        )
    );
    let verified = cli(&format!("audit verify --data-dir {dir}"));
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
}
