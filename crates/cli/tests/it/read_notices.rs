//! What a read adjusts reaches the user (`docs/formats/README.md`: "the read replaces or
//! clamps them and reports a notice"): `check` lists each read notice as a warning with its
//! code, file, field and fix; `ask` and `serve` say each on stderr and write it to the log,
//! once per run. A `schedules.json` that is not JSON, or not an array, is told so at a 1-based
//! place; the scheduler writes `lastConsumedDueMs` back and adds no other field.

use std::process::Stdio;

use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::{KillOnDrop, TempDataDir, wire_replies};
use serde_json::{Value, json};

use crate::headless::{U, command, log, run, signal_and_wait, village, wait_log};
use crate::{stderr, stdout, words};

/// The test village with `tokenBudget: 0` and `askTimeoutSecs: 5` written by hand (a save
/// refuses both), and a disabled schedule whose probe's `timeoutSecs` is 0.
fn village_with_notices(data: &TempDataDir, stub: &str) -> String {
    village(data, stub, None);
    let file = data.workspace().join("world.json");
    let mut world: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    world["tokenBudget"] = json!(0);
    world["askTimeoutSecs"] = json!(5);
    data.write("world.json", serde_json::to_vec_pretty(&world).unwrap());
    data.write(
        "schedules.json",
        serde_json::to_vec_pretty(&json!([idle_task()])).unwrap(),
    );
    data.data_dir().display().to_string()
}

/// A disabled interval task whose probe's `timeoutSecs` of 0 the read clamps to 1.
fn idle_task() -> Value {
    json!({
        "id": "idle", "to": "rec", "message": "Never.",
        "recurrence": {"kind": "interval", "everyMinutes": 60},
        "enabled": false,
        "probe": {"command": "true", "expect": "ok", "timeoutSecs": 0}
    })
}

const NOTICES: [(&str, &str, &str); 3] = [
    ("VALUE_DEFAULTED", "workspace/world.json", "tokenBudget"),
    ("VALUE_DEFAULTED", "workspace/world.json", "askTimeoutSecs"),
    (
        "VALUE_CLAMPED",
        "workspace/schedules.json",
        "[0].probe.timeoutSecs",
    ),
];

#[test]
fn check_lists_each_read_notice_as_a_warning_with_its_file_field_and_fix() {
    let data = TempDataDir::new();
    let dir = village_with_notices(&data, "http://127.0.0.1:9");
    let json_out = command(
        words(&format!(
            "check --for serve --data-dir {dir} --start batch --secrets env --json"
        )),
        true,
    )
    .output()
    .unwrap();
    assert_eq!(json_out.status.code(), Some(0), "{}", stderr(&json_out));
    let report: Value = serde_json::from_str(&stdout(&json_out)).unwrap();
    let findings = report["findings"].as_array().unwrap();
    for (code, file, field) in NOTICES {
        let found: Vec<&Value> = findings
            .iter()
            .filter(|f| f["code"] == code && f["field"] == field)
            .collect();
        assert_eq!(found.len(), 1, "{code} {field}: {findings:#?}");
        let f = found[0];
        assert_eq!(f["level"], "warn", "{f}");
        assert_eq!(f["file"], file, "{f}");
        assert!(f["message"].as_str().unwrap().contains(file), "{f}");
        assert!(
            f["fix"].as_str().unwrap().contains(&format!("`{field}`")),
            "{f}"
        );
    }

    let human = command(
        words(&format!("check --for ask --data-dir {dir} --secrets env")),
        true,
    )
    .output()
    .unwrap();
    assert_eq!(human.status.code(), Some(0), "{}", stderr(&human));
    let text = stdout(&human);
    assert!(
        text.contains(
            "warn [VALUE_DEFAULTED] workspace/world.json, field `tokenBudget`, is not read as written: 0 means no budget; read as none\nFix: "
        ),
        "{text}"
    );
    assert!(text.contains("askTimeoutSecs"), "{text}");
    assert!(!text.contains("0 finding(s)"), "{text}");
    assert!(!log(&data).contains("read notice"), "check writes no log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_says_each_read_notice_on_stderr_and_in_the_log_once() {
    let stub = StubServer::start(vec![wire_replies::text(
        fuseforks_core::llm::Wire::OpenAiCompat,
        "The answer.",
        U,
    )])
    .await;
    let data = TempDataDir::new();
    let dir = village_with_notices(&data, stub.base_url());
    let out = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hello"
        )),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The answer.\n");
    let said = stderr(&out);
    let log = log(&data);
    for (code, file, field) in NOTICES {
        let warning = format!("warn: [{code}] {file}, field `{field}`");
        assert_eq!(said.matches(&warning).count(), 1, "{warning}: {said}");
        let line = format!("read notice: code={code} file={file} field={field}\n");
        assert_eq!(log.matches(&line).count(), 1, "{line}: {log}");
    }
}

/// A daily schedule `s1` to `rec` whose wall time (UTC) was two minutes ago, written without
/// `enabled` and with a field this version does not know.
fn overdue_daily() -> (Value, i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let due = (now - 120_000) / 60_000 * 60_000;
    let schedule = json!({
        "id": "s1", "to": "rec", "message": "Write the daily note.",
        "recurrence": {"kind": "daily", "hour": due / 3_600_000 % 24, "minute": due / 60_000 % 60},
        "createdAtMs": now - 3 * 86_400_000,
        "futureTask": {"kept": true}
    });
    (schedule, due)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_warns_once_and_the_scheduler_writes_back_only_last_consumed_due_ms() {
    let stub = StubServer::start(vec![wire_replies::text(
        fuseforks_core::llm::Wire::OpenAiCompat,
        "noted",
        U,
    )])
    .await;
    let data = TempDataDir::new();
    let dir = village_with_notices(&data, stub.base_url());
    let (schedule, due) = overdue_daily();
    let written = json!([idle_task(), schedule]);
    let file = data.workspace().join("schedules.json");
    std::fs::write(&file, serde_json::to_string(&written).unwrap()).unwrap();
    let mut serving = KillOnDrop::new(
        command(
            words(&format!(
                "serve --data-dir {dir} --start batch --secrets env"
            )),
            true,
        )
        .env("TZ", "UTC")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap(),
    );
    wait_log(&data, "schedule fire: id=s1 target=rec").await;
    stub.wait_requests(1).await;
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // The file is as written, plus `lastConsumedDueMs` of the task that fired: no `enabled`
    // added, the unknown field kept, the clamped `timeoutSecs` still 0 on disk.
    let mut expected = written;
    expected[1]["lastConsumedDueMs"] = json!(due);
    let on_disk: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(on_disk, expected);

    let said = stderr(&out);
    let log = log(&data);
    for (code, file, field) in NOTICES {
        let warning = format!("warn: [{code}] {file}, field `{field}`");
        assert_eq!(said.matches(&warning).count(), 1, "{warning}: {said}");
        let line = format!("read notice: code={code} file={file} field={field}\n");
        assert_eq!(log.matches(&line).count(), 1, "{line}: {log}");
    }
}

#[test]
fn schedules_json_that_is_not_json_or_not_an_array_is_told_so_at_a_one_based_place() {
    let data = TempDataDir::new();
    village(&data, "http://127.0.0.1:9", None);
    let dir = data.data_dir().display().to_string();
    let cases = [
        (
            "{not json",
            "schedules.json:1:2: not valid JSON: key must be a string",
        ),
        (
            "\n  {\"id\": \"s1\"}",
            "schedules.json:2:3: the top level is an object; this file must be a JSON array",
        ),
    ];
    for (text, said) in cases {
        data.write("schedules.json", text);
        let out = command(
            words(&format!(
                "check --for serve --data-dir {dir} --start batch --secrets env"
            )),
            true,
        )
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(5), "{text}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("error: [VILLAGE_FILE_INVALID] ") && err.contains(said),
            "{text}: {err}"
        );
        assert!(!err.contains("expected a sequence"), "{text}: {err}");
        let fix = err.split("\nFix: ").nth(1).unwrap_or_default();
        assert!(
            fix.contains("JSON syntax at line 1, column 2") || fix.contains("JSON array"),
            "{text}: {err}"
        );
    }
}
