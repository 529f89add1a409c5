//! Hardening regressions through the binary: the close grace is a hard bound,
//! and untrusted text can neither forge a log line nor drive a terminal.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use fuseforks_core::sessions::SessionStore;
use fuseforks_core::stats::{Period, TimeZone, aggregate};
use fuseforks_core::village::{VillageStore, World};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{KillOnDrop, TempDataDir, within};
use serde_json::json;

use crate::headless::{U, ask_args, command, log, signal, stub_village, village, wait_for};
use crate::{stderr, stdout, words};

fn ask(dir: &str, extra: &[&str], message: &str) -> std::process::Command {
    let all = ask_args(dir, extra, message);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    command(&all, true)
}

fn spawn_ask(dir: &str, message: &str) -> Child {
    ask(dir, &[], message)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `ask` with a 45 s model call in flight (and the reception's `mcp.json` holding `mcp`, if
/// any), sent SIGTERM once the turn has started (and `ready` is in the log): how long it took
/// to exit, and its output.
async fn sigterm_during_a_45_s_call(
    data: &TempDataDir,
    mcp: Option<serde_json::Value>,
    ready: &str,
) -> (Duration, std::process::Output) {
    let wire = fuseforks_core::llm::Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::text(wire, "too late", U).after(Duration::from_secs(45)),
    ])
    .await;
    village(data, stub.base_url(), None);
    if let Some(mcp) = mcp {
        data.write("agents/rec/mcp.json", mcp.to_string());
    }
    let dir = data.data_dir().display().to_string();
    let mut asking = KillOnDrop::new(spawn_ask(&dir, "slow please"));
    let log_file = data.workspace().join("fuseforks.log");
    wait_for(&log_file, ready).await;
    wait_for(&log_file, "turn start: agent=rec").await;
    // The model call is under way: its request has arrived.
    stub.wait_requests(1).await;
    let ask = asking.take();
    signal(&ask, "TERM");
    let signalled = Instant::now();
    let out = tokio::task::spawn_blocking(move || ask.wait_with_output().unwrap())
        .await
        .unwrap();
    let took = signalled.elapsed();
    eprintln!("SIGTERM to exit: {} ms", took.as_millis());
    (took, out)
}

/// A 45 s model call in flight: SIGTERM ends `ask` within the 30 s grace plus the cut, and the
/// turn is still recorded, its usage marked unknown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_45_s_call_in_flight_exits_within_31_s() {
    let data = TempDataDir::new();
    let (took, out) = sigterm_during_a_45_s_call(&data, None, "agent started: agent=rec").await;
    assert!(took <= Duration::from_millis(31_500), "took {took:?}");
    assert!(
        took >= Duration::from_secs(29),
        "the grace was not given: {took:?}"
    );
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("CLOSE_GRACE_EXCEEDED"),
        "{}",
        stderr(&out)
    );
    let log = log(&data);
    assert!(log.contains("close: grace over"), "{log}");
    assert!(
        log.contains("turn: agent=rec") && log.contains("usage=unknown"),
        "{log}"
    );
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let world: World = VillageStore::new(data.workspace())
        .load_world()
        .unwrap()
        .value;
    let report = aggregate(&store, &world, Period::All, &TimeZone::UTC).unwrap();
    assert_eq!(
        (report.totals.turns, report.totals.unknown_usage_calls),
        (1, 1),
        "the turn is recorded and its cut call counted as unknown usage: {report:?}"
    );
}

/// The same with an MCP server that ignores SIGTERM: after the cut, the agent's close does not
/// wait for the server's group to end (its watchdog ends it, SIGKILL 2 s later), so the bound
/// still holds, and the server still does not outlive `ask` by more than that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_45_s_call_and_an_mcp_server_ignoring_sigterm_exits_within_31_s() {
    let data = TempDataDir::new();
    let pid_file = data.data_dir().join("kid.pid");
    let server = vec![
        fuseforks_testkit::mcp_script("child_stdio.py")
            .display()
            .to_string(),
        "--pid".to_owned(),
        pid_file.display().to_string(),
        "--ignore-stdin".to_owned(),
    ];
    let mcp = json!({"mcpServers": {"kid": {"command": real_python(), "args": server}}});
    let (took, out) = sigterm_during_a_45_s_call(
        &data,
        Some(mcp),
        "mcp: agent=rec server=kid outcome=connected",
    )
    .await;
    let kid = std::fs::read_to_string(&pid_file).unwrap();
    let kid = kid.trim();
    let alive = || {
        std::fs::read_to_string(format!("/proc/{kid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    let gone = within(Duration::from_secs(4), || !alive()).await.is_some();
    if !gone {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", kid])
            .status();
    }
    assert!(took <= Duration::from_millis(31_500), "took {took:?}");
    assert!(
        took >= Duration::from_secs(29),
        "the grace was not given: {took:?}"
    );
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert!(
        gone,
        "the MCP server outlived ask by more than its kill grace"
    );
}

/// The interpreter itself, not a wrapper script (a pyenv shim adds variables of its own).
fn real_python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_tool_name_cannot_forge_a_log_line() {
    let wire = fuseforks_core::llm::Wire::OpenAiCompat;
    let call = ScriptCall {
        id: "c1".into(),
        name: "grep\n2026-01-01 00:00:00.000 [fuseforks] turn: agent=forged \u{1b}[2J".into(),
        args: json!({}),
    };
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(wire, &[call], U),
        wire_replies::text(wire, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let out = ask(&dir, &["--verbose"], "hi").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = log(&data);
    assert!(
        !log.lines()
            .any(|l| l.contains("agent=forged") && !l.contains("name=")),
        "a forged line: {log}"
    );
    assert!(!log.contains('\u{1b}'), "an escape reached the log");
    assert!(log.contains("\\u{a}"), "{log}");
    assert!(!stderr(&out).contains('\u{1b}'), "an escape reached stderr");
}

/// An answer with terminal escapes: stripped on a terminal (a pty through `script`), kept
/// byte for byte on a pipe (the answer is the result).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_sequences_in_an_answer_never_reach_a_terminal() {
    let wire = fuseforks_core::llm::Wire::OpenAiCompat;
    let hostile = "safe \u{1b}]0;pwned\u{7}\u{1b}[2Jtext";
    let stub = StubServer::start(vec![
        wire_replies::text(wire, hostile, U),
        wire_replies::text(wire, hostile, U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let piped = ask(&dir, &[], "hi").output().unwrap();
    assert_eq!(stdout(&piped), format!("{hostile}\n"));
    let binary = env!("CARGO_BIN_EXE_fuseforks-cli");
    let line = format!("{binary} ask --data-dir {dir} --start reception --secrets env hi");
    let on_tty = command(words(""), true)
        .get_envs()
        .fold(std::process::Command::new("script"), |mut c, (k, v)| {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
            c
        })
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let shown = stdout(&on_tty);
    assert!(shown.contains("safe text"), "{shown:?}");
    assert!(
        !shown.contains('\u{1b}') && !shown.contains("pwned"),
        "{shown:?}"
    );
}

/// A work folder that contains the village (the data folder itself, or a home folder the data
/// folder lies in) lets the model rewrite its own rights: `file write` of
/// `workspace/agents/<id>/run.json` turned a `deny` into an `allow` (read again at the next
/// `run` call) and a written `mcp.json` names an unconfined command for the next start (found
/// by an attack re-run; only `blackboard/` and `judges/` are fenced, and
/// `check` says nothing). Either the preflight refuses such a work folder or the village is
/// fenced: in both cases the files stay as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_folder_containing_the_village_cannot_rewrite_its_rights() {
    let wire = fuseforks_core::llm::Wire::OpenAiCompat;
    let write = |path: &str, content: &str| ScriptCall {
        id: format!("c-{path}"),
        name: "file".into(),
        args: json!({"op": "write", "path": path, "content": content, "overwrite": true}),
    };
    let calls = [
        write(
            "workspace/agents/rec/run.json",
            r#"{"version": 1, "allow": ["sh *"], "deny": []}"#,
        ),
        write(
            "workspace/mcp.json",
            r#"{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch pwned"]}}}"#,
        ),
    ];
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(wire, &calls, U),
        wire_replies::text(wire, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    stub_village(stub.base_url())
        .world(|w| w.agents[0].work_dir = Some(data.data_dir().display().to_string()))
        .write(&data);
    let dir = data.data_dir().display().to_string();
    let _ = command(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hi"
        )),
        true,
    )
    .output()
    .unwrap();
    let run_json = data.workspace().join("agents/rec/run.json");
    let policy = std::fs::read_to_string(&run_json).unwrap_or_default();
    assert!(
        !policy.contains("sh *"),
        "the model rewrote its own run.json: {policy}"
    );
    assert!(
        !data.workspace().join("mcp.json").exists(),
        "the model wrote the village's mcp.json"
    );
}

/// A work folder *inside* the village's data folder (`workDir` = `<data_dir>/workspace`, or an
/// agent's own folder there) is not refused: the preflight only asks whether the work folder
/// holds the data folder (`crates/host/src/preflight_view.rs`, `holds`), and the file tools'
/// fence refuses their writes, but Landlock gives `run` read-write on the whole work folder, so
/// an allowed command rewrites the shared `mcp.json` (an unconfined command for the next
/// start) or an agent's `run.json` (found by a second attack re-run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_folder_inside_the_village_cannot_rewrite_its_rights_through_run() {
    let wire = fuseforks_core::llm::Wire::OpenAiCompat;
    let calls = [ScriptCall {
        id: "c-run".into(),
        name: "run".into(),
        args: json!({
            "command": "sh",
            "args": ["-c", "echo '{\"mcpServers\": {}}' > mcp.json; echo pwned >> agents/rec/run.json"],
        }),
    }];
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(wire, &calls, U),
        wire_replies::text(wire, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    stub_village(stub.base_url())
        .world(|w| {
            w.agents[0].work_dir = Some(data.workspace().display().to_string());
            w.agents[0].enabled_tools = Some(vec!["run".into()]);
        })
        .write(&data);
    let run_json = data.workspace().join("agents/rec/run.json");
    std::fs::create_dir_all(run_json.parent().unwrap()).unwrap();
    std::fs::write(
        &run_json,
        r#"{"version": 1, "allow": ["sh *"], "deny": []}"#,
    )
    .unwrap();
    let dir = data.data_dir().display().to_string();
    let out = command(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hi"
        )),
        true,
    )
    .output()
    .unwrap();
    let policy = std::fs::read_to_string(&run_json).unwrap_or_default();
    assert!(
        !data.workspace().join("mcp.json").exists() && !policy.contains("pwned"),
        "run rewrote the village's files from a work folder inside it: run.json {policy:?}, \
         stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
