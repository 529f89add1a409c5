//! One turn of one agent: compose the prompt, call the model, run its tool calls, feed the
//! results back, up to the tool-round cap — with the repeat guard, the budget reservation and
//! an `intent` record before every call, interrupts at round boundaries — then record the
//! exchange and the turn.
//! Log lines carry counts and ids only.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::agent::{Exchange, roster_notices};
use super::delegation::{Synthetic, Via, delegate, describe, synthetic_tools};
use super::failure::TurnFailure;
use super::plan::{PlanTask, PlanWave, WaveStatus, parse_tasks, run_wave};
use super::repeat_guard::RepeatGuard;
use super::square::{FULL_CHARS, Utterance, fold};
use super::{Delivery, Inner, TurnControl, TurnOutcome, now_ms};
use crate::budget::{self, BudgetStop};
use crate::events::{CoreEvent, ReasonState};
use crate::llm::{
    ChatMessage, ChatRequest, ContentBlock, Endpoint as LlmEndpoint, InFlight, ProviderSkills,
    Role, StopReason, ToolResult, Usage, Wire,
};
use crate::prompt::{PromptParts, RosterEntry, compose_system_prompt, user_message};
use crate::sessions::{AgentMessage, Endpoint, IntentRecord, Record, TurnRecord, TurnStop};
use crate::tools::{ToolContext, ToolOutput, WorkDir, offered_tools, run_tool};
use crate::village::{AgentId, AgentSpec, ModelTemplate, World};

/// The most characters of one tool result the model reads (the bundled tools stay under
/// 16,000 on their own; MCP results are cut at 16,000 too).
const TOOL_RESULT_MAX_CHARS: usize = 20_000;
/// The most tool calls of one answer that run.
const MAX_CALLS_PER_ANSWER: usize = 32;

struct Tally {
    usage: Usage,
    rounds: u32,
    model_time: std::time::Duration,
    /// A call was cut by the close's hard stop: what it cost is unknown.
    usage_unknown: bool,
    /// Why the turn ends without an answer, when it says why.
    failure: Option<TurnFailure>,
}

pub(crate) async fn run(
    inner: &Arc<Inner>,
    agent_id: &str,
    control: &TurnControl,
    delivery: &Delivery,
    history: &mut VecDeque<Exchange>,
    roster_seen: &mut HashMap<String, bool>,
    mcp: &crate::mcp::McpConnections,
) -> TurnOutcome {
    let started = Instant::now();
    let started_ms = now_ms();
    let message = &delivery.message;
    let world = inner.world();
    let language = inner.language;
    inner.record(vec![Record::Message(message.clone())]).await;
    inner.log.line(&format!(
        "turn start: agent={agent_id} hop={} from={} chars={}",
        message.hop,
        message.from.label(),
        message.content.chars().count()
    ));
    inner.events.emit(CoreEvent::AgentTyping {
        agent_id: agent_id.into(),
        active: true,
    });

    let mut tally = Tally {
        usage: Usage::default(),
        rounds: 0,
        model_time: std::time::Duration::ZERO,
        usage_unknown: false,
        failure: None,
    };
    let setup = prepare(inner, &world, agent_id, mcp);
    let mut handed_off = false;
    let mut agent_name = agent_id.to_owned();
    let (stop, answer, sent, model, backend, cap) = match setup {
        Err(failure) => {
            let stop = failure.stop();
            tally.failure = Some(*failure);
            (stop, None, None, String::new(), "-".to_owned(), 0)
        }
        Ok(prepared) => {
            agent_name = prepared.agent.name.clone();
            let mut sent = user_message(&message.from.label(), &message.content, language);
            sent.push_str(&roster_notices(&prepared.roster, roster_seen, language));
            if prepared.agent.hears_room_log {
                sent.push_str(&fold(&inner.square.recent_for(agent_id), language));
            }
            let (stop, answer, handed) = rounds(
                inner, agent_id, control, delivery, history, &prepared, &sent, &mut tally, mcp,
            )
            .await;
            handed_off = handed;
            let cap = u32::from(prepared.agent.max_tool_iterations());
            (
                stop,
                answer,
                Some(sent),
                prepared.template.model.clone(),
                prepared.wire.as_str().to_owned(),
                cap,
            )
        }
    };
    let answer = answer.map(|a| {
        if a.trim().is_empty() {
            super::failure::empty_answer_text(&stop, language)
        } else {
            a
        }
    });
    let u = tally.usage;
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let seq = control.turn_seq.fetch_add(1, Ordering::SeqCst);
    if stop == TurnStop::Interrupted {
        inner.log.line(&format!(
            "turn interrupted: agent={agent_id} seq={seq} hop={} rounds={} elapsed_ms={elapsed_ms} prompt={} cached={} total={} model={model}",
            message.hop,
            tally.rounds,
            u.prompt,
            u.cache_read,
            u.total()
        ));
        inner.events.emit(CoreEvent::TurnInterrupted {
            agent_id: agent_id.into(),
            turn_seq: seq,
        });
    }
    inner.log.line(&format!(
        "turn: agent={agent_id} hop={} rounds={}/{cap} waves=0 stop={} prompt={} cached={} total={} reasoning={} backend={backend} model={model}{}{}",
        message.hop,
        tally.rounds,
        stop.log_label(),
        u.prompt,
        u.cache_read,
        u.total(),
        u.reasoning,
        if tally.usage_unknown { " usage=unknown" } else { "" },
        super::failure::log_fields(&stop),
    ));
    let record = TurnRecord {
        agent_id: agent_id.into(),
        ts_ms: started_ms,
        hop: message.hop,
        rounds: tally.rounds,
        waves: 0,
        stop: stop.clone(),
        prompt: u.prompt,
        cached: u.cache_read,
        completion: u.completion,
        reasoning: u.reasoning,
        cache_write: u.cache_write,
        cache_write_1h: u.cache_write_1h,
        model,
        backend,
        elapsed_ms,
        usage_unknown: tally.usage_unknown,
    };
    let mut batch = Vec::new();
    if let (Some(answer), Some(sent)) = (&answer, sent) {
        batch.push(Record::Exchange {
            agent_id: agent_id.into(),
            sent: sent.clone(),
            replied: answer.clone(),
        });
        history.push_back(Exchange {
            sent,
            replied: answer.clone(),
        });
    }
    let mut reply_event = None;
    if let Some(answer) = &answer {
        let mut reply = AgentMessage::new(
            Endpoint::Agent {
                id: agent_id.into(),
            },
            message.from.clone(),
            answer.clone(),
            message.hop,
            now_ms(),
        );
        reply.tokens = u.total();
        batch.push(Record::Message(reply.clone()));
        inner.square.push(Utterance {
            id: reply.id.clone(),
            speaker: agent_id.into(),
            speaker_name: agent_name.clone(),
            text: answer.clone(),
        });
        inner.log.line(&format!(
            "reply: agent={agent_id} to={} hop={} chars={}",
            message.from.label(),
            message.hop,
            answer.chars().count()
        ));
        reply_event = Some(reply);
    }
    batch.push(Record::Turn(record));
    let session = inner.record(batch).await;
    if let Some(reply) = reply_event {
        inner.events.emit(CoreEvent::MessageSent {
            message: Box::new(reply),
        });
    }
    if let Some(session) = &session {
        inner.events.emit(CoreEvent::TurnRecorded {
            agent_id: agent_id.into(),
            session_id: session.clone(),
        });
    }
    control.total_tokens.fetch_add(u.total(), Ordering::Relaxed);
    control.prompt_tokens.fetch_add(u.prompt, Ordering::Relaxed);
    control
        .cached_tokens
        .fetch_add(u.cache_read, Ordering::Relaxed);
    inner.events.emit(CoreEvent::AgentStatsUpdated {
        agent_id: agent_id.into(),
        uptime_secs: control.started.elapsed().as_secs(),
        total_tokens: control.total_tokens.load(Ordering::Relaxed),
        prompt_tokens: control.prompt_tokens.load(Ordering::Relaxed),
        cached_tokens: control.cached_tokens.load(Ordering::Relaxed),
        last_prompt_tokens: Some(u.prompt),
    });
    inner.events.emit(CoreEvent::AgentTyping {
        agent_id: agent_id.into(),
        active: false,
    });
    if let Some(failure) = tally
        .failure
        .as_ref()
        .filter(|_| matches!(stop, TurnStop::Failed { .. }))
    {
        inner.events.emit(CoreEvent::agent_failed(failure));
    }
    TurnOutcome {
        answer,
        stop,
        usage: u,
        handed_off,
        model_time: tally.model_time,
        failure: tally.failure,
        session_id: session,
    }
}

struct Prepared {
    agent: AgentSpec,
    template: ModelTemplate,
    wire: Wire,
    endpoint: LlmEndpoint,
    tools: ToolContext,
    system: crate::prompt::SystemPrompt,
    specs: Vec<crate::llm::ToolSpec>,
    synthetic: HashMap<String, Synthetic>,
    roster: Vec<RosterEntry>,
}

/// Reads what a turn needs; an `Err` says why a turn cannot run.
fn prepare(
    inner: &Inner,
    world: &World,
    agent_id: &str,
    mcp: &crate::mcp::McpConnections,
) -> Result<Prepared, Box<TurnFailure>> {
    let missing = || {
        TurnFailure::setup(
            agent_id,
            "AGENT_NOT_FOUND",
            format!("agent {agent_id} is not in world.json"),
            None,
        )
    };
    let id = AgentId::new(agent_id).map_err(|_| missing())?;
    let agent = world.agent(&id).cloned().ok_or_else(missing)?;
    let template = world
        .template(&agent.model_template_id)
        .cloned()
        .ok_or_else(|| {
            TurnFailure::setup(
                agent_id,
                "MODEL_TEMPLATE_MISSING",
                format!(
                    "agent {agent_id} names model template {}, which is not in world.json",
                    agent.model_template_id
                ),
                Some("add the template, or choose another for the agent".to_owned()),
            )
        })?;
    let key = (inner.secrets)(template.id.as_str());
    let endpoint = LlmEndpoint::for_template(&template, key)
        .map_err(|e| TurnFailure::llm(agent_id, template.id.as_str(), &template.base_url, &e))?;
    let files = inner.store.agent_files(&id).map_err(|e| {
        TurnFailure::setup(
            agent_id,
            e.code(),
            e.to_string(),
            crate::error::Coded::fix(&e),
        )
    })?;
    let work_dir = agent
        .work_dir
        .as_deref()
        .and_then(|d| WorkDir::new(std::path::Path::new(d)).ok())
        // The village's data folder (its files and the shelf) is fenced when a work folder
        // holds it (the preflight refuses that, WORK_DIR_CONTAINS_VILLAGE; this is the
        // second net).
        .map(|j| match inner.store.workspace().parent() {
            Some(data_dir) => j.fence(data_dir),
            None => j.fence(inner.store.workspace()),
        });
    let approval = inner.approval.read().map(|a| *a).unwrap_or_default();
    let language = inner.language;
    let mut specs = offered_tools(&agent, work_dir.is_some(), approval, language);
    let (extra_specs, synthetic) = synthetic_tools(&agent, world, language, work_dir.is_some());
    specs.extend(extra_specs);
    specs.extend(mcp.specs());
    let roster: Vec<RosterEntry> = agent
        .connected_agents
        .iter()
        .filter_map(|peer| world.agent(peer))
        .map(|peer| RosterEntry {
            id: peer.id.to_string(),
            name: peer.name.clone(),
            running: inner.is_running(peer.id.as_str()),
        })
        .collect();
    let parts = PromptParts {
        ordinance: inner.store.read_ordinance().unwrap_or_default(),
        agent_id: agent_id.into(),
        agent_name: agent.name.clone(),
        work_dir: agent.work_dir.clone(),
        grounding: template.google_search && Wire::of_template(&template) == Wire::Gemini,
        construct: files.read_construct().unwrap_or_default(),
        skill: files.read_skill().unwrap_or_default(),
        roster: roster.clone(),
        memory: files.read_memory().unwrap_or_default(),
    };
    let system = compose_system_prompt(&parts, language);
    let tools = ToolContext {
        agent_id: agent_id.into(),
        work_dir,
        agent_files: files,
        rag_sources: agent
            .rag_sources
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
        approval,
        language,
        trash: inner.trash.clone(),
    };
    Ok(Prepared {
        wire: Wire::of_template(&template),
        agent,
        template,
        endpoint,
        tools,
        system,
        specs,
        synthetic,
        roster,
    })
}

#[allow(clippy::too_many_arguments)]
async fn rounds(
    inner: &Arc<Inner>,
    agent_id: &str,
    control: &TurnControl,
    delivery: &Delivery,
    history: &VecDeque<Exchange>,
    p: &Prepared,
    sent: &str,
    tally: &mut Tally,
    mcp: &crate::mcp::McpConnections,
) -> (TurnStop, Option<String>, bool) {
    let mut messages = vec![ChatMessage::text(Role::System, p.system.text.clone())];
    for past in history {
        messages.push(ChatMessage::text(Role::User, past.sent.clone()));
        messages.push(ChatMessage::text(Role::Assistant, past.replied.clone()));
    }
    messages.push(ChatMessage::text(Role::User, sent.to_owned()));
    let cap = u32::from(p.agent.max_tool_iterations());
    let mut guard = RepeatGuard::default();
    let mut last_text = String::new();
    loop {
        if control.interrupted.load(Ordering::SeqCst) {
            return (TurnStop::Interrupted, None, false);
        }
        let request = request_for(p, &messages, control);
        let chars: usize = messages
            .iter()
            .flat_map(|m| &m.content)
            .map(block_chars)
            .sum();
        let estimate = budget::estimate(chars, p.template.max_output_tokens);
        let reservation = match reserve(inner, agent_id, delivery, estimate) {
            Ok(r) => r,
            Err(stop) => return (stop, None, false),
        };
        // An interrupt or the hard stop that came meanwhile: no intent for a call never sent.
        if control.token().is_cancelled() || control.abort.is_cancelled() {
            reservation.settle(Some(&Usage::default()));
            return (TurnStop::Interrupted, None, false);
        }
        // Durable before the call: a crash between payment and the turn record stays visible.
        inner
            .record(vec![intent(
                agent_id,
                p,
                tally.rounds + 1,
                reservation.amount(),
            )])
            .await;
        let asked = Instant::now();
        let result = inner.llm.chat(&p.endpoint, &request).await;
        tally.model_time += asked.elapsed();
        tally.rounds += 1;
        let response = match result {
            Ok(r) => r,
            Err(e) => {
                drop(reservation); // an unknown cost is charged in full
                tally.usage_unknown |= e.maybe_billed();
                let failure =
                    TurnFailure::llm(agent_id, p.template.id.as_str(), &p.template.base_url, &e);
                let stop = failure.stop();
                tally.failure = Some(failure);
                return (stop, None, false);
            }
        };
        reservation.settle(response.usage.as_ref());
        if let Some(u) = &response.usage {
            tally.usage.add(u);
        }
        if response.stop == StopReason::Aborted {
            tally.usage_unknown |= control.abort.is_cancelled();
            return (TurnStop::Interrupted, None, false);
        }
        if let Some(text) = response.text() {
            last_text = text;
        }
        let calls: Vec<_> = response.tool_calls().into_iter().cloned().collect();
        if calls.is_empty() {
            return (
                TurnStop::Completed,
                Some(response.text().unwrap_or_default()),
                false,
            );
        }
        // The cap counts model calls: the answer of the last one allowed gets no tool round,
        // since no call could read its results.
        if tally.rounds >= cap {
            inner.events.emit(CoreEvent::ToolLimitReached {
                agent_id: agent_id.into(),
                max_iterations: cap,
            });
            tally.failure = Some(TurnFailure::tool_limit(agent_id, cap));
            return (TurnStop::ToolLimit, Some(last_text), false);
        }
        messages.push(response.to_message());
        let mut results = Vec::new();
        // Every call gets a result (the wires require one), but only the first
        // MAX_CALLS_PER_ANSWER run: one answer cannot fan out into thousands of tool runs.
        let (calls, skipped) = calls.split_at(calls.len().min(MAX_CALLS_PER_ANSWER));
        for call in calls.iter().cloned() {
            if let Some(repeats) = guard.check(&call.name, &call.args) {
                inner.log.line(&format!(
                    "tool blocked: agent={agent_id} round={} name={} repeats={repeats}",
                    tally.rounds, call.name
                ));
                inner.events.emit(CoreEvent::ToolRepeatBlocked {
                    agent_id: agent_id.into(),
                    tool: call.name.clone(),
                    repeats,
                });
                tally.failure = Some(TurnFailure::repeat(agent_id, &call.name, repeats));
                return (
                    TurnStop::Repeat {
                        tool: call.name.clone(),
                    },
                    Some(last_text),
                    false,
                );
            }
            let mut args = call.args.clone();
            let synthetic = p.synthetic.get(&call.name).cloned();
            let reason = if synthetic.is_some() || mcp.has(&call.name) {
                ReasonState::Unsupported
            } else {
                take_reason(&mut args)
            };
            let output = match synthetic {
                None if mcp.has(&call.name) => {
                    cut_at_abort(&control.abort, mcp.call(&call.name, &args), inner.language).await
                }
                None => {
                    cut_at_abort(
                        &control.abort,
                        run_tool(&call.name, &args, &p.tools),
                        inner.language,
                    )
                    .await
                }
                Some(Synthetic::Transfer(target)) => {
                    let text = args
                        .get("message")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default();
                    let done =
                        delegate(inner, agent_id, &target, text, delivery, Via::Transfer).await;
                    if done.answer.is_some() {
                        inner.log.line(&format!(
                            "transfer: agent={agent_id} to={target} state=handed_off"
                        ));
                        return (TurnStop::Completed, done.answer, true);
                    }
                    let (ok, body) =
                        describe(&target, &done, inner.is_running(&target), inner.language);
                    ToolOutput { ok, body }
                }
                Some(other) => synthetic_call(inner, agent_id, &other, &args, delivery, p).await,
            };
            let reason_kind = match &reason {
                ReasonState::Written { .. } => "written",
                ReasonState::Omitted => "omitted",
                ReasonState::Unsupported => "unsupported",
            };
            let reason_chars = match &reason {
                ReasonState::Written { text } => text.chars().count(),
                _ => 0,
            };
            inner.log.line(&format!(
                "tool: agent={agent_id} round={} name={} ok={} args_chars={} body_chars={} reason={reason_kind} reason_chars={reason_chars}",
                tally.rounds,
                call.name,
                output.ok,
                call.args.to_string().chars().count(),
                output.body.chars().count()
            ));
            inner.events.emit(CoreEvent::ToolInvoked {
                agent_id: agent_id.into(),
                tool: call.name.clone(),
                ok: output.ok,
                reason,
                call_id: call.id.clone(),
            });
            results.push(ContentBlock::ToolResult(ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                // Every tool bounds its own answer; this is the last net for one that forgets.
                content: crate::tools::cap_chars(output.body, TOOL_RESULT_MAX_CHARS),
                is_error: !output.ok,
            }));
        }
        answer_skipped(inner, agent_id, tally.rounds, skipped, &mut results);
        messages.push(ChatMessage {
            role: Role::Tool,
            content: results,
        });
    }
}

/// The model request of one round: the template's settings, the turn's tokens.
fn request_for(p: &Prepared, messages: &[ChatMessage], control: &TurnControl) -> ChatRequest {
    let mut request =
        ChatRequest::new(p.template.model.clone(), messages.to_vec(), control.token());
    request.tools = p.specs.clone();
    request.temperature = p.template.temperature;
    request.max_output_tokens = p.template.max_output_tokens;
    request.effort = p.template.effort;
    request.cacheable_prefix_len = p.system.cacheable_prefix_len;
    request.skills = ProviderSkills::of(&p.template);
    request.in_flight = InFlight::Finish;
    request.abort = control.abort.clone();
    request
}

/// Reserves a call's estimate from the causal root's budget, or says (log line and stop)
/// why the call may not be sent.
fn reserve(
    inner: &Arc<Inner>,
    agent_id: &str,
    delivery: &Delivery,
    estimate: u64,
) -> Result<budget::Reservation, TurnStop> {
    delivery.budget.reserve(estimate).map_err(|stop| {
        let reason = match stop {
            BudgetStop::Exhausted => "exhausted",
            BudgetStop::ReserveShort => "reserve_short",
        };
        inner.log.line(&format!(
            "budget stop: agent={agent_id} ceiling={} remaining={} estimate={estimate} reason={reason}",
            delivery.budget.ceiling().map_or_else(|| "-".into(), |c| c.to_string()),
            delivery.budget.remaining().map_or_else(|| "-".into(), |r| r.to_string()),
        ));
        if stop == BudgetStop::Exhausted {
            TurnStop::BudgetExhausted
        } else {
            TurnStop::ReserveShort
        }
    })
}

/// Answers the calls of an answer past [`MAX_CALLS_PER_ANSWER`] without running them (every
/// call id needs a result), and says how many in the log.
fn answer_skipped(
    inner: &Arc<Inner>,
    agent_id: &str,
    round: u32,
    skipped: &[crate::llm::ToolCall],
    results: &mut Vec<ContentBlock>,
) {
    for call in skipped {
        results.push(ContentBlock::ToolResult(ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: inner.language.pick(
                "1 回の答えで使える道具は 32 回までです。この呼び出しは実行していません。",
                "At most 32 tool calls run per answer; this one did not run.",
            ),
            is_error: true,
        }));
    }
    if !skipped.is_empty() {
        inner.log.line(&format!(
            "tool calls skipped: agent={agent_id} round={round} count={}",
            skipped.len()
        ));
    }
}

/// Runs a tool unless the agent's hard stop (`abort`: its stop's or the close's) comes first
/// (then the tool is cut: a child of `run` dies with its dropped handle, an MCP call is
/// abandoned).
async fn cut_at_abort(
    abort: &tokio_util::sync::CancellationToken,
    tool: impl std::future::Future<Output = ToolOutput>,
    language: crate::village::Language,
) -> ToolOutput {
    tokio::select! {
        output = tool => output,
        () = abort.cancelled() => ToolOutput::fail(language.pick(
            "終了のため道具を止めました。",
            "The tool was stopped: the village is closing.",
        )),
    }
}

/// The `intent` record of the call about to be sent.
fn intent(agent_id: &str, p: &Prepared, round: u32, reserved: u64) -> Record {
    Record::Intent(IntentRecord {
        agent_id: agent_id.into(),
        ts_ms: now_ms(),
        round,
        model: p.template.model.clone(),
        backend: p.wire.as_str().to_owned(),
        reserved,
    })
}

/// Runs a synthetic tool other than `transfer_to_*`.
async fn synthetic_call(
    inner: &Arc<Inner>,
    agent_id: &str,
    tool: &Synthetic,
    args: &serde_json::Value,
    delivery: &Delivery,
    p: &Prepared,
) -> ToolOutput {
    let say = |ja: &str, en: &str| p.tools.say(ja, en);
    match tool {
        Synthetic::Ask(target) => {
            let Some(text) = args.get("message").and_then(serde_json::Value::as_str) else {
                return ToolOutput::fail(say("message が必要です。", "message is required."));
            };
            let done = delegate(inner, agent_id, target, text, delivery, Via::Ask).await;
            let (ok, body) = describe(target, &done, inner.is_running(target), inner.language);
            ToolOutput { ok, body }
        }
        Synthetic::Plan => {
            let Some(tasks) = parse_tasks(args) else {
                return ToolOutput::fail(say(
                    "tasks に {to, message} を 1 件以上並べてください。",
                    "tasks must list one or more {to, message}.",
                ));
            };
            plan_call(inner, agent_id, tasks, delivery, p).await
        }
        Synthetic::RoomLog => {
            let id = args
                .get("id")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            match inner.square.get(id) {
                Some(u) => ToolOutput::ok(crate::tools::cap(&u.text, FULL_CHARS)),
                None => ToolOutput::fail(say(
                    "その id の発言はありません。",
                    "No utterance with that id.",
                )),
            }
        }
        Synthetic::Blackboard => {
            let (owned, tools) = (args.clone(), p.tools.clone());
            let (output, outcome) = crate::tools::blocking(inner.language, move || {
                crate::tools::blackboard::run(&owned, &tools)
            })
            .await
            .unwrap_or_else(|failed| (failed, crate::tools::blackboard::Outcome::NotFound));
            let op = args
                .get("op")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("-");
            inner.log.line(&format!(
                "blackboard op: agent={agent_id} op={op} outcome={}",
                outcome.as_str()
            ));
            output
        }
        Synthetic::Transfer(_) => ToolOutput::fail("transfer"),
    }
}

async fn plan_call(
    inner: &Arc<Inner>,
    agent_id: &str,
    tasks: Vec<PlanTask>,
    delivery: &Delivery,
    p: &Prepared,
) -> ToolOutput {
    let plan_id = uuid::Uuid::new_v4().to_string();
    let wave = inner.plans.next_wave_number(agent_id);
    let bypass = inner.plan_bypass.load(Ordering::SeqCst);
    let review = p.agent.plan_review && !bypass && !delivery.route.auto_approve_plans;
    inner.plans.insert(PlanWave {
        plan_id: plan_id.clone(),
        agent_id: agent_id.into(),
        wave,
        tasks: tasks.clone(),
        status: if review {
            WaveStatus::Proposed
        } else {
            WaveStatus::Running
        },
        states: Vec::new(),
    });
    if review {
        inner.log.line(&format!(
            "plan pending: agent={agent_id} plan={plan_id} wave={wave} tasks={}",
            tasks.len()
        ));
        inner.events.emit(CoreEvent::PlanWaveProposed {
            plan_id: plan_id.clone(),
            agent_id: agent_id.into(),
            wave,
            tasks,
        });
        return ToolOutput::ok(p.tools.say(
            &format!("計画（{plan_id}）は人の確認待ちです。確認されると、答えがまとめて新しいメッセージで届きます。"),
            &format!("The plan ({plan_id}) waits for a human's review. Once dispatched, the answers come back together as a new message."),
        ));
    }
    if p.agent.plan_review {
        let reason = if bypass { "bypass" } else { "schedule" };
        inner.log.line(&format!(
            "plan review skipped: agent={agent_id} reason={reason}"
        ));
    }
    ToolOutput::ok(run_wave(inner, agent_id, &plan_id, wave, &tasks, delivery).await)
}

/// Removes the injected `reason` from the arguments and says whether it was given.
fn take_reason(args: &mut serde_json::Value) -> ReasonState {
    match args.as_object_mut().and_then(|o| o.remove("reason")) {
        Some(serde_json::Value::String(text)) if !text.trim().is_empty() => ReasonState::Written {
            text: text.chars().take(60).collect(),
        },
        _ => ReasonState::Omitted,
    }
}

fn block_chars(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text { text, .. } => text.chars().count(),
        ContentBlock::ToolUse(c) => c.args.to_string().len(),
        ContentBlock::ToolResult(r) => r.content.chars().count(),
        ContentBlock::Attachment(a) => a.data.len() / 4,
    }
}
