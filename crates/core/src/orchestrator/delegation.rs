//! Agents talking to agents along `connectedAgents`: the synthetic tools (`ask_<id>`,
//! `transfer_to_<id>`, `plan`, `room_log`, `blackboard`), and the one way a delegation is
//! delivered — with the chain of waiting agents (a target already in it is refused at once),
//! the hop limit, and the `askTimeoutSecs` wait.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::oneshot;

use super::{Delivery, Inner, PlanTaskState, Route, TurnOutcome};
use crate::events::CoreEvent;
use crate::llm::ToolSpec;
use crate::sessions::Endpoint;
use crate::village::{AgentSpec, Language, World};

/// The most hops from a causal root.
pub(super) const MAX_HOPS: u32 = 8;
/// The longest tool name.
const MAX_TOOL_NAME: usize = 64;

/// What a synthetic tool does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Synthetic {
    Ask(String),
    Transfer(String),
    Plan,
    RoomLog,
    Blackboard,
    /// `judge_<id>`: the judge's id.
    Judge(String),
}

fn message_schema(language: Language) -> serde_json::Value {
    json!({"type": "object", "properties": {"message": {"type": "string", "description": language.pick("相手へ送る依頼文。", "The request to send.")}},
           "required": ["message"], "additionalProperties": false})
}

/// The synthetic tools of an agent, in a stable order, and what each name does.
pub(crate) fn synthetic_tools(
    agent: &AgentSpec,
    world: &World,
    language: Language,
    has_work_dir: bool,
) -> (Vec<ToolSpec>, HashMap<String, Synthetic>) {
    let mut specs = Vec::new();
    let mut map = HashMap::new();
    let peers: Vec<&AgentSpec> = agent
        .connected_agents
        .iter()
        .filter_map(|id| world.agent(id))
        .filter(|p| p.id != agent.id)
        .collect();
    for (n, peer) in peers.iter().enumerate() {
        let id = peer.id.as_str();
        let ask = fit(format!("ask_{id}"), || format!("ask_agent_{n}"));
        specs.push(ToolSpec {
            name: ask.clone(),
            description: language.pick(
                format!("{}（{id}）に依頼し、答えを待ちます。", peer.name),
                format!("Ask {} ({id}) and wait for the answer.", peer.name),
            ),
            parameters: message_schema(language),
        });
        map.insert(ask, Synthetic::Ask(id.to_owned()));
        if agent.allow_handoff {
            let transfer = fit(format!("transfer_to_{id}"), || {
                format!("transfer_to_agent_{n}")
            });
            specs.push(ToolSpec {
                name: transfer.clone(),
                description: language.pick(format!("会話を{}（{id}）へ引き継ぎます。答えは依頼者へ直接返ります。", peer.name), format!("Hand the conversation to {} ({id}); the answer goes straight to the requester.", peer.name)),
                parameters: message_schema(language),
            });
            map.insert(transfer, Synthetic::Transfer(id.to_owned()));
        }
    }
    if peers.len() >= 2 {
        specs.push(ToolSpec {
            name: "plan".into(),
            description: language.pick("つながっている個体へ、ひと波の依頼を並行して送り、答えをまとめて受け取ります。", "Send one wave of requests to connected agents in parallel and get their answers back as one bundle."),
            parameters: json!({"type": "object", "properties": {"tasks": {"type": "array", "items": {"type": "object",
                "properties": {"to": {"type": "string", "description": language.pick("相手の ID。", "The agent's id.")}, "message": {"type": "string", "description": language.pick("依頼文。", "The request.")}},
                "required": ["to", "message"], "additionalProperties": false}}}, "required": ["tasks"], "additionalProperties": false}),
        });
        map.insert("plan".into(), Synthetic::Plan);
    }
    if agent.hears_room_log {
        specs.push(ToolSpec {
            name: "room_log".into(),
            description: language.pick("広場の発言を id で全文読みます（20,000 字まで）。", "Read one utterance of the square in full by its id (up to 20,000 characters)."),
            parameters: json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false}),
        });
        map.insert("room_log".into(), Synthetic::RoomLog);
    }
    if agent.uses_blackboard && has_work_dir {
        specs.push(crate::tools::blackboard::spec(language));
        map.insert("blackboard".into(), Synthetic::Blackboard);
    }
    (specs, map)
}

fn fit(name: String, fallback: impl FnOnce() -> String) -> String {
    if name.len() <= MAX_TOOL_NAME {
        name
    } else {
        fallback()
    }
}

/// A delegation's end, as the caller sees it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Delegated {
    pub answer: Option<String>,
    pub state: PlanTaskState,
    pub elapsed: Duration,
}

/// How a delegation travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    Ask,
    Plan,
    Transfer,
    /// A judge's relay or fan-out (the caller is the servant that called `judge_<id>`).
    Judge,
}

impl Via {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ask => "ask",
            Self::Plan => "plan",
            Self::Transfer => "transfer",
            Self::Judge => "judge",
        }
    }
}

/// Delivers `message` from `caller` to `target` within the caller's causal chain and waits.
pub(crate) async fn delegate(
    inner: &Arc<Inner>,
    caller: &str,
    target: &str,
    message: &str,
    delivery: &Delivery,
    via: Via,
) -> Delegated {
    let started = Instant::now();
    let done = |answer: Option<String>, state: PlanTaskState| Delegated {
        answer,
        state,
        elapsed: started.elapsed(),
    };
    let mut chain = delivery.route.chain.clone();
    chain.push(caller.to_owned());
    if chain.iter().any(|c| c == target) {
        inner.log(&format!(
            "ask refused: agent={caller} to={target} via={} reason=circular chain=[{}]",
            via.as_str(),
            chain.join(",")
        ));
        return done(None, PlanTaskState::Undeliverable);
    }
    let hop = delivery.route.hop + 1;
    if hop > MAX_HOPS {
        inner.emit(
            &format!("hop limit: agent={caller} to={target} hop={hop} max={MAX_HOPS}"),
            CoreEvent::HopLimitReached {
                agent_id: caller.to_owned(),
                max_hops: MAX_HOPS,
            },
        );
        return done(None, PlanTaskState::Undeliverable);
    }
    let from = match via {
        // A handed-off conversation keeps its sender: the answer goes to them.
        Via::Transfer => delivery
            .route
            .answer_to
            .clone()
            .unwrap_or_else(|| delivery.message.from.clone()),
        Via::Ask | Via::Plan | Via::Judge => Endpoint::Agent {
            id: caller.to_owned(),
        },
    };
    let route = Route {
        // The caller waits in every case (a transfer relays the answer), so it stays in the chain.
        chain,
        hop,
        auto_approve_plans: delivery.route.auto_approve_plans,
        verify_with: delivery.route.verify_with.clone(),
        answer_to: delivery
            .route
            .answer_to
            .clone()
            .or_else(|| Some(delivery.message.from.clone())),
        conversation: delivery.route.conversation,
        // Only the turn a person started may ask them (`ask_user`).
        person: super::question::Presence::Absent,
        dry_run: delivery.route.dry_run.clone(),
    };
    let (tx, rx) = oneshot::channel::<TurnOutcome>();
    if inner
        .deliver(
            target,
            from,
            message,
            Arc::clone(&delivery.budget),
            route,
            Some(tx),
        )
        .await
        .is_err()
    {
        return done(None, PlanTaskState::Undeliverable);
    }
    let wait = Duration::from_secs(inner.world().ask_timeout_secs());
    match tokio::time::timeout(wait, rx).await {
        Ok(Ok(outcome)) => {
            let state = outcome.state();
            done(outcome.answer, state)
        }
        Ok(Err(_)) => done(None, PlanTaskState::NoAnswer),
        Err(_) => done(None, PlanTaskState::TimedOut),
    }
}

/// What the caller's model reads after a delegation.
pub(crate) fn describe(
    target: &str,
    d: &Delegated,
    running: bool,
    language: Language,
) -> (bool, String) {
    match (d.state, &d.answer) {
        (PlanTaskState::Answered | PlanTaskState::HandedOff, Some(answer)) => {
            (true, answer.clone())
        }
        (PlanTaskState::Undeliverable, _) if !running => (
            false,
            language.pick(
                format!("NOT_RUNNING: {target} は停止中です。"),
                format!("NOT_RUNNING: {target} is not running."),
            ),
        ),
        (PlanTaskState::Undeliverable, _) => (
            false,
            language.pick(
                format!("{target} へは送れません（循環する依頼か、段数の上限）。"),
                format!("Refused: a request to {target} would loop back or exceed the hop limit."),
            ),
        ),
        (state, _) => (
            false,
            format!(
                "{}: {target}",
                serde_json::to_value(state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::village::{AgentId, TemplateId};

    #[test]
    fn long_ids_fall_back_to_numbered_names() {
        let long = "x".repeat(64);
        let t = TemplateId::new("t").unwrap();
        let mut me = AgentSpec::new(AgentId::new("me").unwrap(), "Me", t.clone());
        me.connected_agents = vec![
            AgentId::new("short").unwrap(),
            AgentId::new(long.clone()).unwrap(),
        ];
        let world = World {
            agents: vec![
                me.clone(),
                AgentSpec::new(AgentId::new("short").unwrap(), "S", t.clone()),
                AgentSpec::new(AgentId::new(long.clone()).unwrap(), "L", t),
            ],
            ..World::default()
        };
        let (specs, map) = synthetic_tools(&me, &world, Language::En, false);
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ask_short",
                "transfer_to_short",
                "ask_agent_1",
                "transfer_to_agent_1",
                "plan",
                "room_log"
            ]
        );
        assert_eq!(map["ask_agent_1"], Synthetic::Ask(long));
        assert!(names.iter().all(|n| n.len() <= 64));
    }
}
