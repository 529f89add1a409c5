//! What a new user met in the first hour, through the binary: forks that keep `stats` true,
//! Ctrl+C that keeps a finished answer (streamed or not), the fixed line after a second Ctrl+C,
//! an empty request refused before anything starts, a closed stdout that ends quietly, one
//! version everywhere, unknown prices shown as unknown, the right fix for a keyless 401.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{
    AgentMessage, Endpoint, IntentRecord, Record, SessionStore, TurnRecord, TurnStop,
};
use fuseforks_testkit::stub::{StreamEnd, StubServer};
use fuseforks_testkit::wire_replies;
use fuseforks_testkit::wire_streams::streamed;
use fuseforks_testkit::{KillOnDrop, TempDataDir};
use serde_json::Value;

use crate::headless::{U, signal, signal_and_wait, spawn, stub_village, village, wait_log};
use crate::{cli, stderr, stdout};

const T0: i64 = 1_794_744_000_000;

fn intent(ts: i64) -> Record {
    Record::Intent(IntentRecord {
        agent_id: "rec".into(),
        ts_ms: ts,
        round: 1,
        model: "stub-model".into(),
        backend: "open_ai_compat".into(),
        reserved: 100,
    })
}

fn turn(ts: i64) -> Record {
    Record::Turn(TurnRecord {
        agent_id: "rec".into(),
        ts_ms: ts,
        hop: 0,
        rounds: 1,
        waves: 0,
        stop: TurnStop::Completed,
        prompt: 100,
        cached: 0,
        completion: 10,
        reasoning: 0,
        cache_write: 0,
        cache_write_1h: 0,
        model: "stub-model".into(),
        backend: "open_ai_compat".into(),
        elapsed_ms: 5,
        usage_unknown: false,
        skill: None,
    })
}

fn request(text: &str, ts: i64) -> Record {
    Record::Message(AgentMessage::new(
        Endpoint::User,
        Endpoint::Agent { id: "rec".into() },
        text,
        0,
        ts,
    ))
}

/// A conversation of two whole exchanges: message 0, intent 1, exchange 2, turn 3, message 4,
/// intent 5, exchange 6, turn 7.
fn two_exchanges() -> (TempDataDir, String, String) {
    let data = TempDataDir::new();
    stub_village("http://127.0.0.1:9/v1")
        .world(|w| {
            w.model_templates[0].credential = fuseforks_core::village::Credential::NotRequired
        })
        .write(&data);
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let id = store.create("Two", T0).unwrap();
    for n in 0..2 {
        let ts = T0 + n * 10;
        let exchange = Record::Exchange {
            agent_id: "rec".into(),
            sent: "q".into(),
            replied: "a".into(),
        };
        for record in [request("q", ts), intent(ts + 1), exchange, turn(ts)] {
            store.append(&id, &record, ts).unwrap();
        }
    }
    drop(store);
    let dir = data.data_dir().display().to_string();
    (data, dir, id)
}

fn stats_json(dir: &str) -> Value {
    let out = cli(&format!("stats --json --data-dir {dir}"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn a_fork_copies_whole_exchanges_and_stats_count_each_call_once() {
    let (_data, dir, id) = two_exchanges();
    let before = stats_json(&dir)["totals"].clone();
    assert_eq!(
        (
            before["turns"].as_u64(),
            before["unknownUsageCalls"].as_u64()
        ),
        (Some(2), Some(0))
    );
    // Inside the second exchange: refused, the requests around it named.
    for inside in [5, 6, 7] {
        let out = cli(&format!(
            "sessions fork {id} --before {inside} --data-dir {dir}"
        ));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("SESSION_FORK_SPLITS_EXCHANGE"),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("fork before request 4 ("),
            "{}",
            stderr(&out)
        );
    }
    // Past the end: a usage error that says where the conversation ends.
    let out = cli(&format!("sessions fork {id} --before 99 --data-dir {dir}"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("SESSION_FORK_PAST_END")
            && stderr(&out).contains("fork before a request: 0, 4 (")
    );
    // A whole-exchange point: accepted, and the copied calls are not counted again.
    let out = cli(&format!("sessions fork {id} --before 4 --data-dir {dir}"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = stats_json(&dir)["totals"].clone();
    assert_eq!(after, before, "a fork spends nothing");
    let list = cli(&format!("sessions list --json --data-dir {dir}"));
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&list)).unwrap()["sessions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn unknown_prices_are_unknown_not_zero() {
    let (_data, dir, _) = two_exchanges();
    let totals = stats_json(&dir)["totals"].clone();
    assert_eq!(totals["costUsd"], Value::Null, "{totals}");
    assert_eq!(totals["unpricedRows"].as_u64(), Some(1), "{totals}");
    let text = stdout(&cli(&format!("stats --data-dir {dir}")));
    assert!(text.contains("≈ $ - (0 of 1 rows priced"), "{text}");
    assert!(!text.contains("0.0000"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_request_is_a_usage_error_before_anything_starts() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    for empty in ["''", "'   '"] {
        let out = crate::headless::run(
            crate::words(&format!("ask --data-dir {dir} --secrets env {empty}")),
            true,
        )
        .await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("[USAGE]") && stderr(&out).contains("empty"),
            "{}",
            stderr(&out)
        );
    }
    assert!(stub.requests().is_empty(), "nothing was sent");
    assert!(
        !data.workspace().join("sessions.redb").exists() || {
            let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
            store.list().unwrap().is_empty()
        }
    );
}

/// Ctrl+C while the reception's answer is on its way: the turn ends with it, the answer is
/// printed, exit 0, and its usage recorded, whether the template streams or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_keeps_a_finished_answer_streamed_or_not() {
    for streaming in [true, false] {
        let reply = wire_replies::text(Wire::OpenAiCompat, "The answer is 42.", U);
        // A stream that has begun (its first event sent) and ends 2.5 s later; an unstreamed
        // answer that comes whole 2.5 s later.
        let pause = Duration::from_millis(2500);
        let reply = if streaming {
            let stream = streamed(Wire::OpenAiCompat, &reply);
            let first_event = stream.body.windows(2).position(|w| w == b"\n\n").unwrap() + 2;
            stream.stop_at(first_event, StreamEnd::Resume(pause))
        } else {
            reply.after(pause)
        };
        let stub = StubServer::start(vec![reply]).await;
        let data = TempDataDir::new();
        stub_village(stub.base_url())
            .world(|w| w.model_templates[0].streaming = streaming)
            .write(&data);
        let dir = data.data_dir().display().to_string();
        let mut asking =
            KillOnDrop::new(spawn(&format!("ask --data-dir {dir} --secrets env hello")));
        wait_log(&data, "turn start: agent=rec").await;
        stub.wait_requests(1).await;
        let out = signal_and_wait(&mut asking, "INT").await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "streaming={streaming}: {}",
            stderr(&out)
        );
        assert_eq!(stdout(&out), "The answer is 42.\n", "streaming={streaming}");
        let log = crate::headless::log(&data);
        assert!(
            log.contains("prompt=400") && !log.contains("usage=unknown"),
            "streaming={streaming}: {log}"
        );
    }
}

/// A second Ctrl+C exits at once, and stdout still carries the fixed line of exit 8.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_ctrl_c_still_prints_the_fixed_line() {
    let reply = wire_replies::text(Wire::OpenAiCompat, "late", U).after(Duration::from_secs(60));
    let stub = StubServer::start(vec![reply]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let mut asking = KillOnDrop::new(spawn(&format!("ask --data-dir {dir} --secrets env hello")));
    stub.wait_requests(1).await;
    let mut child = asking.take();
    // Two signals sent at once may reach the process as one: the second goes once the first
    // was taken (`[CLOSING]` said on stderr).
    let err = std::io::BufReader::new(child.stderr.take().unwrap());
    let (closing, taken) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut said = String::new();
        for line in err.lines().map_while(Result::ok) {
            if line.contains("[CLOSING]") {
                let _ = closing.send(());
            }
            said.push_str(&line);
            said.push('\n');
        }
        said
    });
    signal(&child, "INT");
    let first = tokio::task::spawn_blocking(move || taken.recv_timeout(Duration::from_secs(20)));
    assert!(
        first.await.unwrap().is_ok(),
        "the first signal was never taken"
    );
    signal(&child, "INT");
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let said = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(8), "{said}");
    assert_eq!(stdout(&out), "(Interrupted.)\n", "{said}");
    assert!(said.contains("CLOSE_ABORTED"), "{said}");
}

/// A reader that stops early (`| head -1`) ends the command quietly: no panic text, no 101.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let (_data, dir, _) = two_exchanges();
    for args in [
        vec!["sessions", "list", "--data-dir", dir.as_str()],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["stats", "--data-dir", dir.as_str()],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before the first line
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(
            matches!(status.code(), Some(0 | 141)),
            "{args:?}: {status:?} {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `--version` and the User-Agent of model calls say the same version (the door's serverInfo:
/// `door::the_door_says_the_binary_version`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_version_everywhere() {
    let version = crate::binary_version();
    assert!(version.starts_with(env!("CARGO_PKG_VERSION")), "{version}");
    let stub = StubServer::start(vec![wire_replies::text(Wire::OpenAiCompat, "hi", U)]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let out = crate::headless::run(
        crate::words(&format!("ask --data-dir {dir} --secrets env hello")),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = stub.requests();
    let agent = requests[0].header("user-agent").unwrap_or_default();
    assert_eq!(agent, format!("fuseforks/{version}"), "the User-Agent");
}

/// A 401 from a template that sends no key: the fix is to give it one, not to set an
/// environment variable the template never reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_on_a_keyless_template_says_to_store_a_key() {
    let reply = wire_replies::error(Wire::OpenAiCompat, 401, "no key", None);
    let stub = StubServer::start(vec![reply]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url())
        .world(|w| {
            w.model_templates[0].credential = fuseforks_core::village::Credential::NotRequired;
        })
        .write(&data);
    let dir = data.data_dir().display().to_string();
    let out = crate::headless::run(
        crate::words(&format!("ask --data-dir {dir} --secrets env hello")),
        false,
    )
    .await;
    let err = stderr(&out);
    assert!(err.contains("401"), "{err}");
    let fix = err
        .lines()
        .find_map(|l| l.strip_prefix("Fix: "))
        .unwrap_or_default();
    assert!(
        fix.contains("credential: not_required") && fix.contains("set its credential to keyring"),
        "the fix starts from the template's credential: {err}"
    );
}

/// `--data-dir`, `--json` and `--secrets` are taken before the subcommand too.
#[test]
fn group_flags_are_taken_before_and_after_the_subcommand() {
    let (_data, dir, _) = two_exchanges();
    let after = stdout(&cli(&format!("sessions list --json --data-dir {dir}")));
    for line in [
        format!("sessions --data-dir {dir} list --json"),
        format!("--data-dir {dir} sessions list --json"),
        format!("sessions --json --data-dir={dir} list"),
    ] {
        let out = cli(&line);
        assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
        assert_eq!(stdout(&out), after, "{line}");
    }
    let out = cli(&format!("--data-dir {dir} stats --json"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Every command that opens a village says VILLAGE_MISSING and exits 5 for a folder with none.
#[test]
fn a_missing_village_is_village_missing_everywhere() {
    let nowhere = tempfile::tempdir().unwrap();
    let dir = nowhere.path().join("nope").display().to_string();
    let out_dir = nowhere.path().join("copy").display().to_string();
    for line in [
        format!("audit verify --data-dir {dir}"),
        format!("sessions list --data-dir {dir}"),
        format!("stats --data-dir {dir}"),
        format!("schedules --data-dir {dir}"),
        format!("secrets list --data-dir {dir}"),
        format!("judge validate --data-dir {dir}"),
        format!("pause --data-dir {dir}"),
        format!("bake --data-dir {dir} --out {out_dir}"),
        format!("check --for ask --data-dir {dir}"),
    ] {
        let out = cli(&line);
        assert_eq!(out.status.code(), Some(5), "{line}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("[VILLAGE_MISSING]"),
            "{line}: {}",
            stderr(&out)
        );
    }
    assert!(!nowhere.path().join("nope").exists(), "nothing was created");
}

/// A request that waited out `askTimeoutSecs` says so on stderr with what to change (exit 7).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_request_says_why() {
    let slow = wire_replies::text(Wire::OpenAiCompat, "late", U).after(Duration::from_secs(45));
    let stub = StubServer::start(vec![slow]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url())
        .world(|w| w.ask_timeout_secs = Some(30))
        .write(&data);
    let dir = data.data_dir().display().to_string();
    let out = crate::headless::run(
        crate::words(&format!("ask --data-dir {dir} --secrets env hello")),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[ASK_TIMED_OUT]") && stderr(&out).contains("askTimeoutSecs"),
        "{}",
        stderr(&out)
    );
}

/// `check` says what the kill switch left on the shelf: a pause (warn: the next run starts
/// paused and would wait) or a halt (reject: ask and serve exit 14).
#[test]
fn check_says_a_waiting_pause_or_halt() {
    let (_data, dir, _) = two_exchanges();
    let paused = cli(&format!("pause --data-dir {dir}"));
    assert_eq!(paused.status.code(), Some(0), "{}", stderr(&paused));
    let out = cli(&format!("check --for ask --data-dir {dir} --secrets env"));
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("VILLAGE_PAUSED") && stdout(&out).contains("resume"),
        "{}",
        stdout(&out)
    );
    let halted = cli(&format!("halt --data-dir {dir}"));
    assert_eq!(halted.status.code(), Some(0), "{}", stderr(&halted));
    let out = cli(&format!("check --for ask --data-dir {dir} --secrets env"));
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stdout(&out).contains("VILLAGE_HALTED"), "{}", stdout(&out));
    let resumed = cli(&format!("resume --data-dir {dir}"));
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let out = cli(&format!("check --for ask --data-dir {dir} --secrets env"));
    assert!(!stdout(&out).contains("VILLAGE_"), "{}", stdout(&out));
}

/// A title that holds line ends, tabs or escapes stays on its row of `sessions list`.
#[test]
fn a_title_stays_on_its_row() {
    let (data, dir, _) = two_exchanges();
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    store
        .create("multi\nline\ttitle \u{1b}[31mred\n", T0 + 100)
        .unwrap();
    drop(store);
    let out = cli(&format!("sessions list --data-dir {dir}"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text.lines().count(),
        2,
        "one row per conversation: {text:?}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\t'), "{text:?}");
}

/// A budget below one call's reservation is said by `check` before any request stops at it.
#[test]
fn check_says_a_budget_below_one_call() {
    let (data, dir, _) = two_exchanges();
    data.edit_world(|w| {
        w.token_budget = Some(1_000);
        w.model_templates[0].max_output_tokens = 1_024;
    });
    let out = cli(&format!("check --for ask --data-dir {dir} --secrets env"));
    assert_eq!(out.status.code(), Some(0), "a warning: {}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("BUDGET_BELOW_ONE_CALL") && text.contains("at least 4608"),
        "{text}"
    );
    data.edit_world(|w| w.token_budget = Some(4_608));
    let out = cli(&format!("check --for ask --data-dir {dir} --secrets env"));
    assert!(
        !stdout(&out).contains("BUDGET_BELOW_ONE_CALL"),
        "{}",
        stdout(&out)
    );
}
