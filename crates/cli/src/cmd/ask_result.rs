//! `ask --output json`: the one result object on stdout — the answer, the outcome and exit
//! code, the stored conversation, and what the request spent (its turn records: every agent's
//! turns the request caused, counted from the request's start, as the host reads them), with
//! `≈ $` where every model used has a price; and the question (`ask_user`) when the outcome is
//! `needs_input`.

use fuseforks_core::orchestrator::ExternalOutcome;
use fuseforks_host::lifecycle::AskAnswer;
use serde_json::{Value, json};

/// The result object.
pub(crate) fn result(answer: &AskAnswer, outcome: &ExternalOutcome, code: u8) -> Value {
    let spent = answer.spent(outcome.session_id.as_deref(), answer.sent_at_ms);
    let (turns, usage) = (spent.turns, spent.usage);
    let state = serde_json::to_value(outcome.state).unwrap_or(Value::Null);
    json!({
        "answer": outcome.answer,
        "outcome": state,
        "exitCode": code,
        "sessionId": outcome.session_id,
        "turns": turns,
        "usage": {"prompt": usage.prompt, "cached": usage.cache_read,
                  "completion": usage.completion, "reasoning": usage.reasoning},
        "costUsd": spent.cost_usd,
        "question": outcome.question,
        "elapsedMs": u64::try_from(answer.sent_at.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}
