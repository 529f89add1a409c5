//! `sessions` and `stats` through the binary over a village whose `sessions.redb` holds
//! generated conversations: list, show, export, fork (then export both and compare), delete
//! (refused without a terminal unless `--yes`); stats equal to a hand computation by agent,
//! model and stop, judges apart, periods; exit 4 while a process holds the village.

use fuseforks_core::sessions::{
    AgentMessage, Endpoint, Record, SessionStore, TurnRecord, TurnStop,
};
use fuseforks_testkit::TempDataDir;
use serde_json::{Value, json};

use crate::headless::stub_village;
use crate::{cli, stderr, stdout};

/// 2026-11-15 12:00 UTC.
const NOV: i64 = 1_794_744_000_000;
/// 2026-10-15 12:00 UTC.
const OCT: i64 = 1_792_065_600_000;

fn turn(agent: &str, model: &str, ts: i64, prompt: u64, completion: u64, stop: TurnStop) -> Record {
    Record::Turn(TurnRecord {
        agent_id: agent.into(),
        ts_ms: ts,
        hop: 0,
        rounds: 1,
        waves: 0,
        stop,
        prompt,
        cached: prompt / 10,
        completion,
        reasoning: 0,
        cache_write: 0,
        cache_write_1h: 0,
        model: model.into(),
        backend: "open_ai_compat".into(),
        elapsed_ms: 5,
        usage_unknown: false,
        skill: None,
    })
}

fn message(from: Endpoint, to: &str, text: &str, ts: i64) -> Record {
    Record::Message(AgentMessage::new(
        from,
        Endpoint::Agent { id: to.into() },
        text,
        0,
        ts,
    ))
}

/// A village (agent `rec`, judge `gate`) with two conversations; returns the data folder and
/// the first conversation's id.
fn village() -> (TempDataDir, String, String) {
    let data = TempDataDir::new();
    stub_village("http://127.0.0.1:9/v1")
        .world(|w| {
            w.judges
                .push(fuseforks_testkit::judge_spec("gate", "Gate", false));
        })
        .write(&data);
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let first = store.create("First", NOV).unwrap();
    let done = TurnStop::Completed;
    for record in [
        message(Endpoint::User, "rec", "Hello there", NOV),
        turn("rec", "model-a", NOV, 1000, 100, done.clone()),
        message(Endpoint::User, "rec", "Second request", NOV + 1),
        turn("gate", "model-b", NOV + 1, 300, 30, done.clone()),
        turn("rec", "model-a", NOV + 2, 2000, 200, TurnStop::ToolLimit),
    ] {
        store.append(&first, &record, NOV).unwrap();
    }
    let second = store.create("Old", OCT).unwrap();
    store
        .append(&second, &turn("rec", "model-b", OCT, 500, 50, done), OCT)
        .unwrap();
    drop(store);
    let dir = data.data_dir().display().to_string();
    (data, dir, first)
}

fn json_of(line: &str) -> Value {
    let out = cli(line);
    assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn sessions_list_show_export_fork_and_delete() {
    let (_data, dir, first) = village();
    let list = json_of(&format!("sessions list --data-dir {dir} --json"));
    let rows = list["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        (rows[0]["id"].as_str(), rows[0]["records"].as_u64()),
        (Some(first.as_str()), Some(5))
    );
    assert_eq!(rows[0]["tokens"], 1000 + 100 + 300 + 30 + 2000 + 200);
    let shown = cli(&format!("sessions show {first} --data-dir {dir}"));
    let text = stdout(&shown);
    assert!(
        text.contains("user -> agent:rec:\nHello there") && text.contains("#2 user"),
        "{text}"
    );
    let export = |id: &str| -> Vec<Value> {
        stdout(&cli(&format!("sessions export {id} --data-dir {dir}")))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let whole = export(&first);
    assert_eq!(whole.len(), 5);
    // Fork before the second request: the fork's export is the first two records.
    let forked = cli(&format!(
        "sessions fork {first} --before 2 --data-dir {dir}"
    ));
    assert_eq!(forked.status.code(), Some(0), "{}", stderr(&forked));
    let fork_id = stdout(&forked).trim().to_owned();
    let strip = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("seq");
        v
    };
    let part: Vec<Value> = export(&fork_id).iter().map(strip).collect();
    assert_eq!(part, whole[..2].iter().map(strip).collect::<Vec<_>>());
    // Export to a file: new only.
    let file = _data.data_dir().join("export.jsonl");
    let to_file = cli(&format!(
        "sessions export {first} --data-dir {dir} --out {}",
        file.display()
    ));
    assert_eq!(to_file.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 5);
    let again = cli(&format!(
        "sessions export {first} --data-dir {dir} --out {}",
        file.display()
    ));
    assert_eq!(again.status.code(), Some(11), "{}", stderr(&again));
    // Delete: refused without a terminal, then with --yes; an unknown id is 2.
    let refused = cli(&format!("sessions delete {fork_id} --data-dir {dir}"));
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("CONFIRMATION_REQUIRED"));
    assert_eq!(
        cli(&format!("sessions delete {fork_id} --data-dir {dir} --yes"))
            .status
            .code(),
        Some(0)
    );
    let gone = cli(&format!("sessions show {fork_id} --data-dir {dir}"));
    assert_eq!(gone.status.code(), Some(2));
    assert!(
        stderr(&gone).contains("SESSION_NOT_FOUND"),
        "{}",
        stderr(&gone)
    );
}

#[test]
fn stats_equal_a_hand_computation_by_agent_model_and_stop() {
    let (data, dir, _) = village();
    let by_agent = json_of(&format!("stats --data-dir {dir} --json --by agent"));
    let row = |v: &Value, name: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap()
    };
    let rec = row(&by_agent, "rec");
    assert_eq!(
        (
            rec["turns"].as_u64(),
            rec["prompt"].as_u64(),
            rec["completion"].as_u64()
        ),
        (Some(3), Some(3500), Some(350))
    );
    // Effective = uncached + cached × 0.1 + output × 4, per record.
    let eff = |p: u64, c: u64| (p - p / 10) + (p / 10) / 10 + c * 4;
    assert_eq!(
        rec["effective"],
        eff(1000, 100) + eff(2000, 200) + eff(500, 50)
    );
    assert_eq!(row(&by_agent, "gate")["kind"], "judge", "judge rows apart");
    assert_eq!(by_agent["totals"]["turns"], 4);
    let by_stop = json_of(&format!("stats --data-dir {dir} --json --by stop"));
    assert_eq!(row(&by_stop, "tool_limit")["turns"], 1);
    let by_model = json_of(&format!("stats --data-dir {dir} --json --by model"));
    assert_eq!(row(&by_model, "model-b")["prompt"], 800);
    let november = json_of(&format!("stats --data-dir {dir} --json --period 2026-11"));
    assert_eq!(november["totals"]["turns"], 3, "October's turn is outside");
    let text = stdout(&cli(&format!("stats --data-dir {dir}")));
    assert!(
        text.contains("gate (judge)") && text.contains("total: 4 turns"),
        "{text}"
    );
    let bad = cli(&format!("stats --data-dir {dir} --period 2026-13"));
    assert_eq!(bad.status.code(), Some(2));
    // A process holds the village: exit 4.
    let _held = fuseforks_host::lock::VillageLock::acquire(&data.workspace()).unwrap();
    assert_eq!(
        cli(&format!("stats --data-dir {dir}")).status.code(),
        Some(4)
    );
    assert_eq!(
        cli(&format!("sessions list --data-dir {dir}"))
            .status
            .code(),
        Some(4)
    );
}

/// `ask --resume ID` continues that conversation (not the newest); an unknown id is exit 2
/// and nothing is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_resume_continues_a_named_conversation() {
    use fuseforks_core::llm::Wire;
    use fuseforks_testkit::stub::StubServer;
    use fuseforks_testkit::wire_replies;
    let stub = StubServer::start(vec![wire_replies::text(
        Wire::OpenAiCompat,
        "resumed",
        crate::headless::U,
    )])
    .await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let older = store.create("Older", NOV).unwrap();
    store
        .append(
            &older,
            &message(Endpoint::User, "rec", "the first words", NOV),
            NOV,
        )
        .unwrap();
    let newer = store.create("Newer", NOV + 10).unwrap();
    store
        .append(
            &newer,
            &message(Endpoint::User, "rec", "other words", NOV + 10),
            NOV + 10,
        )
        .unwrap();
    drop(store);
    let dir = data.data_dir().display().to_string();
    let unknown = crate::headless::run(
        crate::words(&format!(
            "ask --data-dir {dir} --start reception --secrets env --resume nope hi"
        )),
        true,
    )
    .await;
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains("SESSION_NOT_FOUND"),
        "{}",
        stderr(&unknown)
    );
    assert!(stub.requests().is_empty(), "nothing sent");
    let out = crate::headless::run(
        crate::words(&format!(
            "ask --data-dir {dir} --start reception --secrets env --resume {older} again"
        )),
        true,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "resumed");
    let sent = stub.requests()[0].body.to_string();
    assert!(
        !sent.contains("other words"),
        "the newest conversation's history was read: {sent}"
    );
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let records = store.records(&older).unwrap();
    assert!(
        records.len() > 1,
        "the turn was recorded in the resumed conversation"
    );
    assert_eq!(
        store.records(&newer).unwrap().len(),
        1,
        "the newest was left alone"
    );
}

/// `ask --output json`: one object on stdout with the answer, outcome, exit code, the stored
/// conversation, the turns and tokens the request spent and the elapsed time; without an
/// answer, the same object with `answer: null` and the exit code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_output_json_is_one_result_object() {
    use fuseforks_core::llm::Wire;
    use fuseforks_testkit::stub::{StubReply, StubServer};
    use fuseforks_testkit::wire_replies;
    let stub = StubServer::start(vec![
        wire_replies::text(Wire::OpenAiCompat, "the answer", crate::headless::U),
        StubReply::json(
            401,
            &json!({"error": {"message": "bad key", "type": "invalid_request_error"}}),
        ),
    ])
    .await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let dir = data.data_dir().display().to_string();
    let line = format!("ask --data-dir {dir} --start reception --secrets env --output json hello");
    let out = crate::headless::run(crate::words(&line), true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (
            result["answer"].as_str(),
            result["outcome"].as_str(),
            result["exitCode"].as_u64()
        ),
        (Some("the answer"), Some("answered"), Some(0))
    );
    assert_eq!(result["turns"], 1);
    let u = crate::headless::U;
    assert_eq!(
        (
            result["usage"]["prompt"].as_u64(),
            result["usage"]["completion"].as_u64()
        ),
        (Some(u.prompt), Some(u.completion))
    );
    assert!(
        result["sessionId"].is_string() && result["elapsedMs"].is_u64(),
        "{result}"
    );
    let failed = crate::headless::run(crate::words(&line), true).await;
    let result: Value = serde_json::from_str(&stdout(&failed)).unwrap();
    assert_eq!(failed.status.code(), Some(6), "{}", stderr(&failed));
    assert_eq!(
        (result["answer"].clone(), result["exitCode"].as_u64()),
        (Value::Null, Some(6))
    );
    assert!(
        stderr(&failed).contains("LLM_HTTP"),
        "the cause is still said on stderr"
    );
}

/// `ask --output stream-json`: a line per tool call (with `run`'s exit code) and per answer
/// piece as they happen, then the result object; `--stream`: the pieces as text, one line end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_streams_json_lines_and_text_pieces() {
    use fuseforks_core::llm::Wire;
    use fuseforks_testkit::stub::{StubReply, StubServer};
    use fuseforks_testkit::wire_replies::{self, ScriptCall};
    let piece = |t: &str| json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]});
    let done = json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11}});
    let run = ScriptCall {
        id: "r1".into(),
        name: "run".into(),
        args: json!({"command": "sh", "args": ["-c", "exit 3"]}),
    };
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(Wire::OpenAiCompat, &[run], crate::headless::U),
        StubReply::sse(&[piece("Al"), piece("l done."), done.clone()]),
        StubReply::sse(&[piece("Sec"), piece("ond."), done]),
    ])
    .await;
    let data = TempDataDir::new();
    let work = TempDataDir::new();
    let at = work.data_dir().display().to_string();
    stub_village(stub.base_url())
        .world(|w| {
            w.model_templates[0].streaming = true;
            w.agents[0].work_dir = Some(at);
            w.agents[0].enabled_tools = Some(vec!["run".into()]);
        })
        .write(&data);
    data.write(
        "agents/rec/run.json",
        r#"{"version": 1, "allow": ["sh *"], "deny": []}"#,
    );
    let dir = data.data_dir().display().to_string();
    let line =
        format!("ask --data-dir {dir} --start reception --secrets env --output stream-json go");
    let out = crate::headless::run(crate::words(&line), true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["tool", "delta", "delta", "result"], "{lines:?}");
    assert_eq!(
        (lines[0]["tool"].as_str(), lines[0]["exitCode"].as_i64()),
        (Some("run"), Some(3))
    );
    assert_eq!(
        (lines[1]["text"].as_str(), lines[2]["text"].as_str()),
        (Some("Al"), Some("l done."))
    );
    assert_eq!(lines[3]["answer"], "All done.");
    let text = format!("ask --data-dir {dir} --start reception --secrets env --stream again");
    let out = crate::headless::run(crate::words(&text), true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Second.\n", "the pieces, then one line end");
}
