//! The safety layer through the binary: the kill switch's channels (control file,
//! socket via `fuseforks-cli pause|resume|abort|halt`, signals) at each level, halt killing a
//! `run` child and its SIGTERM-ignoring grandchild and surviving a restart, pause holding a
//! tool round, dry-run leaving the work folder and the village byte-identical, the audit line
//! on disk before the tool result reaches the model (kill -9), and `audit verify` exits.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use fuseforks_core::llm::Wire;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{DEADLINE, KillOnDrop, TempDataDir, eventually, snapshot};
use serde_json::{Value, json};

use crate::headless::{U, alive, command, gone_within, read_pid, signal, stub_village, wait_log};
use crate::{cli, stderr, stdout, words};

const WIRE: Wire = Wire::OpenAiCompat;

pub(crate) fn call(id: &str, name: &str, args: Value) -> ScriptCall {
    ScriptCall {
        id: id.into(),
        name: name.into(),
        args,
    }
}

/// A village whose reception has a work folder of its own (outside the data folder, returned)
/// with two files, and the `run` tool, with `run.json` allowing `sh *`.
pub(crate) fn working_village(data: &TempDataDir, stub: &str) -> TempDataDir {
    let work = TempDataDir::new();
    std::fs::write(work.data_dir().join("notes.md"), "first line\n").unwrap();
    std::fs::write(work.data_dir().join("config.json"), "{\"level\": 1}\n").unwrap();
    let at = work.data_dir().display().to_string();
    stub_village(stub)
        .world(|w| {
            w.agents[0].work_dir = Some(at);
            w.agents[0].uses_blackboard = true;
            w.agents[0].enabled_tools = Some(
                ["file", "sd", "yq", "remember", "run"]
                    .map(String::from)
                    .to_vec(),
            );
        })
        .write(data);
    data.write(
        "agents/rec/run.json",
        r#"{"version": 1, "allow": ["sh *"], "deny": []}"#,
    );
    work
}

pub(crate) fn dir(data: &TempDataDir) -> String {
    data.data_dir().display().to_string()
}

pub(crate) fn ask(data: &TempDataDir, extra: &str) -> std::process::Command {
    command(
        words(&format!(
            "ask --data-dir {} --start reception --secrets env {extra} hi",
            dir(data)
        )),
        true,
    )
}

pub(crate) fn audit_lines(data: &TempDataDir) -> Vec<Value> {
    std::fs::read_to_string(data.workspace().join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The files a run may change besides the work: the log, the conversations, the audit log,
/// the lock.
fn village_files(data: &TempDataDir) -> Vec<(PathBuf, Vec<u8>)> {
    let skip = [
        "fuseforks.log",
        "sessions.redb",
        "audit.jsonl",
        ".fuseforks.lock",
    ];
    snapshot(&data.workspace())
        .into_iter()
        .filter(|(p, _)| !skip.iter().any(|s| p.ends_with(s)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_halt_marker_refuses_ask_with_exit_14_until_resume() {
    let stub = StubServer::start(vec![wire_replies::text(WIRE, "hello", U)]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let halted = cli(&format!("halt --data-dir {}", dir(&data)));
    assert_eq!(halted.status.code(), Some(0), "{}", stderr(&halted));
    assert_eq!(stdout(&halted).trim(), "halted");
    let refused = ask(&data, "").output().unwrap();
    assert_eq!(refused.status.code(), Some(14), "{}", stderr(&refused));
    let err = stderr(&refused);
    assert!(
        err.contains("village halted") && err.contains("fuseforks-cli resume --data-dir"),
        "{err}"
    );
    assert!(stub.requests().is_empty(), "a halted village sent nothing");
    let resumed = cli(&format!("resume --data-dir {}", dir(&data)));
    assert_eq!(stdout(&resumed).trim(), "running", "{}", stderr(&resumed));
    let answered = ask(&data, "").output().unwrap();
    assert_eq!(answered.status.code(), Some(0), "{}", stderr(&answered));
    assert_eq!(stdout(&answered).trim(), "hello");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_leaves_work_and_village_byte_identical_and_says_what_it_would_do() {
    let calls = [
        call(
            "c1",
            "file",
            json!({"op": "write", "path": "new.md", "content": "x"}),
        ),
        call(
            "c2",
            "file",
            json!({"op": "write", "path": "notes.md", "content": "y", "overwrite": true}),
        ),
        call(
            "c3",
            "file",
            json!({"op": "append", "path": "notes.md", "content": "z"}),
        ),
        call("c4", "file", json!({"op": "mkdir", "path": "sub"})),
        call(
            "c5",
            "file",
            json!({"op": "move", "path": "notes.md", "to": "moved.md"}),
        ),
        call(
            "c6",
            "file",
            json!({"op": "copy", "path": "notes.md", "to": "copy.md"}),
        ),
        call("c7", "file", json!({"op": "remove", "path": "notes.md"})),
        call(
            "c8",
            "sd",
            json!({"path": "notes.md", "pattern": "first", "replacement": "1st", "apply": true}),
        ),
        call(
            "c9",
            "yq",
            json!({"path": "config.json", "op": "set", "key": "level", "value": 2, "apply": true}),
        ),
        call("c10", "remember", json!({"note": "dry"})),
        call(
            "c11",
            "run",
            json!({"command": "sh", "args": ["-c", "echo ran > ran.txt"]}),
        ),
        call(
            "c12",
            "blackboard",
            json!({"op": "write", "name": "plan", "body": "b"}),
        ),
        call("c13", "file", json!({"op": "read", "path": "notes.md"})),
    ];
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(WIRE, &calls, U),
        wire_replies::text(WIRE, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let work = work_dir.data_dir().to_path_buf();
    let (work_before, village_before) = (snapshot(&work), village_files(&data));
    let out = ask(&data, "--dry-run").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        snapshot(&work),
        work_before,
        "dry-run changed the work folder"
    );
    assert_eq!(
        village_files(&data),
        village_before,
        "dry-run changed the village"
    );
    let requests = stub.requests();
    let results: Vec<String> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(results.len(), calls.len());
    for (i, body) in results[..12].iter().enumerate() {
        assert!(body.starts_with("dry-run: would"), "call {}: {body}", i + 1);
    }
    assert!(
        results[1].contains("-first line") && results[1].contains("+y"),
        "the diff: {}",
        results[1]
    );
    assert!(
        results[10].contains("[\"sh\",\"-c\",\"echo ran > ran.txt\"]"),
        "the argv: {}",
        results[10]
    );
    assert!(
        results[12].contains("first line"),
        "a read runs: {}",
        results[12]
    );
    let audited = audit_lines(&data);
    let dry: Vec<_> = audited
        .iter()
        .filter(|l| l["outcome"] == "dry_run")
        .collect();
    assert_eq!(dry.len(), 12, "{audited:#?}");
    assert!(!audited.iter().any(|l| l["action"] == "file_read"));
    let verified = cli(&format!("audit verify --data-dir {}", dir(&data)));
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
}

/// Halt (over the socket) during a turn whose `run` child started a grandchild; both ignore
/// SIGTERM. Both are gone within 1 s of the halt, the turn is recorded as interrupted, `ask` exits 14 and
/// a new `ask` is refused until `resume`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halt_kills_a_run_child_and_its_sigterm_ignoring_grandchild_and_survives_a_restart() {
    let script = "trap '' TERM; sleep 60 & echo $! > grandchild.pid; echo $$ > child.pid; wait";
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            WIRE,
            &[call(
                "c1",
                "run",
                json!({"command": "sh", "args": ["-c", script]}),
            )],
            U,
        ),
        wire_replies::text(WIRE, "never read", U),
    ])
    .await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let asking = KillOnDrop::new(
        ask(&data, "")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let work = work_dir.data_dir().to_path_buf();
    let (child, grandchild) = (
        read_pid(&work.join("child.pid")).await,
        read_pid(&work.join("grandchild.pid")).await,
    );
    let started = Instant::now();
    let halted = tokio::task::spawn_blocking({
        let dir = dir(&data);
        move || cli(&format!("halt --data-dir {dir}"))
    })
    .await
    .unwrap();
    assert_eq!(stdout(&halted).trim(), "halted", "{}", stderr(&halted));
    // Halt is the emergency stop: SIGKILL at once, no grace (docs/threat-model.md, process groups).
    let left = || Duration::from_secs(1).saturating_sub(started.elapsed());
    let child_gone = gone_within(child, left()).await;
    let grandchild_gone = gone_within(grandchild, left()).await;
    let took = started.elapsed();
    for pid in [child, grandchild] {
        if alive(pid) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
    assert!(
        child_gone && grandchild_gone,
        "children outlived the halt: {child_gone} {grandchild_gone}"
    );
    eprintln!(
        "figure: halt -> run child and grandchild dead in {} ms",
        took.as_millis()
    );
    let mut asking = asking;
    let out = tokio::task::spawn_blocking(move || asking.take().wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(14), "{}", stderr(&out));
    wait_log(&data, "turn interrupted: agent=rec").await;
    wait_log(
        &data,
        "kill switch: command=halt from=running to=halted channel=cli",
    )
    .await;
    let again = ask(&data, "").output().unwrap();
    assert_eq!(
        again.status.code(),
        Some(14),
        "halted across the restart: {}",
        stderr(&again)
    );
    assert!(
        audit_lines(&data)
            .iter()
            .any(|l| l["action"] == "kill_switch" && l["target"] == "halted")
    );
}

/// Pause (a control file) while the model is answering: the answer's tool call waits; resume
/// (the socket) lets it run and the turn finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_holds_the_next_tool_round_and_resume_continues_it() {
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            WIRE,
            &[call(
                "c1",
                "file",
                json!({"op": "write", "path": "a.md", "content": "a"}),
            )],
            U,
        ),
        wire_replies::tool_calls(
            WIRE,
            &[call(
                "c2",
                "file",
                json!({"op": "write", "path": "b.md", "content": "b"}),
            )],
            U,
        )
        .after(Duration::from_millis(1500)),
        wire_replies::text(WIRE, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let mut asking = KillOnDrop::new(
        ask(&data, "")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let work = work_dir.data_dir().to_path_buf();
    wait_for_file(&work.join("a.md")).await;
    // The second model call is under way (its answer comes 1.5 s later): pause now.
    stub.wait_requests(2).await;
    std::fs::write(data.data_dir().join("control/pause"), b"").unwrap();
    wait_log(
        &data,
        "kill switch: command=pause from=running to=paused channel=control_file",
    )
    .await;
    // The second answer has gone out: its round is held, which the order of the log proves
    // below (the round's tool call comes after the resume).
    stub.wait_answers(2).await;
    assert!(
        !work.join("b.md").exists(),
        "a tool call started while paused"
    );
    assert_eq!(
        stub.requests().len(),
        2,
        "the second answer arrived, its round is held"
    );
    let resumed = tokio::task::spawn_blocking({
        let dir = dir(&data);
        move || cli(&format!("resume --data-dir {dir}"))
    })
    .await
    .unwrap();
    assert_eq!(stdout(&resumed).trim(), "running", "{}", stderr(&resumed));
    let out = tokio::task::spawn_blocking(move || asking.take().wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "done");
    assert!(work.join("b.md").exists());
    let log = crate::headless::log(&data);
    let at = |needle: &str| {
        log.find(needle)
            .unwrap_or_else(|| panic!("{needle:?}: {log}"))
    };
    assert!(
        at("kill switch: command=resume") < at("round=2 name=file"),
        "the held round's tool call ran before the resume: {log}"
    );
}

pub(crate) async fn wait_for_file(path: &Path) {
    let what = format!("{} to appear", path.display());
    eventually(what, DEADLINE, || path.exists()).await;
}

/// How a level is sent through a channel of a running `serve`.
#[derive(Clone, Copy, Debug)]
enum Via {
    File,
    Socket,
    Signal,
}

fn send(via: Via, level: &str, data: &TempDataDir, serve: &std::process::Child) {
    match via {
        Via::File => std::fs::write(data.data_dir().join("control").join(level), b"").unwrap(),
        Via::Socket => {
            let out = cli(&format!("{level} --data-dir {}", dir(data)));
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        }
        Via::Signal => signal(serve, if level == "abort" { "USR2" } else { "USR1" }),
    }
}

/// Every channel triggers every level on a running `serve` (signals: SIGUSR1 toggles
/// pause/resume, SIGUSR2 aborts; halt has no signal — SIGTERM stays the graceful close).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_channel_triggers_each_level() {
    for via in [Via::File, Via::Socket, Via::Signal] {
        let stub = StubServer::start(vec![]).await;
        let data = TempDataDir::new();
        stub_village(stub.base_url()).write(&data);
        let mut serving = KillOnDrop::new(
            command(
                words(&format!(
                    "serve --data-dir {} --start batch --secrets env",
                    dir(&data)
                )),
                true,
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
        );
        wait_log(&data, "schedule runner").await;
        let channel = match via {
            Via::File => "control_file",
            Via::Socket => "cli",
            Via::Signal => "signal",
        };
        let child = serving.take();
        for (level, to) in [
            ("pause", "paused"),
            ("resume", "running"),
            ("abort", "aborting"),
        ] {
            send(via, level, &data, &child);
            wait_log(&data, &format!("kill switch: command={level} from=")).await;
            wait_log(&data, &format!("to={to} channel={channel}")).await;
        }
        if matches!(via, Via::Signal) {
            signal(&child, "TERM");
        } else {
            send(via, "halt", &data, &child);
        }
        let status = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let expected = if matches!(via, Via::Signal) { 0 } else { 14 };
        assert_eq!(status.status.code(), Some(expected), "{via:?}");
        if expected == 14 {
            assert!(
                data.data_dir().join("halt").exists(),
                "{via:?}: the halt marker"
            );
        }
    }
}

/// A control file that is a folder is reported once and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_folder_entry_that_is_a_folder_is_reported_once_and_ignored() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    std::fs::create_dir_all(data.data_dir().join("control/halt")).unwrap();
    let mut serving = KillOnDrop::new(
        command(
            words(&format!(
                "serve --data-dir {} --start batch --secrets env",
                dir(&data)
            )),
            true,
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    wait_log(
        &data,
        "control: ignored code=CONTROL_FILE_IGNORED name=halt reason=not_a_regular_file",
    )
    .await;
    // Later looks at the folder, proved by what they report: `resume` then `pause` made
    // folders too. The watcher reads halt, abort, pause, resume in that order each time, so
    // the look that reports `pause` (made after `resume` was reported) comes after the one
    // that reported `halt`, and read `halt` again first.
    for later in ["resume", "pause"] {
        std::fs::create_dir_all(data.data_dir().join("control").join(later)).unwrap();
        wait_log(&data, &format!("name={later} reason=not_a_regular_file")).await;
    }
    let log = crate::headless::log(&data);
    assert_eq!(
        log.matches("CONTROL_FILE_IGNORED name=halt").count(),
        1,
        "reported once"
    );
    assert!(!log.contains("kill switch:"), "the switch changed");
    // A malformed socket request does not crash the process.
    let socket = data.data_dir().join("control/fuseforks.sock");
    {
        use std::io::{Read, Write};
        let mut s = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        s.write_all(b"\xff\xfe garbage\n").unwrap();
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
    }
    let state = cli(&format!("pause --data-dir {}", dir(&data)));
    assert_eq!(stdout(&state).trim(), "paused", "{}", stderr(&state));
    let child = serving.take();
    signal(&child, "TERM");
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// The audit line is on disk before the tool result reaches the model: kill -9 once the model
/// has the result, and the line is there and verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_line_survives_kill_9_right_after_a_write_and_tampering_exits_13() {
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            WIRE,
            &[call(
                "c1",
                "file",
                json!({"op": "write", "path": "a.md", "content": "a"}),
            )],
            U,
        ),
        wire_replies::text(WIRE, "late", U).after(Duration::from_secs(30)),
    ])
    .await;
    let data = TempDataDir::new();
    let _work = working_village(&data, stub.base_url());
    let mut asking = KillOnDrop::new(
        ask(&data, "")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The tool's result reached the model.
    stub.wait_requests(2).await;
    let child = asking.take();
    signal(&child, "KILL");
    let _ = tokio::task::spawn_blocking(move || child.wait_with_output()).await;
    let lines = audit_lines(&data);
    assert!(
        lines
            .iter()
            .any(|l| l["action"] == "file_write" && l["target"] == "a.md" && l["outcome"] == "ok"),
        "{lines:#?}"
    );
    let ok = cli(&format!("audit verify --data-dir {} --json", dir(&data)));
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    assert!(
        stdout(&ok).contains("\"head\":\"matches\""),
        "{}",
        stdout(&ok)
    );
    // Edit the line: exit 13 naming it (line 2: the first is the approval mode `ask` started
    // with) and why.
    let path = data.workspace().join("audit.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("\"a.md\"", "\"b.md\"", 1)).unwrap();
    let broken = cli(&format!("audit verify --data-dir {}", dir(&data)));
    assert_eq!(broken.status.code(), Some(13));
    let err = stderr(&broken);
    assert!(
        err.contains("AUDIT_CHAIN_BROKEN") && err.contains("line 2") && err.contains("edited"),
        "{err}"
    );
    // Emptied: truncated (the head in sessions.redb remembers).
    std::fs::write(&path, "").unwrap();
    let truncated = cli(&format!("audit verify --data-dir {}", dir(&data)));
    assert_eq!(truncated.status.code(), Some(13));
    assert!(
        stderr(&truncated).contains("truncated"),
        "{}",
        stderr(&truncated)
    );
}

/// The figure's other half: a `run` child that does not ignore SIGTERM ends at the halt's
/// SIGTERM (the figure is printed; the bound asserted is the issue's 3 s, not the 1 s target,
/// so that a loaded machine does not fail it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halt_ends_a_run_child_that_obeys_sigterm() {
    let script = "echo $$ > child.pid; exec sleep 60";
    let stub = StubServer::start(vec![wire_replies::tool_calls(
        WIRE,
        &[call(
            "c1",
            "run",
            json!({"command": "sh", "args": ["-c", script]}),
        )],
        U,
    )])
    .await;
    let data = TempDataDir::new();
    let work_dir = working_village(&data, stub.base_url());
    let mut asking = KillOnDrop::new(
        ask(&data, "")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let child = read_pid(&work_dir.data_dir().join("child.pid")).await;
    let started = Instant::now();
    let halted = tokio::task::spawn_blocking({
        let dir = dir(&data);
        move || cli(&format!("halt --data-dir {dir}"))
    })
    .await
    .unwrap();
    assert_eq!(stdout(&halted).trim(), "halted", "{}", stderr(&halted));
    let gone = gone_within(child, Duration::from_secs(3)).await;
    let took = started.elapsed();
    eprintln!(
        "figure: halt -> SIGTERM-obeying run child dead in {} ms",
        took.as_millis()
    );
    assert!(gone, "{took:?}");
    let out = tokio::task::spawn_blocking(move || asking.take().wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(14));
}

/// The socket is 0600 in a 0700 folder, so another user cannot reach it; and behind that, a
/// peer of another uid (the folder widened on purpose, as root) is refused by its credentials:
/// no answer, the switch unchanged, one log line. The second half needs root (skipped else).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_socket_is_private_and_refuses_another_users_peer() {
    use std::os::unix::fs::PermissionsExt;
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let mut serving = KillOnDrop::new(
        command(
            words(&format!(
                "serve --data-dir {} --start batch --secrets env",
                dir(&data)
            )),
            true,
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    wait_log(&data, "schedule runner").await;
    let control = data.data_dir().join("control");
    let socket = control.join("fuseforks.sock");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&control), mode(&socket)), (0o700, 0o600));
    let root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .unwrap()
        .stdout
        == b"0\n";
    let setpriv = std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok();
    let python = std::path::Path::new("/usr/bin/python3");
    let what = "root, setpriv and /usr/bin/python3 (the peer-credential half)";
    if fuseforks_testkit::needs(
        root && setpriv && python.exists(),
        what,
        "FUSEFORKS_REQUIRE_ROOT",
    ) {
        // Widen the way to the socket (the test folder is 0700 too).
        for folder in [data.data_dir(), control.as_path()] {
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666)).unwrap();
        // Prints what came back: nothing, as the connection is closed unanswered.
        let client = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\ns.settimeout(5)\ntry:\n  s.sendall(b'pause\\n')\n  print(repr(s.recv(256)))\nexcept OSError:\n  print(repr(b''))";
        let other = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(python)
            .args(["-c", client])
            .arg(&socket)
            .output()
            .unwrap();
        assert_eq!(stdout(&other).trim(), "b''", "{}", stderr(&other));
        wait_log(
            &data,
            "control: refused code=CONTROL_PEER_REFUSED reason=other_user",
        )
        .await;
        let log = std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap();
        assert!(
            !log.contains("kill switch: command=pause"),
            "the refused pause applied: {log}"
        );
    }
    let out = crate::headless::signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
