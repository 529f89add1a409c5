//! One turn of one agent: compose the prompt, call the model, run its tool calls, feed the
//! results back, up to the tool-round cap — with the repeat guard, the budget reservation and
//! an `intent` record before every call, interrupts at round boundaries — then record the
//! exchange and the turn.
//! Log lines carry counts and ids only.
//!
//! [`Turn`] holds what a turn keeps between its rounds; [`Turn::round`] is one model call,
//! [`Turn::call_tool`] one tool call (`call.rs`), [`Turn::finish`] the record, the reply and
//! the events; how the rounds ended is a [`RoundsEnd`]. What a turn reads before its first
//! round is in `prepare.rs`; what it records waits for its durable points in `durable.rs`.

mod ask;
mod call;
mod durable;
mod prepare;
mod trace_spans;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::agent::{Exchange, roster_notices};
use super::failure::{self, TurnFailure};
use super::repeat_guard::RepeatGuard;
use super::square::{Utterance, fold};
use super::{Delivery, Inner, TurnControl, TurnOutcome, now_ms};
use crate::budget::{self, BudgetStop};
use crate::events::CoreEvent;
use crate::llm::{ChatMessage, ChatResponse, Role, StopReason, Usage};
use crate::mcp::McpConnections;
use crate::prompt::user_message;
use crate::sessions::{AgentMessage, Endpoint, Record, TurnRecord, TurnSkill, TurnStop};
use prepare::{Prepared, intent, prepare, request_for};

/// What a turn counts as it goes.
#[derive(Default)]
struct Tally {
    usage: Usage,
    rounds: u32,
    /// Plan waves this turn's `plan` calls ran (a wave proposed for review runs later, as a
    /// root of its own, and is not counted).
    waves: u32,
    model_time: Duration,
    /// A call was cut by the close's hard stop: what it cost is unknown.
    usage_unknown: bool,
    /// Why the turn ends without an answer, when it says why.
    failure: Option<TurnFailure>,
}

/// How the rounds of a turn ended.
#[derive(Debug)]
enum RoundsEnd {
    /// The model answered without tool calls.
    Answered(String),
    /// A `transfer_to_*` target answered: its answer is the turn's.
    HandedOff(String),
    /// Cut by a guard (the tool-round cap, the repeat guard): the model's last text is the
    /// answer.
    Cut { stop: TurnStop, last_text: String },
    /// No answer: interrupted, refused by the budget, or failed.
    Stopped(TurnStop),
    /// It asked the person (`ask_user`, headless) and ends waiting for the answer.
    Asked(Box<ask::Asked>),
}

impl RoundsEnd {
    fn stop(&self) -> TurnStop {
        match self {
            Self::Answered(_) | Self::HandedOff(_) => TurnStop::Completed,
            Self::Cut { stop, .. } | Self::Stopped(stop) => stop.clone(),
            Self::Asked(_) => TurnStop::NeedsInput,
        }
    }

    fn handed_off(&self) -> bool {
        matches!(self, Self::HandedOff(_))
    }

    fn into_answer(self) -> Option<String> {
        match self {
            Self::Answered(text) | Self::HandedOff(text) => Some(text),
            Self::Cut { last_text, .. } => Some(last_text),
            Self::Stopped(_) | Self::Asked(_) => None,
        }
    }
}

/// What the rounds leave for [`Turn::finish`].
struct Ran {
    end: RoundsEnd,
    /// The user message as sent (`None`: the turn could not start).
    sent: Option<String>,
    with: Setup,
}

/// What the turn ran with, as its lines and records name it.
struct Setup {
    agent_name: String,
    model: String,
    backend: String,
    /// The tool-round cap.
    cap: u32,
    /// What `SKILL.md`'s front matter asked (`None`: nothing).
    skill: Option<crate::village::SkillTerms>,
}

/// One turn of one agent, from its delivery to its record.
pub(crate) struct Turn<'a> {
    inner: &'a Arc<Inner>,
    agent_id: &'a str,
    control: &'a TurnControl,
    delivery: &'a Delivery,
    mcp: &'a McpConnections,
    tally: Tally,
    guard: RepeatGuard,
    started: Instant,
    started_ms: i64,
    /// The kill switch's cut token as this turn began: an abort cancels it, so this turn (and
    /// none started after the abort) ends at its next call.
    cut: tokio_util::sync::CancellationToken,
    /// Held from the turn's first paid model call until its record is on disk: an abort
    /// waits for it (`crate::safety::SectionKind::PaidCallRecord`).
    paid: Option<crate::safety::Section>,
    /// Records waiting for the turn's next durable point (the incoming message, until the
    /// first call's intent or the turn's end).
    pending: durable::Pending,
    /// The turn's trace span, inside its causal root's (nothing when tracing is off).
    pub(super) span: crate::trace::Span,
}

impl<'a> Turn<'a> {
    pub(crate) fn new(
        inner: &'a Arc<Inner>,
        agent_id: &'a str,
        control: &'a TurnControl,
        mcp: &'a McpConnections,
        delivery: &'a Delivery,
    ) -> Self {
        Self {
            inner,
            agent_id,
            control,
            delivery,
            mcp,
            tally: Tally::default(),
            guard: RepeatGuard::default(),
            started: Instant::now(),
            started_ms: now_ms(),
            cut: inner.safety().switch().cut_token(),
            paid: None,
            pending: durable::Pending::default(),
            span: trace_spans::turn_span(inner, agent_id, delivery),
        }
    }

    /// Runs the turn: `history` is the agent's window of exchanges in this conversation (the
    /// turn's is added), `roster_seen` the peers' running state at its last turn.
    pub(crate) async fn run(
        mut self,
        history: &mut VecDeque<Exchange>,
        roster_seen: &mut HashMap<String, bool>,
    ) -> TurnOutcome {
        let (inner, agent_id, delivery) = (self.inner, self.agent_id, self.delivery);
        let message = &delivery.message;
        let world = inner.world();
        // Written with the first call's intent, or with the turn's record if no call is sent.
        self.pending.stage(Record::Message(message.clone()));
        inner.emit(
            &format!(
                "turn start: agent={agent_id} hop={} from={} chars={}",
                message.hop,
                message.from.label(),
                message.content.chars().count()
            ),
            CoreEvent::AgentTyping {
                agent_id: agent_id.into(),
                active: true,
            },
        );
        let dry_run = delivery.route.dry_run.is_some();
        let ran = match prepare(inner, &world, agent_id, self.mcp, dry_run) {
            Err(failure) => {
                let stop = failure.stop();
                self.tally.failure = Some(*failure);
                Ran {
                    end: RoundsEnd::Stopped(stop),
                    sent: None,
                    with: Setup {
                        agent_name: agent_id.to_owned(),
                        model: String::new(),
                        backend: "-".to_owned(),
                        cap: 0,
                        skill: None,
                    },
                }
            }
            Ok(prepared) => {
                let sent = match &delivery.resume {
                    Some(asked) => asked.sent.clone(),
                    None => self.compose(&prepared, roster_seen),
                };
                let end = self.rounds(&prepared, history, &sent).await;
                Ran {
                    end,
                    sent: Some(sent),
                    with: Setup {
                        agent_name: prepared.agent.name.clone(),
                        model: prepared.template.model.clone(),
                        backend: prepared.wire.as_str().to_owned(),
                        cap: prepared.round_cap(),
                        skill: (!prepared.skill.is_empty()).then(|| prepared.skill.clone()),
                    },
                }
            }
        };
        self.finish(ran, history).await
    }

    /// What the audit log names a turn's side effects by: the village, the agent, the root.
    pub(super) fn audit_context(&self) -> (&Arc<Inner>, &str, &str) {
        (self.inner, self.agent_id, self.delivery.budget.root_id())
    }

    /// The user message of the turn: the envelope, the roster's changes, the square.
    fn compose(&self, p: &Prepared, roster_seen: &mut HashMap<String, bool>) -> String {
        let language = self.inner.language();
        let message = &self.delivery.message;
        let mut sent = user_message(&message.from.label(), &message.content, language);
        sent.push_str(&roster_notices(&p.roster, roster_seen, language));
        if p.agent.hears_room_log {
            sent.push_str(&fold(
                &self.inner.square().recent_for(self.agent_id),
                language,
            ));
        }
        sent
    }

    /// Model calls and tool rounds until an answer, a guard, a stop or a failure.
    async fn rounds(
        &mut self,
        p: &Prepared,
        history: &VecDeque<Exchange>,
        sent: &str,
    ) -> RoundsEnd {
        let mut messages = vec![ChatMessage::text(Role::System, p.system.text.clone())];
        // `fork: subagent`: a fresh context, none of the conversation's earlier exchanges.
        let history = history.iter().filter(|_| p.skill.fork.is_none());
        for past in history {
            messages.push(ChatMessage::text(Role::User, past.sent.clone()));
            messages.push(ChatMessage::text(Role::Assistant, past.replied.clone()));
        }
        messages.push(ChatMessage::text(Role::User, sent.to_owned()));
        let base = messages.len();
        if let Some(asked) = &self.delivery.resume {
            messages.extend(ask::taken_up(asked, &self.delivery.message.content));
        }
        let cap = p.round_cap();
        let mut last_text = String::new();
        loop {
            let response = match self.round(p, &messages).await {
                Ok(response) => response,
                Err(end) => return end,
            };
            if let Some(text) = response.text() {
                last_text = text;
            }
            let calls: Vec<_> = response.tool_calls().into_iter().cloned().collect();
            if calls.is_empty() {
                return RoundsEnd::Answered(response.text().unwrap_or_default());
            }
            // The cap counts model calls: the answer of the last one allowed gets no tool
            // round, since no call could read its results.
            if self.tally.rounds >= cap {
                self.inner.event(CoreEvent::ToolLimitReached {
                    agent_id: self.agent_id.into(),
                    max_iterations: cap,
                });
                self.tally.failure = Some(TurnFailure::tool_limit(self.agent_id, cap));
                return RoundsEnd::Cut {
                    stop: TurnStop::ToolLimit,
                    last_text,
                };
            }
            messages.push(response.to_message());
            let results = match self.tool_round(p, &calls, &last_text).await {
                Ok(results) => results,
                Err(RoundsEnd::Asked(mut asked)) => {
                    asked.sent = sent.to_owned();
                    asked.rounds = messages[base..].to_vec();
                    return RoundsEnd::Asked(asked);
                }
                Err(end) => return end,
            };
            messages.push(ChatMessage {
                role: Role::Tool,
                content: results,
            });
        }
    }

    /// One model call: the interrupt checked, the budget reserved, the `intent` recorded, the
    /// call sent and settled. `Err`: the rounds end here.
    async fn round(
        &mut self,
        p: &Prepared,
        messages: &[ChatMessage],
    ) -> Result<ChatResponse, RoundsEnd> {
        let interrupted = || RoundsEnd::Stopped(TurnStop::Interrupted);
        if self.control.interrupted.load(Ordering::SeqCst) || self.cut.is_cancelled() {
            return Err(interrupted());
        }
        // The kill switch: paused holds here; halted (or cut while held) ends the turn.
        let stops = [&self.control.token(), &self.control.abort, &self.cut];
        if !self.inner.safety().pass(stops).await {
            return Err(interrupted());
        }
        let cut = self.cut.clone();
        let mut request = request_for(p, messages, self.control);
        if p.endpoint.stream {
            // The answer's text reaches the surfaces as it is written (events only, never the log).
            let (inner, agent_id) = (Arc::clone(self.inner), self.agent_id.to_owned());
            request.on_delta = Some(crate::llm::DeltaSink(Arc::new(move |piece| {
                let (text, restart) = match piece {
                    crate::llm::Piece::Text(text) => (text.to_owned(), false),
                    crate::llm::Piece::Restart => (String::new(), true),
                };
                inner.event(CoreEvent::MessageDelta {
                    agent_id: agent_id.clone(),
                    text,
                    restart,
                });
            })));
        }
        let (abort, _bridge) = super::safety::either(&self.control.abort, &cut);
        request.abort = abort;
        // The whole request as sent (tool specs included) and the whole output cap: an upper
        // bound of what the call can cost from a server that honours its cap.
        let sent = p.endpoint.request_bytes(&request).unwrap_or(0);
        let estimate = budget::estimate(sent, request.max_output_tokens);
        let reservation = self.reserve(estimate).map_err(RoundsEnd::Stopped)?;
        // An interrupt or the hard stop that came meanwhile: no intent for a call never sent.
        if self.control.token().is_cancelled() || self.control.abort.is_cancelled() {
            reservation.settle(Some(&Usage::default()));
            return Err(interrupted());
        }
        // Durable before the call: a crash between payment and the turn record stays visible.
        let round = self.tally.rounds + 1;
        let intent = intent(self.agent_id, p, round, reservation.amount());
        self.pending.point(self.inner, vec![intent]).await;
        if self.paid.is_none() {
            let section = crate::safety::SectionKind::PaidCallRecord;
            self.paid = Some(self.inner.safety().sections().enter(section));
        }
        let asked = Instant::now();
        let mut span = trace_spans::call_span(&self.span, p);
        let result = self.inner.llm().chat(&p.endpoint, &request).await;
        trace_spans::call_ended(&mut span, &result);
        drop(span);
        self.tally.model_time += asked.elapsed();
        self.tally.rounds += 1;
        let response = match result {
            Ok(response) => response,
            Err(e) => {
                drop(reservation); // an unknown cost is charged in full
                if let Some(u) = e.usage_so_far() {
                    self.tally.usage.add(u); // what a broken stream reported before it broke
                }
                self.tally.usage_unknown |= e.maybe_billed();
                let failure = TurnFailure::llm(self.agent_id, &p.template, &e);
                let stop = failure.stop();
                self.tally.failure = Some(failure);
                return Err(RoundsEnd::Stopped(stop));
            }
        };
        if response.stop == StopReason::Aborted {
            drop(reservation); // a cut call's usage (a stream's so far) is a lower bound
        } else {
            reservation.settle(response.usage.as_ref());
        }
        if let Some(u) = &response.usage {
            self.tally.usage.add(u);
            if u.completion > u64::from(request.max_output_tokens) {
                let template = p.template.id.as_str();
                let failure = TurnFailure::over_cap(
                    self.agent_id,
                    template,
                    u.completion,
                    request.max_output_tokens,
                );
                let stop = failure.stop();
                self.tally.failure = Some(failure);
                return Err(RoundsEnd::Stopped(stop));
            }
        }
        if response.stop == StopReason::Aborted {
            // A call cut mid-stream reports what its stream had said: a lower bound.
            self.tally.usage_unknown |=
                self.control.abort.is_cancelled() || cut.is_cancelled() || response.usage.is_some();
            return Err(interrupted());
        }
        Ok(response)
    }

    /// Reserves a call's estimate from the causal root's budget, or says (log line and stop)
    /// why the call may not be sent.
    fn reserve(&self, estimate: u64) -> Result<budget::Reservation, TurnStop> {
        let budget = &self.delivery.budget;
        budget.reserve(estimate).map_err(|stop| {
            let reason = match stop {
                BudgetStop::Exhausted => "exhausted",
                BudgetStop::ReserveShort => "reserve_short",
            };
            self.inner.log(&format!(
                "budget stop: agent={} ceiling={} remaining={} estimate={estimate} reason={reason}",
                self.agent_id,
                budget
                    .ceiling()
                    .map_or_else(|| "-".into(), |c| c.to_string()),
                budget
                    .remaining()
                    .map_or_else(|| "-".into(), |r| r.to_string()),
            ));
            self.inner
                .safety()
                .record_detached(crate::safety::AuditEvent::new(
                    self.agent_id,
                    budget.root_id(),
                    "budget_stop",
                    reason,
                    estimate.to_string().as_bytes(),
                ));
            if stop == BudgetStop::Exhausted {
                TurnStop::BudgetExhausted
            } else {
                TurnStop::ReserveShort
            }
        })
    }

    /// Records the turn (the exchange, the reply, the `turn` record in one commit), writes its
    /// log lines and events, and says how it went.
    async fn finish(mut self, ran: Ran, history: &mut VecDeque<Exchange>) -> TurnOutcome {
        let language = self.inner.language();
        let stop = ran.end.stop();
        let handed_off = ran.end.handed_off();
        let (end, asked) = match ran.end {
            RoundsEnd::Asked(asked) => (RoundsEnd::Stopped(TurnStop::NeedsInput), Some(*asked)),
            end => (end, None),
        };
        let answer = end.into_answer().map(|a| {
            if a.trim().is_empty() {
                failure::empty_answer_text(&stop, language)
            } else {
                a
            }
        });
        let elapsed_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let seq = self.control.turn_seq.fetch_add(1, Ordering::SeqCst);
        self.log_end(&stop, seq, elapsed_ms, &ran.with);
        let mut batch = Vec::new();
        if let (Some(answer), Some(sent)) = (&answer, ran.sent) {
            batch.push(Record::Exchange {
                agent_id: self.agent_id.into(),
                sent: sent.clone(),
                replied: answer.clone(),
            });
            history.push_back(Exchange {
                sent,
                replied: answer.clone(),
            });
        }
        let reply = answer
            .as_ref()
            .map(|answer| self.reply(answer, &ran.with.agent_name));
        batch.extend(reply.iter().cloned().map(Record::Message));
        let record = self.turn_record(stop.clone(), ran.with, elapsed_ms);
        trace_spans::turn_ended(&mut self.span, &record);
        batch.push(Record::Turn(record));
        let asked = asked.map(|asked| {
            let (records, question) = self.question_records(asked);
            batch.extend(records);
            question
        });
        let session = self.pending.point(self.inner, batch).await;
        drop(self.paid.take());
        let question = asked.map(|q| {
            self.inner.log(&format!(
                "question asked: agent={} id={} chars={} choices={} waiting=stored",
                self.agent_id,
                q.question_id,
                q.question.chars().count(),
                q.choices.len()
            ));
            crate::events::PendingQuestion::of(&q, session.clone())
        });
        if let Some(reply) = reply {
            self.inner.event(CoreEvent::MessageSent {
                message: Box::new(reply),
            });
        }
        if let Some(session) = &session {
            self.inner.event(CoreEvent::TurnRecorded {
                agent_id: self.agent_id.into(),
                session_id: session.clone(),
            });
        }
        self.after(&stop);
        TurnOutcome {
            answer,
            stop,
            usage: self.tally.usage,
            handed_off,
            model_time: self.tally.model_time,
            failure: self.tally.failure,
            session_id: session,
            question,
        }
    }

    /// The `turn interrupted:` line and event (an interrupted turn) and the `turn:` line.
    fn log_end(&self, stop: &TurnStop, seq: u64, elapsed_ms: u64, with: &Setup) {
        let (model, backend, cap) = (&with.model, &with.backend, with.cap);
        let (agent_id, hop, t, u) = (
            self.agent_id,
            self.delivery.message.hop,
            &self.tally,
            &self.tally.usage,
        );
        if *stop == TurnStop::Interrupted {
            self.inner.emit(
                &format!(
                    "turn interrupted: agent={agent_id} seq={seq} hop={hop} rounds={} elapsed_ms={elapsed_ms} prompt={} cached={} total={} model={model}",
                    t.rounds,
                    u.prompt,
                    u.cache_read,
                    u.total()
                ),
                CoreEvent::TurnInterrupted {
                    agent_id: agent_id.into(),
                    turn_seq: seq,
                },
            );
        }
        self.inner.log(&format!(
            "turn: agent={agent_id} hop={hop} rounds={}/{cap} waves={} stop={} prompt={} cached={} total={} reasoning={} backend={backend} model={model}{}{}",
            t.rounds,
            t.waves,
            stop.log_label(),
            u.prompt,
            u.cache_read,
            u.total(),
            u.reasoning,
            if t.usage_unknown { " usage=unknown" } else { "" },
            failure::log_fields(stop),
        ));
    }

    /// The reply message: heard in the square, said in the log (recorded by the caller).
    fn reply(&self, answer: &str, agent_name: &str) -> AgentMessage {
        let message = &self.delivery.message;
        let mut reply = AgentMessage::new(
            Endpoint::Agent {
                id: self.agent_id.into(),
            },
            message.from.clone(),
            answer.to_owned(),
            message.hop,
            now_ms(),
        );
        reply.tokens = self.tally.usage.total();
        self.inner.square().push(Utterance {
            id: reply.id.clone(),
            speaker: self.agent_id.into(),
            speaker_name: agent_name.to_owned(),
            text: answer.to_owned(),
        });
        self.inner.log(&format!(
            "reply: agent={} to={} hop={} chars={}",
            self.agent_id,
            message.from.label(),
            message.hop,
            answer.chars().count()
        ));
        reply
    }

    fn turn_record(&self, stop: TurnStop, with: Setup, elapsed_ms: u64) -> TurnRecord {
        let Setup {
            model,
            backend,
            cap,
            skill,
            ..
        } = with;
        let u = &self.tally.usage;
        TurnRecord {
            agent_id: self.agent_id.into(),
            ts_ms: self.started_ms,
            hop: self.delivery.message.hop,
            rounds: self.tally.rounds,
            waves: self.tally.waves,
            stop,
            prompt: u.prompt,
            cached: u.cache_read,
            completion: u.completion,
            reasoning: u.reasoning,
            cache_write: u.cache_write,
            cache_write_1h: u.cache_write_1h,
            model,
            backend,
            elapsed_ms,
            usage_unknown: self.tally.usage_unknown,
            skill: skill.map(|terms| TurnSkill {
                terms,
                round_cap: cap,
            }),
        }
    }

    /// The agent's running totals and the events that close the turn.
    fn after(&self, stop: &TurnStop) {
        let (control, u, agent_id) = (self.control, &self.tally.usage, self.agent_id);
        control.total_tokens.fetch_add(u.total(), Ordering::Relaxed);
        control.prompt_tokens.fetch_add(u.prompt, Ordering::Relaxed);
        control
            .cached_tokens
            .fetch_add(u.cache_read, Ordering::Relaxed);
        self.inner.event(CoreEvent::AgentStatsUpdated {
            agent_id: agent_id.into(),
            uptime_secs: control.started.elapsed().as_secs(),
            total_tokens: control.total_tokens.load(Ordering::Relaxed),
            prompt_tokens: control.prompt_tokens.load(Ordering::Relaxed),
            cached_tokens: control.cached_tokens.load(Ordering::Relaxed),
            last_prompt_tokens: Some(u.prompt),
        });
        self.inner.event(CoreEvent::AgentTyping {
            agent_id: agent_id.into(),
            active: false,
        });
        if let Some(failure) = self
            .tally
            .failure
            .as_ref()
            .filter(|_| matches!(stop, TurnStop::Failed { .. }))
        {
            self.inner.event(CoreEvent::agent_failed(failure));
        }
    }
}
