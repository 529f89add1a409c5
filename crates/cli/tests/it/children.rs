//! The children of `serve`, with a standard-library MCP server
//! (`child_stdio.py`): no secret in a child's environment, no orphan after SIGKILL or SIGTERM
//! of `serve` — not the server, not a helper it started, not a server that ignores stdin and
//! SIGTERM — and a SIGTERM during a connect that never completes ends `serve` at once; a
//! server's stderr reaches a terminal only with its escape sequences stripped.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use fuseforks_testkit::{KillOnDrop, TempDataDir, mcp_script, within};
use serde_json::{Value, json};

use crate::headless::{alive, command, gone_within, read_pid, signal, village, wait_log};
use crate::words;

const CANARY: &str = "canary-SECRET-value-5d21";

/// `serve --start batch` on a village whose reception has one MCP server, `child_stdio.py`
/// with `options`; the environment holds the model key and a canary secret.
async fn serve_with(data: &TempDataDir, options: &[&str]) -> (StubServer, KillOnDrop) {
    let stub = StubServer::start(vec![]).await;
    village(data, stub.base_url(), None);
    let mut server_args = vec![mcp_script("child_stdio.py").display().to_string()];
    server_args.extend(options.iter().map(|s| (*s).to_owned()));
    data.write(
        "agents/rec/mcp.json",
        json!({"mcpServers": {"kid": {"command": real_python(), "args": server_args, "env": {"KID_MODE": "test"}}}})
            .to_string(),
    );
    let dir = data.data_dir().display().to_string();
    let args = words(&format!(
        "serve --data-dir {dir} --start batch --secrets env"
    ));
    let child = command(args, true)
        .env("FUSEFORKS_SECRET_CANARY", CANARY)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (stub, KillOnDrop::new(child))
}

/// The interpreter itself, not a wrapper script (a pyenv shim adds variables of its own).
fn real_python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn file(data: &TempDataDir, name: &str) -> PathBuf {
    data.data_dir().join(name)
}

/// Kills a helper left behind (so a red test does not leave it for 10 minutes).
fn cleanup(pid: u32) {
    if alive(pid) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

async fn wait_exit(mut serve: Child) -> std::process::ExitStatus {
    tokio::task::spawn_blocking(move || serve.wait().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_child_gets_no_secret_and_nothing_survives_sigkill_of_serve() {
    let data = TempDataDir::new();
    let (env_file, pid_file, helper_file) = (
        file(&data, "kid.env"),
        file(&data, "kid.pid"),
        file(&data, "helper.pid"),
    );
    let options = [
        "--env",
        env_file.to_str().unwrap(),
        "--pid",
        pid_file.to_str().unwrap(),
        "--grandchild",
        helper_file.to_str().unwrap(),
    ];
    let (_stub, mut serving) = serve_with(&data, &options).await;
    wait_log(&data, "mcp: agent=rec server=kid outcome=connected").await;
    let (kid, helper) = (read_pid(&pid_file).await, read_pid(&helper_file).await);

    let env: Value = serde_json::from_str(&std::fs::read_to_string(&env_file).unwrap()).unwrap();
    let env = env.as_object().unwrap();
    let text = serde_json::to_string(env).unwrap();
    assert!(
        !text.contains(CANARY) && !text.contains(crate::headless::KEY),
        "a secret reached the MCP child: {:?}",
        env.keys().collect::<Vec<_>>()
    );
    assert!(
        env.keys().all(|k| !k.starts_with("FUSEFORKS_SECRET_")),
        "{:?}",
        env.keys().collect::<Vec<_>>()
    );
    assert_eq!(env.get("KID_MODE"), Some(&json!("test")), "the entry's env");
    assert!(env.contains_key("PATH"));
    let allowed = ["PATH", "HOME", "USER", "LANG", "TMPDIR", "KID_MODE"];
    // Python itself may add a few of its own (LC_CTYPE coercion); nothing of ours beyond these.
    let foreign: Vec<&String> = env
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()) && !k.starts_with("LC_"))
        .collect();
    assert!(
        foreign.is_empty(),
        "variables beyond the minimal set: {foreign:?}"
    );

    let serve = serving.take();
    signal(&serve, "KILL");
    wait_exit(serve).await;
    let (kid_gone, helper_gone) = (
        gone_within(kid, Duration::from_secs(3)).await,
        gone_within(helper, Duration::from_secs(3)).await,
    );
    cleanup(kid);
    cleanup(helper);
    assert!(kid_gone, "the MCP server outlived SIGKILL of serve");
    assert!(
        helper_gone,
        "the helper of the MCP server outlived SIGKILL of serve"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_survives_sigterm_of_serve() {
    let data = TempDataDir::new();
    let (pid_file, helper_file) = (file(&data, "kid.pid"), file(&data, "helper.pid"));
    let options = [
        "--pid",
        pid_file.to_str().unwrap(),
        "--grandchild",
        helper_file.to_str().unwrap(),
    ];
    let (_stub, mut serving) = serve_with(&data, &options).await;
    wait_log(&data, "mcp: agent=rec server=kid outcome=connected").await;
    let (kid, helper) = (read_pid(&pid_file).await, read_pid(&helper_file).await);
    let serve = serving.take();
    signal(&serve, "TERM");
    let status = wait_exit(serve).await;
    let (kid_gone, helper_gone) = (
        gone_within(kid, Duration::from_secs(3)).await,
        gone_within(helper, Duration::from_secs(3)).await,
    );
    cleanup(kid);
    cleanup(helper);
    assert_eq!(status.code(), Some(0));
    assert!(kid_gone, "the MCP server outlived SIGTERM of serve");
    assert!(
        helper_gone,
        "the helper of the MCP server outlived SIGTERM of serve"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_stdin_and_sigterm_dies_with_a_sigkilled_serve() {
    let data = TempDataDir::new();
    let pid_file = file(&data, "kid.pid");
    let options = ["--pid", pid_file.to_str().unwrap(), "--ignore-stdin"];
    let (_stub, mut serving) = serve_with(&data, &options).await;
    wait_log(&data, "mcp: agent=rec server=kid outcome=connected").await;
    let kid = read_pid(&pid_file).await;
    let serve = serving.take();
    signal(&serve, "KILL");
    wait_exit(serve).await;
    let gone = gone_within(kid, Duration::from_secs(3)).await;
    cleanup(kid);
    assert!(
        gone,
        "a server that ignores stdin outlived SIGKILL of serve"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_connect_that_never_completes_ends_serve_at_once() {
    let data = TempDataDir::new();
    let pid_file = file(&data, "kid.pid");
    let options = ["--pid", pid_file.to_str().unwrap(), "--silent"];
    let (_stub, mut serving) = serve_with(&data, &options).await;
    // The server serve started for the connect has written its pid and stays silent: the
    // connect is in progress (30 s timeout).
    let kid = read_pid(&pid_file).await;
    let serve = serving.take();
    let started = Instant::now();
    signal(&serve, "TERM");
    let waited = tokio::time::timeout(Duration::from_secs(10), wait_exit(serve)).await;
    let elapsed = started.elapsed();
    let gone = gone_within(kid, Duration::from_secs(3)).await;
    cleanup(kid);
    let status = waited.unwrap_or_else(|_| panic!("serve still running 10 s after SIGTERM"));
    assert_eq!(status.code(), Some(0));
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert!(gone, "the connecting server outlived serve");
    let log = crate::headless::log(&data);
    assert!(
        log.contains("mcp: agent=rec server=kid outcome=failed reason=cancelled"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_child_of_the_same_user_cannot_read_the_environment_of_serve() {
    // Needs a non-root user (root's CAP_SYS_PTRACE reads any environ): run `serve` as nobody.
    let python = Path::new("/usr/bin/python3");
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    let here = root && python.exists() && Path::new("/usr/bin/setpriv").exists();
    let what = "root, /usr/bin/setpriv and /usr/bin/python3";
    if !fuseforks_testkit::needs(here, what, "FUSEFORKS_REQUIRE_ROOT") {
        return;
    }
    let data = TempDataDir::new();
    let stub = StubServer::start(vec![]).await;
    village(&data, stub.base_url(), None);
    let (seen, pid_file) = (file(&data, "parent.env"), file(&data, "kid.pid"));
    data.write(
        "agents/rec/mcp.json",
        json!({"mcpServers": {"kid": {"command": python, "args": [
            mcp_script("child_stdio.py"), "--parent-env", seen, "--pid", pid_file]}}})
        .to_string(),
    );
    let chmod = std::process::Command::new("chmod")
        .args(["-R", "a+rwX"])
        .arg(data.data_dir())
        .status()
        .unwrap();
    assert!(chmod.success());
    let dir = data.data_dir().display().to_string();
    let child = std::process::Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args([
            "serve",
            "--data-dir",
            &dir,
            "--start",
            "batch",
            "--secrets",
            "env",
        ])
        .env("LANG", "C.UTF-8")
        .env("FUSEFORKS_SECRET_STUB", crate::headless::KEY)
        .env("FUSEFORKS_SECRET_CANARY", CANARY)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut serving = KillOnDrop::new(child);
    let kid = read_pid(&pid_file).await;
    let outcome = std::fs::read_to_string(&seen).unwrap();
    let serve = serving.take();
    signal(&serve, "TERM");
    wait_exit(serve).await;
    cleanup(kid);
    assert!(
        outcome.starts_with("denied:"),
        "the MCP child read serve's environment (with the secrets): {outcome}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_sequences_an_mcp_child_writes_to_stderr_never_reach_a_terminal() {
    let wire = fuseforks_core::llm::Wire::OpenAiCompat;
    let stub = StubServer::start(vec![wire_replies::text(wire, "done", crate::headless::U)]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    data.write(
        "agents/rec/mcp.json",
        json!({"mcpServers": {"kid": {"command": real_python(), "args": [
            mcp_script("child_stdio.py"), "--hostile-stderr"]}}})
        .to_string(),
    );
    let dir = data.data_dir().display().to_string();
    let binary = env!("CARGO_BIN_EXE_fuseforks-cli");
    let line = format!("{binary} ask --data-dir {dir} --start reception --secrets env hi");
    // Under a pseudo-terminal: stdout and stderr both reach `script`'s output.
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
    let shown = String::from_utf8_lossy(&on_tty.stdout);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains("pwned"),
        "an MCP server's escape sequences reached the terminal: {shown:?}"
    );
    assert!(shown.contains("mcp:kid: kid says hi"), "{shown:?}");
    assert!(shown.contains("done"), "{shown:?}");
}

/// A hostile stdio server whose `tools/list` never ends (every page holds 1,000 tools of 1 KB
/// and a `nextCursor`) grows `serve` without bound for the whole 30 s connect: `list_all_tools`
/// (`crates/core/src/mcp/mod.rs`, `connect_one`) follows every cursor and keeps every tool
/// (≈ 1.9 GB peak after 20 s on a shared 2-core machine; found by a second attack
/// re-run). The tool list must be bounded (pages and tools) like every other input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_with_endless_tool_pages_does_not_grow_serve_without_bound() {
    let data = TempDataDir::new();
    let pid_file = file(&data, "kid.pid");
    let options = ["--pid", pid_file.to_str().unwrap(), "--endless-pages"];
    let (_stub, mut serving) = serve_with(&data, &options).await;
    let kid = read_pid(&pid_file).await;
    let serve = serving.take();
    // The connect ends either way (the tool list cut at its bound, or the 30 s connect
    // timeout): VmHWM is the peak over the whole of it.
    let log = data.workspace().join("fuseforks.log");
    let connected = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("outcome=")
    };
    within(Duration::from_secs(40), connected).await;
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", serve.id())).unwrap_or_default();
    let peak_kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no VmHWM for serve: {status}"));
    signal(&serve, "TERM");
    let _ = tokio::time::timeout(Duration::from_secs(35), wait_exit(serve)).await;
    cleanup(kid);
    assert!(
        peak_kb < 200 * 1024,
        "serve peaked at {} MB while a server paginated its tools forever",
        peak_kb / 1024
    );
}
