//! The guards hold, through the binary, against the agent they guard. A `run` child
//! cannot drive the kill switch over the control socket, a `setsid` grandchild of `run` does
//! not outlive the turn, and an MCP child's escape sequences and bidi controls reach neither a
//! piped stderr nor `--events jsonl`.

use std::process::Stdio;
use std::time::Duration;

use fuseforks_core::llm::Wire;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{TempDataDir, mcp_script};
use serde_json::{Value, json};

use crate::headless::{U, alive, command, gone_within, log, read_pid, stub_village, wait_log};
use crate::{stderr, stdout, words};

const WIRE: Wire = Wire::OpenAiCompat;

/// A village whose reception runs `run` in a work folder of its own (returned), with
/// `run.json` allowing `allow`.
fn run_village(data: &TempDataDir, stub: &str, allow: &str) -> TempDataDir {
    let work = TempDataDir::new();
    let at = work.data_dir().display().to_string();
    stub_village(stub)
        .world(|w| {
            w.agents[0].work_dir = Some(at);
            w.agents[0].enabled_tools = Some(vec!["run".to_owned()]);
        })
        .write(data);
    data.write(
        "agents/rec/run.json",
        json!({"version": 1, "allow": [allow], "deny": []}).to_string(),
    );
    work
}

fn run_call(command: &str, args: &[&str]) -> ScriptCall {
    ScriptCall {
        id: "c1".into(),
        name: "run".into(),
        args: json!({"command": command, "args": args}),
    }
}

/// The `tool` message the model got back (the second request's last message).
fn tool_result(stub: &StubServer) -> String {
    let requests = stub.requests();
    let body: &Value = &requests[1].body;
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

/// A confined `run` command connects to `control/fuseforks.sock`
/// and sends `pause`, `resume` and a forged `probe-approved`. Every request is refused (the
/// connection closed unanswered), logged with the peer's pid, and nothing changes: no kill
/// switch line, no audit line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_child_cannot_drive_the_kill_switch() {
    let python = "/usr/bin/python3";
    if !fuseforks_testkit::system_python() {
        return;
    }
    let data = TempDataDir::new();
    let socket = data.data_dir().join("control/fuseforks.sock");
    let client = "import socket,sys\nfor req in sys.argv[2:]:\n  s=socket.socket(socket.AF_UNIX)\n  s.connect(sys.argv[1])\n  s.settimeout(5)\n  try:\n    s.sendall(req.encode()+b'\\n')\n    print(req.split()[0], repr(s.recv(256)))\n  except OSError as e:\n    print(req.split()[0], 'error', e.errno)\n";
    let forged = format!("probe-approved {} probe nightly", "ab".repeat(32));
    let socket_arg = socket.display().to_string();
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            WIRE,
            &[run_call(
                python,
                &[
                    "-c",
                    client,
                    &socket_arg,
                    "pause",
                    "resume",
                    "halt",
                    &forged,
                ],
            )],
            U,
        ),
        wire_replies::text(WIRE, "done", U),
    ])
    .await;
    let _work = run_village(&data, stub.base_url(), "/usr/bin/python3 *");
    let out = ask_hi(&data);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "done");
    let result = tool_result(&stub);
    for request in ["pause", "resume", "halt", "probe-approved"] {
        assert!(
            result.contains(&format!("{request} b''"))
                || result.contains(&format!("{request} error")),
            "the socket answered the run child's {request}: {result}"
        );
    }
    wait_log(
        &data,
        "control: refused code=CONTROL_PEER_REFUSED reason=own_child peer_pid=",
    )
    .await;
    let log = log(&data);
    assert_eq!(
        log.matches("CONTROL_PEER_REFUSED reason=own_child").count(),
        4,
        "{log}"
    );
    assert!(
        !log.contains("kill switch:"),
        "a refused command applied: {log}"
    );
    let audit = std::fs::read_to_string(data.workspace().join("audit.jsonl")).unwrap_or_default();
    assert!(
        !audit.contains("kill_switch") && !audit.contains("probe_approve"),
        "{audit}"
    );
    eprintln!("figure: kill-switch commands accepted from a run child: 0 of 4");
}

/// A `run` command starts a grandchild in a session of its own (`setsid`), out of
/// the child's process group. It must not outlive the turn: once `ask` has answered, it is
/// gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setsid_grandchild_of_run_does_not_outlive_the_turn() {
    let script = "setsid sh -c 'echo $$ > detached.pid; exec sleep 300' </dev/null >/dev/null 2>&1 & \
                  while [ ! -s detached.pid ]; do sleep 0.01; done; echo started";
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(WIRE, &[run_call("sh", &["-c", script])], U),
        wire_replies::text(WIRE, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    let work = run_village(&data, stub.base_url(), "sh *");
    let out = ask_hi(&data);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        tool_result(&stub).contains("started"),
        "{}",
        tool_result(&stub)
    );
    let detached = read_pid(&work.data_dir().join("detached.pid")).await;
    let gone = gone_within(detached, Duration::from_secs(2)).await;
    if alive(detached) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &detached.to_string()])
            .status();
    }
    assert!(gone, "the setsid grandchild {detached} outlived the turn");
    eprintln!("figure: setsid grandchildren alive after the turn: 0");
}

/// An MCP child's stderr (`\r`, CSI, OSC title, BEL, bidi overrides) reaches a
/// piped stderr, and `--events jsonl`, with none of those characters: a log file read later
/// cannot show a forged line or reordered text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_childs_control_characters_reach_no_piped_sink() {
    let stub = StubServer::start(vec![
        wire_replies::text(WIRE, "done", U),
        wire_replies::text(WIRE, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let python = ["/usr/bin/python3", "python3"]
        .into_iter()
        .find(|p| std::process::Command::new(p).arg("-V").output().is_ok())
        .unwrap_or("python3");
    data.write(
        "agents/rec/mcp.json",
        json!({"mcpServers": {"kid": {"command": python, "args": [
            mcp_script("child_stdio.py"), "--hostile-stderr"]}}})
        .to_string(),
    );
    let forbidden = ['\u{1b}', '\r', '\u{7}', '\u{9b}', '\u{202e}', '\u{2066}'];
    for extra in ["", "--events jsonl"] {
        let out = command(
            words(&format!(
                "ask --data-dir {} --start reception --secrets env {extra} hi",
                data.data_dir().display()
            )),
            true,
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("kid says hi"), "{extra}: {err:?}");
        for c in forbidden {
            assert!(
                !err.contains(c),
                "{extra}: {c:?} reached a piped stderr: {err:?}"
            );
        }
    }
}

/// The village of the budget attack: ceiling `ceiling`, template cap 16 output tokens, the
/// reception with a work folder and every file and search tool (their specs are most of the
/// request's bytes).
fn budget_village(data: &TempDataDir, stub: &str, ceiling: u64) -> TempDataDir {
    let work = TempDataDir::new();
    let at = work.data_dir().display().to_string();
    stub_village(stub)
        .budget(Some(ceiling))
        .world(|w| {
            w.model_templates[0].max_output_tokens = 16;
            w.agents[0].work_dir = Some(at);
            w.agents[0].enabled_tools = Some(
                [
                    "file", "grep", "fd", "diff", "sd", "yq", "remember", "rag", "run",
                ]
                .map(String::from)
                .to_vec(),
            );
        })
        .write(data);
    work
}

/// `ask … hi` on the village in `data`, with the stub's key.
fn ask_hi(data: &TempDataDir) -> std::process::Output {
    command(
        words(&format!(
            "ask --data-dir {} --start reception --secrets env hi",
            data.data_dir().display()
        )),
        true,
    )
    .output()
    .unwrap()
}

/// The reservation once left the tool specs out (6,162 of 7,388 request bytes), so at a
/// ceiling of 1,000 (or 2,000) a call was admitted that cost 1,790. A server counting one
/// token per 4 bytes of the request as sent, answering 16 tokens (its cap), would overspend
/// either ceiling: the call must not be sent at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ceiling_holds_when_the_tool_specs_are_most_of_the_request() {
    for ceiling in [1_000u64, 2_000] {
        let stub = StubServer::start(vec![wire_replies::text(
            WIRE,
            "over the ceiling",
            fuseforks_testkit::wire_replies::ScriptUsage {
                prompt: 1_774,
                completion: 4,
                cache_read: 0,
                reasoning: 0,
            },
        )])
        .await;
        let data = TempDataDir::new();
        let _work = budget_village(&data, stub.base_url(), ceiling);
        let out = ask_hi(&data);
        assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
        assert!(
            stub.requests().is_empty(),
            "ceiling {ceiling}: a call that costs 1,790 was sent"
        );
        assert!(
            log(&data).contains("reason=reserve_short"),
            "{}",
            log(&data)
        );
        eprintln!("figure: ceiling {ceiling}: 0 tokens spent (the call did not fit)");
    }
}

/// A server that ignores the output cap it was sent (16) and
/// answers 5,000 tokens with a tool call. The call is charged what it reported, and the turn
/// ends there (`LLM_OUTPUT_OVER_CAP`): no second call is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_its_output_cap_is_charged_and_its_turn_ends() {
    let over = fuseforks_testkit::wire_replies::ScriptUsage {
        prompt: 2_000,
        completion: 5_000,
        cache_read: 0,
        reasoning: 0,
    };
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            WIRE,
            &[ScriptCall {
                id: "c1".into(),
                name: "fd".into(),
                args: json!({"pattern": "x"}),
            }],
            over,
        ),
        wire_replies::text(WIRE, "never asked", U),
    ])
    .await;
    let data = TempDataDir::new();
    let _work = budget_village(&data, stub.base_url(), 100_000);
    let out = ask_hi(&data);
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("LLM_OUTPUT_OVER_CAP"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        stub.requests().len(),
        1,
        "a second call followed the overrun"
    );
    let log = log(&data);
    assert!(log.contains("failed:LLM_OUTPUT_OVER_CAP"), "{log}");
}
