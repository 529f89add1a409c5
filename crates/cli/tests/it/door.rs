//! MCP from the command line: the door under `serve --door-port`, reached by the official Python
//! MCP SDK as a client (the tool list, a real ask through the reception, strangers and foreign
//! origins refused, session DELETE, one conversation per door session, a SIGTERM that leaves no
//! MCP child behind), `check` naming a missing header secret, and MCP children's stderr wrapped
//! under `--events jsonl`.

use std::process::{Command, Stdio};
use std::time::Duration;

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::SessionStore;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{KillOnDrop, TempDataDir, mcp_script};
use serde_json::{Value, json};

use crate::headless::{
    U, alive, command, gone_within, log, read_pid, run, serve_on_a_port, signal_and_wait, village,
    wait_log,
};
use crate::{stderr, words};

const DOOR_TOKEN: &str = "door-CANARY-token-7f3e";

/// `serve --start batch --secrets env --door-port PORT` on the village in `data`.
fn serve_command(data: &TempDataDir, port: u16) -> Command {
    let dir = data.data_dir().display().to_string();
    let port = port.to_string();
    let args = words(&format!(
        "serve --data-dir {dir} --start batch --secrets env --door-port {port}"
    ));
    command(args, true)
}

/// `serve` with its door open on a free port: the process and the port.
async fn serve_with_door(data: &TempDataDir) -> (KillOnDrop, u16) {
    let listening = |port| format!("mcp server: 127.0.0.1:{port}/mcp");
    serve_on_a_port(data, listening, |port| {
        serve_command(data, port)
            .env("FUSEFORKS_SECRET_DOOR_TOKEN", DOOR_TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    })
    .await
}

async fn door_client(args: Vec<String>) -> Value {
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(mcp_script("door_client.py"))
            .args(&args)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "door client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_asks_through_the_door_strangers_are_refused_and_sigterm_leaves_no_child() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let stub = StubServer::start(vec![wire_replies::text(
        Wire::OpenAiCompat,
        "the village answers",
        U,
    )])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let pid_file = data.data_dir().join("echo.pid");
    data.write(
        "agents/rec/mcp.json",
        json!({"mcpServers": {"echo": {"command": "python3", "args": [mcp_script("echo_stdio.py"), pid_file]}}})
            .to_string(),
    );
    let (mut serving, port) = serve_with_door(&data).await;
    // The door opens in the boot, before the agents: serving starts after them.
    wait_log(&data, "schedule runner").await;
    let child_pid = read_pid(&pid_file).await;
    assert!(alive(child_pid));
    let url = format!("http://127.0.0.1:{port}/mcp");

    let asked = door_client(["ask", "what is new?", "1"].iter().fold(
        vec![url.clone(), DOOR_TOKEN.into()],
        |mut v, a| {
            v.push((*a).into());
            v
        },
    ))
    .await;
    assert_eq!(asked["tools"], json!(["ask_fuseforks"]));
    assert_eq!(asked["schema"]["required"], json!(["message"]));
    assert_eq!(asked["answers"], json!(["the village answers"]));
    assert_eq!(asked["is_error"], json!([false]));
    let sent = stub.requests();
    assert_eq!(sent.len(), 1, "one model call for one ask");
    assert!(sent[0].body.to_string().contains("what is new?"));

    for (token, host, status) in [
        ("wrong-token", None, 401),
        ("-", None, 401),
        (DOOR_TOKEN, Some("evil.example"), 403),
        (
            DOOR_TOKEN,
            Some(format!("evil.example:{port}").as_str()),
            403,
        ),
    ] {
        let mut args = vec![url.clone(), token.to_owned(), "refused".to_owned()];
        args.extend(host.map(str::to_owned));
        let refused = door_client(args).await;
        assert_eq!(refused["status"], json!(status), "{token} {host:?}");
        assert_eq!(refused["initialised"], json!(false), "{token} {host:?}");
        if status == 403 {
            // Our own guard answered (rmcp's Host check behind it is the second net).
            assert!(refused["body"].as_str().unwrap().contains("loopback"));
        }
    }
    assert_eq!(stub.requests().len(), 1, "strangers cost nothing");

    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        gone_within(child_pid, Duration::from_secs(5)).await,
        "the MCP child outlived serve"
    );
    let log = log(&data);
    assert!(!log.contains(DOOR_TOKEN) && !stderr(&out).contains(DOOR_TOKEN));
    assert!(
        !data.data_dir().join("mcp_server.json").exists(),
        "--door-port neither reads nor writes mcp_server.json"
    );
    let door_closed = log.find("mcp server: closed").unwrap();
    let stopped = log.find("agent stopped: agent=rec").unwrap();
    assert!(door_closed < stopped, "the door closes first: {log}");
}

fn client_args(url: &str, mode: &str, rest: &[&str]) -> Vec<String> {
    let mut args = vec![url.to_owned(), DOOR_TOKEN.to_owned(), mode.to_owned()];
    args.extend(rest.iter().map(|a| (*a).to_owned()));
    args
}

/// Stops `serve` with SIGTERM and waits for its exit 0.
async fn stop(serving: &mut KillOnDrop) {
    let out = signal_and_wait(serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_door_refuses_foreign_origins_and_ends_sessions_on_delete() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let stub = StubServer::start(vec![wire_replies::text(
        Wire::OpenAiCompat,
        "a local page may ask",
        U,
    )])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let (mut serving, port) = serve_with_door(&data).await;
    // The door opens in the boot, before the agents: serving starts after them.
    wait_log(&data, "schedule runner").await;
    let url = format!("http://127.0.0.1:{port}/mcp");

    // A call in an open session, sent with a foreign Origin, never reaches the model.
    let evil_call = door_client(client_args(
        &url,
        "origin-call",
        &["http://evil.example", "leak?"],
    ))
    .await;
    assert_eq!(evil_call["status"], json!(403), "{evil_call}");
    assert!(stub.requests().is_empty(), "refused before any model call");
    let local_call = door_client(client_args(
        &url,
        "origin-call",
        &["http://localhost:5173", "hello"],
    ))
    .await;
    assert_eq!(local_call["status"], json!(200), "{local_call}");
    assert!(
        local_call["body"]
            .as_str()
            .unwrap()
            .contains("a local page may ask")
    );
    assert_eq!(stub.requests().len(), 1);

    for evil in [
        "http://evil.example".to_owned(),
        format!("http://evil.example:{port}"),
        format!("http://127.0.0.1.evil.example:{port}"),
        "https://localhost.evil.example".to_owned(),
        "null".to_owned(),
        "file://".to_owned(),
        "http://0.0.0.0:80".to_owned(),
    ] {
        let refused = door_client(client_args(&url, "origin", &[&evil])).await;
        assert_eq!(refused["status"], json!(403), "{evil}: {refused}");
        let body = refused["body"].as_str().unwrap();
        assert!(body.contains("DOOR_ORIGIN_FORBIDDEN"), "{evil}: {body}");
        let reply: Value = serde_json::from_str(body).unwrap();
        assert_eq!(
            reply["jsonrpc"], "2.0",
            "a JSON-RPC error without id: {body}"
        );
        assert!(reply.get("id").is_none(), "{body}");
    }
    for local in [
        format!("http://127.0.0.1:{port}"),
        "http://localhost:5173".to_owned(),
        "http://[::1]:8080".to_owned(),
        "HTTP://LOCALHOST".to_owned(),
    ] {
        let admitted = door_client(client_args(&url, "origin", &[&local])).await;
        assert_eq!(admitted["status"], json!(200), "{local}: {admitted}");
    }

    let ended = door_client(client_args(&url, "delete", &[])).await;
    assert_eq!(ended["first"], json!(204), "{ended}");
    assert_eq!(ended["first_body"], json!(""), "{ended}");
    assert_eq!(
        ended["again"],
        json!(404),
        "an ended session is unknown: {ended}"
    );
    assert_eq!(ended["unknown"], json!(404), "{ended}");
    assert_eq!(ended["after"], json!(404), "{ended}");
    assert_eq!(
        ended["warnings"],
        json!([]),
        "the SDK's own DELETE on close draws no warning"
    );
    assert_eq!(
        stub.requests().len(),
        1,
        "refusals and sessions cost nothing"
    );
    stop(&mut serving).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_door_session_is_its_own_conversation() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let stub = StubServer::start(
        ["first answer", "second answer", "third answer"]
            .map(|t| wire_replies::text(Wire::OpenAiCompat, t, U))
            .to_vec(),
    )
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let (mut serving, port) = serve_with_door(&data).await;
    // The door opens in the boot, before the agents: serving starts after them.
    wait_log(&data, "schedule runner").await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (a1, b1, a2) = ("alpha-ONE-7c1", "bravo-ONE-2d9", "alpha-TWO-5e4");

    let asked = door_client(client_args(&url, "sessions", &[a1, b1, a2])).await;
    assert_eq!(
        asked["answers"],
        json!(["first answer", "second answer", "third answer"])
    );
    let sent: Vec<String> = stub.requests().iter().map(|r| r.body.to_string()).collect();
    assert_eq!(sent.len(), 3, "one model call per ask");
    assert!(sent[0].contains(a1));
    assert!(sent[1].contains(b1));
    assert!(
        !sent[1].contains(a1) && !sent[1].contains("first answer"),
        "session B must not carry session A's conversation: {}",
        sent[1]
    );
    assert!(
        sent[2].contains(a1) && sent[2].contains("first answer") && sent[2].contains(a2),
        "session A's second ask carries its first exchange: {}",
        sent[2]
    );
    assert!(!sent[2].contains(b1), "nor session B's: {}", sent[2]);
    assert_eq!(asked["warnings"], json!([]), "{asked}");

    stop(&mut serving).await;
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let conversations = store.list().unwrap();
    assert_eq!(
        conversations.len(),
        2,
        "one recorded conversation per door session"
    );
    for (id, _) in &conversations {
        let text = format!("{:?}", store.history(id).unwrap());
        assert!(
            text.contains(a1) != text.contains(b1),
            "a conversation holds one session's messages only"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_door_port_without_its_token_is_rejected_before_anything_runs() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let mut serve = serve_command(&data, 39999);
    let out = tokio::task::spawn_blocking(move || {
        serve
            .env_remove("FUSEFORKS_SECRET_DOOR_TOKEN")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("DOOR_TOKEN_MISSING"));
    let zero = crate::cli("serve --data-dir x --start batch --door-port 0");
    assert_eq!(zero.status.code(), Some(2), "port 0 is a usage error");
    assert!(stub.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_names_a_missing_mcp_header_secret_and_never_its_value() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    data.write(
        "mcp.json",
        json!({"mcpServers": {"remote": {"type": "http", "url": "https://mcp.example/mcp",
            "headers": {"Authorization": "Bearer ${secret:REMOTE_KEY}"}}}})
        .to_string(),
    );
    let dir = data.data_dir().display().to_string();
    let check = |with_secret: bool| {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || {
            let mut c = command(
                words(&format!(
                    "check --for serve --data-dir {dir} --start batch --secrets env --json"
                )),
                true,
            );
            c.env_remove("FUSEFORKS_SECRET_MCP_REMOTE_KEY");
            if with_secret {
                c.env("FUSEFORKS_SECRET_MCP_REMOTE_KEY", "mcp-CANARY-value");
            }
            c.output().unwrap()
        })
    };
    let missing = check(false).await.unwrap();
    assert_eq!(missing.status.code(), Some(3), "{}", stderr(&missing));
    let report: Value = serde_json::from_slice(&missing.stdout).unwrap();
    let finding = &report["findings"][0];
    assert_eq!(finding["code"], "SECRET_MISSING");
    assert!(finding["message"].as_str().unwrap().contains("REMOTE_KEY"));
    let present = check(true).await.unwrap();
    assert_eq!(present.status.code(), Some(0), "{}", stderr(&present));
    for out in [&missing, &present] {
        let all = format!("{}{}", crate::stdout(out), stderr(out));
        assert!(!all.contains("mcp-CANARY-value"));
    }
    assert!(stub.requests().is_empty(), "check calls nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_jsonl_wraps_the_stderr_of_mcp_children() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            Wire::OpenAiCompat,
            &[ScriptCall {
                id: "c1".into(),
                name: "echo__shout".into(),
                args: json!({"text": "hi"}),
            }],
            U,
        ),
        wire_replies::text(Wire::OpenAiCompat, "ok", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    data.write(
        "agents/rec/mcp.json",
        json!({"mcpServers": {"echo": {"command": "python3", "args": [mcp_script("echo_stdio.py")]}}})
            .to_string(),
    );
    let dir = data.data_dir().display().to_string();
    let out = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env --events jsonl hi"
        )),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?} ({e})")))
        .collect();
    assert!(
        lines.iter().any(|v| v["type"] == "log"
            && v["source"] == "mcp:echo"
            && v["message"] == "echo server starting"),
        "{lines:?}"
    );
    // Our MCP client introduces itself as fuseforks with our version, not as rmcp.
    let introduced = format!("client: fuseforks {}", crate::binary_version());
    assert!(
        lines
            .iter()
            .any(|v| v["source"] == "mcp:echo" && v["message"] == introduced.as_str()),
        "{lines:?}"
    );
    assert!(stub.requests()[1].body.to_string().contains("HI"));
}

/// Door sessions are not capped: each `initialize` opens an MCP session (and a conversation)
/// that lives until its 5-minute idle timeout, ≈ 55 KB each; 20,000 initializes took 17 s and
/// grew `serve` to 1.1 GB (found by a second attack re-run; `door.rs`, `open`:
/// `LocalSessionManager::default()`, no limit). A token holder (or a buggy client that never
/// reuses its session) exhausts the machine's memory in minutes. A cap on open sessions (the
/// oldest idle one evicted, or new ones refused) keeps `serve` bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_door_sessions_do_not_grow_serve_without_bound() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let (mut serving, port) = serve_with_door(&data).await;
    // The door opens in the boot, before the agents: serving starts after them.
    wait_log(&data, "schedule runner").await;
    let script = r#"
import http.client, json, sys
port, token, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
conn = http.client.HTTPConnection("127.0.0.1", port)
opened = 0
for _ in range(n):
    conn.request("POST", "/mcp", body, {"content-type": "application/json",
        "accept": "application/json, text/event-stream", "authorization": "Bearer " + token})
    reply = conn.getresponse()
    reply.read()
    opened += bool(reply.getheader("mcp-session-id"))
print(opened)
"#;
    let port_text = port.to_string();
    let out = tokio::task::spawn_blocking({
        let port_text = port_text.clone();
        move || {
            Command::new("python3")
                .args(["-c", script, &port_text, DOOR_TOKEN, "5000"])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    let opened = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let pid = serving.0.as_ref().map_or(0, std::process::Child::id);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    stop(&mut serving).await;
    assert!(
        peak_kb < 150 * 1024,
        "{opened} door sessions opened; serve peaked at {} MB",
        peak_kb / 1024
    );
}

/// One raw HTTP/1.1 POST to the door (status and body), so that a body no SDK would send can
/// be sent.
async fn raw_post(port: u16, content_type: &str, body: &[u8]) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {DOOR_TOKEN}\r\nContent-Type: {content_type}\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // A refused body may be answered before it is all sent; the answer is what counts.
    let _ = stream.write_all(body).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    (status, body)
}

/// Malformed JSON is a parse error (400, JSON-RPC −32700), not an
/// unsupported media type (415); a body over the door's cap is 413, read no further; a wrong
/// media type is still 415.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_door_answers_malformed_json_400_and_oversized_bodies_413() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let (mut serving, port) = serve_with_door(&data).await;
    // The door opens in the boot, before the agents: serving starts after them.
    wait_log(&data, "schedule runner").await;
    let (status, body) = raw_post(
        port,
        "application/json",
        b"{\"jsonrpc\": \"2.0\", \"id\": 1,",
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let reply: Value = serde_json::from_str(body.trim()).unwrap_or(Value::Null);
    assert_eq!(reply["error"]["code"], json!(-32700), "{body}");
    let huge = vec![b' '; 5 * 1024 * 1024];
    let (status, body) = raw_post(port, "application/json", &huge).await;
    assert_eq!(status, 413, "{body}");
    let (status, _) = raw_post(port, "text/plain", b"{}").await;
    assert_eq!(status, 415, "a wrong media type stays 415");
    assert!(stub.requests().is_empty());
    stop(&mut serving).await;
}

/// The door introduces itself with the binary's `--version`, the one version of every surface.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_door_says_the_binary_version() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let (mut serving, port) = serve_with_door(&data).await;
    // The door opens in the boot, before the agents: serving starts after them.
    wait_log(&data, "schedule runner").await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    let (status, body) = raw_post(port, "application/json", init.to_string().as_bytes()).await;
    stop(&mut serving).await;
    assert_eq!(status, 200, "{body}");
    let said = format!(
        r#""serverInfo":{{"name":"fuseforks","version":"{}"}}"#,
        crate::binary_version()
    );
    assert!(body.replace(' ', "").contains(&said), "{body}");
}
