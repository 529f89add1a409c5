//! Judges inside a running village: `judge_<id>` offered to a servant connected to a valid,
//! enabled judge (none for a disabled or invalid one, said once in the log); a call routes by
//! the rules — relay to one servant, fan-out bundled as a plan wave, return, undecided (never
//! `[otherwise]`) — with its `judge:` line; the model-template call is recorded for the judge
//! and charged once to the caller's causal-root budget. All against a loopback stub.

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{Endpoint, Record};
use fuseforks_core::village::{AgentId, JudgeSpec};
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies::{ScriptCall, ScriptUsage, text, tool_calls};
use serde_json::{Value, json};

use crate::orch_support::Village;

const WIRE: Wire = Wire::OpenAiCompat;

const RULES: &str = "[questions.kind]\ntype = \"choice\"\nask = \"What?\"\noptions = { bug = \"b\", feature = \"f\", other = \"o\" }\n\n[[rules]]\nwhen = \"kind == bug\"\nto = [\"b2\"]\n\n[[rules]]\nwhen = \"kind == feature\"\nto = [\"b2\", \"c3\"]\n\n[[rules]]\nwhen = \"kind == other\"\ndo = \"return\"\nnote = \"not ours\"\n\n[otherwise]\nto = [\"b2\"]\n";

fn usage(prompt: u64, completion: u64) -> ScriptUsage {
    ScriptUsage {
        prompt,
        completion,
        cache_read: 0,
        reasoning: 0,
    }
}

fn call(name: &str, args: Value) -> StubReply {
    tool_calls(
        WIRE,
        &[ScriptCall {
            id: "c1".into(),
            name: name.into(),
            args,
        }],
        usage(50, 5),
    )
}

fn answers(kind: Value, prompt: u64) -> StubReply {
    call("judge_answers", json!({ "kind": kind })).pipe_usage(prompt)
}

trait PipeUsage {
    fn pipe_usage(self, prompt: u64) -> StubReply;
}

impl PipeUsage for StubReply {
    fn pipe_usage(self, prompt: u64) -> StubReply {
        if prompt == 0 {
            return self;
        }
        let mut body: Value = serde_json::from_slice(&self.body).unwrap();
        body["usage"]["prompt_tokens"] = json!(prompt);
        body["usage"]["total_tokens"] = json!(prompt + 5);
        StubReply::json(200, &body)
    }
}

fn judge(id: &str, enabled: bool) -> JudgeSpec {
    serde_json::from_value(json!({"id": id, "name": id.to_uppercase(), "order": 0,
        "enabled": enabled, "modelTemplateId": "stub"}))
    .unwrap()
}

/// `a1` (connected to `b2`, and to the judges `j`, `off` (disabled) and `broken` (invalid)),
/// servants `b2` and `c3`; all on one stub.
fn village(stub: &StubServer, budget: Option<u64>) -> Village {
    let v = Village::new(WIRE, stub.base_url(), budget);
    v.data.edit_world(|w| {
        let mut c3 = w.agents[1].clone();
        c3.id = AgentId::new("c3").unwrap();
        c3.name = "Cy".into();
        w.agents.push(c3);
        for id in ["j", "off", "broken"] {
            w.agents[0].connected_agents.push(AgentId::new(id).unwrap());
        }
        w.judges.push(judge("j", true));
        w.judges.push(judge("off", false));
        w.judges.push(judge("broken", true));
    });
    for (id, text) in [
        ("j", RULES),
        ("off", RULES),
        ("broken", "[questions.kind]\ntype = \"nope\"\n"),
    ] {
        v.data.write(&format!("judges/{id}/judge.toml"), text);
    }
    v
}

async fn ask(
    v: &Village,
    message: &str,
) -> (Option<String>, fuseforks_core::orchestrator::Orchestrator) {
    let orch = v.open();
    for id in ["a1", "b2", "c3"] {
        orch.start_agent(id).unwrap();
    }
    let outcome = orch
        .deliver_and_wait("a1", Endpoint::User, message)
        .await
        .unwrap();
    (outcome.answer, orch)
}

fn tool_result(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn judge_lines(v: &Village) -> Vec<String> {
    v.log()
        .lines()
        .filter(|l| l.contains("judge: caller="))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_delivers_to_one_servant_with_the_verdict_line_and_returns_its_answer() {
    let stub = StubServer::start(vec![
        call("judge_j", json!({"message": "My app crashes"})),
        answers(json!({"bug": 0.9, "feature": 0.05, "other": 0.05}), 0),
        text(WIRE, "Fixed in build 7.", usage(40, 4)),
        text(WIRE, "Done: fixed.", usage(60, 3)),
    ])
    .await;
    let v = village(&stub, None);
    let (answer, _orch) = ask(&v, "Please route this").await;
    assert_eq!(answer.as_deref(), Some("Done: fixed."));
    let requests = stub.requests();
    assert_eq!(requests.len(), 4);
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"judge_j"), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|t| *t == "judge_off" || *t == "judge_broken"),
        "{tools:?}"
    );
    assert_eq!(
        requests[1].body["tools"][0]["function"]["name"],
        "judge_answers"
    );
    let to_b2 = requests[2].body.to_string();
    assert!(to_b2.contains("My app crashes"), "{to_b2}");
    assert!(
        to_b2.contains("[verdict j] rule 1 matched (kind:bug/0.90/0.85)"),
        "{to_b2}"
    );
    assert!(tool_result(&requests[3].body).contains("Fixed in build 7."));
    let lines = judge_lines(&v);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("judge: caller=a1 judge=j rule=1 outcome=routed answers=kind:bug/0.90/0.85 to=[b2] input_tokens=50 output_tokens=5"),
        "{lines:?}"
    );
    assert!(!lines[0].contains("My app"), "no message text in the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_reaches_every_servant_and_bundles_their_answers() {
    let stub = StubServer::start(vec![
        call("judge_j", json!({"message": "Add dark mode"})),
        answers(json!({"bug": 0.1, "feature": 0.85, "other": 0.05}), 0),
        text(WIRE, "Noted here.", usage(40, 4)),
        text(WIRE, "Noted here.", usage(40, 4)),
        text(WIRE, "Both noted.", usage(60, 3)),
    ])
    .await;
    let v = village(&stub, None);
    let (answer, _orch) = ask(&v, "Please route this").await;
    assert_eq!(answer.as_deref(), Some("Both noted."));
    let requests = stub.requests();
    assert_eq!(requests.len(), 5);
    for r in &requests[2..4] {
        assert!(r.body.to_string().contains("[verdict j] rule 2 matched"));
    }
    let bundle = tool_result(&requests[4].body);
    assert!(bundle.contains("b2") && bundle.contains("c3"), "{bundle}");
    assert_eq!(bundle.matches("Noted here.").count(), 2, "{bundle}");
    let lines = judge_lines(&v);
    assert!(lines[0].contains("rule=2 outcome=fanned"), "{lines:?}");
    assert!(
        lines[0].contains("to=[b2,c3]") && lines[0].contains("bundle_chars="),
        "{lines:?}"
    );
    assert!(
        bundle.contains("### b2 (answered)\nNoted here."),
        "{bundle}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_return_sends_the_verdict_and_note_back_and_delivers_nothing() {
    let stub = StubServer::start(vec![
        call("judge_j", json!({"message": "What is the weather?"})),
        answers(json!({"bug": 0.05, "feature": 0.05, "other": 0.9}), 0),
        text(WIRE, "Not ours.", usage(60, 3)),
    ])
    .await;
    let v = village(&stub, None);
    let (answer, _orch) = ask(&v, "Please route this").await;
    assert_eq!(answer.as_deref(), Some("Not ours."));
    let requests = stub.requests();
    assert_eq!(requests.len(), 3, "no servant was asked");
    let result = tool_result(&requests[2].body);
    assert!(
        result.contains("[verdict j] rule 3 matched (kind:other/0.90/0.85)\nnot ours"),
        "{result}"
    );
    assert!(judge_lines(&v)[0].contains("rule=3 outcome=returned"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecided_judge_gives_the_fixed_line_and_never_uses_otherwise() {
    let stub = StubServer::start(vec![
        call("judge_j", json!({"message": "Hm"})),
        answers(json!({"bug": -0.5, "feature": 1.5, "other": 0.0}), 0),
        text(WIRE, "Could not route.", usage(60, 3)),
    ])
    .await;
    let v = village(&stub, None);
    let (answer, _orch) = ask(&v, "Please route this").await;
    assert_eq!(answer.as_deref(), Some("Could not route."));
    let requests = stub.requests();
    assert_eq!(requests.len(), 3, "[otherwise] (to b2) was not used");
    let result = tool_result(&requests[2].body);
    assert!(
        result.contains("[verdict j] undecided (reason="),
        "{result}"
    );
    assert!(result.contains("nothing was routed"), "{result}");
    let line = &judge_lines(&v)[0];
    assert!(
        line.contains("rule=none outcome=undecided answers=- to=[]"),
        "{line}"
    );
    assert!(line.contains(" reason="), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_and_invalid_judges_offer_no_tool_and_the_log_says_why_once() {
    let stub = StubServer::start(vec![
        text(WIRE, "one", usage(10, 1)),
        text(WIRE, "two", usage(10, 1)),
    ])
    .await;
    let v = village(&stub, None);
    let (_, orch) = ask(&v, "first").await;
    orch.deliver_and_wait("a1", Endpoint::User, "second")
        .await
        .unwrap();
    for r in stub.requests() {
        let names: Vec<String> = r.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .filter(|n| n.starts_with("judge_"))
            .collect();
        assert_eq!(names, ["judge_j"]);
    }
    let log = v.log();
    assert_eq!(
        log.matches("judge disabled: judge=off reason=\"disabled\"")
            .count(),
        1,
        "{log}"
    );
    assert_eq!(
        log.matches("judge disabled: judge=broken reason=\"invalid judge.toml")
            .count(),
        1,
        "{log}"
    );
    assert!(!log.contains("judge disabled: judge=j "), "{log}");
}

/// A judge whose call reports 600,000 input tokens, under `ceiling`: the caller's next round
/// either fits (charged once) or is stopped.
async fn budget_run(ceiling: u64) -> (Option<String>, Village, Vec<Record>) {
    let stub = StubServer::start(vec![
        call("judge_j", json!({"message": "What is the weather?"})),
        answers(json!({"bug": 0.05, "feature": 0.05, "other": 0.9}), 600_000),
        text(WIRE, "Not ours.", usage(60, 3)),
    ])
    .await;
    let v = village(&stub, Some(ceiling));
    let (answer, orch) = ask(&v, "Please route this").await;
    let records = crate::orchestrator::records(&v, &orch);
    (answer, v, records)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_template_judge_is_recorded_for_the_judge_and_charged_once_to_the_root() {
    // Once: 600,000 + a1's first round fit under 1,000,000 with the next reservation.
    let (answer, _v, records) = budget_run(1_000_000).await;
    assert_eq!(answer.as_deref(), Some("Not ours."));
    let judge_turns: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Turn(t) if t.agent_id == "j" => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(judge_turns.len(), 1, "one turn record for the judge");
    assert_eq!(
        (judge_turns[0].prompt, judge_turns[0].completion),
        (600_000, 5)
    );
    // Charged at all: under 600,000 the caller's next round is refused.
    let (answer, v, _) = budget_run(600_500).await;
    assert_ne!(answer.as_deref(), Some("Not ours."));
    assert!(v.log().contains("budget stop: agent=a1"), "{}", v.log());
}

const JEV_RULES: &str = "[questions.kind]\ntype = \"choice\"\nask = \"What?\"\noptions = { bug = \"b\", other = \"o\" }\n\n[questions.urgency]\ntype = \"score\"\nask = \"How urgent?\"\nlevels = [\"low\", \"mid\", \"high\"]\n\n[questions.angry]\ntype = \"noul\"\nask = \"Angry?\"\ntrue_if = \"angry\"\nfalse_if = \"calm\"\n\n[[rules]]\nwhen = \"kind == bug and urgency >= 3 and urgency.mean > 2.5\"\nto = [\"b2\"]\n\n[[rules]]\nwhen = \"angry >= 0.5\"\ndo = \"return\"\nnote = \"calm them first\"\n\n[[rules]]\nwhen = \"kind == other\"\nto = [\"b2\", \"c3\"]\n\n[otherwise]\nto = [\"b2\"]\n";

/// `a1` connected to the Jev-backed judge `jv` (no `modelTemplateId`); `jev.json` pointing at
/// `jev` when given.
fn jev_village(stub: &StubServer, jev: Option<&StubServer>, budget: Option<u64>) -> Village {
    let v = Village::new(WIRE, stub.base_url(), budget);
    v.data.edit_world(|w| {
        let mut c3 = w.agents[1].clone();
        c3.id = AgentId::new("c3").unwrap();
        c3.name = "Cy".into();
        w.agents.push(c3);
        w.agents[0]
            .connected_agents
            .push(AgentId::new("jv").unwrap());
        w.judges.push(
            serde_json::from_value(json!({"id": "jv", "name": "JV", "order": 0, "enabled": true}))
                .unwrap(),
        );
    });
    v.data.write("judges/jv/judge.toml", JEV_RULES);
    if let Some(jev) = jev {
        let settings = fuseforks_testkit::jev::settings(jev.base_url().trim_end_matches("/v1"));
        std::fs::write(
            v.data.data_dir().join("jev.json"),
            serde_json::to_string(&settings).unwrap(),
        )
        .unwrap();
    }
    v
}

/// Jev answers all three kinds (choice, score keyed by level index, noul); the score's level
/// and mean route the message; Jev's 600,000 input tokens are recorded and never charged to
/// the caller (a ceiling they would exceed still lets the caller finish).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jev_judge_routes_by_choice_score_and_noul_and_is_never_charged() {
    use fuseforks_testkit::jev;
    let answers = |angry: f64| {
        json!({"kind": jev::choice("bug", &[("bug", 0.9), ("other", 0.1)]),
               "urgency": jev::score(&[0.05, 0.15, 0.8]),
               "angry": jev::noul(angry)})
    };
    let jev_stub = StubServer::start(vec![
        jev::reply(answers(0.1), 600_000, 5),
        jev::reply(
            json!({"kind": jev::choice("other", &[("bug", 0.2), ("other", 0.8)]),
                          "urgency": jev::score(&[0.8, 0.1, 0.1]), "angry": jev::noul(0.7)}),
            10,
            2,
        ),
    ])
    .await;
    let stub = StubServer::start(vec![
        call("judge_jv", json!({"message": "Prod is down"})),
        text(WIRE, "On it.", usage(40, 4)),
        text(WIRE, "Routed.", usage(60, 3)),
        call("judge_jv", json!({"message": "You people!"})),
        text(WIRE, "Returned.", usage(60, 3)),
    ])
    .await;
    let v = jev_village(&stub, Some(&jev_stub), Some(600_500));
    let orch = v.open_with_secrets(&[("jev_api_token", "jev-token")]);
    for id in ["a1", "b2"] {
        orch.start_agent(id).unwrap();
    }
    let first = orch
        .deliver_and_wait("a1", Endpoint::User, "route")
        .await
        .unwrap();
    assert_eq!(
        first.answer.as_deref(),
        Some("Routed."),
        "not charged: a1 finished"
    );
    let to_b2 = stub.requests()[1].body.to_string();
    assert!(
        to_b2.contains("Prod is down") && to_b2.contains("[verdict jv] rule 1 matched"),
        "{to_b2}"
    );
    let second = orch
        .deliver_and_wait("a1", Endpoint::User, "route again")
        .await
        .unwrap();
    assert_eq!(second.answer.as_deref(), Some("Returned."));
    let result = tool_result(&stub.requests()[4].body);
    assert!(
        result.contains("rule 2 matched") && result.contains("calm them first"),
        "{result}"
    );
    let calls = jev_stub.requests();
    assert_eq!(calls.len(), 2, "one Jev call per judge call");
    assert_eq!(calls[0].path, jev::PATH);
    let lines = judge_lines(&v);
    assert!(
        lines[0].contains("judge=jv rule=1 outcome=routed")
            && lines[0].contains("input_tokens=600000"),
        "{lines:?}"
    );
    assert!(lines[1].contains("rule=2 outcome=returned"), "{lines:?}");
    let records = crate::orchestrator::records(&v, &orch);
    let jv_turns = records
        .iter()
        .filter(|r| matches!(r, Record::Turn(t) if t.agent_id == "jv"))
        .count();
    assert_eq!(jv_turns, 2, "each Jev call recorded for the judge");
}

/// Jev's answers fan a message out to two servants (bundled), and Jev's refusal of an input
/// over its limit is undecided: the fixed line, `reason=too_large`, never `[otherwise]`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jev_judge_fans_out_and_an_oversized_input_is_undecided() {
    use fuseforks_testkit::jev;
    let jev_stub = StubServer::start(vec![
        jev::reply(
            json!({"kind": jev::choice("other", &[("bug", 0.2), ("other", 0.8)]),
                   "urgency": jev::score(&[0.8, 0.1, 0.1]), "angry": jev::noul(0.1)}),
            10,
            2,
        ),
        jev::too_large(),
    ])
    .await;
    let stub = StubServer::start(vec![
        call("judge_jv", json!({"message": "An idea"})),
        text(WIRE, "Noted.", usage(40, 4)),
        text(WIRE, "Noted.", usage(40, 4)),
        text(WIRE, "Fanned.", usage(60, 3)),
        call("judge_jv", json!({"message": "A very long text"})),
        text(WIRE, "Undecided.", usage(60, 3)),
    ])
    .await;
    let v = jev_village(&stub, Some(&jev_stub), None);
    let orch = v.open_with_secrets(&[("jev_api_token", "jev-token")]);
    for id in ["a1", "b2", "c3"] {
        orch.start_agent(id).unwrap();
    }
    let fanned = orch
        .deliver_and_wait("a1", Endpoint::User, "route")
        .await
        .unwrap();
    assert_eq!(fanned.answer.as_deref(), Some("Fanned."));
    let bundle = tool_result(&stub.requests()[3].body);
    assert!(
        bundle.contains("### b2 (answered)\nNoted.")
            && bundle.contains("### c3 (answered)\nNoted."),
        "{bundle}"
    );
    let undecided = orch
        .deliver_and_wait("a1", Endpoint::User, "route this too")
        .await
        .unwrap();
    assert_eq!(undecided.answer.as_deref(), Some("Undecided."));
    let requests = stub.requests();
    assert_eq!(requests.len(), 6, "[otherwise] (to b2) was not used");
    assert!(tool_result(&requests[5].body).contains("[verdict jv] undecided (reason="));
    let lines = judge_lines(&v);
    assert!(
        lines[0].contains("rule=3 outcome=fanned") && lines[0].contains("to=[b2,c3]"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("outcome=undecided") && lines[1].contains("reason=too_large"),
        "{lines:?}"
    );
}

/// A Jev-backed judge with Jev not configured (no account in `jev.json`, or no token) offers
/// no tool, and the log says why once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jev_judge_without_jev_configured_offers_no_tool() {
    let jev_stub = StubServer::start(vec![]).await;
    for (configured, token) in [(false, true), (true, false)] {
        let stub = StubServer::start(vec![text(WIRE, "plain", usage(10, 1))]).await;
        let v = jev_village(&stub, configured.then_some(&jev_stub), None);
        let orch = if token {
            v.open_with_secrets(&[("jev_api_token", "t")])
        } else {
            v.open()
        };
        orch.start_agent("a1").unwrap();
        orch.deliver_and_wait("a1", Endpoint::User, "hi")
            .await
            .unwrap();
        let body = stub.requests()[0].body.to_string();
        assert!(!body.contains("judge_jv"), "{body}");
        let why = if configured {
            "the secret jev_api_token is missing"
        } else {
            "jev.json has no accountId"
        };
        assert_eq!(
            v.log()
                .matches(&format!(
                    "judge disabled: judge=jv reason=\"jev is not configured: {why}\""
                ))
                .count(),
            1,
            "{}",
            v.log()
        );
    }
}

/// A judge's relay to a servant already waiting in the chain is refused at once, and the log
/// says it came through a judge (`via=judge`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_relay_into_the_waiting_chain_is_refused_as_circular() {
    let stub = StubServer::start(vec![
        call("ask_a1", json!({"message": "Route this bug"})),
        call("judge_j", json!({"message": "My app crashes"})),
        answers(json!({"bug": 0.9, "feature": 0.05, "other": 0.05}), 0),
        text(WIRE, "Could not route.", usage(40, 4)),
        text(WIRE, "Done.", usage(40, 4)),
    ])
    .await;
    let v = village(&stub, None);
    v.data
        .edit_world(|w| w.agents[1].connected_agents = vec![AgentId::new("a1").unwrap()]);
    let orch = v.open();
    for id in ["a1", "b2", "c3"] {
        orch.start_agent(id).unwrap();
    }
    let outcome = orch
        .deliver_and_wait("b2", Endpoint::User, "please")
        .await
        .unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("Done."));
    let log = v.log();
    assert!(
        log.contains("ask refused: agent=a1 to=b2 via=judge reason=circular chain=[b2,a1]"),
        "{log}"
    );
    assert_eq!(stub.requests().len(), 5, "b2 was not asked again");
}

/// A judge call is a row of its own in the stats, attributed to the judge, and counted once:
/// the totals are the caller's calls plus the judge's, and no call is left of unknown usage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_call_is_a_stats_row_of_the_judge_counted_once() {
    let stub = StubServer::start(vec![
        call("judge_j", json!({"message": "What is the weather?"})),
        answers(json!({"bug": 0.05, "feature": 0.05, "other": 0.9}), 0),
        text(WIRE, "Not ours.", usage(60, 3)),
    ])
    .await;
    let v = village(&stub, None);
    let (answer, orch) = ask(&v, "Please route this").await;
    assert_eq!(answer.as_deref(), Some("Not ours."));
    let report = fuseforks_core::stats::aggregate(
        orch.sessions().unwrap(),
        &orch.world(),
        fuseforks_core::stats::Period::All,
        &jiff::tz::TimeZone::UTC,
    )
    .unwrap();
    let prompt_of = |agent: &str| -> u64 {
        report
            .rows
            .iter()
            .filter(|r| r.agent_id == agent)
            .map(|r| r.usage.prompt)
            .sum()
    };
    assert_eq!(prompt_of("j"), 50, "the judge's own call");
    assert_eq!(prompt_of("a1"), 50 + 60, "the caller's two rounds");
    assert_eq!(report.totals.usage.prompt, 50 + 60 + 50, "counted once");
    assert!(
        report.unknown_usage.is_empty(),
        "{:?}",
        report.unknown_usage
    );
}
