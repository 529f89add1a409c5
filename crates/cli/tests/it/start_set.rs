//! `--start`: an agent whose id is `reception` (as `init` names it) is that
//! agent, on `serve` and `ask`; the keyword wins only when no agent has the id; an id named
//! twice is refused (exit 2), never folded.

use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use fuseforks_testkit::{KillOnDrop, TempDataDir};

use crate::headless::{U, args, log, run, signal_and_wait, spawn, stub_village, village, wait_log};
use crate::{stderr, stdout, words};

/// The stub village plus an agent whose id is `reception` (the reception stays `rec`).
fn village_with_an_agent_named_reception(data: &TempDataDir, stub: &str) {
    stub_village(stub)
        .agent("reception", "Front desk")
        .write(data);
}

fn start_of(out: &std::process::Output) -> Vec<String> {
    let report: serde_json::Value = serde_json::from_str(stdout(out).trim()).unwrap();
    serde_json::from_value(report["start"].clone()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_starts_the_agent_whose_id_is_reception() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village_with_an_agent_named_reception(&data, stub.base_url());
    let dir = data.data_dir().display().to_string();
    let check = run(
        words(&format!(
            "check --for serve --data-dir {dir} --start reception --secrets env --json"
        )),
        true,
    )
    .await;
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    assert_eq!(start_of(&check), ["reception"]);
    let mut serving = KillOnDrop::new(spawn(&format!(
        "serve --data-dir {dir} --start reception --secrets env"
    )));
    wait_log(&data, "agent started: agent=reception").await;
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !log(&data).contains("agent started: agent=rec "),
        "only the named agent: {}",
        log(&data)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_starts_the_agent_whose_id_is_reception_and_the_reception() {
    let stub = StubServer::start(vec![wire_replies::text(
        fuseforks_core::llm::Wire::OpenAiCompat,
        "Hello.",
        U,
    )])
    .await;
    let data = TempDataDir::new();
    village_with_an_agent_named_reception(&data, stub.base_url());
    let dir = data.data_dir().display().to_string();
    let check = run(
        words(&format!(
            "check --for ask --data-dir {dir} --start reception --secrets env --json"
        )),
        true,
    )
    .await;
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    assert_eq!(start_of(&check), ["rec", "reception"]);
    let ask = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hi"
        )),
        true,
    )
    .await;
    assert_eq!(ask.status.code(), Some(0), "{}", stderr(&ask));
    assert_eq!(stdout(&ask), "Hello.\n");
    assert!(
        log(&data).contains("agent started: agent=reception"),
        "{}",
        log(&data)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keyword_wins_only_when_no_agent_has_the_id() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let ask = run(
        words(&format!(
            "check --for ask --data-dir {dir} --start reception --secrets env --json"
        )),
        true,
    )
    .await;
    assert_eq!(ask.status.code(), Some(0), "{}", stderr(&ask));
    assert_eq!(start_of(&ask), ["rec"], "the keyword: the reception only");
    let serve = run(
        words(&format!(
            "check --for serve --data-dir {dir} --start reception"
        )),
        true,
    )
    .await;
    assert_eq!(serve.status.code(), Some(2), "the keyword is for ask only");
    assert!(
        stderr(&serve).contains("error: [USAGE] "),
        "{}",
        stderr(&serve)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_named_twice_is_refused_on_ask_serve_and_check() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village_with_an_agent_named_reception(&data, stub.base_url());
    let dir = data.data_dir().display().to_string();
    for start in ["reception,reception", "rec,reception,rec"] {
        for command in [vec!["check", "--for", "serve"], vec!["serve"], vec!["ask"]] {
            let mut list = command.clone();
            list.extend(["--data-dir", &dir, "--start", start, "--secrets", "env"]);
            if command == ["ask"] {
                list.push("hi");
            }
            let out = run(args(&list), true).await;
            assert_eq!(out.status.code(), Some(2), "{list:?}: {}", stderr(&out));
            assert!(stderr(&out).contains("twice"), "{list:?}: {}", stderr(&out));
        }
    }
    assert!(stub.requests().is_empty());
    assert!(!data.workspace().join(".fuseforks.lock").exists());
}
