//! The drafting assistant's replies at their edges: text beside a draft goes along with it, a
//! second question after an answered one, a question in a judge's check rounds, an empty answer
//! (the refused draft given back, else `ASSIST_EMPTY`), a forced draft that still asks on a
//! wire never forced, and Memory.md and Ordinance.md never sent.

use fuseforks_core::Coded;
use fuseforks_core::assist::{AssistReply, DraftKind};
use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::Record;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::assist::{U, ask, open, records, request, submit, with_gate};
use crate::orch_support::Village;

/// On a wire that is never forced (Anthropic), a forced draft that still brings text alone is
/// a question: such a wire is never promised a draft.
#[tokio::test]
async fn a_fallback_that_still_asks_is_a_question() {
    let wire = Wire::Anthropic;
    let stub = StubServer::start(vec![wire_replies::text(wire, "Formal or casual?", U)]).await;
    let v = Village::new(wire, stub.base_url(), None);
    let orch = open(&v);
    let mut req = request(DraftKind::Construct, "a1", None);
    req.force_draft = true;
    let reply = ask(&orch, &req).await;
    assert_eq!(reply.kind(), "question", "{reply:?}");
    assert!(stub.requests()[0].body["tool_choice"].get("name").is_none());
    assert!(
        v.log().contains("forced=fallback outcome=question"),
        "{}",
        v.log()
    );
}

/// Neither text nor a call is no reply: `ASSIST_EMPTY` (the call still logged and recorded as
/// `outcome=empty`), and the message sent is not in any history.
#[tokio::test]
async fn neither_text_nor_a_call_is_assist_empty() {
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![wire_replies::text(wire, "", U)]).await;
    let v = Village::new(wire, stub.base_url(), None);
    let orch = open(&v);
    let e = orch
        .assist_draft(
            &request(DraftKind::Skill, "a1", Some("hi")),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), "ASSIST_EMPTY", "{e}");
    assert!(
        v.log().contains("attempt=1 forced=no outcome=empty"),
        "{}",
        v.log()
    );
    let kept: Vec<String> = records(&orch)
        .into_iter()
        .filter_map(|r| match r {
            Record::Assist(a) => Some(a.outcome),
            _ => None,
        })
        .collect();
    assert_eq!(kept, ["empty"], "its usage is still counted");
}

/// A judge draft the parser refuses, then an empty answer: the refused draft comes back
/// (`valid: false`, the round it was checked in), never lost; the history stays well-formed.
#[tokio::test]
async fn an_empty_answer_after_a_refused_draft_gives_that_draft() {
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(wire, &[submit("[questions.x]\nkind = 7\n")], U),
        wire_replies::text(wire, "", U),
        wire_replies::text(wire, "Which servants?", U),
    ])
    .await;
    let v = Village::new(wire, stub.base_url(), None);
    with_gate(&v);
    let orch = open(&v);
    let mut req = request(DraftKind::Judge, "gate", Some("route bugs"));
    let reply = ask(&orch, &req).await;
    let AssistReply::Draft {
        content,
        validation,
        attempts,
        appended,
        ..
    } = reply
    else {
        panic!("the refused draft, got {reply:?}")
    };
    assert_eq!(content, "[questions.x]\nkind = 7\n");
    assert_eq!((attempts, validation.map(|v| v.valid)), (1, Some(false)));
    assert_eq!(
        appended.len(),
        3,
        "the message, the draft's call and its finding; the empty answer left out"
    );
    let log = v.log();
    assert!(log.contains("attempt=1 forced=no outcome=invalid"), "{log}");
    assert!(
        log.contains("attempt=2 forced=no outcome=draft_invalid"),
        "{log}"
    );
    // The next exchange goes on from it: the history is accepted and sent.
    req.history = appended;
    req.input = Some("again".into());
    assert_eq!(ask(&orch, &req).await.kind(), "question");
    assert_eq!(stub.requests().len(), 3);
}

/// An answer with text and a `submit_draft` call is a draft, the text going along beside it.
#[tokio::test]
async fn text_beside_a_draft_goes_along_with_it() {
    let body = json!({
        "id": "chatcmpl-stub", "object": "chat.completion", "model": "stub-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Here is a first draft.",
            "tool_calls": [{"id": "d1", "type": "function", "function": {
                "name": "submit_draft",
                "arguments": json!({"content": "Be brief.\n"}).to_string()}}]}}],
        "usage": {"prompt_tokens": 700, "completion_tokens": 60, "total_tokens": 760}
    });
    let stub = StubServer::start(vec![fuseforks_testkit::stub::StubReply::json(200, &body)]).await;
    let v = Village::new(Wire::OpenAiCompat, stub.base_url(), None);
    let orch = open(&v);
    let reply = ask(&orch, &request(DraftKind::Skill, "a1", Some("x"))).await;
    let AssistReply::Draft {
        text,
        content,
        notes,
        ..
    } = reply
    else {
        panic!("a draft, got {reply:?}")
    };
    assert_eq!(
        (text.as_deref(), content.as_str(), notes),
        (Some("Here is a first draft."), "Be brief.\n", None)
    );
    assert!(v.log().contains("outcome=draft"), "{}", v.log());
}

/// The agent's Memory.md and the village's Ordinance.md are never sent to the assistant
/// (its other file is, as a village fact).
#[tokio::test]
async fn memory_and_the_ordinance_stay_out_of_the_context() {
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![wire_replies::text(wire, "Which tone?", U); 2]).await;
    let v = Village::new(wire, stub.base_url(), None);
    let store = v.store();
    store.write_ordinance("ordinance-canary-71c\n").unwrap();
    let a1 = fuseforks_core::village::AgentId::new("a1").unwrap();
    store
        .agent_files(&a1)
        .unwrap()
        .write_memory("memory-canary-0d4\n")
        .unwrap();
    let orch = open(&v);
    for kind in [DraftKind::Skill, DraftKind::Construct] {
        ask(&orch, &request(kind, "a1", Some("hi"))).await;
    }
    for sent in stub.requests() {
        let body = String::from_utf8_lossy(&sent.raw_body).into_owned();
        assert!(body.contains("Village facts"), "the context was sent");
        assert!(!body.contains("memory-canary-0d4"), "Memory.md was sent");
        assert!(
            !body.contains("ordinance-canary-71c"),
            "Ordinance.md was sent"
        );
    }
}

/// A second question after the first was answered, then a draft: each round goes on from the
/// history; and in a judge's check rounds, a question after a refused draft goes back to the
/// conversation with the refused draft and its finding kept in `appended`.
#[tokio::test]
async fn a_question_on_the_second_round_works() {
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::text(wire, "Which tone?", U),
        wire_replies::text(wire, "How long?", U),
        wire_replies::tool_calls(wire, &[submit("Be warm.\n")], U),
        wire_replies::tool_calls(wire, &[submit("[questions.x]\nkind = 7\n")], U),
        wire_replies::text(wire, "Which servants may it route to?", U),
    ])
    .await;
    let v = Village::new(wire, stub.base_url(), None);
    with_gate(&v);
    let orch = open(&v);
    let mut req = request(DraftKind::Construct, "a1", Some("a greeter"));
    let mut texts = Vec::new();
    for answer in ["warm", "short"] {
        let AssistReply::Question { appended, text } = ask(&orch, &req).await else {
            panic!("a question")
        };
        texts.push(text);
        req.history.extend(appended);
        req.input = Some(answer.into());
    }
    assert_eq!(texts, ["Which tone?", "How long?"]);
    let reply = ask(&orch, &req).await;
    assert_eq!(reply.kind(), "draft", "{reply:?}");
    let third = String::from_utf8_lossy(&stub.requests()[2].raw_body).into_owned();
    assert!(
        third.contains("Which tone?") && third.contains("How long?") && third.contains("short"),
        "both rounds went back: {third}"
    );
    // The judge: round 1 refused, round 2 a question.
    let reply = ask(&orch, &request(DraftKind::Judge, "gate", Some("route"))).await;
    let AssistReply::Question { appended, text } = reply else {
        panic!("a question, got {reply:?}")
    };
    assert_eq!(text, "Which servants may it route to?");
    let kept = serde_json::to_string(&appended).unwrap();
    assert!(
        kept.contains("kind = 7") && kept.contains("failed the parser's check at "),
        "the refused draft and its finding stay: {kept}"
    );
    let log = v.log();
    assert!(
        log.contains("kind=judge model=stub-model attempt=2 forced=no outcome=question"),
        "{log}"
    );
}
