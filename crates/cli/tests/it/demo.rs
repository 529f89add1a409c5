//! `fuseforks-cli demo` through the binary: the whole engine on the embedded demo model (the
//! smoke test `.ci/run` runs with the workspace tests), the file written, the turn records,
//! the summary; a kept village used afterwards by `check` and `ask`; `--keep` at a village
//! (11), `--gui` (2), a port that cannot be bound (5), Ctrl+C (8, the turn recorded).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use fuseforks_core::sessions::{Record, SessionStore, StoredRecord, TurnRecord};
use fuseforks_testkit::KillOnDrop;

use crate::headless::{signal_and_wait, wait_for};
use crate::{stderr, stdout, words};

const MARK: &str = "demo model — scripted, not an AI";

/// The binary on `line`, with its temporary folder in `tmp` and a clean locale.
fn demo_command(line: &str, tmp: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"));
    c.args(words(line))
        .env("TMPDIR", tmp)
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES");
    c
}

fn run(line: &str, tmp: &Path) -> Output {
    demo_command(line, tmp).output().unwrap()
}

/// The turn records of every conversation of a village (the process has exited).
fn turn_records(data_dir: &Path) -> Vec<TurnRecord> {
    let store = SessionStore::open(&data_dir.join("workspace/sessions.redb")).unwrap();
    let mut turns = Vec::new();
    for (session, _) in store.list().unwrap() {
        for (_, record) in store.records(&session).unwrap() {
            if let StoredRecord::Known(Record::Turn(t)) = record {
                turns.push(t);
            }
        }
    }
    turns
}

fn log_of(data_dir: &Path) -> String {
    std::fs::read_to_string(data_dir.join("workspace/fuseforks.log")).unwrap_or_default()
}

#[test]
fn the_demo_runs_a_plan_wave_writes_a_file_and_says_what_happened() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("kept");
    let kept = root.display().to_string();
    let out = run(&format!("demo --keep {kept} --language en"), tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let root = std::fs::canonicalize(&root).unwrap();
    let file = root.join("work/servant-a/hello.md");
    for line in [
        "Who asked whom:\n  fuseforks-cli demo → reception\n  reception → servant-a, servant-b (plan)\n",
        "Tools used:\n  reception: plan\n  servant-a: file\n  servant-b: grep\n",
        &format!("File written: {}\n", file.display()),
        "Turns: 3  Tokens: ",
        "notes.md:1: Fuseforks keeps a village of AI agents on this machine.",
        &format!("Village: {}", root.join("village").display()),
        "fuseforks-cli init --data-dir",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    assert!(
        text.matches(MARK).count() >= 4,
        "every answer is marked: {text}"
    );
    assert!(std::fs::read_to_string(&file).unwrap().contains(MARK));

    let data_dir = root.join("village");
    let turns = turn_records(&data_dir);
    let mut agents: Vec<&str> = turns.iter().map(|t| t.agent_id.as_str()).collect();
    agents.sort_unstable();
    assert_eq!(agents, ["reception", "servant-a", "servant-b"]);
    for t in &turns {
        assert_eq!((t.rounds, t.model.as_str()), (2, "demo-scripted"), "{t:?}");
        assert!(t.prompt > 0 && t.completion > 0, "{t:?}");
    }
    let tokens: u64 = turns.iter().map(|t| t.prompt + t.completion).sum();
    assert!(text.contains(&format!("Tokens: {tokens} ")), "{text}");
    let log = log_of(&data_dir);
    assert!(
        log.contains("demo model: template=demo listening=127.0.0.1:") && log.contains(MARK),
        "{log}"
    );
    assert!(
        log.contains("plan wave: agent=reception wave=1 tasks=2 to=[servant-a,servant-b]"),
        "{log}"
    );
}

#[test]
fn a_kept_demo_village_is_checked_asked_offline_and_never_founded_over() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("kept");
    let (kept, data) = (
        root.display().to_string(),
        root.join("village").display().to_string(),
    );
    let first = run(&format!("demo --keep {kept}"), tmp.path());
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));

    let check = run(
        &format!("check --for ask --data-dir {data} --start batch --secrets env"),
        tmp.path(),
    );
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    assert!(
        stdout(&check).contains("info [DEMO_MODEL] Template demo is the demo model — scripted, not an AI (agents: reception, servant-a, servant-b)."),
        "{}",
        stdout(&check)
    );
    let probed = run(
        &format!("check --for ask --data-dir {data} --start batch --secrets env --probe-endpoints"),
        tmp.path(),
    );
    assert_eq!(probed.status.code(), Some(0), "{}", stdout(&probed));
    assert!(
        !stdout(&probed).contains("ENDPOINT_"),
        "the demo model is not probed: {}",
        stdout(&probed)
    );
    // The boot starts the demo model of the kept village again: `ask` works offline.
    let ask = run(
        &format!("ask --data-dir {data} --start batch --secrets env 'Again, please.'"),
        tmp.path(),
    );
    assert_eq!(ask.status.code(), Some(0), "{}", stderr(&ask));
    assert!(stdout(&ask).contains(MARK), "{}", stdout(&ask));
    assert_eq!(turn_records(&root.join("village")).len(), 6);

    let before = fuseforks_testkit::snapshot(&root);
    for again in [kept.clone(), data.clone()] {
        let out = run(&format!("demo --keep {again}"), tmp.path());
        assert_eq!(out.status.code(), Some(11), "{again}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("[VILLAGE_EXISTS]")
                && stderr(&out).contains("Fix: choose another --keep folder"),
            "{}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty());
    }
    assert!(
        fuseforks_testkit::snapshot(&root) == before,
        "nothing was touched"
    );

    // A demo template never leaves loopback: pointed elsewhere, it is refused.
    let store = fuseforks_core::village::VillageStore::new(root.join("village/workspace"));
    let mut world = store.load_world().unwrap().value;
    world.model_templates[0].base_url = "http://192.168.1.5:4100/v1".into();
    world.model_templates[0].allow_insecure_http = true;
    store.save_world(&world).unwrap();
    let refused = run(
        &format!("check --for ask --data-dir {data} --start batch --secrets env"),
        tmp.path(),
    );
    assert_eq!(refused.status.code(), Some(3), "{}", stdout(&refused));
    assert!(
        stdout(&refused).contains("reject [ENDPOINT_INVALID] Template demo: baseUrl of a demo template must be http://127.0.0.1:<port>/v1"),
        "{}",
        stdout(&refused)
    );
    // Loopback spellings the demo model does not serve: refused by the same one rule the boot
    // uses, with the demo's fix.
    for url in [
        "http://[::1]:4100/v1",
        "http://127.0.0.2:4100/v1",
        "http://127.1:4100/v1",
        "http://2130706433:4100/v1",
        "HTTP://127.0.0.1:4100/v1",
        "http://localhost:4100/v1",
        "http://127.0.0.1/v1",
        "http://127.0.0.1:0/v1",
        "http://127.0.0.1:4100/v2",
        "http://127.0.0.1:4100/v1?q=1",
    ] {
        let mut world = store.load_world().unwrap().value;
        world.model_templates[0].base_url = url.into();
        world.model_templates[0].allow_insecure_http = false;
        store.save_world(&world).unwrap();
        let refused = run(
            &format!("check --for ask --data-dir {data} --start batch --secrets env"),
            tmp.path(),
        );
        let text = stdout(&refused);
        assert_eq!(refused.status.code(), Some(3), "{url}: {text}");
        assert!(
            text.contains("reject [ENDPOINT_INVALID] Template demo:")
                && text.contains("Write http://127.0.0.1:<port>/v1")
                && !text.contains("api.openai.com"),
            "{url}: {text}"
        );
    }
}

#[test]
fn keep_refuses_a_folder_with_content_or_a_link_and_touches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    std::fs::create_dir_all(full.join("work/servant-a")).unwrap();
    std::fs::write(full.join("work/servant-a/hello.md"), "mine").unwrap();
    let target = tmp.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let file = tmp.path().join("afile");
    std::fs::write(&file, "x").unwrap();
    let before = fuseforks_testkit::snapshot(tmp.path());
    for (dir, code) in [
        (&full, "DEMO_KEEP_NOT_EMPTY"),
        (&link, "DEMO_KEEP_NOT_FOLDER"),
        (&file, "DEMO_KEEP_NOT_FOLDER"),
    ] {
        let out = run(&format!("demo --keep {}", dir.display()), tmp.path());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(11), "{code}: {err}");
        assert!(
            err.contains(&format!("error: [{code}] --keep {}", dir.display()))
                && err.contains("Fix: ")
                && err.contains("--keep"),
            "{err}"
        );
        assert!(stdout(&out).is_empty());
    }
    assert!(
        fuseforks_testkit::snapshot(tmp.path()) == before,
        "nothing was touched"
    );
    assert_eq!(
        std::fs::read_to_string(full.join("work/servant-a/hello.md")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);

    // A folder that cannot be made: named, with a fix for --keep.
    let under_file = file.join("sub");
    let out = run(&format!("demo --keep {}", under_file.display()), tmp.path());
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "error: [DEMO_FOLDER_FAILED] cannot make the demo's folder {}",
            under_file.display()
        )) && stderr(&out).contains("Fix: give --keep a folder you can write"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_port_failure_leaves_nothing_behind_and_a_pace_over_the_timeout_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let new = tmp.path().join("new/deeper");
    for dir in [&empty, &new] {
        let out = run(
            &format!("demo --keep {} --port {port}", dir.display()),
            tmp.path(),
        );
        assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
        assert!(stderr(&out).contains("[DEMO_PORT_UNAVAILABLE]"));
    }
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0, "still empty");
    assert!(!tmp.path().join("new").exists(), "what demo made is gone");
    drop(held);

    let out = run("demo --pace-ms 30000", tmp.path());
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let help = stdout(&run("demo --help", tmp.path()));
    assert!(help.contains("0 to 20000"), "{help}");
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "only empty/"
    );
}

/// `--gui`: after the summary, the demo village in the web GUI (the URL on stdout, the
/// browser asked to open it) until Ctrl+C; then the temporary village is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gui_opens_the_demo_village_until_ctrl_c_and_leaves_nothing() {
    use std::io::{BufRead, Read, Write};
    let tmp = tempfile::tempdir().unwrap();
    let mut child = demo_command("demo --gui --language en", tmp.path())
        // xdg-open hands the URL to $BROWSER: `true` takes it and does nothing.
        .env("BROWSER", "true")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let url = lines
        .by_ref()
        .map(Result::unwrap)
        .find(|l| l.starts_with("http://127.0.0.1:"))
        .expect("no GUI URL after the summary");
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, query) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "GET /{query} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    let mut serving = KillOnDrop::new(child);
    let out = signal_and_wait(&mut serving, "INT").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "the temporary demo is removed"
    );
}

#[test]
fn a_temporary_demo_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run("demo --json --language ja", tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["turns"], 3);
    assert_eq!(summary["kept"], false);
    assert_eq!(summary["tools"]["servant-b"], serde_json::json!(["grep"]));
    assert!(summary["tokens"]["total"].as_u64().unwrap() > 0);
    assert!(
        summary["answer"]
            .as_str()
            .unwrap()
            .contains("デモモデル — 台本どおりの応答で、AI ではありません"),
        "{summary}"
    );
    assert_eq!(
        (&summary["outcome"], &summary["exitCode"]),
        (&"answered".into(), &0.into())
    );
    let file = PathBuf::from(summary["fileWritten"].as_str().unwrap());
    assert!(file.starts_with(std::fs::canonicalize(tmp.path()).unwrap()));
    assert!(!file.exists(), "the temporary demo is removed");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);

    // In text, no path that is already gone.
    let out = run("demo --language en", tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("File written: hello.md in servant-a's work folder of the temporary village (removed on exit)\n")
            && text.contains("All 2 servants answered"),
        "{text}"
    );
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn a_port_that_cannot_be_bound_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let out = run(&format!("demo --port {port}"), tmp.path());
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "error: [DEMO_PORT_UNAVAILABLE] the demo model cannot listen on 127.0.0.1:{port}"
        )) && stderr(&out).contains("Fix: stop what holds port"),
        "{}",
        stderr(&out)
    );
    drop(held);
}

/// Waits until the reception's first model call is under way in the demo village at
/// `data_dir`: after `turn start` (its message committed), the next commit to the session
/// store is the call's intent, written just before the call is sent (the demo model is inside
/// the process: the test cannot see its requests).
async fn call_under_way(data_dir: &Path) {
    wait_for(
        &data_dir.join("workspace/fuseforks.log"),
        "turn start: agent=reception",
    )
    .await;
    let store = data_dir.join("workspace/sessions.redb");
    let stamp = || {
        std::fs::metadata(&store)
            .ok()
            .map(|m| (m.modified().ok(), m.len()))
    };
    let before = stamp();
    let what = "the call's intent in the session store";
    fuseforks_testkit::eventually(what, fuseforks_testkit::DEADLINE, || stamp() != before).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_the_demo_exits_8_with_the_turn_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("kept");
    let kept = root.display().to_string();
    let child = demo_command(&format!("demo --keep {kept} --pace-ms 2500"), tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut demo = KillOnDrop::new(child);
    let data_dir = root.join("village");
    call_under_way(&data_dir).await;
    let out = signal_and_wait(&mut demo, "INT").await;
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("(Interrupted.)\n"),
        "{}",
        stdout(&out)
    );
    let log = log_of(&data_dir);
    assert!(log.contains("turn interrupted: agent=reception"), "{log}");
    let turns = turn_records(&std::fs::canonicalize(&data_dir).unwrap());
    let reception: Vec<&TurnRecord> = turns.iter().filter(|t| t.agent_id == "reception").collect();
    assert_eq!(reception.len(), 1, "{turns:?}");
    assert!(
        reception[0].prompt > 0,
        "the paid round is recorded: {turns:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_with_json_prints_one_json_object() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("kept");
    let kept = root.display().to_string();
    let child = demo_command(
        &format!("demo --keep {kept} --json --pace-ms 2500"),
        tmp.path(),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut demo = KillOnDrop::new(child);
    call_under_way(&root.join("village")).await;
    let out = signal_and_wait(&mut demo, "INT").await;
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    let body: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["outcome"], "interrupted", "{body}");
    assert_eq!(body["exitCode"], 8, "{body}");
    assert_eq!(body["kept"], true, "{body}");
    assert!(
        body["dataDir"].as_str().unwrap().ends_with("kept/village"),
        "{body}"
    );
}

/// A proxy in the environment (a user behind a company proxy) never sees a loopback model
/// call: the demo model, a local server or Ollama is reached directly. The proxy here is a
/// port where nothing listens, so a call sent through it fails the demo.
#[test]
fn a_proxy_in_the_environment_is_not_used_for_loopback_models() {
    let tmp = tempfile::tempdir().unwrap();
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy = format!("http://{}", dead.local_addr().unwrap());
    drop(dead);
    let out = demo_command("demo --json --language en", tmp.path())
        .env("HTTP_PROXY", &proxy)
        .env("http_proxy", &proxy)
        .env("ALL_PROXY", &proxy)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["outcome"], "answered", "{summary}");
}
