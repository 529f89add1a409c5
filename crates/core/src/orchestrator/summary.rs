//! `summarizeAfter`: after a schedule's chain, one model call through the target
//! agent's own template asks for a concise summary of its exchanges in the current
//! conversation (no tools, the firing's budget, an `intent` record before and a `turn` record
//! after like any paid call) over what the agent's window holds, then a `summary` record
//! covering up to the last history record.
//! History restore puts the latest summary in place of what it covers, as one leading
//! exchange (a fixed user line, the summary as the assistant's reply): the system prompt stays
//! byte-identical, and the next request is shorter.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use super::agent::Exchange;
use super::{Orchestrator, now_ms};
use crate::budget::{self, BudgetStop, CausalBudget};
use crate::llm::{CancellationToken, ChatMessage, ChatRequest, Endpoint, Role, Usage, Wire};
use crate::sessions::{IntentRecord, Record, TurnRecord, TurnStop};
use crate::village::{AgentId, Language};

/// The user line that stands before a restored summary.
fn summary_lead(language: Language) -> String {
    language.pick(
        "（ここまでの会話の要約）",
        "(Summary of the conversation so far)",
    )
}

/// The instruction of the summary call (system and final user line).
fn instruction(language: Language) -> String {
    language.pick(
        "ここまでの会話を簡潔に要約してください。依頼、行ったこと、決まったこと、残っていることを、前置きなしの平文で書いてください。",
        "Summarise the conversation so far concisely: the requests, what was done, what was decided and what is still open. Plain text, no preamble.",
    )
}

/// An agent's history from the records that restore it: the latest summary of the agent (as
/// one leading exchange) and its exchanges after the seq the summary covers, oldest first.
pub(crate) fn history_from_records(
    records: &[(u64, Record)],
    agent_id: &str,
    language: Language,
) -> VecDeque<Exchange> {
    let latest = records.iter().rev().find_map(|(_, r)| match r {
        Record::Summary {
            agent_id: a,
            text,
            covers_up_to_seq,
        } if a == agent_id => Some((*covers_up_to_seq, text)),
        _ => None,
    });
    let mut out = VecDeque::new();
    let mut after = 0;
    if let Some((covers, text)) = latest {
        out.push_back(Exchange {
            sent: summary_lead(language),
            replied: text.clone(),
        });
        after = covers + 1;
    }
    out.extend(records.iter().filter_map(|(seq, r)| match r {
        Record::Exchange {
            agent_id: a,
            sent,
            replied,
        } if a == agent_id && *seq >= after => Some(Exchange {
            sent: sent.clone(),
            replied: replied.clone(),
        }),
        _ => None,
    }));
    out
}

/// A summary stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SummaryDone {
    /// The last seq the summary stands in for.
    pub covers: u64,
    /// Its length in characters.
    pub chars: usize,
}

/// What the call needs: the endpoint and the template's settings.
struct Target {
    endpoint: Endpoint,
    model: String,
    wire: Wire,
    request: ChatRequest,
}

impl Orchestrator {
    /// Summarises `agent_id`'s exchanges in the current conversation under `budget`, stores
    /// the `summary` record, and has the agent re-read its history before its next turn.
    /// `Err`: why not (a short lowercase reason for the log); nothing stored then.
    pub(crate) async fn summarize_agent(
        &self,
        agent_id: &str,
        budget: &Arc<CausalBudget>,
    ) -> Result<SummaryDone, String> {
        let inner = &self.inner;
        let language = inner.language();
        let (Some(store), Some(session)) = (inner.sessions(), inner.current_session()) else {
            return Err("no_conversation".into());
        };
        let records = store
            .history(&session)
            .map_err(|e| format!("store:{}", e.code()))?;
        let covers = records.last().map(|(seq, _)| *seq).ok_or("nothing")?;
        let mut history = history_from_records(&records, agent_id, language);
        // What the agent itself reads (its window), so the call stays bounded.
        while history.len() > super::agent::HISTORY_TURNS {
            history.pop_front();
        }
        if history.is_empty() {
            return Err("nothing".into());
        }
        let target = self.summary_target(agent_id, &history, language)?;
        let sent = target.endpoint.request_bytes(&target.request).unwrap_or(0);
        let estimate = budget::estimate(sent, target.request.max_output_tokens);
        let reservation = budget.reserve(estimate).map_err(|stop| match stop {
            BudgetStop::Exhausted => "budget_exhausted".to_owned(),
            BudgetStop::ReserveShort => "reserve_short".to_owned(),
        })?;
        let started_ms = now_ms();
        inner
            .record(vec![Record::Intent(IntentRecord {
                agent_id: agent_id.into(),
                ts_ms: started_ms,
                round: 1,
                model: target.model.clone(),
                backend: target.wire.as_str().to_owned(),
                reserved: reservation.amount(),
            })])
            .await;
        let asked = Instant::now();
        let result = inner.llm().chat(&target.endpoint, &target.request).await;
        let mut turn = TurnRecord {
            agent_id: agent_id.into(),
            ts_ms: started_ms,
            hop: 0,
            rounds: 1,
            waves: 0,
            stop: TurnStop::Completed,
            prompt: 0,
            cached: 0,
            completion: 0,
            reasoning: 0,
            cache_write: 0,
            cache_write_1h: 0,
            model: target.model,
            backend: target.wire.as_str().to_owned(),
            elapsed_ms: u64::try_from(asked.elapsed().as_millis()).unwrap_or(u64::MAX),
            usage_unknown: false,
            skill: None,
        };
        let text = match result {
            Ok(response) => {
                reservation.settle(response.usage.as_ref());
                add_usage(&mut turn, response.usage.as_ref());
                response.text().unwrap_or_default()
            }
            Err(e) => {
                drop(reservation); // an unknown cost is charged in full
                let code = crate::Coded::code(&e).to_owned();
                turn.usage_unknown = e.maybe_billed();
                turn.stop = TurnStop::Failed {
                    code: code.clone(),
                    status: None,
                    class: None,
                };
                inner.record(vec![Record::Turn(turn)]).await;
                return Err(format!("llm:{code}"));
            }
        };
        if text.trim().is_empty() {
            inner.record(vec![Record::Turn(turn)]).await;
            return Err("empty".into());
        }
        let done = SummaryDone {
            covers,
            chars: text.chars().count(),
        };
        let summary = Record::Summary {
            agent_id: agent_id.into(),
            text,
            covers_up_to_seq: covers,
        };
        inner.record(vec![Record::Turn(turn), summary]).await;
        inner.reload_history(agent_id);
        Ok(done)
    }

    /// The endpoint and the request of the summary call: the agent's template, no tools.
    fn summary_target(
        &self,
        agent_id: &str,
        history: &VecDeque<Exchange>,
        language: Language,
    ) -> Result<Target, String> {
        let world = self.inner.world();
        let agent = AgentId::new(agent_id)
            .ok()
            .and_then(|id| world.agent(&id).cloned())
            .ok_or("agent_missing")?;
        let template = world
            .template(&agent.model_template_id)
            .cloned()
            .ok_or("template_missing")?;
        let key = self.inner.secret(template.id.as_str());
        let endpoint = crate::model_endpoint::endpoint_of(&template, key)
            .map_err(|e| format!("llm:{}", crate::Coded::code(&e)))?;
        let mut messages = vec![ChatMessage::text(Role::System, instruction(language))];
        for past in history {
            messages.push(ChatMessage::text(Role::User, past.sent.clone()));
            messages.push(ChatMessage::text(Role::Assistant, past.replied.clone()));
        }
        messages.push(ChatMessage::text(Role::User, instruction(language)));
        let mut request =
            ChatRequest::new(template.model.clone(), messages, CancellationToken::new());
        request.temperature = template.temperature;
        request.max_output_tokens = template.max_output_tokens;
        request.effort = template.effort;
        Ok(Target {
            endpoint,
            model: template.model.clone(),
            wire: crate::model_endpoint::wire_of(&template),
            request,
        })
    }
}

fn add_usage(turn: &mut TurnRecord, usage: Option<&Usage>) {
    let Some(u) = usage else {
        return;
    };
    turn.prompt = u.prompt;
    turn.cached = u.cache_read;
    turn.completion = u.completion;
    turn.reasoning = u.reasoning;
    turn.cache_write = u.cache_write;
    turn.cache_write_1h = u.cache_write_1h;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(agent: &str, text: &str) -> Record {
        Record::Exchange {
            agent_id: agent.into(),
            sent: text.into(),
            replied: text.into(),
        }
    }

    #[test]
    fn the_latest_summary_stands_in_for_what_it_covers() {
        let records = vec![
            (0, exchange("a1", "old")),
            (
                1,
                Record::Summary {
                    agent_id: "a1".into(),
                    text: "first".into(),
                    covers_up_to_seq: 0,
                },
            ),
            (2, exchange("a1", "middle")),
            (3, exchange("b2", "other")),
            (
                4,
                Record::Summary {
                    agent_id: "a1".into(),
                    text: "second".into(),
                    covers_up_to_seq: 3,
                },
            ),
            (5, exchange("a1", "new")),
        ];
        let got = history_from_records(&records, "a1", Language::En);
        let replies: Vec<&str> = got.iter().map(|e| e.replied.as_str()).collect();
        assert_eq!(replies, ["second", "new"]);
        assert_eq!(got[0].sent, "(Summary of the conversation so far)");
        let plain = history_from_records(&records, "b2", Language::En);
        assert_eq!(plain.len(), 1, "another agent's summary is not this one's");
    }
}
