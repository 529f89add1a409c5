//! Stopping agents and closing conversations while turns run :
//! one agent's overrun cuts only that agent, a stopped agent's task really ends, messages
//! queued behind a stop start no turn, an interrupt during an MCP connect keeps the tools, and
//! a door conversation closed under a running turn keeps its records in one stored
//! conversation.

use std::time::Duration;

use fuseforks_core::events::AgentStatus;
use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{Endpoint, StoredRecord, TurnStop};
use fuseforks_core::village::AgentId;
use fuseforks_testkit::mcp_script;
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use serde_json::json;

use crate::orch_support::{Village, unknown_calls};

const WIRE: Wire = Wire::OpenAiCompat;
const U: ScriptUsage = ScriptUsage {
    prompt: 400,
    completion: 10,
    cache_read: 0,
    reasoning: 0,
};

fn text(t: &str) -> StubReply {
    wire_replies::text(WIRE, t, U)
}

fn tool(name: &str, args: serde_json::Value) -> StubReply {
    wire_replies::tool_calls(
        WIRE,
        &[ScriptCall {
            id: "c1".into(),
            name: name.into(),
            args,
        }],
        U,
    )
}

async fn until(what: &str, limit: Duration, done: impl FnMut() -> bool) {
    fuseforks_testkit::eventually(what, limit, done).await;
}

/// `stop_agent` is for one agent: when it overruns its grace, only its calls are cut; the
/// other agents' calls go on and later ones are sent normally.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agents_overrun_cuts_only_that_agent() {
    let stub = StubServer::start(vec![
        text("a1 too late").after(Duration::from_secs(2)),
        text("b2 is fine"),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    orch.start_agent("b2").unwrap();
    let slow = {
        let orch = orch.clone();
        tokio::spawn(async move { orch.deliver_and_wait("a1", Endpoint::User, "slow").await })
    };
    until("a1's call", Duration::from_secs(10), || {
        stub.requests().len() == 1
    })
    .await;
    assert!(
        !orch.stop_agent("a1", Duration::from_millis(200)).await,
        "a1 overran its grace"
    );
    let cut = slow.await.unwrap().unwrap();
    assert_eq!(cut.stop, TurnStop::Interrupted);
    let fine = orch
        .deliver_and_wait("b2", Endpoint::User, "hi")
        .await
        .unwrap();
    assert_eq!(
        (fine.stop, fine.answer.as_deref()),
        (TurnStop::Completed, Some("b2 is fine")),
        "another agent's call after a1's cut is sent and answered"
    );
    assert_eq!(stub.requests().len(), 2);
}

/// A stopped agent's task ends with the stop (it is not left running detached), and a task
/// ended by the stop is not an agent failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cut_by_its_stop_does_not_run_on() {
    let stub = StubServer::start(vec![
        tool("ask_b2", json!({"message": "help"})),
        text("b2 answers late").after(Duration::from_millis(2500)),
        text("a1 goes on"),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    orch.start_agent("b2").unwrap();
    let asking = {
        let orch = orch.clone();
        tokio::spawn(async move { orch.deliver_and_wait("a1", Endpoint::User, "go").await })
    };
    until("b2's call", Duration::from_secs(10), || {
        stub.requests().len() == 2
    })
    .await;
    // a1 waits on b2 (not cut by a1's stop): the cut cannot end a1's turn.
    assert!(!orch.stop_agent("a1", Duration::from_millis(200)).await);
    assert_eq!(orch.status("a1"), AgentStatus::Idle);
    assert!(
        asking.await.unwrap().is_err(),
        "the stopped agent's turn never answers"
    );
    // b2 answers at ~2.5 s: a detached a1 would take that answer and call again at once. A
    // turn b2 starts after its first one ended is the sign that moment has passed: the third
    // call must be b2's.
    until("b2's turn", Duration::from_secs(10), || {
        v.log().contains("turn: agent=b2")
    })
    .await;
    orch.deliver_and_wait("b2", Endpoint::User, "ping-after-the-stop")
        .await
        .unwrap();
    let sent = stub.requests();
    assert_eq!(sent.len(), 3, "a1 went on after its stop: {}", v.log());
    assert!(
        sent[2].body.to_string().contains("ping-after-the-stop"),
        "a1 went on after its stop: {}",
        v.log()
    );
    let log = v.log();
    assert!(!log.contains("turn: agent=a1"), "{log}");
    assert!(!log.contains("agent failed"), "{log}");
    assert_eq!(orch.status("a1"), AgentStatus::Idle);
}

/// Messages queued behind a stopping agent's turn are answered as interrupted without a turn
/// (no paid call during the grace).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_queued_behind_a_stop_start_no_turn() {
    let stub = StubServer::start(vec![text("first").after(Duration::from_millis(800))]).await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    let send = |text: &'static str| {
        let orch = orch.clone();
        tokio::spawn(async move { orch.deliver_and_wait("a1", Endpoint::User, text).await })
    };
    let first = send("one");
    until("the first call", Duration::from_secs(10), || {
        stub.requests().len() == 1
    })
    .await;
    // "two" is in a1's mailbox, behind the turn under way.
    let second = {
        let orch = orch.clone();
        fuseforks_testkit::spawn_started(async move {
            orch.deliver_and_wait("a1", Endpoint::User, "two").await
        })
    };
    orch.interrupt("a1");
    assert!(orch.stop_agent("a1", Duration::from_secs(10)).await);
    let first = first.await.unwrap().unwrap();
    assert_eq!(
        (first.stop, first.answer.as_deref()),
        (TurnStop::Completed, Some("first")),
        "the call in flight finished and answered"
    );
    let second = second.await.unwrap().unwrap();
    assert_eq!((second.stop, second.answer), (TurnStop::Interrupted, None));
    assert_eq!(stub.requests().len(), 1, "no second call: {}", v.log());
    assert_eq!(unknown_calls(orch.sessions().unwrap()), 0);
}

/// After the close's hard stop, a message starts no turn and writes no intent for a call that
/// would never be sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_hard_stop_a_message_writes_no_intent() {
    let stub = StubServer::start(vec![text("never")]).await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    orch.deliver_and_wait("a1", Endpoint::User, "hello")
        .await
        .unwrap();
    orch.abort_in_flight();
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, "again")
        .await
        .unwrap();
    assert_eq!(outcome.stop, TurnStop::Interrupted);
    assert_eq!(stub.requests().len(), 1);
    let store = orch.sessions().unwrap();
    let intents = store
        .list()
        .unwrap()
        .iter()
        .flat_map(|(id, _)| store.records(id).unwrap())
        .filter(|(_, r)| matches!(r, StoredRecord::Known(r) if r.kind() == "intent"))
        .count();
    assert_eq!(intents, 1, "only the first turn's call has an intent");
    assert_eq!(unknown_calls(orch.sessions().unwrap()), 0);
}

/// An ordinary interrupt while the agent's MCP servers connect does not leave it without
/// their tools (a stop still cancels the connect: `mcp_client.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_during_the_mcp_connect_keeps_the_tools() {
    let stub = StubServer::start(vec![text("one"), text("two")]).await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let files = v.store().agent_files(&AgentId::new("a1").unwrap()).unwrap();
    let config = json!({"mcpServers": {"kid": {"command": "python3", "args": [mcp_script("child_stdio.py")]}}});
    files
        .save_mcp(&serde_json::from_value(config).unwrap())
        .unwrap();
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    orch.interrupt("a1");
    until("the connect", Duration::from_secs(20), || {
        v.log().contains("mcp: agent=a1 server=kid outcome=")
    })
    .await;
    assert!(
        v.log().contains("server=kid outcome=connected"),
        "{}",
        v.log()
    );
    // The interrupt was for the turn waiting behind the connect: the first turn takes it.
    let first = orch
        .deliver_and_wait("a1", Endpoint::User, "one")
        .await
        .unwrap();
    assert_eq!(first.stop, TurnStop::Interrupted);
    let second = orch
        .deliver_and_wait("a1", Endpoint::User, "two")
        .await
        .unwrap();
    assert_eq!(second.answer.as_deref(), Some("one"));
    let offered: Vec<String> = stub.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(offered.contains(&"kid__noop".to_owned()), "{offered:?}");
    orch.stop_agent("a1", Duration::from_secs(10)).await;
}

/// A door conversation that closes while its turn goes on (the session was deleted, or
/// askTimeoutSecs ran out): the rest of the turn's records land in the same stored
/// conversation, so its calls are not counted as unknown usage and no stray conversation
/// appears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_closed_under_a_running_turn_keeps_its_records_together() {
    let stub = StubServer::start(vec![
        tool("grep", json!({"pattern": "error"})).after(Duration::from_millis(800)),
        text("done late"),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    let conversation = std::sync::Arc::new(orch.open_conversation());
    let asking = {
        let (orch, conversation) = (orch.clone(), std::sync::Arc::clone(&conversation));
        tokio::spawn(async move { orch.ask_external_in(&conversation, "door", "hi").await })
    };
    until("the first call", Duration::from_secs(10), || {
        stub.requests().len() == 1
    })
    .await;
    // The door's request goes away (DELETE, a client gone): the conversation closes.
    asking.abort();
    let _ = asking.await;
    drop(conversation);
    let store = orch.sessions().unwrap();
    let kinds = || -> Vec<Vec<String>> {
        let sessions = store.list().unwrap();
        sessions
            .iter()
            .map(|(id, _)| {
                store
                    .records(id)
                    .unwrap()
                    .into_iter()
                    .map(|(_, r)| match r {
                        StoredRecord::Known(r) => r.kind().to_owned(),
                        StoredRecord::Unknown { kind } => kind,
                    })
                    .collect()
            })
            .collect()
    };
    // The turn's own record is the last the turn writes.
    until(
        "the turn record in the store",
        Duration::from_secs(10),
        || kinds().iter().flatten().any(|k| k == "turn"),
    )
    .await;
    let kinds = kinds();
    assert_eq!(
        kinds,
        [["message", "intent", "intent", "exchange", "message", "turn"]],
        "one stored conversation with the whole turn"
    );
    assert_eq!(unknown_calls(orch.sessions().unwrap()), 0);
    assert_eq!(orch.current_session(), None, "the current one is untouched");
}
