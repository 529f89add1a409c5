//! The `run` tool: allowed, denied, unknown (recorded in pending), malformed; approval modes;
//! an environment with only PATH and a temp folder; a timeout that kills the command and its
//! children; Landlock keeping it in the work folder and its temp folder.

use std::time::{Duration, Instant};

use fuseforks_core::tools::RunApproval;
use fuseforks_core::village::CommandPolicy;
use serde_json::json;

use crate::tools_support::{Agent, CANARY};

fn allow(agent: &Agent, allow: &[&str], deny: &[&str], timeout: u64) {
    let policy = CommandPolicy {
        allow: allow.iter().map(|s| (*s).to_owned()).collect(),
        deny: deny.iter().map(|s| (*s).to_owned()).collect(),
        timeout_secs: timeout,
        ..CommandPolicy::default()
    };
    agent.ctx.agent_files.save_run_policy(&policy).unwrap();
}

#[tokio::test]
async fn allowed_denied_unknown_malformed() {
    let agent = Agent::new();
    allow(&agent, &["echo *", "ls"], &["echo secret *"], 60);
    let ok = agent
        .call(
            "run",
            json!({"command": "echo", "args": ["hello", "world"]}),
        )
        .await;
    assert!(
        ok.ok && ok.body.contains("exit: 0") && ok.body.contains("hello world"),
        "{}",
        ok.body
    );
    let denied = agent
        .call("run", json!({"command": "echo", "args": ["secret", "x"]}))
        .await;
    assert!(
        !denied.ok && denied.body.contains("denied"),
        "{}",
        denied.body
    );
    let unknown = agent
        .call(
            "run",
            json!({"command": "touch", "args": ["made-by-unknown"]}),
        )
        .await;
    assert!(
        !unknown.ok && unknown.body.contains("recorded"),
        "{}",
        unknown.body
    );
    assert!(
        !agent.work().join("made-by-unknown").exists(),
        "an unknown command does not run"
    );
    let again = agent
        .call(
            "run",
            json!({"command": "touch", "args": ["made-by-unknown"]}),
        )
        .await;
    assert!(!again.ok);
    let policy = agent.ctx.agent_files.load_run_policy().unwrap().value;
    assert_eq!(policy.pending.len(), 1);
    assert_eq!(
        (policy.pending[0].command.as_str(), policy.pending[0].count),
        ("touch", 2)
    );
    for bad in [
        json!({"command": "echo hi"}),
        json!({"command": ""}),
        json!({"command": "echo", "args": "x"}),
    ] {
        let out = agent.call("run", bad.clone()).await;
        assert!(!out.ok, "{bad}");
    }
    let shell = agent
        .call(
            "run",
            json!({"command": "echo", "args": ["$HOME", "&&", "id"]}),
        )
        .await;
    assert!(
        shell.body.contains("$HOME && id"),
        "no shell expands anything: {}",
        shell.body
    );
}

#[tokio::test]
async fn approval_modes() {
    let auto = Agent::with(RunApproval::AutoApprove);
    allow(&auto, &[], &["rm *"], 60);
    let out = auto
        .call("run", json!({"command": "echo", "args": ["auto"]}))
        .await;
    assert!(out.ok, "{}", out.body);
    assert_eq!(
        auto.ctx.agent_files.load_run_policy().unwrap().value.allow,
        ["echo auto"]
    );
    assert!(
        !auto
            .call("run", json!({"command": "rm", "args": ["-rf", "x"]}))
            .await
            .ok,
        "deny holds in every mode"
    );

    let free = Agent::with(RunApproval::NoApproval);
    allow(&free, &[], &[], 60);
    assert!(
        free.call("run", json!({"command": "echo", "args": ["free"]}))
            .await
            .ok
    );
    let policy = free.ctx.agent_files.load_run_policy().unwrap().value;
    assert!(
        policy.allow.is_empty() && policy.pending.is_empty(),
        "no_approval records nothing"
    );
}

#[tokio::test]
async fn the_environment_holds_only_path_and_a_temp_folder() {
    let agent = Agent::new();
    allow(&agent, &["env"], &[], 60);
    // The test process has HOME, USER and more; the child must see none of them.
    let out = agent.call("run", json!({"command": "env"})).await;
    let mut vars: Vec<&str> = out.body.lines().filter(|l| l.contains('=')).collect();
    vars.sort_unstable();
    assert_eq!(vars.len(), 2, "{}", out.body);
    assert!(vars[0].starts_with("PATH="));
    let tmp = vars[1].strip_prefix("TMPDIR=").unwrap();
    assert!(
        std::path::Path::new(tmp).starts_with(std::env::temp_dir())
            && tmp.contains("fuseforks-run-"),
        "a temp folder of its own: {tmp}"
    );
    assert!(
        !std::path::Path::new(tmp).exists(),
        "removed after the call"
    );
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_its_children() {
    let agent = Agent::new();
    allow(&agent, &["sh *"], &[], 1);
    let started = Instant::now();
    let out = agent
        .call(
            "run",
            json!({"command": "sh", "args": ["-c", "sleep 30 & echo $! > child.pid; wait"]}),
        )
        .await;
    assert!(!out.ok && out.body.contains("Timed out"), "{}", out.body);
    assert!(started.elapsed() < Duration::from_secs(10));
    let pid = std::fs::read_to_string(agent.work().join("child.pid")).unwrap();
    let proc = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
    let gone = || {
        let zombie = std::fs::read_to_string(proc.join("stat"))
            .map(|s| s.contains(") Z "))
            .unwrap_or(true);
        !proc.exists() || zombie
    };
    let what = "the background child killed with its group";
    fuseforks_testkit::eventually(what, Duration::from_secs(5), gone).await;
}

#[tokio::test]
async fn landlock_keeps_run_inside_the_work_folder_and_its_temp() {
    if !fuseforks_testkit::landlock(1) {
        return;
    }
    let agent = Agent::new();
    allow(&agent, &["cat *", "touch *", "sh *"], &[], 60);
    let inside = agent
        .call("run", json!({"command": "cat", "args": ["notes.txt"]}))
        .await;
    assert!(
        inside.ok && inside.body.contains("beta error"),
        "{}",
        inside.body
    );
    let absolute = agent.outside().join("secret.txt").display().to_string();
    for path in ["../outside/secret.txt", absolute.as_str()] {
        let out = agent
            .call("run", json!({"command": "cat", "args": [path]}))
            .await;
        assert!(
            !out.ok && !out.body.contains(CANARY) && out.body.contains("ermission denied"),
            "an allowed cat read outside: {}",
            out.body
        );
    }
    // Not the environment of the process that started it (ours), which holds the secrets.
    let environ = format!("/proc/{}/environ", std::process::id());
    let out = agent
        .call("run", json!({"command": "cat", "args": [environ]}))
        .await;
    assert!(
        !out.ok && !out.body.contains("PATH="),
        "the parent's environment was readable: {}",
        cap_for_message(&out.body)
    );
    let escape = std::env::temp_dir().join(format!("fuseforks-escape-{}", std::process::id()));
    for target in [agent.outside().join("made.txt"), escape.clone()] {
        let out = agent
            .call(
                "run",
                json!({"command": "touch", "args": [target.display().to_string()]}),
            )
            .await;
        assert!(!out.ok, "{}", out.body);
        assert!(!target.exists(), "run wrote {}", target.display());
    }
    let out = agent
        .call(
            "run",
            json!({"command": "sh", "args": ["-c", "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo w > made-inside.txt"]}),
        )
        .await;
    assert!(out.ok && out.body.contains("exit: 0"), "{}", out.body);
    assert!(agent.work().join("made-inside.txt").exists());
}

#[tokio::test]
async fn after_a_child_starts_our_environment_is_hidden_from_same_user_processes() {
    let agent = Agent::new();
    allow(&agent, &["true"], &[], 60);
    assert!(agent.call("run", json!({"command": "true"})).await.ok);
    // Non-dumpable: /proc/<our pid>/environ is no longer readable by the user's other
    // processes (checked by hand as `nobody`: 1,274 bytes read before, EACCES after; the tests
    // run as root, whom CAP_SYS_PTRACE lets through, so this checks the switch itself).
    assert!(fuseforks_core::process::own_environment_hidden());
}

#[tokio::test]
async fn network_false_in_run_json_refuses_tcp() {
    if !fuseforks_testkit::landlock(4) {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect =
        json!({"command": "bash", "args": ["-c", format!("echo hi > /dev/tcp/127.0.0.1/{port}")]});
    let agent = Agent::new();
    allow(&agent, &["bash *"], &[], 60);
    let open = agent.call("run", connect.clone()).await;
    assert!(open.ok, "the network is open by default: {}", open.body);

    let mut policy = agent.ctx.agent_files.load_run_policy().unwrap().value;
    policy.network = Some(false);
    agent.ctx.agent_files.save_run_policy(&policy).unwrap();
    let text = std::fs::read_to_string(agent.ctx.agent_files.dir().join("run.json")).unwrap();
    assert!(text.contains("\"network\": false"), "{text}");
    let closed = agent.call("run", connect).await;
    assert!(
        !closed.ok && closed.body.contains("ermission denied"),
        "{}",
        closed.body
    );
}

#[test]
fn check_warns_when_commands_may_run_unconfined() {
    use fuseforks_core::preflight::run_unconfined;
    let start: std::collections::BTreeSet<String> = ["a1".to_owned()].into();
    let allow = vec![("a1".to_owned(), vec!["ls".to_owned()])];
    let none = vec![("a1".to_owned(), Vec::new())];
    assert!(run_unconfined(false, RunApproval::Required, &start, &allow));
    assert!(!run_unconfined(true, RunApproval::Required, &start, &allow));
    assert!(!run_unconfined(false, RunApproval::Required, &start, &none));
    assert!(run_unconfined(
        false,
        RunApproval::NoApproval,
        &start,
        &none
    ));
}

/// The cost of confinement per spawn (`cargo test -p fuseforks-core --test it spawn_cost --
/// --ignored --nocapture`): the median time to spawn and reap `true`, with and without Landlock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement"]
async fn spawn_cost_with_and_without_landlock() {
    use fuseforks_core::process::{Confinement, spawn};
    let work = tempfile::tempdir().unwrap();
    let confinement = Confinement {
        read_write: vec![work.path().to_path_buf()],
        read_only: ["/usr", "/bin", "/lib", "/lib64", "/etc"]
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
        deny_network: false,
    };
    let mut plain = Vec::new();
    for _ in 0..300 {
        let started = Instant::now();
        let mut cmd = tokio::process::Command::new("/bin/true");
        cmd.env_clear().current_dir(work.path());
        cmd.spawn().unwrap().wait().await.unwrap();
        plain.push(started.elapsed());
    }
    plain.sort();
    eprintln!(
        "spawn+reap /bin/true, plain tokio Command: median {:?}",
        plain[plain.len() / 2]
    );
    for (label, confine) in [("without", None), ("with", Some(&confinement))] {
        let mut times = Vec::new();
        for _ in 0..300 {
            let started = Instant::now();
            let mut cmd = tokio::process::Command::new("/bin/true");
            cmd.env_clear().current_dir(work.path());
            let mut group = spawn(cmd, confine).unwrap();
            group.child_mut().wait().await.unwrap();
            times.push(started.elapsed());
        }
        times.sort();
        eprintln!(
            "spawn+reap /bin/true {label} Landlock: median {:?}, p90 {:?}",
            times[times.len() / 2],
            times[times.len() * 9 / 10]
        );
    }
}

fn cap_for_message(body: &str) -> String {
    body.chars().take(300).collect()
}

/// A confined command must not signal processes outside its own Landlock domain: with
/// `bash *` allowed, `kill -STOP <pid>` stopped an unrelated process of the same user (and
/// could stop or kill `serve` itself) in an attack re-run. Landlock ABI 6
/// (Linux 6.12) scopes signals (`LANDLOCK_SCOPE_SIGNAL`); the ruleset asks for file-system
/// ABI 5 and network ABI 4 only.
#[tokio::test]
async fn a_confined_command_cannot_signal_a_process_outside_its_box() {
    if !fuseforks_testkit::landlock(6) {
        return;
    }
    let mut victim = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let agent = Agent::new();
    allow(&agent, &["bash *"], &[], 10);
    let out = agent
        .call(
            "run",
            json!({"command": "bash", "args": ["-c", format!("kill -0 {} && echo SIGNALLED", victim.id())]}),
        )
        .await;
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(
        !out.ok && !out.body.contains("SIGNALLED"),
        "a confined command signalled an outside process: {}",
        out.body
    );
}

#[tokio::test]
async fn a_timeout_keeps_what_the_command_wrote_so_far() {
    let agent = Agent::new();
    allow(&agent, &["sh *"], &[], 1);
    let script = "echo out-line-1; echo out-line-2; echo err-line-1 >&2; sleep 30";
    let out = agent
        .call("run", json!({"command": "sh", "args": ["-c", script]}))
        .await;
    assert!(!out.ok, "{}", out.body);
    assert!(
        out.body.starts_with("exit: timeout\n"),
        "the exit line says timeout: {}",
        out.body
    );
    assert!(
        out.body.contains("out-line-1\nout-line-2") && out.body.contains("err-line-1"),
        "partial stdout and stderr are kept: {}",
        out.body
    );
    assert!(
        out.body.contains("Timed out and killed (1 s)"),
        "{}",
        out.body
    );
}

#[tokio::test]
async fn stdin_feeds_the_command_and_is_capped() {
    let agent = Agent::new();
    allow(&agent, &["cat", "sh *", "true"], &[], 10);
    let out = agent
        .call(
            "run",
            json!({"command": "cat", "stdin": "line one\nline two\n"}),
        )
        .await;
    assert!(out.ok, "{}", out.body);
    assert!(out.body.contains("line one\nline two"), "{}", out.body);
    let script = "read a; read b; echo \"got $b then $a\"";
    let out = agent
        .call(
            "run",
            json!({"command": "sh", "args": ["-c", script], "stdin": "first\nsecond\n"}),
        )
        .await;
    assert!(out.body.contains("got second then first"), "{}", out.body);
    // A command that never reads its stdin still ends normally.
    let big = "y".repeat(512 * 1024);
    let out = agent
        .call("run", json!({"command": "true", "stdin": big}))
        .await;
    assert!(out.ok && out.body.starts_with("exit: 0"), "{}", out.body);
    // Without stdin, the command reads end-of-file at once.
    let out = agent.call("run", json!({"command": "cat"})).await;
    assert!(out.ok, "{}", out.body);
    let huge = "z".repeat(1024 * 1024 + 1);
    let out = agent
        .call("run", json!({"command": "cat", "stdin": huge}))
        .await;
    assert!(
        !out.ok && out.body.contains("RUN_STDIN_TOO_LARGE") && !out.body.contains("zzzz"),
        "{}",
        &out.body[..out.body.len().min(300)]
    );
    let out = agent
        .call("run", json!({"command": "cat", "stdin": ["not", "text"]}))
        .await;
    assert!(!out.ok && out.body.contains("stdin"), "{}", out.body);
}

/// A script's exit code and what it wrote both reach the model: exit 1 with its outputs still
/// written (they stay in the work folder), exit 2 with none; the `E-`/`W-` lines of a long
/// stderr are kept at its end, where a script says its verdict (the middle is cut, said).
#[tokio::test]
async fn a_scripts_exit_code_and_its_last_stderr_lines_reach_the_model() {
    let agent = Agent::new();
    allow(&agent, &["sh *"], &[], 20);
    let gaps =
        "echo '{\"a\":null}' > out.json; echo 'E-EXTRACT-UNRECOVERABLE /a no marker' >&2; exit 1";
    let out = agent
        .call("run", json!({"command": "sh", "args": ["-c", gaps]}))
        .await;
    assert!(!out.ok && out.body.starts_with("exit: 1"), "{}", out.body);
    assert!(
        out.body.contains("E-EXTRACT-UNRECOVERABLE /a"),
        "{}",
        out.body
    );
    assert!(
        agent.data.data_dir().join("work/out.json").exists(),
        "exit 1 keeps its outputs"
    );
    let usage = "echo 'usage: --html is required' >&2; exit 2";
    let out = agent
        .call("run", json!({"command": "sh", "args": ["-c", usage]}))
        .await;
    assert!(!out.ok && out.body.starts_with("exit: 2"), "{}", out.body);
    // 20,000 warning lines, then the verdict: the head and the verdict are both shown.
    let long = "echo 'W-FIRST first line' >&2; i=0; while [ $i -lt 20000 ]; do echo \"W-EXTRACT-CATALOG-DRIFT /k/$i drift\" >&2; i=$((i+1)); done; echo 'E-ROUNDTRIP-DIFF /sections/3 expected x actual y' >&2; exit 1";
    let out = agent
        .call("run", json!({"command": "sh", "args": ["-c", long]}))
        .await;
    assert!(out.body.contains("W-FIRST first line"), "the head is kept");
    assert!(
        out.body
            .contains("E-ROUNDTRIP-DIFF /sections/3 expected x actual y"),
        "the last line is kept: {}",
        &out.body[out.body.len().saturating_sub(600)..]
    );
    assert!(out.body.contains("omitted"), "the cut is said");
    assert!(out.body.chars().count() < 14_000, "still bounded");
}
