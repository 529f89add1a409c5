//! `check`, `ask` and `serve` through the binary against a loopback stub.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use fuseforks_core::llm::Wire;
use fuseforks_core::village::TemplateId;
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use fuseforks_testkit::{
    DEADLINE, KillOnDrop, TempDataDir, TestVillage, TestVillageBuilder, eventually, on_a_free_port,
    snapshot, stub_template, within,
};
use serde_json::json;

use crate::{stderr, stdout, words};

pub(crate) const U: ScriptUsage = ScriptUsage {
    prompt: 400,
    completion: 10,
    cache_read: 0,
    reasoning: 0,
};
pub(crate) const KEY: &str = "sk-headless-test-KEY-93e1";

/// The CLI tests' village: agent `rec`, the reception, on template `stub` at the stub `stub`.
pub(crate) fn stub_village(stub: &str) -> TestVillageBuilder {
    TestVillage::builder()
        .stub(Wire::OpenAiCompat, stub)
        .agent("rec", "Reception")
        .reception("rec")
}

/// [`stub_village`] with a token budget, written into `data`.
pub(crate) fn village(data: &TempDataDir, stub: &str, budget: Option<u64>) {
    stub_village(stub).budget(budget).write(data);
}

/// The binary on `args` with a clean locale, and the stub's key when `with_key`.
pub(crate) fn command<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
    with_key: bool,
) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"));
    c.args(args)
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("FUSEFORKS_SECRET_STUB");
    if with_key {
        c.env("FUSEFORKS_SECRET_STUB", KEY);
    }
    c
}

pub(crate) async fn run(args: Vec<String>, with_key: bool) -> Output {
    tokio::task::spawn_blocking(move || command(args, with_key).output().unwrap())
        .await
        .unwrap()
}

/// `ask` on the village in `dir` (reception started, secrets from the environment), with
/// `extra` options before the message.
pub(crate) fn ask_args(dir: &str, extra: &[&str], message: &str) -> Vec<String> {
    let mut all = words(&format!(
        "ask --data-dir {dir} --start reception --secrets env"
    ));
    all.extend(args(extra));
    all.push(message.to_owned());
    all
}

pub(crate) fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

pub(crate) fn log(data: &TempDataDir) -> String {
    std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_answers_on_stdout_and_exits_0() {
    let stub = StubServer::start(vec![wire_replies::text(
        Wire::OpenAiCompat,
        "The answer.",
        U,
    )])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let out = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env 'What is it?'"
        )),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The answer.\n", "the answer alone");
    assert_eq!(
        stub.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let log = log(&data);
    assert!(
        log.contains("turn: agent=rec")
            && log.contains("reply: agent=rec to=external:fuseforks-cli"),
        "{log}"
    );
    assert!(
        !log.contains(KEY) && !log.contains("What is it?") && !log.contains("The answer."),
        "no secrets or bodies in the log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_ask_sends_nothing_and_takes_no_lock() {
    let stub = StubServer::start(vec![wire_replies::text(Wire::OpenAiCompat, "never", U)]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let before = snapshot(data.data_dir());
    let dir = data.data_dir().display().to_string();
    let check = run(
        words(&format!(
            "check --for ask --data-dir {dir} --start reception --secrets env"
        )),
        false,
    )
    .await;
    assert_eq!(check.status.code(), Some(3));
    assert!(
        stdout(&check).contains("SECRET_MISSING")
            && stdout(&check).contains("FUSEFORKS_SECRET_STUB"),
        "{}",
        stdout(&check)
    );
    let ask = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hi"
        )),
        false,
    )
    .await;
    assert_eq!(ask.status.code(), Some(3), "{}", stderr(&ask));
    assert!(stderr(&ask).contains("SECRET_MISSING"));
    assert!(stdout(&ask).is_empty());
    assert!(stub.requests().is_empty(), "zero requests to the model");
    assert!(
        !data.workspace().join(".fuseforks.lock").exists(),
        "no lock file was created"
    );
    assert_eq!(
        snapshot(data.data_dir()),
        before,
        "check and a rejected ask write nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_and_boot_failures_have_their_codes() {
    let data = TempDataDir::new();
    let dir = data.data_dir().display().to_string();
    // `serve` needs --start (`ask` defaults to the reception).
    let no_start = run(
        words(&format!("serve --data-dir {dir} --secrets env")),
        true,
    )
    .await;
    assert_eq!(no_start.status.code(), Some(2));
    assert!(
        stderr(&no_start).contains("serve needs --start"),
        "{}",
        stderr(&no_start)
    );
    let missing = run(
        words(&format!(
            "ask --data-dir {dir} --start batch --secrets env hi"
        )),
        true,
    )
    .await;
    assert_eq!(missing.status.code(), Some(5), "{}", stderr(&missing));
    assert!(stderr(&missing).contains("VILLAGE_MISSING"));
    let serve = run(
        words(&format!(
            "serve --data-dir {dir} --start batch --secrets env"
        )),
        true,
    )
    .await;
    assert_eq!(serve.status.code(), Some(5));
    let check = run(
        words(&format!("check --for serve --data-dir {dir} --start batch")),
        true,
    )
    .await;
    assert_eq!(check.status.code(), Some(5));
    assert!(
        std::fs::read_dir(data.data_dir()).unwrap().next().is_none(),
        "nothing was created"
    );
    let stub = StubServer::start(vec![]).await;
    village(&data, stub.base_url(), None);
    let unknown = run(
        words(&format!("check --for ask --data-dir {dir} --start ghost")),
        true,
    )
    .await;
    assert_eq!(unknown.status.code(), Some(2));
    let reception_for_serve = run(
        words(&format!(
            "check --for serve --data-dir {dir} --start reception"
        )),
        true,
    )
    .await;
    assert_eq!(reception_for_serve.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_jsonl_makes_every_stderr_line_json() {
    let stub = StubServer::start(vec![wire_replies::text(Wire::OpenAiCompat, "ok", U)]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let out = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env --events jsonl hi"
        )),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    let mut types = Vec::new();
    for line in err.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line:?} ({e})"));
        types.push(v["type"].as_str().unwrap().to_owned());
    }
    assert!(
        types.iter().any(|t| t == "log")
            && types.iter().any(|t| t == "agentStatusChanged")
            && types.iter().any(|t| t == "turnRecorded"),
        "{types:?}"
    );
    assert_eq!(stdout(&out), "ok\n");
    for bad in [
        words(&format!("serve --events jsonl --data-dir {dir}")),
        words("frob --events jsonl"),
    ] {
        let out = run(bad, true).await;
        assert_eq!(out.status.code(), Some(2));
        for line in stderr(&out).lines() {
            let v: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line:?} ({e})"));
            assert_eq!(
                (v["type"].as_str(), v["code"].as_str()),
                (Some("cli"), Some("USAGE"))
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_ceiling_exits_9() {
    // The first call fits (its request and the whole output cap, ≈ 37,000 of 100,000) and
    // costs more than is left.
    let big = ScriptUsage {
        prompt: 120_000,
        completion: 50,
        cache_read: 0,
        reasoning: 0,
    };
    let call = ScriptCall {
        id: "c".into(),
        name: "remember".into(),
        args: json!({"note": "x"}),
    };
    let stub = StubServer::start(vec![wire_replies::tool_calls(
        Wire::OpenAiCompat,
        &[call],
        big,
    )])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), Some(100_000));
    let dir = data.data_dir().display().to_string();
    let out = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env go"
        )),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(stdout(&out), "(Stopped at the token budget.)\n");
    assert!(log(&data).contains("stop=budget_exhausted"));
    // The reason is said where the user looks, with what to change.
    assert!(
        stderr(&out).contains("[BUDGET_EXHAUSTED]") && stderr(&out).contains("raise tokenBudget"),
        "{}",
        stderr(&out)
    );
}

/// The binary on the arguments of `line` (see [`crate::words`]), stdout and stderr piped.
pub(crate) fn spawn(line: &str) -> Child {
    command(words(line), true)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub(crate) fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([format!("-{name}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends signal `name` (`TERM`, `INT`) to the process `serving` guards and waits for its output.
pub(crate) async fn signal_and_wait(serving: &mut KillOnDrop, name: &str) -> Output {
    let child = serving.take();
    signal(&child, name);
    tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap()
}

/// Waits up to 20 s for `needle` in the village log of `data`.
pub(crate) async fn wait_log(data: &TempDataDir, needle: &str) {
    wait_for(&data.workspace().join("fuseforks.log"), needle).await;
}

pub(crate) async fn wait_for(path: &Path, needle: &str) {
    let what = format!("{needle:?} in {}", path.display());
    eventually(what, DEADLINE, || {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .contains(needle)
    })
    .await;
}

/// `start(port)` (a `serve` with `--door-port` or `--gui-port`, which refuse port 0) on a free
/// port, once the village log of `data` says `listening(port)`. A start that lost its port to
/// another process meanwhile exits first, saying `…_BIND_FAILED`: it is tried again on
/// another port, its log removed.
pub(crate) async fn serve_on_a_port(
    data: &TempDataDir,
    listening: impl Fn(u16) -> String,
    mut start: impl FnMut(u16) -> Child,
) -> (KillOnDrop, u16) {
    let log_path = data.workspace().join("fuseforks.log");
    on_a_free_port("serve", async |port| {
        let mut serving = KillOnDrop::new(start(port));
        let needle = listening(port);
        let listens = eventually(format!("{needle:?} or the end of serve"), DEADLINE, || {
            if std::fs::read_to_string(&log_path)
                .unwrap_or_default()
                .contains(&needle)
            {
                return Some(true);
            }
            let child = serving.0.as_mut().unwrap();
            child.try_wait().unwrap().map(|_| false)
        })
        .await;
        if listens {
            return Some(serving);
        }
        let out = serving.take().wait_with_output().unwrap();
        assert!(
            stderr(&out).contains("_BIND_FAILED"),
            "serve ended before it listened: {}",
            stderr(&out)
        );
        let _ = std::fs::remove_file(&log_path);
        None
    })
    .await
}

/// Whether `pid` runs (a zombie counts as gone).
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            // The state follows the parenthesised command name; Z = a zombie, already dead.
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

/// Waits up to `limit` for `pid` to be gone (or a zombie).
pub(crate) async fn gone_within(pid: u32, limit: Duration) -> bool {
    within(limit, || !alive(pid)).await.is_some()
}

/// Waits up to 30 s for a process to write its pid into `path` (under `data_dir`).
pub(crate) async fn read_pid(path: &Path) -> u32 {
    let pid = within(Duration::from_secs(30), || {
        let text = std::fs::read_to_string(path).ok()?;
        text.trim().parse().ok()
    })
    .await;
    pid.unwrap_or_else(|| {
        let log = std::fs::read_to_string(path.with_file_name("workspace").join("fuseforks.log"));
        panic!("{} was never written: {log:?}", path.display())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_holds_the_lock_and_closes_on_sigterm() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let mut serving = KillOnDrop::new(spawn(&format!(
        "serve --data-dir {dir} --start batch --secrets env"
    )));
    wait_log(&data, "agent started: agent=rec").await;
    let second = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hi"
        )),
        true,
    )
    .await;
    assert_eq!(second.status.code(), Some(4), "{}", stderr(&second));
    assert!(stderr(&second).contains("VILLAGE_LOCKED"));
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        log(&data).contains("agent stopped: agent=rec joined=true"),
        "{}",
        log(&data)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_open_elsewhere_exits_4() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let held =
        fuseforks_core::sessions::SessionStore::open(&data.workspace().join("sessions.redb"))
            .unwrap();
    let dir = data.data_dir().display().to_string();
    let out = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hi"
        )),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("SESSION_STORE_LOCKED"));
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_during_a_slow_answer_interrupts_and_records_the_turn() {
    let wire = Wire::OpenAiCompat;
    let slow = |id: &str| {
        let call = ScriptCall {
            id: id.into(),
            name: "remember".into(),
            args: json!({"note": id}),
        };
        wire_replies::tool_calls(wire, &[call], U).after(Duration::from_millis(1500))
    };
    let stub = StubServer::start(vec![
        slow("one"),
        slow("two"),
        StubReply::json(200, &json!({})),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let mut asking = KillOnDrop::new(spawn(&format!(
        "ask --data-dir {dir} --start reception --secrets env 'keep going'"
    )));
    wait_log(&data, "turn start: agent=rec").await;
    // The interrupt must come while the model is answering: its request has arrived.
    stub.wait_requests(1).await;
    let out = signal_and_wait(&mut asking, "INT").await;
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert_eq!(stdout(&out), "(Interrupted.)\n");
    let log = log(&data);
    assert!(
        log.contains("turn interrupted: agent=rec") && log.contains("turn: agent=rec"),
        "{log}"
    );
    assert!(
        log.contains("prompt=400"),
        "the paid round is in the record: {log}"
    );
    assert_eq!(stub.requests().len(), 1, "no round after the interrupt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_original_village_passes_check_with_its_key_and_fails_without() {
    let data = TempDataDir::with_original_village();
    let dir = data.data_dir().display().to_string();
    let with = run(
        words(&format!(
            "check --for ask --data-dir {dir} --start reception --secrets env"
        )),
        true,
    )
    .await;
    assert_eq!(
        with.status.code(),
        Some(0),
        "{}{}",
        stdout(&with),
        stderr(&with)
    );
    let without = run(
        words(&format!(
            "check --for ask --data-dir {dir} --start reception --secrets env --json"
        )),
        false,
    )
    .await;
    assert_eq!(without.status.code(), Some(3));
    let report: serde_json::Value = serde_json::from_str(stdout(&without).trim()).unwrap();
    assert_eq!(report["findings"][0]["code"], "SECRET_MISSING");
    assert_eq!(report["start"], json!(["agent_1"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_name_collision_stops_the_boot_naming_names_not_values() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    let mut twin = stub_template(Wire::OpenAiCompat, stub.base_url());
    twin.id = TemplateId::new("STUB").unwrap(); // maps to FUSEFORKS_SECRET_STUB too
    stub_village(stub.base_url()).template(twin).write(&data);
    let dir = data.data_dir().display().to_string();
    let out = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hi"
        )),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("SECRET_NAME_COLLISION")
            && err.contains("FUSEFORKS_SECRET_STUB")
            && err.contains("stub, STUB"),
        "{err}"
    );
    assert!(!err.contains(KEY), "never a value");
    assert!(stub.requests().is_empty());
}
