//! Judges inside a running village: the `judge_<id>` tool of a servant connected to a valid,
//! enabled judge (an unavailable judge offers none, and the log says why once), and one call:
//! the backend asked once (paid and recorded when a model template answers), the rules
//! evaluated, and the outcome routed — relayed like `ask_<id>`, fanned out like a plan wave,
//! returned, or the fixed undecided line — with its `judge:` log line.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::delegation::{Synthetic, Via, delegate, describe};
use super::plan::{PlanTask, join_bundle};
use super::{Delivery, Inner, now_ms};
use crate::budget::{self, BudgetStop};
use crate::judge::{
    Action, BackendAnswer, BackendSetup, JudgeLog, JudgeRules, JudgeState, answers_text,
    ask_backend, evaluate, judge_states, undecided_line, uses_jev, verdict_line,
};
use crate::llm::{CancellationToken, ToolSpec, Usage};
use crate::sessions::{IntentRecord, Record, TurnRecord, TurnStop};
use crate::tools::ToolOutput;
use crate::village::{AgentSpec, Language, ShelfStore, World};

/// A bound of the bytes a judge's model call adds to the message it routes (its prompt, its
/// rules and choices), reserved before the backend builds the request.
const JUDGE_PROMPT_BYTES: usize = 16 * 1024;

/// The longest tool name.
const MAX_TOOL_NAME: usize = 64;

/// The `judge_<id>` tools of `agent`: one per connected judge that can run. A judge that
/// cannot run is named once per village in the log (`judge disabled: …`).
pub(super) fn judge_tools(
    inner: &Inner,
    world: &World,
    agent: &AgentSpec,
    language: Language,
) -> (Vec<ToolSpec>, HashMap<String, Synthetic>) {
    let (mut specs, mut map) = (Vec::new(), HashMap::new());
    let connected: Vec<&str> = agent
        .connected_agents
        .iter()
        .map(|id| id.as_str())
        .filter(|id| world.judges.iter().any(|j| j.id.as_str() == *id))
        .collect();
    if connected.is_empty() {
        return (specs, map);
    }
    let jev_missing = jev_missing(inner);
    for (n, state) in judge_states(inner.store(), world)
        .iter()
        .filter(|s| connected.contains(&s.spec.id.as_str()))
        .enumerate()
    {
        let id = state.spec.id.as_str();
        let jev_why = jev_missing
            .as_ref()
            .filter(|_| uses_jev(&state.spec))
            .cloned();
        if let Some(why) = state.unavailable(world).or(jev_why) {
            if inner.first_judge_note(id, &why) {
                inner.log(&format!("judge disabled: judge={id} reason={why:?}"));
            }
            continue;
        }
        let mut name = format!("judge_{id}");
        if name.len() > MAX_TOOL_NAME {
            name = format!("judge_{n}");
        }
        specs.push(ToolSpec {
            name: name.clone(),
            description: language.pick(
                format!("判定者{}（{id}）に文を渡します。決まりに従って担当へ転送するか、判定を返します。", state.spec.name),
                format!("Give a message to the judge {} ({id}); its rules route it to a servant or send a verdict back.", state.spec.name),
            ),
            parameters: json!({"type": "object", "properties": {"message": {"type": "string", "description": language.pick("判定させる文。", "The message to judge.")}},
                "required": ["message"], "additionalProperties": false}),
        });
        map.insert(name, Synthetic::Judge(id.to_owned()));
    }
    (specs, map)
}

/// Why Jev cannot answer in this village (`None`: it can): `jev.json` names no account, or
/// the secret `jev_api_token` is missing. A Jev-backed judge then offers no tool (reference
/// docs/judges.md: a judge is usable only when Jev is configured).
fn jev_missing(inner: &Inner) -> Option<String> {
    let jev = shelf_jev(inner);
    if jev.account_id.trim().is_empty() {
        return Some("jev is not configured: jev.json has no accountId".into());
    }
    if (inner.secrets())("jev_api_token").is_none() {
        return Some("jev is not configured: the secret jev_api_token is missing".into());
    }
    None
}

/// The shelf's `jev.json` (defaults when absent or unreadable).
fn shelf_jev(inner: &Inner) -> crate::village::JevSettings {
    inner
        .store()
        .workspace()
        .parent()
        .and_then(|d| ShelfStore::new(d).load_jev().ok())
        .map(|l| l.value)
        .unwrap_or_default()
}

/// Runs `judge_<id>` for `caller` on `message`.
pub(super) async fn call_judge(
    inner: &Arc<Inner>,
    caller: &str,
    judge: &str,
    message: &str,
    delivery: &Delivery,
    cancel: CancellationToken,
) -> ToolOutput {
    let world = inner.world();
    let language = inner.language();
    let states = judge_states(inner.store(), &world);
    let Some(state) = states.iter().find(|s| s.spec.id.as_str() == judge) else {
        return ToolOutput::fail(undecided_line(judge, "not_configured", language));
    };
    let rules = match (&state.rules, state.unavailable(&world)) {
        (Ok(rules), None) => rules,
        _ => return ToolOutput::fail(undecided_line(judge, "not_configured", language)),
    };
    let mut log = JudgeLog {
        caller: caller.into(),
        judge: judge.into(),
        rule: "none".into(),
        ..JudgeLog::default()
    };
    let reply = ask_paid(inner, &world, state, rules, message, delivery, cancel).await;
    let usage = reply.usage.unwrap_or_default();
    (log.input_tokens, log.output_tokens) = (usage.prompt, usage.completion);
    let answers = match &reply.answers {
        Ok(a) => a,
        Err(u) => {
            log.outcome = "undecided".into();
            log.reason = Some(u.reason.into());
            inner.log(&log.line());
            return ToolOutput::ok(undecided_line(judge, u.reason, language));
        }
    };
    let decision = evaluate(rules, answers);
    log.answers = answers_text(rules, answers);
    log.rule = decision.rule.log_text();
    log.outcome = decision.outcome_word().into();
    let verdict = verdict_line(judge, &decision, &log.answers, language);
    let output = match &decision.outcome.action {
        Action::Return => ToolOutput::ok(verdict),
        Action::To(ids) => {
            log.to.clone_from(ids);
            // The verdict line without the note: the note is for `return`.
            let line = verdict.lines().next().unwrap_or_default().to_owned();
            let body = format!("{message}\n\n{line}");
            if let [target] = ids.as_slice() {
                let done = delegate(inner, caller, target, &body, delivery, Via::Judge).await;
                let (ok, text) = describe(target, &done, inner.is_running(target), language);
                ToolOutput {
                    ok,
                    body: text,
                    approval: None,
                }
            } else {
                let bundle = fan_out(inner, caller, ids, &body, delivery).await;
                log.bundle_chars = Some(bundle.chars().count());
                ToolOutput::ok(bundle)
            }
        }
    };
    inner.log(&log.line());
    output
}

/// `to=[many]`: the same message to every target at once, bundled as a plan wave is (the
/// judge's targets are its own routes, not the caller's connections).
async fn fan_out(
    inner: &Arc<Inner>,
    caller: &str,
    ids: &[String],
    body: &str,
    delivery: &Delivery,
) -> String {
    let tasks: Vec<PlanTask> = ids
        .iter()
        .map(|to| PlanTask {
            to: to.clone(),
            message: body.to_owned(),
        })
        .collect();
    let joins = tasks
        .iter()
        .map(|task| {
            let (inner, caller, task) = (Arc::clone(inner), caller.to_owned(), task.clone());
            let shadow = Delivery {
                message: delivery.message.clone(),
                budget: Arc::clone(&delivery.budget),
                route: delivery.route.clone(),
                reply: None,
                resume: None,
            };
            tokio::spawn(async move {
                delegate(
                    &inner,
                    &caller,
                    &task.to,
                    &task.message,
                    &shadow,
                    Via::Judge,
                )
                .await
            })
        })
        .collect();
    join_bundle(&tasks, joins).await.0
}

/// One backend call. A model-template judge is a paid call: its estimate is reserved from
/// the caller's causal-root budget (refused: undecided, `reason=budget`), settled once with
/// the reported usage, and an `intent` and a `turn` record attributed to the judge are
/// written. Jev is recorded too, and never charged.
async fn ask_paid(
    inner: &Arc<Inner>,
    world: &World,
    state: &JudgeState,
    rules: &JudgeRules,
    message: &str,
    delivery: &Delivery,
    cancel: CancellationToken,
) -> BackendAnswer {
    let judge = state.spec.id.as_str();
    let started = (Instant::now(), now_ms());
    let jev = shelf_jev(inner);
    let secrets = inner.secrets();
    let lookup = move |name: &str| secrets(name).map(|k| k.expose().to_owned());
    let setup = BackendSetup {
        world,
        jev: &jev,
        secret: &lookup,
        client: inner.llm(),
        language: inner.language(),
    };
    let template = state
        .spec
        .model_template_id
        .as_ref()
        .and_then(|t| world.template(t));
    let reservation = match template.filter(|_| !uses_jev(&state.spec)) {
        None => None,
        Some(t) => {
            // The message in bytes and a bound for the judge's own prompt (its rules and
            // choices), read before the backend builds the request.
            let chars = message.len() + JUDGE_PROMPT_BYTES;
            match delivery
                .budget
                .reserve(budget::estimate(chars, t.max_output_tokens))
            {
                Ok(r) => Some(r),
                Err(stop) => {
                    let why = match stop {
                        BudgetStop::Exhausted => "budget exhausted",
                        BudgetStop::ReserveShort => "reservation does not fit",
                    };
                    return BackendAnswer::not_made(
                        "budget",
                        why,
                        crate::model_endpoint::wire_of(t).as_str(),
                    );
                }
            }
        }
    };
    if let Some(r) = &reservation {
        inner
            .record(vec![Record::Intent(IntentRecord {
                agent_id: judge.into(),
                ts_ms: now_ms(),
                round: 1,
                model: template.map(|t| t.model.clone()).unwrap_or_default(),
                backend: template
                    .map(|t| crate::model_endpoint::wire_of(t).as_str().to_owned())
                    .unwrap_or_default(),
                reserved: r.amount(),
            })])
            .await;
    }
    let reply = ask_backend(&setup, &state.spec, rules, message, cancel).await;
    if let Some(r) = reservation {
        if reply.usage_unknown && reply.usage.is_none() {
            drop(r); // an unknown cost is charged in full
        } else {
            r.settle(Some(&reply.usage.unwrap_or_default()));
        }
    }
    record_turn(inner, judge, &reply, started, delivery.message.hop).await;
    reply
}

/// The judge's `turn` record: its usage attributed to the judge's id, so stats show it.
async fn record_turn(
    inner: &Inner,
    judge: &str,
    reply: &BackendAnswer,
    started: (Instant, i64),
    hop: u32,
) {
    let u: Usage = reply.usage.unwrap_or_default();
    let stop = match &reply.answers {
        Ok(_) => TurnStop::Completed,
        Err(un) => TurnStop::Failed {
            code: format!("JUDGE_{}", un.reason.to_ascii_uppercase()),
            status: None,
            class: None,
        },
    };
    let record = TurnRecord {
        agent_id: judge.into(),
        ts_ms: started.1,
        hop,
        rounds: u32::from(reply.usage.is_some() || reply.usage_unknown),
        waves: 0,
        stop,
        prompt: u.prompt,
        cached: u.cache_read,
        completion: u.completion,
        reasoning: u.reasoning,
        cache_write: u.cache_write,
        cache_write_1h: u.cache_write_1h,
        model: reply.model.clone(),
        backend: reply.backend.clone(),
        elapsed_ms: u64::try_from(started.0.elapsed().as_millis()).unwrap_or(u64::MAX),
        usage_unknown: reply.usage_unknown,
        skill: None,
    };
    inner.record(vec![Record::Turn(record)]).await;
}
