//! A call to a tool the turn did not offer (left out by `enabledTools`, or named by a model
//! that invents tools) runs nothing: the model is told, the log says `tool unknown:`.

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::Endpoint;
use fuseforks_core::village::AgentId;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::json;

use crate::orch_support::Village;
use crate::orchestrator::{U1, call, last_message};

const WIRE: Wire = Wire::OpenAiCompat;

#[tokio::test]
async fn a_bundled_tool_left_out_of_enabled_tools_never_runs() {
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            WIRE,
            &[call("c1", "remember", json!({"note": "planted-7d2"}))],
            U1,
        ),
        wire_replies::text(WIRE, "done", U1),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let store = v.store();
    let mut world = store.load_world().unwrap().value;
    world.agents[0].enabled_tools = Some(vec!["grep".into()]);
    store.save_world(&world).unwrap();
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, "go")
        .await
        .unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("done"));
    let requests = stub.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(!offered.contains(&"remember"), "{offered:?}");
    let result = last_message(&requests[1]);
    assert!(result.contains("not offered"), "{result}");
    let memory = store
        .agent_files(&AgentId::new("a1").unwrap())
        .unwrap()
        .read_memory()
        .unwrap();
    assert!(!memory.contains("planted-7d2"), "{memory}");
    assert!(
        v.log()
            .contains("tool unknown: agent=a1 round=1 name=remember"),
        "{}",
        v.log()
    );
}

#[tokio::test]
async fn an_invented_tool_name_runs_nothing_and_the_turn_goes_on() {
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(WIRE, &[call("c1", "format_disk", json!({}))], U1),
        wire_replies::text(WIRE, "carried on", U1),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, "go")
        .await
        .unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("carried on"));
    assert!(
        v.log()
            .contains("tool unknown: agent=a1 round=1 name=format_disk")
    );
}
