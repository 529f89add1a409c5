//! `ask --accept … --expect … [--max-attempts N]`: goal loops through the binary, a loopback
//! stub as the model and real child processes (`sh` scripts in the workspace) as the check.

use std::process::{Command, Output, Stdio};

use fuseforks_core::llm::Wire;
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::Value;

use crate::headless::{U, ask_args, log, run, village};
use crate::{cli, stderr, stdout};

/// Prints `ok` from its 2nd run on (a counter file in the workspace, which the stub's answer
/// cannot write), else `not yet N` and a detail line.
const SECOND_TIME: &str = "n=$(cat count 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > count\nif [ $n -ge 2 ]; then echo ok; else echo \"not yet $n\"; echo detail-line; fi\n";
/// Never prints `ok`.
const NEVER: &str = "echo nope\n";

const REQUEST: &str = "Make the check pass.";

/// SHA-256 hex of `text`, by `sha256sum` (not by the code under test).
fn sha256sum(text: &str) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    stdout(&out).split_whitespace().next().unwrap().to_owned()
}

/// The goals logs of the village: (goal id, lines).
fn goals(data: &TempDataDir) -> Vec<(String, Vec<Value>)> {
    let dir = data.workspace().join("goals");
    let mut all = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let id = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        all.push((id, lines));
    }
    all
}

/// A village on a stub answering `answers` in turn, with `script` as `check.sh`; runs `ask`
/// with `extra` options.
async fn goal_ask(
    answers: &[&str],
    script: &str,
    extra: &[&str],
) -> (StubServer, TempDataDir, Output) {
    let replies = answers
        .iter()
        .map(|a| wire_replies::text(Wire::OpenAiCompat, a, U));
    let stub = StubServer::start(replies.collect()).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    data.write("check.sh", script);
    let dir = data.data_dir().display().to_string();
    let out = run(ask_args(&dir, extra, REQUEST), true).await;
    (stub, data, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_accept_reaches_the_goal_at_the_second_attempt() {
    let (stub, data, out) = goal_ask(
        &["First try.", "Second try."],
        SECOND_TIME,
        &[
            "--accept",
            "sh",
            "--accept-arg",
            "check.sh",
            "--expect",
            "ok",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Second try.\n", "the final answer alone");
    let requests = stub.requests();
    assert_eq!(requests.len(), 2, "exactly two model calls");
    let second = String::from_utf8_lossy(&requests[1].raw_body).into_owned();
    assert!(
        second.contains("attempt 1 of 2")
            && second.contains("not yet 1")
            && second.contains("detail-line"),
        "the re-sent request carries the excerpt: {second}"
    );
    assert!(second.contains("First try."), "same conversation: {second}");
    let goals = goals(&data);
    assert_eq!(goals.len(), 1);
    let (id, lines) = &goals[0];
    let hash = sha256sum(REQUEST);
    let outcomes: Vec<(&Value, &Value, &Value)> = lines
        .iter()
        .map(|l| (&l["goalSha256"], &l["attempt"], &l["outcome"]))
        .collect();
    assert_eq!(
        outcomes,
        [
            (
                &Value::from(hash.clone()),
                &Value::from(1),
                &Value::from("no_match")
            ),
            (&Value::from(hash), &Value::from(2), &Value::from("match")),
        ]
    );
    assert_eq!(
        lines[0]["excerptChars"],
        "not yet 1\ndetail-line".chars().count()
    );
    assert!(lines[1]["tsMs"].as_i64().unwrap() >= lines[0]["tsMs"].as_i64().unwrap());
    assert!(
        stderr(&out).contains(&format!("goal id={id} attempt=1/2 outcome=no_match")),
        "{}",
        stderr(&out)
    );
    let log = log(&data);
    assert!(
        log.contains(&format!("goal: id={id} attempt=1/2 outcome=no_match"))
            && log.contains(&format!("goal: id={id} attempt=2/2 outcome=match")),
        "{log}"
    );
    assert!(
        !log.contains(REQUEST) && !log.contains("not yet"),
        "no bodies in the log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_accept_fails_with_12_after_max_attempts() {
    let (stub, data, out) = goal_ask(
        &["One.", "Two.", "Three.", "never sent"],
        NEVER,
        &[
            "--accept",
            "sh",
            "--accept-arg",
            "check.sh",
            "--expect",
            "ok",
            "--max-attempts",
            "3",
            "--events",
            "jsonl",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Three.\n(Goal not reached after 3 attempts.)\n"
    );
    assert_eq!(stub.requests().len(), 3);
    let (_, lines) = &goals(&data)[0];
    let attempts: Vec<_> = lines
        .iter()
        .map(|l| {
            (
                l["attempt"].as_u64().unwrap(),
                l["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        attempts,
        [(1, "no_match"), (2, "no_match"), (3, "no_match")]
    );
    let events: Vec<Value> = stderr(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &Value| v["type"] == "cli")
        .collect();
    let per_attempt = events
        .iter()
        .filter(|v| v["code"] == "GOAL_ATTEMPT")
        .count();
    assert_eq!(per_attempt, 3, "{}", stderr(&out));
    assert!(
        events
            .iter()
            .any(|v| v["code"] == "GOAL_NOT_REACHED" && v["level"] == "error")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_accept_command_is_not_retried_and_exits_12_with_the_reason() {
    let (stub, data, out) = goal_ask(
        &["Done.", "never sent"],
        NEVER,
        &[
            "--accept",
            "no-such-program-fuseforks-test",
            "--expect",
            "ok",
            "--max-attempts",
            "5",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert_eq!(stub.requests().len(), 1, "error never retries");
    assert_eq!(
        stdout(&out),
        "Done.\n(Goal not checked: the acceptance command ended with error.)\n"
    );
    let err = stderr(&out);
    assert!(
        err.contains("[GOAL_CHECK_FAILED]") && err.contains("command not found"),
        "{err}"
    );
    let (_, lines) = &goals(&data)[0];
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["outcome"], "error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_attempts_outside_1_to_5_is_a_usage_error() {
    for n in ["0", "6"] {
        let extra = ["--accept", "true", "--expect", "", "--max-attempts", n];
        let (stub, _data, out) = goal_ask(&["never sent"], NEVER, &extra).await;
        assert_eq!(out.status.code(), Some(2), "{n}: {}", stderr(&out));
        assert!(stderr(&out).contains("--max-attempts"), "{}", stderr(&out));
        assert!(stub.requests().is_empty());
    }
    let out = cli("ask --data-dir /nonexistent --expect ok hi");
    assert_eq!(out.status.code(), Some(2), "--expect needs --accept");
    assert!(stderr(&out).contains("--accept"), "{}", stderr(&out));
    let out = cli("ask --data-dir /nonexistent --accept true hi");
    assert_eq!(out.status.code(), Some(2), "--accept needs --expect");
    assert!(stderr(&out).contains("--expect"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_attempt_spends_from_one_budget() {
    // The first call costs 30,040 of 60,000; the second's estimate (its request and the
    // whole output cap, ≈ 37,000) no longer fits. With a budget per attempt it would.
    let big = wire_replies::ScriptUsage {
        prompt: 30_000,
        ..U
    };
    let stub = StubServer::start(vec![
        wire_replies::text(Wire::OpenAiCompat, "One.", big),
        wire_replies::text(Wire::OpenAiCompat, "never sent", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), Some(60_000));
    data.write("check.sh", NEVER);
    let dir = data.data_dir().display().to_string();
    let extra = [
        "--accept",
        "sh",
        "--accept-arg",
        "check.sh",
        "--expect",
        "ok",
    ];
    let out = run(ask_args(&dir, &extra, REQUEST), true).await;
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(
        stub.requests().len(),
        1,
        "the second attempt was refused by the budget"
    );
    assert_eq!(stdout(&out), "(Stopped at the token budget.)\n");
    let log = log(&data);
    assert!(
        log.contains("budget stop: agent=rec ceiling=60000 remaining=29960"),
        "{log}"
    );
    assert_eq!(
        goals(&data)[0].1.len(),
        1,
        "nothing checked after a turn without answer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_japanese_village_gets_the_follow_up_and_the_fixed_line_in_japanese() {
    let stub = StubServer::start(vec![
        wire_replies::text(Wire::OpenAiCompat, "一回目。", U),
        wire_replies::text(Wire::OpenAiCompat, "二回目。", U),
    ])
    .await;
    let data = TempDataDir::new();
    crate::headless::stub_village(stub.base_url())
        .language(Some(fuseforks_core::village::Language::Ja))
        .write(&data);
    data.write("check.sh", NEVER);
    let dir = data.data_dir().display().to_string();
    let extra = [
        "--accept",
        "sh",
        "--accept-arg",
        "check.sh",
        "--expect",
        "ok",
    ];
    let out = run(ask_args(&dir, &extra, "直して。"), true).await;
    assert_eq!(out.status.code(), Some(12), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "二回目。\n（2 回試しましたが、ゴールに届きませんでした）\n"
    );
    let second = String::from_utf8_lossy(&stub.requests()[1].raw_body).into_owned();
    let second: Value = serde_json::from_str(&second).unwrap();
    let text = second.to_string();
    assert!(
        text.contains("受け入れ確認が通りませんでした（1/2 回目）") && text.contains("nope"),
        "{text}"
    );
    assert_eq!(goals(&data)[0].1[0]["goalSha256"], sha256sum("直して。"));
}
