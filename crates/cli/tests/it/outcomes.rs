//! Honest outcomes through the binary: a failed model call says
//! why on stderr, in `--events jsonl` and at the door (code, status or network class, template,
//! host; never the key); the tool-round cap and the repeat guard are their own outcomes with
//! their own line and exit 6; the session named in the log and on stderr is the one recorded.

use std::process::Output;

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{Record, SessionStore};
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{ClosedPort, TempDataDir, mcp_script};
use serde_json::{Value, json};

use crate::headless::{
    KEY, U, ask_args, command, log, run, serve_on_a_port, signal_and_wait, village, wait_log,
};
use crate::{stderr, stdout, words};

/// Every stderr line as JSON (under `--events jsonl`).
fn json_lines(out: &Output) -> Vec<Value> {
    stderr(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?} ({e})")))
        .collect()
}

/// The one `{"type":"cli","level":"error"}` line and the `agentFailed` event of a failed ask.
fn failure_lines(out: &Output) -> (Value, Value) {
    let lines = json_lines(out);
    let errors: Vec<&Value> = lines
        .iter()
        .filter(|v| v["type"] == "cli" && v["level"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "one reason, once: {lines:?}");
    let failed: Vec<&Value> = lines
        .iter()
        .filter(|v| v["type"] == "agentFailed")
        .collect();
    assert_eq!(failed.len(), 1, "one agentFailed event: {lines:?}");
    (errors[0].clone(), failed[0].clone())
}

/// The agent `rec`'s cap, written into the village of `headless::village`.
fn set_cap(data: &TempDataDir, cap: u8) {
    data.edit_world(|w| w.agents[0].max_tool_iterations = Some(cap));
}

fn remember(note: &str) -> StubReply {
    wire_replies::tool_calls(
        Wire::OpenAiCompat,
        &[ScriptCall {
            id: format!("c-{note}"),
            name: "remember".into(),
            args: json!({"note": note}),
        }],
        U,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_says_why_on_stderr_and_in_jsonl_and_never_the_key() {
    // The provider echoes the key in its message: it must not come back in any form.
    let refusal = |_| {
        wire_replies::error(
            Wire::OpenAiCompat,
            401,
            &format!("Incorrect API key provided: {KEY}"),
            None,
        )
    };
    let stub = StubServer::start((0..2).map(refusal).collect()).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let host = stub.base_url().trim_start_matches("http://").to_owned();

    let out = run(ask_args(&dir, &[], "hi"), true).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert_eq!(stdout(&out), "(No answer.)\n");
    assert_eq!(err.matches("LLM_HTTP").count(), 1, "once: {err}");
    for part in [
        "401",
        "auth",
        "template stub",
        &host,
        "FUSEFORKS_SECRET_STUB",
    ] {
        assert!(err.contains(part), "{part} missing: {err}");
    }
    assert!(
        !err.contains(KEY) && !err.contains("Incorrect API key"),
        "{err}"
    );

    let out = run(ask_args(&dir, &["--events", "jsonl"], "hi"), true).await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let (line, event) = failure_lines(&out);
    assert_eq!(line["code"], "LLM_HTTP");
    let message = line["message"].as_str().unwrap();
    assert!(message.contains("401") && message.contains(&host), "{line}");
    assert_eq!(
        (
            &event["agentId"],
            &event["code"],
            &event["status"],
            &event["class"]
        ),
        (
            &json!("rec"),
            &json!("LLM_HTTP"),
            &json!(401),
            &json!("auth")
        )
    );
    assert_eq!(
        (&event["template"], &event["host"]),
        (&json!("stub"), &json!(host))
    );
    assert!(!stderr(&out).contains(KEY));

    let log = log(&data);
    assert!(
        log.contains("stop=failed:LLM_HTTP") && log.contains("status=401 class=auth"),
        "{log}"
    );
    assert!(!log.contains(KEY), "{log}");
    assert_eq!(stub.requests().len(), 2, "an auth failure is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_port_says_connection_refused() {
    let closed = ClosedPort::new();
    let port = closed.port();
    let data = TempDataDir::new();
    village(&data, &format!("http://127.0.0.1:{port}"), None);
    let dir = data.data_dir().display().to_string();
    let host = format!("127.0.0.1:{port}");

    let out = run(ask_args(&dir, &[], "hi"), true).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(6), "{err}");
    for part in ["LLM_HTTP", "connection refused", "template stub", &host] {
        assert!(err.contains(part), "{part} missing: {err}");
    }
    assert!(!err.contains(KEY));

    let out = run(ask_args(&dir, &["--events", "jsonl"], "hi"), true).await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let (line, event) = failure_lines(&out);
    assert!(
        line["message"]
            .as_str()
            .unwrap()
            .contains("connection refused"),
        "{line}"
    );
    assert_eq!(event["class"], "connection_refused");
    assert_eq!(event["host"], json!(host));
    assert!(event.get("status").is_none(), "no HTTP status: {event}");
    assert!(
        log(&data).contains("status=- class=connection_refused"),
        "{}",
        log(&data)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_of_2_makes_exactly_2_model_calls_then_stops_as_tool_limit() {
    let stub = StubServer::start(["a", "b", "c", "d", "e"].map(remember).to_vec()).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    set_cap(&data, 2);
    let dir = data.data_dir().display().to_string();

    let out = run(ask_args(&dir, &[], "go"), true).await;
    let err = stderr(&out);
    assert_eq!(stub.requests().len(), 2, "the cap counts model calls");
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert_eq!(
        stdout(&out),
        "(Stopped: the agent used all its tool rounds (maxToolIterations) without answering. Raise the agent's maxToolIterations in world.json, or ask for less at once.)\n"
    );
    assert!(
        err.contains("TOOL_LIMIT") && err.contains("maxToolIterations"),
        "{err}"
    );
    let log = log(&data);
    assert!(
        log.contains("rounds=2/2 ") && log.contains("stop=tool_limit"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_repeat_guard_has_its_own_line_and_a_non_zero_exit() {
    let stub = StubServer::start(["same", "same", "same", "same"].map(remember).to_vec()).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();

    let out = run(ask_args(&dir, &["--events", "jsonl"], "go"), true).await;
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "(Stopped: the agent repeated the same tool call without answering. Ask differently; a larger maxToolIterations does not help.)\n"
    );
    let lines = json_lines(&out);
    assert!(
        lines
            .iter()
            .any(|v| v["type"] == "cli" && v["code"] == "TOOL_REPEAT"),
        "{lines:?}"
    );
    assert!(log(&data).contains("stop=repeat:remember"));
    assert_eq!(
        stub.requests().len(),
        3,
        "the third identical call is blocked"
    );
}

/// The session ids of the `session:` log lines that name where turns are recorded, in order
/// (the startup block's line, which names the conversation continued at boot, left out).
fn logged_sessions(log: &str) -> Vec<String> {
    session_lines(log, false)
}

/// The session ids of `session:` lines: the startup block's (`opened`, `none`) or the others.
fn session_lines(log: &str, startup: bool) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.split("session: ").nth(1))
        .filter(|rest| (rest.contains(" opened (") || rest.starts_with("none ")) == startup)
        .map(|rest| rest.split_whitespace().next().unwrap_or("").to_owned())
        .collect()
}

/// The session id of the `SESSION` line of a `--events jsonl` run.
fn printed_session(out: &Output) -> String {
    let lines = json_lines(out);
    let line = lines
        .iter()
        .find(|v| v["type"] == "cli" && v["code"] == "SESSION")
        .unwrap_or_else(|| panic!("no SESSION line: {lines:?}"));
    line["message"]
        .as_str()
        .unwrap()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_printed_and_logged_is_the_one_recorded() {
    let stub = StubServer::start(
        ["first", "second", "third"]
            .map(|t| wire_replies::text(Wire::OpenAiCompat, t, U))
            .to_vec(),
    )
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();

    let out = run(ask_args(&dir, &["--events", "jsonl"], "one-7f2"), true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = printed_session(&out);
    // A new conversation by default: the boot continues the old one, the ask starts another.
    let out = run(ask_args(&dir, &["--verbose"], "two-3c9"), true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let echoed = logged_sessions(&err);
    assert_eq!(echoed.len(), 1, "--verbose names one session: {err}");
    let second = echoed[0].clone();
    assert_ne!(first, second);
    assert!(
        err.contains(&format!("recorded under session {second}")),
        "{err}"
    );
    let out = run(
        ask_args(
            &dir,
            &["--continue-session", "--events", "jsonl"],
            "three-8d1",
        ),
        true,
    )
    .await;
    assert_eq!(printed_session(&out), second, "continued");

    // The third run continues `second` from its startup line on: no second naming.
    assert_eq!(
        logged_sessions(&log(&data)),
        [first.clone(), second.clone()]
    );
    assert_eq!(
        session_lines(&log(&data), true),
        ["none".to_owned(), first.clone(), second.clone()],
        "each run's startup block names the conversation it continues"
    );
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let holds = |id: &str, text: &str| {
        store.history(id).unwrap().iter().any(|(_, r)| match r {
            Record::Message(m) => m.content.contains(text),
            _ => false,
        })
    };
    assert!(holds(&first, "one-7f2") && !holds(&first, "two-3c9"));
    assert!(holds(&second, "two-3c9") && holds(&second, "three-8d1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_at_the_door_names_its_reason() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let stub = StubServer::start(vec![wire_replies::error(
        Wire::OpenAiCompat,
        401,
        &format!("bad key {KEY}"),
        None,
    )])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    const TOKEN: &str = "door-outcomes-token-41a";
    let listening = |port| format!("mcp server: 127.0.0.1:{port}/mcp");
    let (mut serving, port) = serve_on_a_port(&data, listening, |port| {
        command(
            words(&format!(
                "serve --data-dir {dir} --start batch --secrets env --door-port {port}"
            )),
            true,
        )
        .env("FUSEFORKS_SECRET_DOOR_TOKEN", TOKEN)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
    })
    .await;
    // The door opens in the boot, before the agents: serving starts after them.
    wait_log(&data, "schedule runner").await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let asked = tokio::task::spawn_blocking(move || {
        std::process::Command::new("python3")
            .arg(mcp_script("door_client.py"))
            .args([url.as_str(), TOKEN, "ask", "hello", "1"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(asked.status.success(), "{}", stderr(&asked));
    let asked: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(asked["is_error"], json!([true]));
    let text = asked["answers"][0].as_str().unwrap();
    for part in ["(No answer.)", "LLM_HTTP", "401", "auth", "template stub"] {
        assert!(text.contains(part), "{part} missing: {text}");
    }
    assert!(!text.contains(KEY), "{text}");

    let out = signal_and_wait(&mut serving, "TERM").await;
    let err = stderr(&out);
    assert!(
        err.contains("LLM_HTTP")
            && err.contains("401")
            && err.contains("Fix:")
            && !err.contains(KEY),
        "serve says why a door turn failed, and what to change: {err}"
    );
}
