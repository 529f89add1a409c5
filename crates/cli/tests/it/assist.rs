//! `fuseforks-cli assist` against the stub: the one-shot `--json` exchange (a question, then a
//! draft continued from `--history`), the terminal Q&A on stdin with the draft on stdout,
//! `--save --yes` writing the village file, `--save` without a yes or a terminal refused,
//! `--out` writing a new file and refusing an existing one, a judge draft that never passes
//! never saved, and the usage in `stats`' assist table, never in the turns.

use std::io::Write;
use std::process::Stdio;

use fuseforks_core::llm::Wire;
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use serde_json::{Value, json};

use crate::headless::{U, command, stub_village};

fn draft(content: &str) -> fuseforks_testkit::stub::StubReply {
    let call = ScriptCall {
        id: "d1".into(),
        name: "submit_draft".into(),
        args: json!({"content": content, "notes": "assumed"}),
    };
    wire_replies::tool_calls(Wire::OpenAiCompat, &[call], U)
}

fn assist_args(dir: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "assist",
        "--data-dir",
        dir,
        "--kind",
        "skill",
        "--id",
        "rec",
        "--template",
        "stub",
        "--secrets",
        "env",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// The stub village on `stub`, and its data folder as an argument.
fn village(stub: &StubServer) -> (TempDataDir, String) {
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let dir = data.data_dir().display().to_string();
    (data, dir)
}

/// `out` ended with `code` (its stderr shown when not).
fn exits(out: &std::process::Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn run(args: Vec<String>, stdin: &str) -> std::process::Output {
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut child = command(args, true)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_json_question_then_draft_from_the_history() {
    let stub = StubServer::start(vec![
        wire_replies::text(Wire::OpenAiCompat, "Which steps?", U),
        draft("1. Greet.\n"),
    ])
    .await;
    let (data, dir) = village(&stub);
    let out = run(
        assist_args(&dir, &["--input", "write a skill", "--json"]),
        "",
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let first: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (first["type"].as_str(), first["text"].as_str()),
        (Some("question"), Some("Which steps?"))
    );
    assert_eq!(first["usage"]["prompt"], U.prompt);
    let history = data.data_dir().join("history.json");
    std::fs::write(&history, first["appended"].to_string()).unwrap();
    let h = history.display().to_string();
    let out = run(
        assist_args(&dir, &["--input", "greet", "--json", "--history", &h]),
        "",
    )
    .await;
    exits(&out, 0);
    let second: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            second["type"].as_str(),
            second["content"].as_str(),
            second["notes"].as_str(),
            second["attempts"].as_u64()
        ),
        (Some("draft"), Some("1. Greet.\n"), Some("assumed"), Some(1))
    );
    assert_eq!(second["validation"], Value::Null);
    let sent = String::from_utf8_lossy(&stub.requests()[1].raw_body).into_owned();
    assert!(sent.contains("Which steps?"), "the history went back");
    // Nothing saved; the usage is the assist table's, not a turn.
    assert_eq!(
        std::fs::read_to_string(data.workspace().join("agents/rec/SKILL.md")).unwrap_or_default(),
        ""
    );
    let stats = command(["stats", "--data-dir", &dir, "--json"], false)
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["totals"]["turns"], 0);
    assert_eq!(stats["assist"]["rows"][0]["turns"], 2, "{stats}");
    assert_eq!(stats["assist"]["total"]["turns"], 2, "{stats}");
}

/// The money shown counts the assistant's calls (they are paid), while the turns' totals stay
/// turns alone: `cost` = `totals.costUsd` + `assist.total.costUsd`, in `--json` and in the text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_money_counts_the_assistant_and_the_totals_stay_turns() {
    let stub = StubServer::start(vec![
        wire_replies::text(Wire::OpenAiCompat, "The answer.", U),
        draft("1. Greet.\n"),
    ])
    .await;
    let data = TempDataDir::new();
    stub_village(stub.base_url())
        .world(|w| {
            w.model_templates[0].input_per_mtok = Some(3.0);
            w.model_templates[0].output_per_mtok = Some(15.0);
        })
        .write(&data);
    let dir = data.data_dir().display().to_string();
    exits(
        &run(crate::headless::ask_args(&dir, &[], "hello"), "").await,
        0,
    );
    let out = run(
        assist_args(&dir, &["--input", "go", "--force-draft", "--json"]),
        "",
    )
    .await;
    exits(&out, 0);
    let stats = command(["stats", "--data-dir", &dir, "--json"], false)
        .output()
        .unwrap();
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    // One call each at 400 × $3 + 10 × $15 per million tokens.
    let one_call = 0.00135;
    assert_eq!(stats["totals"]["turns"], 1, "{stats}");
    assert_eq!(
        stats["totals"]["costUsd"], one_call,
        "the turns alone: {stats}"
    );
    assert_eq!(stats["assist"]["rows"][0]["costUsd"], one_call, "{stats}");
    assert_eq!(stats["assist"]["total"]["costUsd"], one_call, "{stats}");
    assert_eq!(
        stats["assist"]["total"]["turns"], 1,
        "its model calls: {stats}"
    );
    assert_eq!(stats["cost"], 2.0 * one_call, "both: {stats}");
    let text = command(["stats", "--data-dir", &dir], false)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("drafting assistant total: 1 calls")
            && text.contains("≈ $ spent in all: 0.0027 (turns "),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_qa_prints_the_draft_and_saves_it_with_yes() {
    let stub = StubServer::start(vec![
        wire_replies::text(Wire::OpenAiCompat, "Formal or casual?", U),
        draft("Be casual.\n"),
    ])
    .await;
    let (data, dir) = village(&stub);
    let out = run(
        assist_args(&dir, &["--save", "--yes"]),
        "a greeter\ncasual\n",
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Formal or casual?\nBe casual.\n"
    );
    assert!(stderr.contains("ASSIST_SAVED"), "{stderr}");
    let saved = std::fs::read_to_string(data.workspace().join("agents/rec/SKILL.md")).unwrap();
    assert_eq!(saved, "Be casual.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_refuses_an_existing_file_and_an_empty_first_line_stops() {
    let stub = StubServer::start(vec![draft("x\n")]).await;
    let (data, dir) = village(&stub);
    let taken = data.data_dir().join("taken.md");
    std::fs::write(&taken, "mine").unwrap();
    let t = taken.display().to_string();
    let out = run(
        assist_args(&dir, &["--input", "go", "--force-draft", "--out", &t]),
        "",
    )
    .await;
    exits(&out, 11);
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "mine");
    let out = run(assist_args(&dir, &[]), "\n").await;
    assert_eq!(out.status.code(), Some(8));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ASSIST_STOPPED"));
}

/// An answer with neither text nor a draft: `--input` ends with `ASSIST_EMPTY` (exit 6); the
/// terminal Q&A warns and asks again, and the next answer goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_answer_is_assist_empty() {
    let empty = || wire_replies::text(Wire::OpenAiCompat, "", U);
    let stub = StubServer::start(vec![empty(), empty(), draft("Be brief.\n")]).await;
    let (_data, dir) = village(&stub);
    let out = run(assist_args(&dir, &["--input", "go", "--json"]), "").await;
    exits(&out, 6);
    assert!(String::from_utf8_lossy(&out.stderr).contains("ASSIST_EMPTY"));
    assert!(out.stdout.is_empty(), "no reply printed");
    let out = run(assist_args(&dir, &[]), "a greeter\n/draft\n").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("ASSIST_EMPTY"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Be brief.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_request_is_exit_2_with_its_code() {
    let data = TempDataDir::new();
    stub_village("http://127.0.0.1:9/v1").write(&data);
    let dir = data.data_dir().display().to_string();
    let mut args = assist_args(&dir, &["--input", "x"]);
    args[6] = "nobody".into();
    let out = run(args, "").await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("INVALID_ASSIST_REQUEST"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_writes_a_new_file_and_save_needs_a_yes() {
    let stub = StubServer::start(vec![draft("Step one.\n"), draft("Step two.\n")]).await;
    let (data, dir) = village(&stub);
    let skill = data.workspace().join("agents/rec/SKILL.md");
    let before = std::fs::read_to_string(&skill).unwrap_or_default();
    // --out: the draft goes to the new file, not to stdout, and the village is untouched.
    let new = data.data_dir().join("draft.md");
    let n = new.display().to_string();
    let out = run(
        assist_args(&dir, &["--input", "go", "--force-draft", "--out", &n]),
        "",
    )
    .await;
    exits(&out, 0);
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "Step one.\n");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("Step one."));
    // --save without --yes and without a terminal to ask on: not saved, exit 8.
    let out = run(
        assist_args(&dir, &["--input", "go", "--force-draft", "--save"]),
        "y\n",
    )
    .await;
    exits(&out, 8);
    assert!(String::from_utf8_lossy(&out.stderr).contains("ASSIST_NOT_SAVED"));
    assert_eq!(std::fs::read_to_string(&skill).unwrap_or_default(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_draft_that_never_passes_is_not_saved_even_with_yes() {
    let bad = || draft("[questions.kind]\ntype = 7\n");
    let stub = StubServer::start(vec![bad(), bad(), bad()]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url())
        .world(|w| {
            w.judges
                .push(fuseforks_testkit::judge_spec("gate", "Gate", false));
        })
        .write(&data);
    let judge = data.workspace().join("judges/gate/judge.toml");
    std::fs::create_dir_all(judge.parent().unwrap()).unwrap();
    std::fs::write(&judge, "# mine\n").unwrap();
    let dir = data.data_dir().display().to_string();
    let mut args = assist_args(&dir, &["--input", "go", "--force-draft", "--save", "--yes"]);
    (args[4], args[6]) = ("judge".into(), "gate".into());
    let out = run(args, "").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("INVALID_JUDGE_FILE") && stderr.contains("ASSIST_NOT_SAVED"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&judge).unwrap(),
        "# mine\n",
        "nothing written"
    );
    assert_eq!(stub.requests().len(), 3, "three rounds");
}
