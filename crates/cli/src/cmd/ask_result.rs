//! `ask --output json`: the one result object on stdout — the answer, the outcome and exit
//! code, the stored conversation, and what the request spent (its turn records: every agent's
//! turns the request caused, counted from the request's start), with `≈ $` where every model
//! used has a price; and the question (`ask_user`) when the outcome is `needs_input`.

use fuseforks_core::llm::Usage;
use fuseforks_core::orchestrator::{ExternalOutcome, Orchestrator};
use fuseforks_core::sessions::{Record, StoredRecord};
use serde_json::{Value, json};

/// When the request started.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    /// Wall clock, ms since the epoch (turn records at or after it count).
    pub at_ms: i64,
    /// For the elapsed time.
    pub instant: std::time::Instant,
}

impl Started {
    /// Now.
    pub fn now() -> Self {
        Self {
            at_ms: jiff::Timestamp::now().as_millisecond(),
            instant: std::time::Instant::now(),
        }
    }
}

/// What the turns since `since` in `session` spent: turns, tokens, and `≈ $` when every
/// turn's model has a price in a template.
fn spent(orch: &Orchestrator, session: Option<&str>, since: i64) -> (u64, Usage, Option<f64>) {
    let (mut turns, mut usage, mut cost) = (0, Usage::default(), Some(0.0));
    let (Some(session), Some(store)) = (session, orch.sessions()) else {
        return (turns, usage, None);
    };
    let world = orch.world();
    for (_, record) in store.records(session).unwrap_or_default() {
        let StoredRecord::Known(Record::Turn(t)) = record else {
            continue;
        };
        if t.ts_ms < since {
            continue;
        }
        let u = Usage {
            prompt: t.prompt,
            completion: t.completion,
            cache_read: t.cached,
            cache_write: t.cache_write,
            cache_write_1h: t.cache_write_1h,
            reasoning: t.reasoning,
        };
        turns += 1;
        usage.add(&u);
        let priced = world
            .model_templates
            .iter()
            .find(|m| m.model == t.model)
            .and_then(|m| fuseforks_core::stats::cost(&u, m));
        cost = cost.zip(priced).map(|(a, b)| a + b);
    }
    (turns, usage, cost.filter(|_| turns > 0))
}

/// The result object.
pub fn result(orch: &Orchestrator, outcome: &ExternalOutcome, code: u8, started: Started) -> Value {
    let (turns, usage, cost) = spent(orch, outcome.session_id.as_deref(), started.at_ms);
    let state = serde_json::to_value(outcome.state).unwrap_or(Value::Null);
    json!({
        "answer": outcome.answer,
        "outcome": state,
        "exitCode": code,
        "sessionId": outcome.session_id,
        "turns": turns,
        "usage": {"prompt": usage.prompt, "cached": usage.cache_read,
                  "completion": usage.completion, "reasoning": usage.reasoning},
        "costUsd": cost,
        "question": outcome.question,
        "elapsedMs": u64::try_from(started.instant.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}
