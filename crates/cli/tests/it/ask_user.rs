//! `ask_user` through the binary: headless `ask` ends with the question (exit 15, the
//! question on stdout, the conversation named, the state in `sessions.redb`), `ask --resume ID`
//! hands the answer back as the tool's result in a new process, refusals of a conversation
//! not waiting; `serve`'s door has no person (the model reads so); the GUI's person answers
//! over real HTTP.

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{Record, SessionStore, StoredRecord};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{TempDataDir, TestVillage};
use serde_json::{Value, json};

use crate::headless::{U, ask_args, run};
use crate::{stderr, stdout};

/// The reception `rec`, offered `ask_user`, on the stub.
fn village(data: &TempDataDir, stub: &str, budget: Option<u64>) {
    TestVillage::builder()
        .stub(Wire::OpenAiCompat, stub)
        .agent_with("rec", "Reception", |a| {
            a.enabled_tools = Some(vec!["ask_user".into()]);
        })
        .reception("rec")
        .budget(budget)
        .write(data);
}

fn asks(id: &str, question: &str, choices: &[&str]) -> fuseforks_testkit::stub::StubReply {
    wire_replies::tool_calls(
        Wire::OpenAiCompat,
        &[ScriptCall {
            id: id.into(),
            name: "ask_user".into(),
            args: json!({"question": question, "choices": choices, "reason": "the person decides"}),
        }],
        U,
    )
}

/// The JSON lines of a `--events jsonl` stderr.
fn lines(out: &std::process::Output) -> Vec<Value> {
    stderr(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?} ({e})")))
        .collect()
}

/// The tool message of a chat-completions request that answers `call_id`.
fn tool_result(body: &Value, call_id: &str) -> Option<String> {
    body["messages"].as_array()?.iter().find_map(|m| {
        (m["role"] == "tool" && m["tool_call_id"] == call_id)
            .then(|| m["content"].as_str().unwrap_or_default().to_owned())
    })
}

/// The whole round trip across two processes: the question ends the first `ask` (exit 15,
/// stdout the question and its choices, the typed `questionAsked` and `NEEDS_INPUT` naming
/// the conversation, a `question` record on disk after the process ended); `ask --resume ID
/// --answer` sends the answer back as the `ask_user` call's result after the turn's own
/// messages, and the turn answers (exit 0). The conversation then waits for nothing: a second
/// `--answer` is refused with exit 2 and nothing sent; an unknown id is exit 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_ends_ask_with_15_and_resume_hands_the_answer_back() {
    let stub = StubServer::start(vec![
        asks("q-1", "Which colour?", &["red", "blue"]),
        wire_replies::text(Wire::OpenAiCompat, "Painted it blue.", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), Some(1_000_000));
    let dir = data.data_dir().display().to_string();
    let first = run(
        ask_args(&dir, &["--events", "jsonl"], "Paint the fence"),
        true,
    )
    .await;
    assert_eq!(first.status.code(), Some(15), "{}", stderr(&first));
    assert_eq!(stdout(&first), "Which colour?\n- red\n- blue\n");
    let events = lines(&first);
    let asked = events
        .iter()
        .find(|v| v["type"] == "questionAsked")
        .unwrap_or_else(|| panic!("no questionAsked: {events:?}"));
    let question = &asked["question"];
    assert_eq!(question["question"], "Which colour?");
    assert_eq!(question["choices"], json!(["red", "blue"]));
    assert_eq!(question["agentId"], "rec");
    let session = question["sessionId"].as_str().unwrap().to_owned();
    let needs = events
        .iter()
        .find(|v| v["code"] == "NEEDS_INPUT")
        .unwrap_or_else(|| panic!("no NEEDS_INPUT: {events:?}"));
    assert!(
        needs["message"].as_str().unwrap().contains(&session)
            && needs["fix"].as_str().unwrap().contains("--resume"),
        "{needs}"
    );
    // The waiting turn lives on disk, not in the ended process.
    {
        let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
        let kinds: Vec<String> = store
            .records(&session)
            .unwrap()
            .into_iter()
            .map(|(_, r)| match r {
                StoredRecord::Known(r) => r.kind().to_owned(),
                StoredRecord::Unknown { kind } => kind,
            })
            .collect();
        assert!(
            kinds.ends_with(&["turn".into(), "message".into(), "question".into()]),
            "{kinds:?}"
        );
    }
    let resumed = run(
        ask_args(&dir, &["--resume", &session, "--answer"], "blue"),
        true,
    )
    .await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(stdout(&resumed).trim(), "Painted it blue.");
    let requests = stub.requests();
    assert_eq!(requests.len(), 2);
    let body = &requests[1].body;
    assert_eq!(tool_result(body, "q-1").as_deref(), Some("blue"), "{body}");
    let text = body.to_string();
    assert!(
        text.contains("Paint the fence"),
        "the turn's own request goes on: {text}"
    );
    // The turn's record closed the question: answering again is refused, nothing sent.
    let again = run(
        ask_args(&dir, &["--resume", &session, "--answer"], "red"),
        true,
    )
    .await;
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("QUESTION_NOT_PENDING"),
        "{}",
        stderr(&again)
    );
    let unknown = run(ask_args(&dir, &["--resume", "nope", "--answer"], "x"), true).await;
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(stderr(&unknown).contains("SESSION_NOT_FOUND"));
    assert_eq!(stub.requests().len(), 2, "no refusal sent anything");
}

/// `--output json` carries the typed outcome: `needs_input`, exit code 15, the question and
/// the session; a plain `--resume` (without `--answer`) of the waiting conversation answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_json_names_the_question_and_plain_resume_answers_it() {
    let stub = StubServer::start(vec![
        asks("q-9", "Overwrite the report?", &[]),
        wire_replies::text(Wire::OpenAiCompat, "Left it alone.", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let first = run(ask_args(&dir, &["--output", "json"], "Tidy up"), true).await;
    assert_eq!(first.status.code(), Some(15), "{}", stderr(&first));
    let result: Value = serde_json::from_str(&stdout(&first)).unwrap();
    assert_eq!(result["outcome"], "needs_input");
    assert_eq!(result["exitCode"], 15);
    assert_eq!(result["answer"], Value::Null);
    assert_eq!(result["question"]["question"], "Overwrite the report?");
    let session = result["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(result["question"]["sessionId"], session.as_str());
    let resumed = run(ask_args(&dir, &["--resume", &session], "no"), true).await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    assert_eq!(stdout(&resumed).trim(), "Left it alone.");
    assert_eq!(
        tool_result(&stub.requests()[1].body, "q-9").as_deref(),
        Some("no")
    );
}

/// What `ask` then `ask --resume` reserve for their model calls on this village (the
/// `intent` records' reservations), and what the first call was charged.
async fn calibrate() -> (u64, u64, u64) {
    let stub = StubServer::start(vec![
        asks("q-2", "Go on?", &[]),
        wire_replies::text(Wire::OpenAiCompat, "Went on.", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), Some(1_000_000));
    let dir = data.data_dir().display().to_string();
    let session = asked_session(&dir).await;
    let resumed = run(ask_args(&dir, &["--resume", &session], "yes"), true).await;
    assert_eq!(resumed.status.code(), Some(0), "{}", stderr(&resumed));
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let (mut reserved, mut left) = (Vec::new(), None);
    for (_, record) in store.records(&session).unwrap() {
        match record {
            StoredRecord::Known(Record::Intent(i)) => reserved.push(i.reserved),
            StoredRecord::Known(Record::Question(q)) => left = q.budget_left,
            _ => {}
        }
    }
    let charged = 1_000_000 - left.expect("the question record says what was left");
    (reserved[0], reserved[1], charged)
}

/// `ask` on `dir` that ends with a question; its conversation.
async fn asked_session(dir: &str) -> String {
    let first = run(ask_args(dir, &["--output", "json"], "Work"), true).await;
    assert_eq!(first.status.code(), Some(15), "{}", stderr(&first));
    let result: Value = serde_json::from_str(&stdout(&first)).unwrap();
    result["sessionId"].as_str().unwrap().to_owned()
}

/// A resumed turn counts against the asking request's causal root: it may spend only what
/// that root had left when it asked (the `question` record's `budgetLeft`), not a fresh
/// `tokenBudget`. With a budget that a fresh root would find enough for the resumed call but
/// the asking root no longer has, the call is refused (exit 9) and nothing is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_turn_spends_only_what_the_asking_root_had_left() {
    let (first, second, charged) = calibrate().await;
    assert!(charged > 0);
    let ceiling = first.max(second);
    let stub = StubServer::start(vec![
        asks("q-2", "Go on?", &[]),
        wire_replies::text(Wire::OpenAiCompat, "never sent", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), Some(ceiling));
    let dir = data.data_dir().display().to_string();
    let session = asked_session(&dir).await;
    let resumed = run(ask_args(&dir, &["--resume", &session], "yes"), true).await;
    assert_eq!(resumed.status.code(), Some(9), "{}", stderr(&resumed));
    assert_eq!(stub.requests().len(), 1, "the resumed call was not sent");
}

/// `serve` has no person: a scheduled turn's `ask_user` gets an error result saying so (the
/// model reads it and goes on, here answering), nothing waits, and the turn completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_serve_a_schedule_s_question_finds_no_person_and_the_turn_goes_on() {
    use crate::serve_schedules::{overdue_daily, serve, write_schedules};
    let stub = StubServer::start(vec![
        asks("q-3", "Which note?", &["short", "long"]),
        wire_replies::text(Wire::OpenAiCompat, "Wrote the short one.", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let (schedule, _) = overdue_daily();
    write_schedules(&data, &json!([schedule]));
    let dir = data.data_dir().display().to_string();
    let mut serving = serve(&dir);
    crate::headless::wait_log(&data, "turn: agent=rec").await;
    let requests = stub.requests();
    assert_eq!(requests.len(), 2, "the turn went on after the question");
    let result = tool_result(&requests[1].body, "q-3").unwrap();
    assert!(result.contains("No person is present"), "{result}");
    let log = crate::headless::log(&data);
    assert!(log.contains("name=ask_user ok=false"), "{log}");
    assert!(
        log.lines()
            .any(|l| l.contains("turn: agent=rec") && l.contains("stop=- ")),
        "the scheduled turn completed: {log}"
    );
    let out = crate::headless::signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

async fn until(what: &str, check: impl FnMut() -> bool) {
    fuseforks_testkit::eventually(what, fuseforks_testkit::DEADLINE, check).await;
}

/// The GUI's person answers over real HTTP (`fuseforks-cli gui`): the question waits, listed
/// by `GET /api/questions` with its choices; `answerQuestion` hands the answer back as the
/// tool's result and the turn answers; answering again is `409 QUESTION_NOT_PENDING`. An
/// interrupt withdraws a waiting question: it is no longer listed, answering it is refused,
/// and the turn makes no further call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gui_s_person_answers_a_waiting_question_over_http() {
    use crate::gui::{cookie, get, post, start};
    let stub = StubServer::start(vec![
        asks("q-g", "Which file?", &["a.txt", "b.txt"]),
        wire_replies::text(Wire::OpenAiCompat, "Opened b.txt.", U),
        asks("q-h", "Still there?", &[]),
        wire_replies::text(Wire::OpenAiCompat, "never sent", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let mut gui = start(&data, &[]);
    let (port, cookie) = (gui.port, cookie(&gui));
    let host = format!("127.0.0.1:{port}");
    let origin = format!("http://{host}");
    let command = |body: Value| {
        let (status, _, text) = post(port, &cookie, Some(&origin), &body);
        (
            status,
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
        )
    };
    let questions = || {
        let (_, _, text) = get(port, &host, "/api/questions", Some(&cookie));
        serde_json::from_str::<Value>(&text).unwrap()["questions"].clone()
    };
    assert_eq!(
        command(json!({"type": "startAgent", "agentId": "rec"})).0,
        200
    );
    let send = json!({"type": "sendMessage", "agentId": "rec", "text": "Open the right file"});
    assert_eq!(command(send).0, 200);
    until("the question", || {
        questions().as_array().is_some_and(|q| !q.is_empty())
    })
    .await;
    let asked = questions()[0].clone();
    assert_eq!(asked["question"], "Which file?");
    assert_eq!(asked["choices"], json!(["a.txt", "b.txt"]));
    assert_eq!(asked["agentId"], "rec");
    let id = asked["questionId"].as_str().unwrap().to_owned();
    let answer = json!({"type": "answerQuestion", "questionId": id, "answer": "b.txt"});
    assert_eq!(command(answer.clone()).0, 200);
    until("the turn's answer", || {
        let (_, _, chat) = get(port, &host, "/api/chat/rec", Some(&cookie));
        chat.contains("Opened b.txt.")
    })
    .await;
    assert_eq!(
        tool_result(&stub.requests()[1].body, "q-g").as_deref(),
        Some("b.txt")
    );
    let (status, again) = command(answer);
    assert_eq!(status, 409, "{again}");
    assert_eq!(again["error"]["code"], "QUESTION_NOT_PENDING");
    assert_eq!(questions(), json!([]));
    // An interrupt withdraws a waiting question.
    let send = json!({"type": "sendMessage", "agentId": "rec", "text": "Carry on"});
    assert_eq!(command(send).0, 200);
    until("the second question", || {
        questions().as_array().is_some_and(|q| !q.is_empty())
    })
    .await;
    let id = questions()[0]["questionId"].as_str().unwrap().to_owned();
    assert_eq!(
        command(json!({"type": "interrupt", "agentId": "rec"})).0,
        200
    );
    until("the withdrawal", || questions() == json!([])).await;
    let late = json!({"type": "answerQuestion", "questionId": id, "answer": "yes"});
    assert_eq!(command(late).0, 409);
    let log = || crate::headless::log(&data);
    until("the turn's end", || {
        log().matches("turn: agent=rec").count() == 2
    })
    .await;
    assert_eq!(stub.requests().len(), 3, "no call after the interrupt");
    assert!(log().contains("question withdrawn: agent=rec"), "{}", log());
    let out = crate::headless::signal_and_wait(&mut gui.child, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Only the turn a person started may ask: a servant the reception delegated to gets an
/// error result telling it to put the question in its answer, and the request still ends
/// answered (exit 0), never waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegated_turn_cannot_ask_the_person() {
    let delegate = ScriptCall {
        id: "d-1".into(),
        name: "ask_b2".into(),
        args: json!({"message": "Find the colour"}),
    };
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(Wire::OpenAiCompat, &[delegate], U),
        asks("q-4", "Which colour?", &[]),
        wire_replies::text(Wire::OpenAiCompat, "Which colour do you want?", U),
        wire_replies::text(Wire::OpenAiCompat, "The helper needs the colour.", U),
    ])
    .await;
    let data = TempDataDir::new();
    TestVillage::builder()
        .stub(Wire::OpenAiCompat, stub.base_url())
        .agent_with("rec", "Reception", |a| {
            a.enabled_tools = Some(vec!["ask_user".into()]);
            a.connected_agents = vec![fuseforks_core::village::AgentId::new("b2").unwrap()];
        })
        .agent_with("b2", "Bo", |a| {
            a.enabled_tools = Some(vec!["ask_user".into()]);
        })
        .reception("rec")
        .write(&data);
    let dir = data.data_dir().display().to_string();
    let mut all = crate::words(&format!(
        "ask --data-dir {dir} --start rec,b2 --secrets env"
    ));
    all.push("Paint it".into());
    let out = run(all, true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "The helper needs the colour.");
    let requests = stub.requests();
    assert_eq!(requests.len(), 4);
    let result = tool_result(&requests[2].body, "q-4").unwrap();
    assert!(result.contains("asked for by another agent"), "{result}");
}
