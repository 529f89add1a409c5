//! `SKILL.md`'s front matter honoured by the turn, against a loopback stub: `max_loops`
//! multiplies the tool-round cap, `allowed-tools` narrows the tools offered (and refuses a
//! call to another), `fork: subagent` starts each turn without the conversation's earlier
//! exchanges; the front matter never reaches the model, and the turn record says the terms.

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{Endpoint, Record, TurnStop};
use fuseforks_core::village::{AgentId, SkillFork};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::{Value, json};

use crate::orch_support::Village;
use crate::orchestrator::{U1, call, last_message, records};

const WIRE: Wire = Wire::OpenAiCompat;

fn write_skill(v: &Village, text: &str) {
    v.store()
        .agent_files(&AgentId::new("a1").unwrap())
        .unwrap()
        .write_skill(text)
        .unwrap();
}

fn turn_record(recs: &[Record]) -> fuseforks_core::sessions::TurnRecord {
    recs.iter()
        .rev()
        .find_map(|r| match r {
            Record::Turn(t) => Some(t.clone()),
            _ => None,
        })
        .unwrap()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// `max_loops: 2` on the default 12 calls a turn: 14 tool rounds and an answer (15 model
/// calls) fit in 24; without the front matter read, the turn stopped at 12.
#[tokio::test]
async fn max_loops_lets_a_turn_run_past_twelve_tool_rounds() {
    let mut replies: Vec<_> = (0..14)
        .map(|i| {
            let c = call(
                &format!("c{i}"),
                "grep",
                json!({"pattern": format!("p{i}")}),
            );
            wire_replies::tool_calls(WIRE, &[c], U1)
        })
        .collect();
    replies.push(wire_replies::text(WIRE, "looped twice", U1));
    let stub = StubServer::start(replies).await;
    let v = Village::new(WIRE, stub.base_url(), None);
    write_skill(&v, "---\nmax_loops: 2\n---\nLoop until done.\n");
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, "go")
        .await
        .unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("looped twice"));
    assert_eq!(outcome.stop, TurnStop::Completed);
    let turn = turn_record(&records(&v, &orch));
    assert_eq!(turn.rounds, 15);
    let skill = turn.skill.expect("the record says the skill's terms");
    assert_eq!((skill.terms.max_loops, skill.round_cap), (Some(2), 24));
    let stored = serde_json::to_value(Record::Turn(turn_record(&records(&v, &orch)))).unwrap();
    assert_eq!(stored["skill"], json!({"maxLoops": 2, "roundCap": 24}));
    assert!(v.log().contains("rounds=15/24"), "{}", v.log());
}

/// `allowed-tools: [grep]` offers grep alone (not `file`, `ask_b2` or the rest) and refuses a
/// call to `remember` that the model makes anyway (`Memory.md` untouched); the system prompt holds the procedure, not the
/// front matter.
#[tokio::test]
async fn allowed_tools_narrow_what_is_offered_and_what_runs() {
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            WIRE,
            &[call(
                "c1",
                "remember",
                json!({"note": "planted by a model"}),
            )],
            U1,
        ),
        wire_replies::text(WIRE, "done", U1),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    write_skill(
        &v,
        "---\nname: narrow\nallowed-tools: [grep]\n---\nSearch the notes only.\n",
    );
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    orch.deliver_and_wait("a1", Endpoint::User, "go")
        .await
        .unwrap();
    let requests = stub.requests();
    assert_eq!(tool_names(&requests[0].body), ["grep"]);
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("## Skill\nSearch the notes only."),
        "{system}"
    );
    assert!(
        !system.contains("allowed-tools") && !system.contains("name: narrow"),
        "{system}"
    );
    let result = last_message(&requests[1]);
    assert!(result.contains("allowed-tools"), "{result}");
    let memory = v
        .store()
        .agent_files(&AgentId::new("a1").unwrap())
        .unwrap()
        .read_memory()
        .unwrap();
    assert!(!memory.contains("planted"), "{memory}");
    let skill = turn_record(&records(&v, &orch)).skill.unwrap();
    assert_eq!(skill.terms.allowed_tools, Some(vec!["grep".to_owned()]));
}

/// `fork: subagent`: the second turn of the conversation is sent without the first exchange.
#[tokio::test]
async fn fork_subagent_starts_every_turn_in_a_fresh_context() {
    let stub = StubServer::start(vec![
        wire_replies::text(WIRE, "first answer", U1),
        wire_replies::text(WIRE, "second answer", U1),
    ])
    .await;
    let v = Village::new(WIRE, stub.base_url(), None);
    write_skill(&v, "---\nfork: subagent\n---\nWork alone.\n");
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    for question in ["first question", "second question"] {
        orch.deliver_and_wait("a1", Endpoint::User, question)
            .await
            .unwrap();
    }
    let messages = stub.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user"], "{messages:?}");
    assert!(
        messages[1]["content"]
            .as_str()
            .unwrap()
            .contains("second question")
    );
    let skill = turn_record(&records(&v, &orch)).skill.unwrap();
    assert_eq!(skill.terms.fork, Some(SkillFork::Subagent));
    assert_eq!(skill.round_cap, 12);
}
