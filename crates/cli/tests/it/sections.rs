//! The sections an abort may not cut (docs/threat-model.md, "Sections an abort waits for"): an
//! abort during a `run` child or an MCP call already sent waits until it ends (its result is
//! audited), then the turn ends interrupted; a halt in the same place cuts at once.

use std::process::Stdio;
use std::time::{Duration, Instant};

use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use fuseforks_testkit::{KillOnDrop, TempDataDir, mcp_script};
use serde_json::{Value, json};

use crate::headless::{U, alive, gone_within, read_pid, wait_log};
use crate::safety::{ask, audit_lines, call, dir, wait_for_file, working_village};
use crate::{cli, stderr, stdout};

const WIRE: fuseforks_core::llm::Wire = fuseforks_core::llm::Wire::OpenAiCompat;

/// A `run` child that writes its pid, waits for `go` (the test's condition), then writes
/// `out.txt`.
const WAITING_CHILD: &str =
    "echo $$ > child.pid; while [ ! -e go ]; do sleep 0.05; done; echo done > out.txt";

/// The reception's one tool call, then an answer that a cut turn never asks for.
async fn stub_with(name: &str, args: Value) -> StubServer {
    StubServer::start(vec![
        wire_replies::tool_calls(WIRE, &[call("c1", name, args)], U),
        wire_replies::text(WIRE, "never read", U),
    ])
    .await
}

/// Sends `level` through the CLI (the socket) without blocking the test's runtime.
fn send(level: &'static str, data: &TempDataDir) -> tokio::task::JoinHandle<std::process::Output> {
    let dir = dir(data);
    tokio::task::spawn_blocking(move || cli(&format!("{level} --data-dir {dir}")))
}

async fn finish(asking: KillOnDrop) -> std::process::Output {
    let mut asking = asking;
    tokio::task::spawn_blocking(move || asking.take().wait_with_output().unwrap())
        .await
        .unwrap()
}

fn spawn_ask(data: &TempDataDir) -> KillOnDrop {
    KillOnDrop::new(
        ask(data, "")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// Sends `abort` like [`send`], and says with its answer whether `proof` (the file the held
/// section writes once let go) was there when the answer came: an abort that waits for its
/// section answers only after it, one that does not answers before the test lets it go.
fn send_abort(
    data: &TempDataDir,
    proof: std::path::PathBuf,
) -> tokio::task::JoinHandle<(std::process::Output, bool)> {
    let dir = dir(data);
    tokio::task::spawn_blocking(move || {
        let answer = cli(&format!("abort --data-dir {dir}"));
        (answer, proof.exists())
    })
}

/// Abort while a `run` child is under way: the child goes on until its condition, writes its
/// file, its audit line says `ok`, the abort answers only then, and the turn ends interrupted
/// without another model call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_waits_for_a_run_child_then_the_turn_ends_interrupted() {
    let stub = stub_with(
        "run",
        json!({"command": "sh", "args": ["-c", WAITING_CHILD]}),
    )
    .await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let work = work_dir.data_dir().to_path_buf();
    let asking = spawn_ask(&data);
    let child = read_pid(&work.join("child.pid")).await;
    let aborting = send_abort(&data, work.join("out.txt"));
    wait_log(&data, "kill switch: command=abort from=running to=aborting").await;
    assert!(!aborting.is_finished(), "the abort did not wait");
    assert!(alive(child), "the abort cut the run child");
    std::fs::write(work.join("go"), b"").unwrap();
    let (aborted, finished_first) = aborting.await.unwrap();
    assert!(
        finished_first,
        "the abort answered before the run child finished"
    );
    assert_eq!(stdout(&aborted).trim(), "running", "{}", stderr(&aborted));
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt"))
            .unwrap()
            .trim(),
        "done"
    );
    assert!(
        audit_lines(&data)
            .iter()
            .any(|l| l["action"] == "run" && l["outcome"] == "ok"),
        "the run's result is audited"
    );
    let out = finish(asking).await;
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    wait_log(&data, "turn interrupted: agent=rec").await;
    wait_log(&data, "abort wait: sections=").await;
    assert_eq!(
        stub.requests().len(),
        1,
        "a cut turn asks the model nothing more"
    );
}

/// Halt in the same place waits for nothing: the child is gone within a second, before its
/// condition is ever met, and never writes its file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halt_kills_a_run_child_inside_its_section_at_once() {
    let stub = stub_with(
        "run",
        json!({"command": "sh", "args": ["-c", WAITING_CHILD]}),
    )
    .await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let work = work_dir.data_dir().to_path_buf();
    let asking = spawn_ask(&data);
    let child = read_pid(&work.join("child.pid")).await;
    let started = Instant::now();
    let halted = send("halt", &data).await.unwrap();
    assert_eq!(stdout(&halted).trim(), "halted", "{}", stderr(&halted));
    let left = Duration::from_secs(1).saturating_sub(started.elapsed());
    assert!(
        gone_within(child, left).await,
        "the halt waited for the child"
    );
    let out = finish(asking).await;
    assert_eq!(out.status.code(), Some(14), "{}", stderr(&out));
    std::fs::write(work.join("go"), b"").unwrap();
    assert!(!work.join("out.txt").exists());
    assert!(
        audit_lines(&data)
            .iter()
            .any(|l| l["action"] == "run" && l["outcome"] == "failed"),
        "the cut run is audited as failed"
    );
}

/// The reception with the test MCP server `echo` (its `hold` tool) beside the run village.
fn mcp_village(data: &TempDataDir, stub: &str) -> TempDataDir {
    let work = working_village(data, stub);
    let config = json!({"mcpServers": {"echo": {"command": "python3", "args": [mcp_script("echo_stdio.py")]}}});
    data.write("agents/rec/mcp.json", config.to_string());
    work
}

fn hold_args(work: &std::path::Path) -> Value {
    let at = |name: &str| work.join(name).display().to_string();
    json!({"started": at("started"), "go": at("go"), "out": at("out.txt")})
}

/// Abort while an MCP call is already sent: the call is awaited until the server answers,
/// audited `ok`, and the turn then ends interrupted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_waits_for_an_mcp_call_already_sent() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let work_dir = TempDataDir::new();
    let stub = stub_with("echo__hold", hold_args(work_dir.data_dir())).await;
    let data = TempDataDir::new();
    let _run_work = mcp_village(&data, stub.base_url());
    let work = work_dir.data_dir().to_path_buf();
    let asking = spawn_ask(&data);
    wait_for_file(&work.join("started")).await;
    let aborting = send_abort(&data, work.join("out.txt"));
    wait_log(&data, "kill switch: command=abort from=running to=aborting").await;
    assert!(!aborting.is_finished(), "the abort did not wait");
    std::fs::write(work.join("go"), b"").unwrap();
    let (aborted, finished_first) = aborting.await.unwrap();
    assert!(
        finished_first,
        "the abort answered before the MCP call finished"
    );
    assert_eq!(stdout(&aborted).trim(), "running", "{}", stderr(&aborted));
    assert!(
        audit_lines(&data).iter().any(|l| l["action"] == "mcp_call"
            && l["target"] == "echo/hold"
            && l["outcome"] == "ok"),
        "the MCP call's result is audited: {:#?}",
        audit_lines(&data)
    );
    let out = finish(asking).await;
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert_eq!(stub.requests().len(), 1);
}

/// Halt while an MCP call is already sent: the call is dropped at once (audited `failed`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halt_drops_an_mcp_call_already_sent_at_once() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let work_dir = TempDataDir::new();
    let stub = stub_with("echo__hold", hold_args(work_dir.data_dir())).await;
    let data = TempDataDir::new();
    let _run_work = mcp_village(&data, stub.base_url());
    let work = work_dir.data_dir().to_path_buf();
    let asking = spawn_ask(&data);
    wait_for_file(&work.join("started")).await;
    let started = Instant::now();
    let halted = send("halt", &data).await.unwrap();
    assert_eq!(stdout(&halted).trim(), "halted", "{}", stderr(&halted));
    let out = finish(asking).await;
    assert_eq!(out.status.code(), Some(14), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the halt waited: {:?}",
        started.elapsed()
    );
    assert!(!work.join("out.txt").exists(), "the call was not awaited");
}

/// A halt sent while an abort waits for a `run` child's section is not held up by it: the
/// halt answers at once, the child dies, and the waiting abort ends with the halt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_halt_during_an_aborts_wait_does_not_wait() {
    let stub = stub_with(
        "run",
        json!({"command": "sh", "args": ["-c", WAITING_CHILD]}),
    )
    .await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let work = work_dir.data_dir().to_path_buf();
    let asking = spawn_ask(&data);
    let child = read_pid(&work.join("child.pid")).await;
    let aborting = send("abort", &data);
    wait_log(&data, "kill switch: command=abort from=running to=aborting").await;
    // The abort's answer, `halted` below, proves it waited until the halt.
    assert!(!aborting.is_finished(), "the abort did not wait");
    let started = Instant::now();
    let halted = send("halt", &data).await.unwrap();
    assert_eq!(stdout(&halted).trim(), "halted", "{}", stderr(&halted));
    let left = Duration::from_secs(2).saturating_sub(started.elapsed());
    assert!(
        gone_within(child, left).await,
        "the halt waited for the abort"
    );
    let aborted = aborting.await.unwrap();
    assert_eq!(stdout(&aborted).trim(), "halted", "{}", stderr(&aborted));
    wait_log(&data, "end=halted").await;
    let out = finish(asking).await;
    assert_eq!(out.status.code(), Some(14), "{}", stderr(&out));
}
