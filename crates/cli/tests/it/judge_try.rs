//! `judge try`: one backend call (a model template's wire with the forced `judge_answers`, or
//! Jev on a loopback stub), the answers, the rule and the action printed; nothing delivered
//! (no session store, no log, no message record, no other request); undecided never uses
//! `[otherwise]` (exit 6 with the reason).

use fuseforks_core::llm::Wire;
use fuseforks_host::HostPaths;
use fuseforks_testkit::jev;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{ScriptCall, ScriptUsage, error, text, tool_calls};
use serde_json::{Value, json};

use crate::headless::args;
use crate::judges::{GOOD, judge_village, snapshot};
use crate::{stderr, stdout};

fn usage() -> ScriptUsage {
    ScriptUsage {
        prompt: 120,
        completion: 9,
        cache_read: 0,
        reasoning: 0,
    }
}

fn answers(args: Value) -> fuseforks_testkit::stub::StubReply {
    tool_calls(
        Wire::OpenAiCompat,
        &[ScriptCall {
            id: "c1".into(),
            name: "judge_answers".into(),
            args,
        }],
        usage(),
    )
}

async fn try_json(dir: &str, judge: &str, env: &[(&str, &str)]) -> (Option<i32>, Value, String) {
    let mut list = args(&[
        "judge",
        "try",
        "--data-dir",
        dir,
        "--secrets",
        "env",
        "--json",
        judge,
        "My app crashes on start",
    ]);
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect();
    let out = tokio::task::spawn_blocking(move || {
        let mut c = crate::headless::command(std::mem::take(&mut list), true);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    })
    .await
    .unwrap();
    let v = serde_json::from_str(&stdout(&out)).unwrap_or(Value::Null);
    (out.status.code(), v, stderr(&out))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_template_judge_routes_with_a_forced_tool_and_delivers_nothing() {
    let stub = StubServer::start(vec![
        answers(json!({"kind": {"bug": 0.85, "other": 0.15}})),
        answers(json!({"kind": {"bug": 0.02, "other": 0.98}})),
        answers(json!({"kind": {"bug": -0.5, "other": 1.5}})),
        answers(json!({})),
        text(Wire::OpenAiCompat, "I think it is a bug.", usage()),
    ])
    .await;
    let base = format!("{}/v1", stub.base_url());
    let (data, dir) = judge_village(&base, Some("stub"), GOOD);
    let before = snapshot(data.data_dir());

    let (code, v, err) = try_json(&dir, "good", &[]).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["outcome"], "routed");
    assert_eq!(v["rule"], "1");
    assert_eq!(v["action"], "relay");
    assert_eq!(v["to"], json!(["dev"]));
    assert_eq!(v["answers"][0]["value"], "bug");
    assert!((v["answers"][0]["p"].as_f64().unwrap() - 0.85).abs() < 1e-9);
    assert!((v["answers"][0]["margin"].as_f64().unwrap() - 0.70).abs() < 1e-9);
    assert_eq!(
        (v["inputTokens"].as_u64(), v["outputTokens"].as_u64()),
        (Some(120), Some(9))
    );
    assert_eq!(v["delivered"], false);
    let sent = &stub.requests()[0];
    assert_eq!(
        sent.body["tool_choice"],
        json!({"type": "function", "function": {"name": "judge_answers"}}),
        "forced where the wire allows"
    );
    assert_eq!(sent.body["tools"][0]["function"]["name"], "judge_answers");
    assert!(sent.body.to_string().contains("My app crashes on start"));

    // other with p 0.98 → rule 2, a fan-out to two servants.
    let (code, v, _) = try_json(&dir, "good", &[]).await;
    assert_eq!(
        (code, v["outcome"].as_str(), v["action"].as_str()),
        (Some(0), Some("fanned"), Some("fan_out"))
    );
    assert_eq!(v["to"], json!(["dev", "rec"]));

    // Negative probabilities: refused, undecided, exit 6; [otherwise] (return) is not used.
    let (code, v, err) = try_json(&dir, "good", &[]).await;
    assert_eq!(
        (code, v["outcome"].as_str(), v["reason"].as_str()),
        (Some(6), Some("undecided"), Some("malformed")),
        "{err}"
    );
    assert!(err.contains("[JUDGE_UNDECIDED]"), "{err}");
    // A question left out → unanswered; a plain text answer → unanswered.
    for _ in 0..2 {
        let (code, v, _) = try_json(&dir, "good", &[]).await;
        assert_eq!((code, v["reason"].as_str()), (Some(6), Some("unanswered")));
    }
    assert_eq!(stub.requests().len(), 5, "one call per try");

    // Nothing delivered or recorded: no session store, no log, no lock, files as they were.
    assert_eq!(snapshot(data.data_dir()), before);
    assert!(!data.workspace().join("sessions.redb").exists());
    assert!(!data.workspace().join("fuseforks.log").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jev_judge_asks_jev_once_with_state_and_every_question() {
    let stub = StubServer::start(vec![
        jev::reply(
            json!({"kind": jev::choice("bug", &[("bug", 0.7), ("other", 0.3)])}),
            40,
            2,
        ),
        jev::too_large(),
        jev::reply(json!({}), 40, 2),
        error(Wire::OpenAiCompat, 500, "boom", None),
    ])
    .await;
    let (data, dir) = judge_village("http://127.0.0.1:9/v1", None, GOOD);
    HostPaths::new(data.data_dir())
        .shelf()
        .save_jev(&jev::settings(stub.base_url()))
        .unwrap();
    let token = [("FUSEFORKS_SECRET_JEV_API_TOKEN", "jev-secret-token")];

    let (code, v, err) = try_json(&dir, "good", &token).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        (
            v["backend"].as_str(),
            v["outcome"].as_str(),
            v["rule"].as_str()
        ),
        (Some("jev"), Some("routed"), Some("1"))
    );
    assert_eq!(
        (v["inputTokens"].as_u64(), v["outputTokens"].as_u64()),
        (Some(40), Some(2))
    );
    let sent = &stub.requests()[0];
    assert_eq!(sent.path, jev::PATH);
    assert_eq!(
        sent.header("authorization"),
        Some("Bearer jev-secret-token")
    );
    assert_eq!(
        sent.body["state"],
        json!({"message": "My app crashes on start"})
    );
    assert_eq!(sent.body["questions"]["kind"]["type"], "choice");
    assert_eq!(
        sent.body["questions"]["kind"]["criteria"],
        json!({"bug": "b", "other": "o"})
    );

    let (code, v, _) = try_json(&dir, "good", &token).await;
    assert_eq!((code, v["reason"].as_str()), (Some(6), Some("too_large")));
    let (code, v, _) = try_json(&dir, "good", &token).await;
    assert_eq!((code, v["reason"].as_str()), (Some(6), Some("unanswered")));
    let (code, v, err) = try_json(&dir, "good", &token).await;
    assert_eq!((code, v["reason"].as_str()), (Some(6), Some("jev_error")));
    assert!(!err.contains("jev-secret-token") && !stdout_has_token(&v));
    // Without the token: no call at all.
    let (code, v, _) = try_json(&dir, "good", &[]).await;
    assert_eq!(
        (code, v["reason"].as_str()),
        (Some(6), Some("not_configured"))
    );
    assert_eq!(stub.requests().len(), 4);
}

fn stdout_has_token(v: &Value) -> bool {
    v.to_string().contains("jev-secret-token")
}

/// The text can come on stdin (`-`), and the human output names each answer with its p and
/// margin, the rule and the action, saying nothing was delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_reads_the_text_from_stdin_and_prints_answers_rule_and_action() {
    use std::io::Write;
    let stub =
        StubServer::start(vec![answers(json!({"kind": {"bug": 0.85, "other": 0.15}}))]).await;
    let base = format!("{}/v1", stub.base_url());
    let (_data, dir) = judge_village(&base, Some("stub"), GOOD);
    let list = args(&[
        "judge",
        "try",
        "--data-dir",
        &dir,
        "--secrets",
        "env",
        "good",
        "-",
    ]);
    let out = tokio::task::spawn_blocking(move || {
        let mut child = crate::headless::command(list, true)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"The button does nothing\n")
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "kind = bug (p=0.85, margin=0.70)\nrule: 1\naction: relay to=[dev] (nothing delivered)\n"
    );
    assert!(
        stub.requests()[0]
            .body
            .to_string()
            .contains("The button does nothing"),
        "the text from stdin was judged"
    );
}
