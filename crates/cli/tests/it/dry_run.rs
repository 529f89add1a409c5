//! Dry-run as a request's own mode, from every place a request starts — `ask --dry-run`, the
//! door's `dryRun` argument, a schedule's `dryRun` field — with a structured answer: each
//! effect it would have had as `{tool, target, argumentsDigest}` (docs/gui-api.md).

use std::process::{Command, Stdio};

use fuseforks_core::safety::sha256_hex;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::{KillOnDrop, TempDataDir, mcp_script, snapshot, wire_replies};
use serde_json::{Value, json};

use crate::headless::{U, command, serve_on_a_port, signal_and_wait, wait_log};
use crate::safety::{ask, audit_lines, call, dir, working_village};
use crate::{stderr, stdout, words};

const WIRE: fuseforks_core::llm::Wire = fuseforks_core::llm::Wire::OpenAiCompat;

/// One write and one `run` (both stopped by dry-run) and one read (not an effect).
async fn effect_stub() -> StubServer {
    let calls = [
        call(
            "c1",
            "file",
            json!({"path": "new.md", "op": "write", "content": "x"}),
        ),
        call(
            "c2",
            "run",
            json!({"command": "sh", "args": ["-c", "true"]}),
        ),
        call("c3", "file", json!({"op": "read", "path": "notes.md"})),
    ];
    StubServer::start(vec![
        wire_replies::tool_calls(WIRE, &calls, U),
        wire_replies::text(WIRE, "done", U),
    ])
    .await
}

/// The two effects of [`effect_stub`], their digests taken over the canonical arguments
/// written out by hand (keys sorted, no spaces).
fn expected_effects() -> Value {
    json!([
        {"tool": "file", "target": "new.md",
         "argumentsDigest": sha256_hex(br#"{"content":"x","op":"write","path":"new.md"}"#)},
        {"tool": "run", "target": "sh",
         "argumentsDigest": sha256_hex(br#"{"args":["-c","true"],"command":"sh"}"#)},
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_dry_run_json_lists_each_effect_and_events_say_each() {
    let stub = effect_stub().await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let before = snapshot(work_dir.data_dir());
    let out = ask(&data, "--dry-run --output json --events jsonl")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        snapshot(work_dir.data_dir()),
        before,
        "dry-run changed the work"
    );
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result["effects"], expected_effects(), "{result:#}");
    let events: Vec<Value> = stderr(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "dryRunEffect")
        .collect();
    assert_eq!(events.len(), 2, "{}", stderr(&out));
    assert_eq!(events[0]["agentId"], "rec");
    assert_eq!(events[1]["target"], "sh");
    // A request without dry-run lists nothing and does the work.
    let stub = effect_stub().await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let out = ask(&data, "--output json").output().unwrap();
    let result: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(result.get("effects"), None);
    assert!(work_dir.data_dir().join("new.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_doors_dry_run_argument_answers_the_effects_as_structured_content() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    const TOKEN: &str = "door-dry-run-token-51c0";
    let stub = effect_stub().await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let before = snapshot(work_dir.data_dir());
    let listening = |port| format!("mcp server: 127.0.0.1:{port}/mcp");
    let (mut serving, port) = serve_on_a_port(&data, listening, |port| {
        let args = words(&format!(
            "serve --data-dir {} --start batch --secrets env --door-port {port}",
            dir(&data)
        ));
        command(args, true)
            .env("FUSEFORKS_SECRET_DOOR_TOKEN", TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    })
    .await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(mcp_script("door_client.py"))
            .args([url.as_str(), TOKEN, "dry-ask", "tidy up"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let asked: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(asked["schema"]["properties"]["dryRun"]["type"], "boolean");
    assert_eq!(asked["answer"], "done");
    assert_eq!(asked["structured"]["dryRun"], true);
    assert_eq!(
        asked["structured"]["effects"],
        expected_effects(),
        "{asked:#}"
    );
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        snapshot(work_dir.data_dir()),
        before,
        "dry-run changed the work"
    );
}

/// A schedule entry with `dryRun: true` fires as a dry-run (nothing changes, the effects are
/// audited `dry_run`), and the field survives the runner's rewrite of `schedules.json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedules_dry_run_field_makes_its_firing_a_dry_run_and_is_kept() {
    let stub = effect_stub().await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let before = snapshot(work_dir.data_dir());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let due = (now - 120_000) / 60_000 * 60_000;
    let schedule = json!([{
        "id": "s1", "to": "rec", "message": "Tidy the notes.",
        "recurrence": {"kind": "daily", "hour": due / 3_600_000 % 24, "minute": due / 60_000 % 60},
        "createdAtMs": now - 3 * 86_400_000, "dryRun": true
    }]);
    let schedules = data.workspace().join("schedules.json");
    std::fs::write(&schedules, schedule.to_string()).unwrap();
    let args = words(&format!(
        "serve --data-dir {} --start batch --secrets env",
        dir(&data)
    ));
    let mut serving = KillOnDrop::new(
        command(args, true)
            .env("TZ", "UTC")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    wait_log(&data, "schedule fire: id=s1 target=rec").await;
    wait_log(&data, "dry_run=true").await;
    wait_log(&data, "turn: agent=rec").await;
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        snapshot(work_dir.data_dir()),
        before,
        "the firing changed the work"
    );
    let dry: Vec<Value> = audit_lines(&data)
        .into_iter()
        .filter(|l| l["outcome"] == "dry_run")
        .collect();
    assert_eq!(dry.len(), 2, "{dry:#?}");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&schedules).unwrap()).unwrap();
    assert_eq!(kept[0]["dryRun"], true, "{kept:#}");
    assert_eq!(kept[0]["lastConsumedDueMs"], due);
}
