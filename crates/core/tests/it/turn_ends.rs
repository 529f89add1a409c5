//! How a turn ends when it does not answer: a turn that cannot run, a failed call (status,
//! class, reason), the repeat guard, the tool-round cap, empty answers and their events.

use crate::orch_support::{API_KEY, Village};
use crate::orchestrator::{U1, call, records};
use fuseforks_core::llm::Wire;
use fuseforks_core::orchestrator::PlanTaskState;
use fuseforks_core::sessions::{Endpoint, Record, TurnStop};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::json;

#[tokio::test]
async fn a_turn_that_cannot_run_is_recorded_as_failed_without_a_call() {
    let stub = StubServer::start(vec![]).await;
    let v = Village::new(Wire::OpenAiCompat, stub.base_url(), None);
    let mut world = v.store().load_world().unwrap().value;
    world.model_templates[0].id = fuseforks_core::village::TemplateId::new("nokey").unwrap();
    for a in &mut world.agents {
        a.model_template_id = fuseforks_core::village::TemplateId::new("nokey").unwrap();
    }
    v.store().save_world(&world).unwrap();
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, "hello")
        .await
        .unwrap();
    assert_eq!(
        outcome.stop,
        TurnStop::Failed {
            code: "LLM_KEY_MISSING".into(),
            status: None,
            class: None,
        }
    );
    assert_eq!(outcome.state(), PlanTaskState::NoAnswer);
    let failure = outcome.failure.as_ref().unwrap();
    assert_eq!(
        (failure.code.as_str(), failure.template.as_deref()),
        ("LLM_KEY_MISSING", Some("nokey"))
    );
    assert!(failure.message.contains("nokey"), "{}", failure.message);
    assert!(stub.requests().is_empty());
    assert!(v.log().contains("stop=failed:LLM_KEY_MISSING"));
    assert_eq!(
        orch.start_agent("ghost").unwrap_err().code(),
        "AGENT_NOT_FOUND"
    );
}

#[tokio::test]
async fn a_failed_call_records_its_status_and_class_and_says_why() {
    let stub = StubServer::start(vec![wire_replies::error(
        Wire::OpenAiCompat,
        401,
        &format!("Incorrect API key provided: {API_KEY}"),
        None,
    )])
    .await;
    let v = Village::new(Wire::OpenAiCompat, stub.base_url(), None);
    let orch = v.open();
    let mut events = orch.events();
    orch.start_agent("a1").unwrap();
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, "hello")
        .await
        .unwrap();
    let stop = TurnStop::Failed {
        code: "LLM_HTTP".into(),
        status: Some(401),
        class: Some("auth".into()),
    };
    assert_eq!(outcome.stop, stop);
    let turn = records(&v, &orch)
        .into_iter()
        .find_map(|r| match r {
            Record::Turn(t) => Some(t),
            _ => None,
        })
        .unwrap();
    assert_eq!(turn.stop, stop, "the record keeps status and class");
    let failure = outcome.failure.unwrap();
    let host = stub.base_url().trim_start_matches("http://");
    assert_eq!(failure.host.as_deref(), Some(host));
    assert!(!failure.line().contains(API_KEY) && !failure.line().contains("Incorrect"));
    let mut failed = Vec::new();
    while let Ok(e) = events.try_recv() {
        let v = serde_json::to_value(&e).unwrap();
        if v["type"] == "agentFailed" {
            failed.push(v);
        }
    }
    assert_eq!(failed.len(), 1, "a failed turn emits agentFailed once");
    assert_eq!(
        (
            &failed[0]["status"],
            &failed[0]["class"],
            &failed[0]["host"]
        ),
        (&json!(401), &json!("auth"), &json!(host))
    );
    assert!(
        v.log().contains("stop=failed:LLM_HTTP") && v.log().contains("status=401 class=auth"),
        "{}",
        v.log()
    );
}

#[tokio::test]
async fn repeats_tool_limits_empty_answers_and_events() {
    let wire = Wire::OpenAiCompat;
    let same =
        || wire_replies::tool_calls(wire, &[call("c", "grep", json!({"pattern": "same"}))], U1);
    let stub = StubServer::start(vec![
        same(),
        same(),
        same(),
        wire_replies::text(wire, "", U1),
    ])
    .await;
    let v = Village::new(wire, stub.base_url(), None);
    let orch = v.open();
    let mut events = orch.events();
    orch.start_agent("a1").unwrap();
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, "loop please")
        .await
        .unwrap();
    assert_eq!(
        outcome.stop,
        TurnStop::Repeat {
            tool: "grep".into()
        }
    );
    assert_eq!(
        stub.requests().len(),
        3,
        "the third identical call stops the turn"
    );
    assert!(
        outcome.answer.as_deref().is_some_and(|a| !a.is_empty()),
        "a non-empty answer is returned"
    );
    assert!(
        v.log()
            .contains("tool blocked: agent=a1 round=3 name=grep repeats=2"),
        "{}",
        v.log()
    );
    assert!(v.log().contains("stop=repeat:grep"));

    let empty = orch
        .deliver_and_wait("a1", Endpoint::User, "say nothing")
        .await
        .unwrap();
    assert_eq!(
        empty.answer.as_deref(),
        Some("(The model returned an empty answer. Please ask again.)")
    );

    let mut seen = Vec::new();
    while let Ok(e) = events.try_recv() {
        seen.push(
            serde_json::to_value(&e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    for kind in [
        "agentStatusChanged",
        "agentTyping",
        "toolInvoked",
        "toolRepeatBlocked",
        "messageSent",
        "turnRecorded",
        "agentStatsUpdated",
    ] {
        assert!(
            seen.iter().any(|s| s == kind),
            "{kind} missing from {seen:?}"
        );
    }
}

#[tokio::test]
async fn the_tool_round_cap_stops_a_turn() {
    let wire = Wire::OpenAiCompat;
    let round = |n: u32| {
        wire_replies::tool_calls(
            wire,
            &[call(
                &format!("c{n}"),
                "grep",
                json!({"pattern": format!("p{n}")}),
            )],
            U1,
        )
    };
    let stub = StubServer::start((0..5).map(round).collect()).await;
    let v = Village::new(wire, stub.base_url(), None);
    let mut world = v.store().load_world().unwrap().value;
    world.agents[0].max_tool_iterations = Some(2);
    v.store().save_world(&world).unwrap();
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, "go on")
        .await
        .unwrap();
    assert_eq!(outcome.stop, TurnStop::ToolLimit);
    assert_eq!(outcome.state(), PlanTaskState::ToolLimit);
    assert_eq!(
        stub.requests().len(),
        2,
        "a cap of 2 is 2 model calls: the second still wants tools, and its tools do not run"
    );
    assert_eq!(outcome.failure.as_ref().unwrap().code, "TOOL_LIMIT");
    assert_eq!(
        outcome.answer.as_deref(),
        Some(PlanTaskState::ToolLimit.no_answer_line(fuseforks_core::village::Language::En)),
        "the conversation records what happened, not an empty answer"
    );
    assert!(
        v.log().contains("rounds=2/2 ") && v.log().contains("stop=tool_limit"),
        "{}",
        v.log()
    );
    assert_eq!(
        v.log().matches("tool: agent=a1").count(),
        1,
        "only the first round's tool ran: {}",
        v.log()
    );
}
