//! The orchestrator: opens a village (`bootstrap`), starts and stops agents (one task and one
//! bounded mailbox each; turns of one agent in sequence, agents in parallel), delivers
//! messages under a causal root's budget, takes outside requests through the reception, and
//! interrupts turns. Opening a village starts nobody.
//!
//! # Parts
//!
//! - `mod.rs`: the `Orchestrator` handle: bootstrap, start/stop, batch start, deliveries,
//!   interrupts, outside requests, plan dispatch/discard
//! - `inner.rs`: `Inner`, what the handle and the agent tasks share, as parts behind narrow
//!   methods — the registry (`world_edit.rs`), the outlets (`outlets.rs`), the current
//!   conversation and records (`recording.rs`), the agent slots (`slots.rs`), the modes
//!   (`modes.rs`), the memory-only boards (`memory.rs`) — and `emit`, the one way a log line and
//!   its event leave together; its `//!` gives the lock order
//! - `agent.rs`: an agent's task and history
//! - `cast.rs`: a person's edits of the cast: create, rename, delete — stopped first, its folder to
//!   the trash, every reference in `world.json` cleared; what names it elsewhere, schedule tasks
//!   and judge routes, told (`servant_references`), never rewritten —, connect, settings
//!   (`servant_settings.rs`: name, template, work folder — apart from the village's own, links
//!   resolved —, tools, rounds, group, switches; applied in a create's own write too), a judge's
//!   switch; each one `update_world`
//! - `templates.rs`: a person's edits of the model templates: add — an id taken is `IdTaken` —,
//!   set, remove unless a servant or judge uses it; the endpoint rule checked
//! - `assist.rs`: the drafting assistant on the village's client and keys; its facts name a running
//!   agent's connected MCP tools, which the agent's task notes in its slot (`slots.rs`) after its connect and
//!   forgets at its stop
//! - `conversation.rs`: conversations apart from the current one — one per door MCP session — with
//!   their own per-agent histories and stored conversation; and the flag that makes an agent
//!   re-read its history after a summary
//! - `summary.rs`: `summarizeAfter`: one call through the agent's template after a schedule's chain
//!   — no tools, the firing's budget, `intent` before, a `turn` record after, then `summary
//!   {agentId, text, coversUpToSeq}`; history restore puts the latest summary in place of the
//!   records it covers as one leading exchange, a fixed user line "(Summary of the conversation so
//!   far)" and the summary as the assistant's reply, so the system prompt stays byte-identical
//! - `turn.rs` + `turn/`: the turn: `turn.rs` — `Turn` with `run`, `round` (one model call),
//!   `finish` (records, reply, events) and `RoundsEnd`, how its rounds ended; `call.rs` —
//!   `call_tool` and the synthetic tools' runs, the `waves` a turn ran counted there; `prepare.rs`
//!   — what a turn reads before its first round, `SKILL.md`'s terms included: the round cap times
//!   `max_loops`, the tools offered narrowed by `allowed-tools` (a call outside them runs nothing,
//!   `call.rs`), no earlier exchanges with `fork: subagent`; `durable.rs` — `Pending`, the
//!   records (the incoming message) staged for the turn's next durable point
//! - `delegation.rs`: the synthetic tools `ask_<id>`, `transfer_to_<id>`, `plan`, `room_log`,
//!   `blackboard`; chains, hop limit, waits
//! - `plan.rs`: waves, review proposals, the ring of 50; a scheduled chain's default verifier
//! - `square.rs`: the public square
//! - `repeat_guard.rs`
//! - `outcome.rs`: `TurnOutcome`, `PlanTaskState` — the reference's states plus `tool_limit`,
//!   `repeat` and `needs_input` —, `ExternalOutcome` for `ask` and the door
//! - `question.rs` + `turn/ask.rs`: `ask_user`, decision 0012: `Presence` on the delivery's route —
//!   the GUI's person **waits** (memory only: `questionAsked`, `answer_question`), headless `ask`
//!   **suspends** (the turn ends `needs_input` with a `question` record; `answer_external` takes it
//!   up in a later process, the answer as the call's result, under what the asking root had left of
//!   its budget), everything else is **absent** (an error result; the turn goes on) —; only the
//!   turn a person started may ask
//! - `failure.rs`: `TurnFailure`: why a turn gave no answer — code, HTTP status or network class,
//!   template, host, fix; never a key or a body — and the fixed lines of the cap and the repeat
//!   guard
//! - `stopping.rs`: stopping one agent, all, or the close: grace, cut, record, end.
//! - `approvals.rs`: a human's decisions on pending `run` requests — approve exactly, by pattern,
//!   reject — written to `run.json` and audited; "approve and continue" as one fixed System message
//! - `watch.rs`: what a surface shows of work in progress, memory only: the ring of the last 200
//!   tool calls' arguments and results, each cut at 8,000 characters, and the causal roots still
//!   running with their budgets, held weakly from `Inner::deliver`
//! - `world_edit.rs`: the `Registry` and `update_world`: a change of `world.json` applied to a copy, written through
//!   the store, then put in effect, one at a time; a refused change leaves file and memory as they
//!   were.

mod agent;
mod approvals;
mod assist;
mod cast;
mod conversation;
mod delegation;
pub(crate) mod error;
mod failure;
mod inner;
mod judge_route;
mod memory;
mod modes;
mod outcome;
mod outlets;
mod plan;
mod question;
mod recording;
mod repeat_guard;
mod safety;
mod servant_settings;
mod slots;
mod square;
mod stopping;
mod summary;
mod templates;
mod turn;
mod watch;
mod world_edit;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::CoreError;
use crate::budget::CausalBudget;
pub(crate) use crate::clock::now_ms;
pub use crate::events::PendingQuestion;
use crate::events::{AgentStatus, CoreEvent};
use crate::llm::{ApiKey, LlmClient};
use crate::log::LogSink;
use crate::safety::Channel;
use crate::sessions::{AgentMessage, Endpoint, SessionStore};
use crate::sync::LockOrRecover;
use crate::tools::{RunApproval, TrashTarget};
use crate::village::{Language, World};
pub use approvals::PendingDecision;
pub use cast::{ServantDeleted, ServantReferences};
pub use conversation::Conversation;
pub use failure::TurnFailure;
use inner::Inner;
pub use outcome::{ExternalOutcome, PlanTaskState, RequestMode, TurnOutcome};
pub use plan::{PlanTask, PlanWave, WaveStatus};
pub use servant_settings::ServantSettings;
pub use templates::{TemplateSettings, template_id_refused, template_users};
pub use watch::{RunningRoot, ToolCallDetail};

/// Capacity of each agent's mailbox.
pub const MAILBOX_CAPACITY: usize = 64;
/// How long a stopping agent gets, after its calls in flight were cut, to record its turn.
pub const CUT_GRACE: Duration = Duration::from_secs(1);
/// How long a stop waits for an aborted agent task to be dropped.
const TASK_END_WAIT: Duration = Duration::from_millis(200);

/// Looks up the API key of a template (by template id). Values never leave the LLM client.
pub type SecretLookup = Arc<dyn Fn(&str) -> Option<ApiKey> + Send + Sync>;

/// What `bootstrap` needs besides the village.
#[derive(Clone)]
pub struct OrchestratorConfig {
    /// The village folder.
    pub workspace: std::path::PathBuf,
    /// API keys by template id.
    pub secrets: SecretLookup,
    /// The village log.
    pub log: Arc<dyn LogSink>,
    /// The LLM client.
    pub llm: LlmClient,
    /// The OS locale, for an undetermined village language.
    pub os_locale: Option<String>,
    /// Where `file remove` puts things.
    pub trash: TrashTarget,
    /// Where MCP children's stderr goes (inherited when `None`).
    pub mcp_child_output: Option<Arc<dyn crate::mcp::ChildOutput>>,
    /// Where the trace spans go (`None`: tracing off).
    pub tracer: Option<Arc<dyn crate::trace::Tracer>>,
    /// The audit log's key and the shelf that records its head (none: unkeyed, redb only).
    pub audit: crate::safety::AuditSetup,
}

/// A message waiting in an agent's mailbox.
pub(crate) struct Delivery {
    pub message: AgentMessage,
    pub budget: Arc<CausalBudget>,
    pub route: Route,
    pub reply: Option<oneshot::Sender<TurnOutcome>>,
    /// A turn that asked the person and ended waiting, taken up again with the answer (the
    /// message's text) as the `ask_user` call's result.
    pub resume: Option<Box<crate::sessions::QuestionRecord>>,
}

/// Where a delivery sits in its causal chain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Route {
    /// Agents waiting on this delivery (callers of `ask` / `plan`), outermost first.
    pub chain: Vec<String>,
    /// Hops from the causal root.
    pub hop: u32,
    /// Plan waves caused by this delivery skip review (a schedule's `autoApprovePlans`).
    pub auto_approve_plans: bool,
    /// Plan waves caused by this delivery have their bundle checked by this agent (a
    /// schedule's firing with `autoApprovePlans` and the world's `defaultVerifier`).
    pub verify_with: Option<String>,
    /// Who receives a handed-off answer (the root's sender).
    pub answer_to: Option<Endpoint>,
    /// The conversation apart (a door MCP session) the chain belongs to; `None`: the current one.
    pub conversation: Option<conversation::ConversationKey>,
    /// Whether a person can answer this delivery's turn (`ask_user`); never carried down a
    /// chain.
    pub person: question::Presence,
    /// A dry-run request: side-effecting tools of the whole chain stop at their side effect,
    /// and what they would have done is collected here.
    pub dry_run: Option<crate::safety::DryRunLog>,
}

/// Per-agent controls shared between the handle and the agent's task.
#[derive(Debug)]
pub(crate) struct TurnControl {
    pub interrupted: AtomicBool,
    /// The current turn's interrupt (re-armed after each turn).
    pub cancel: Mutex<CancellationToken>,
    /// The current turn's cut of a streamed answer in flight: cancelled with `cancel` by a
    /// person's interrupt, not by a close's (re-armed after each turn).
    pub stream_cut: Mutex<CancellationToken>,
    /// This agent's hard stop, a child of the village-wide abort (the agent table's,
    /// `slots.rs`): cancelled when its stop's grace runs out (or the close's), it cuts the
    /// agent's model calls and tools in flight. Never reset: once cut, the agent sends nothing
    /// more.
    pub abort: CancellationToken,
    /// Cancelled when the agent begins to stop (and with `abort`): a connect in progress ends,
    /// and messages still queued are answered as interrupted without a turn. Never reset.
    pub stop: CancellationToken,
    pub turn_seq: AtomicU64,
    pub total_tokens: AtomicU64,
    pub prompt_tokens: AtomicU64,
    pub cached_tokens: AtomicU64,
    pub started: Instant,
}

impl TurnControl {
    fn new(village_abort: &CancellationToken) -> Self {
        let abort = village_abort.child_token();
        Self {
            interrupted: AtomicBool::new(false),
            cancel: Mutex::new(CancellationToken::new()),
            stream_cut: Mutex::new(CancellationToken::new()),
            stop: abort.child_token(),
            abort,
            turn_seq: AtomicU64::new(0),
            total_tokens: AtomicU64::new(0),
            prompt_tokens: AtomicU64::new(0),
            cached_tokens: AtomicU64::new(0),
            started: Instant::now(),
        }
    }

    /// The token of the current turn's calls.
    pub(crate) fn token(&self) -> CancellationToken {
        self.cancel.lock_or_recover().clone()
    }

    /// The token that cuts the current turn's streamed answer in flight.
    pub(crate) fn stream_cut(&self) -> CancellationToken {
        self.stream_cut.lock_or_recover().clone()
    }

    /// Interrupts the current turn; `cut_stream` also cuts a streamed answer in flight.
    pub(crate) fn interrupt(&self, cut_stream: bool) {
        self.interrupted.store(true, Ordering::SeqCst);
        self.token().cancel();
        if cut_stream {
            self.stream_cut().cancel();
        }
    }

    /// Clears the interrupt and arms fresh tokens for the next turn.
    pub(crate) fn reset(&self) {
        self.interrupted.store(false, Ordering::SeqCst);
        *self.cancel.lock_or_recover() = CancellationToken::new();
        *self.stream_cut.lock_or_recover() = CancellationToken::new();
    }
}

/// The handle of an open village. Cheap to clone.
#[derive(Clone)]
pub struct Orchestrator {
    inner: Arc<Inner>,
}

impl Orchestrator {
    /// Opens a village: reads its files and opens `sessions.redb` (another process holding it
    /// stops the boot; any other store failure is logged and the village runs without saving
    /// conversations). Continues the most recent conversation. Starts nobody.
    pub fn bootstrap(config: OrchestratorConfig) -> Result<Self, CoreError> {
        Ok(Self {
            inner: Arc::new(Inner::open(config)?),
        })
    }

    /// The event bus.
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<CoreEvent> {
        self.inner.subscribe()
    }

    /// The village language in effect.
    pub fn language(&self) -> Language {
        self.inner.language()
    }

    /// A copy of the village registry.
    pub fn world(&self) -> World {
        self.inner.world()
    }

    /// The conversation store, when open.
    pub fn sessions(&self) -> Option<&SessionStore> {
        self.inner.sessions()
    }

    /// The current conversation.
    pub fn current_session(&self) -> Option<String> {
        self.inner.current_session()
    }

    /// Starts a new conversation (created on its first record).
    pub fn new_conversation(&self) {
        self.inner.set_current_session(None);
        self.inner.event(CoreEvent::ConversationCleared);
    }

    /// Continues an existing conversation.
    pub fn continue_conversation(&self, session_id: &str) -> Result<(), CoreError> {
        if let Some(store) = self.inner.sessions() {
            store.meta(session_id)?;
        }
        self.inner.set_current_session(Some(session_id.to_owned()));
        self.inner.event(CoreEvent::SessionSwitched {
            session_id: session_id.to_owned(),
        });
        Ok(())
    }

    /// Sets the command-approval mode (in memory only), a person's decision through `by`.
    pub fn set_run_approval(&self, mode: RunApproval, by: Channel) {
        let was = self.inner.set_approval(mode);
        let (target, args) = (mode.as_str(), was.as_str().as_bytes());
        self.audit_human("run_approval_mode", target, args, by);
        self.inner.emit(
            &format!("run approval: mode={} was={}", mode.as_str(), was.as_str()),
            CoreEvent::RunApprovalChanged {
                mode: mode.as_str().into(),
            },
        );
    }

    /// The command-approval mode in effect.
    pub fn run_approval(&self) -> RunApproval {
        self.inner.approval()
    }

    /// Whether plan waves skip review (the process-wide switch).
    pub fn plan_review_bypass(&self) -> bool {
        self.inner.plan_bypass()
    }

    /// An agent's state.
    pub fn status(&self, id: &str) -> AgentStatus {
        self.inner.status(id)
    }

    /// Starts an agent: one task, one mailbox. Refused while the kill switch is at halt.
    pub fn start_agent(&self, id: &str) -> Result<(), CoreError> {
        if self.switch_state() == crate::safety::SwitchState::Halted {
            return Err(CoreError::Halted);
        }
        self.inner.start_agent(id)
    }

    /// Delivers a message to an agent as a new causal root (with a fresh budget) and waits for
    /// the turn's outcome.
    pub async fn deliver_and_wait(
        &self,
        to: &str,
        from: Endpoint,
        content: &str,
    ) -> Result<TurnOutcome, CoreError> {
        self.deliver_and_wait_in_mode(to, from, content, RequestMode::default())
            .await
            .map(|(outcome, _)| outcome)
    }

    /// [`Self::deliver_and_wait`] in `mode`, with the effects a dry-run would have had (empty
    /// unless `mode.dry_run`).
    pub async fn deliver_and_wait_in_mode(
        &self,
        to: &str,
        from: Endpoint,
        content: &str,
        mode: RequestMode,
    ) -> Result<(TurnOutcome, Vec<crate::safety::DryRunEffect>), CoreError> {
        let budget = CausalBudget::new(self.inner.world().token_budget);
        let log = mode.dry_run.then(crate::safety::DryRunLog::default);
        // The person at the GUI is there: a turn's `ask_user` waits for their answer.
        let person = if from == Endpoint::User {
            question::Presence::Waits
        } else {
            question::Presence::Absent
        };
        let route = Route {
            person,
            dry_run: log.clone(),
            ..Route::default()
        };
        let (tx, rx) = oneshot::channel();
        self.inner
            .deliver(to, from, content, budget, route, Some(tx))
            .await?;
        let outcome = rx.await.map_err(|_| CoreError::NotRunning(to.to_owned()))?;
        Ok((outcome, log.map(|l| l.effects()).unwrap_or_default()))
    }

    pub(crate) async fn deliver(
        &self,
        to: &str,
        from: Endpoint,
        content: &str,
        budget: Arc<CausalBudget>,
        reply: Option<oneshot::Sender<TurnOutcome>>,
    ) -> Result<(), CoreError> {
        self.inner
            .deliver(to, from, content, budget, Route::default(), reply)
            .await
    }

    /// A schedule's firing: `content` delivered to `to` from System under
    /// `budget` (one budget for a firing and its acceptance retries), plan waves of the chain
    /// skipping review when `auto_approve_plans` and checked by `verify_with` (an agent id);
    /// waits for the turn's outcome.
    pub(crate) async fn deliver_scheduled(
        &self,
        to: &str,
        content: &str,
        budget: Arc<CausalBudget>,
        auto_approve_plans: bool,
        verify_with: Option<String>,
        mode: RequestMode,
    ) -> Result<TurnOutcome, CoreError> {
        let (tx, rx) = oneshot::channel();
        let route = Route {
            auto_approve_plans,
            verify_with,
            dry_run: mode.dry_run.then(crate::safety::DryRunLog::default),
            ..Route::default()
        };
        self.inner
            .deliver(to, Endpoint::System, content, budget, route, Some(tx))
            .await?;
        rx.await.map_err(|_| CoreError::NotRunning(to.to_owned()))
    }

    /// The process-wide switch that lets plan waves skip review (headless runs).
    pub fn set_plan_review_bypass(&self, enabled: bool, by: Channel) {
        self.inner.set_plan_bypass(enabled);
        let target = if enabled { "on" } else { "off" };
        self.audit_human("plan_review_bypass", target, target.as_bytes(), by);
        self.inner
            .event(CoreEvent::PlanReviewBypassChanged { enabled });
    }

    /// The waves in memory (newest last).
    pub fn plans(&self) -> Vec<PlanWave> {
        self.inner.plans().all()
    }

    /// Dispatches a proposed wave (optionally edited) as a new causal root; its bundle comes
    /// back to the coordinator from System.
    pub fn dispatch_plan(
        &self,
        plan_id: &str,
        edited: Option<Vec<PlanTask>>,
        by: Channel,
    ) -> Result<(), CoreError> {
        let wave = self
            .inner
            .plans()
            .get(plan_id)
            .filter(|w| w.status == WaveStatus::Proposed);
        let Some(wave) = wave else {
            return Err(CoreError::PlanWaveNotPending(plan_id.to_owned()));
        };
        let tasks = edited.unwrap_or_else(|| wave.tasks.clone());
        let world = self.inner.world();
        let connected: Vec<String> = world
            .agents
            .iter()
            .find(|a| a.id.as_str() == wave.agent_id)
            .map(|a| a.connected_agents.iter().map(|c| c.to_string()).collect())
            .unwrap_or_default();
        if tasks.is_empty() {
            return Err(CoreError::PlanDispatchInvalid(
                "the wave has no task".into(),
            ));
        }
        if let Some(bad) = tasks.iter().find(|t| !connected.contains(&t.to)) {
            return Err(CoreError::PlanDispatchInvalid(format!(
                "{} is not connected to {}",
                bad.to, wave.agent_id
            )));
        }
        self.inner.plans().update(plan_id, |w| {
            w.tasks = tasks.clone();
            w.status = WaveStatus::Running;
        });
        let edited_args: Vec<(&str, &str)> = tasks
            .iter()
            .map(|t| (t.to.as_str(), t.message.as_str()))
            .collect();
        let args = serde_json::to_string(&edited_args).unwrap_or_default();
        self.audit_human("plan_dispatch", plan_id, args.as_bytes(), by);
        self.inner.log(&format!(
            "plan dispatch: agent={} plan={plan_id} tasks={}",
            wave.agent_id,
            tasks.len()
        ));
        let inner = Arc::clone(&self.inner);
        let plan_id = plan_id.to_owned();
        tokio::spawn(async move {
            let root = Delivery {
                message: AgentMessage::new(
                    Endpoint::System,
                    Endpoint::Agent {
                        id: wave.agent_id.clone(),
                    },
                    "",
                    0,
                    now_ms(),
                ),
                budget: CausalBudget::new(inner.world().token_budget),
                route: Route::default(),
                reply: None,
                resume: None,
            };
            let bundle =
                plan::run_wave(&inner, &wave.agent_id, &plan_id, wave.wave, &tasks, &root).await;
            let text = inner.language().pick(
                format!("確認済みの計画（{plan_id}）の結果です。\n\n{bundle}"),
                format!("Results of the reviewed plan ({plan_id}):\n\n{bundle}"),
            );
            let budget = CausalBudget::new(inner.world().token_budget);
            let _ = inner
                .deliver(
                    &wave.agent_id,
                    Endpoint::System,
                    &text,
                    budget,
                    Route::default(),
                    None,
                )
                .await;
        });
        Ok(())
    }

    /// Discards a proposed wave; nothing is sent.
    pub fn discard_plan(&self, plan_id: &str, by: Channel) -> Result<(), CoreError> {
        let pending = self
            .inner
            .plans()
            .get(plan_id)
            .is_some_and(|w| w.status == WaveStatus::Proposed);
        if !pending {
            return Err(CoreError::PlanWaveNotPending(plan_id.to_owned()));
        }
        self.inner
            .plans()
            .update(plan_id, |w| w.status = WaveStatus::Discarded);
        self.audit_human("plan_discard", plan_id, plan_id.as_bytes(), by);
        self.inner.emit(
            &format!("plan discard: plan={plan_id}"),
            CoreEvent::PlanWaveDiscarded {
                plan_id: plan_id.into(),
            },
        );
        Ok(())
    }

    /// Starts the batch-start set (`batchStart && (no group || group.batchStart)`, in list
    /// order); returns the ids started.
    pub fn start_batch(&self) -> Result<Vec<String>, CoreError> {
        let ids = self.inner.world().batch_start_ids();
        for id in &ids {
            self.start_agent(id)?;
        }
        Ok(ids)
    }

    /// An outside request (the CLI `ask`): delivered to the reception as `External{client}`, a
    /// new causal root in the current conversation, one at a time, waiting up to
    /// `askTimeoutSecs`.
    pub async fn ask_external_outcome(
        &self,
        client: &str,
        message: &str,
    ) -> (Option<String>, PlanTaskState) {
        let outcome = self
            .ask_external(client, message, None, RequestMode::default())
            .await;
        (outcome.answer, outcome.state)
    }

    /// [`Self::ask_external_outcome`], with why there is no answer and the stored
    /// conversation the turn was recorded under.
    pub async fn ask_external_detailed(&self, client: &str, message: &str) -> ExternalOutcome {
        self.ask_external(client, message, None, RequestMode::default())
            .await
    }

    /// [`Self::ask_external_detailed`] in `mode` (a dry-run: the outcome lists the effects).
    pub async fn ask_external_in_mode(
        &self,
        client: &str,
        message: &str,
        mode: RequestMode,
    ) -> ExternalOutcome {
        self.ask_external(client, message, None, mode).await
    }

    /// Opens a conversation apart from the current one (one per door MCP session): the agents
    /// keep a history of their own for it, and its records go to a stored conversation of its
    /// own. Dropping the handle forgets the histories.
    pub fn open_conversation(&self) -> Conversation {
        Conversation::open(self.inner.conversations())
    }

    /// [`Self::ask_external_outcome`] in `conversation`: a new causal root whose history is
    /// that conversation's, never the current one's or another's.
    pub async fn ask_external_in(
        &self,
        conversation: &Conversation,
        client: &str,
        message: &str,
    ) -> (Option<String>, PlanTaskState) {
        let mode = RequestMode::default();
        let outcome = self
            .ask_external_mode_in(conversation, client, message, mode)
            .await;
        (outcome.answer, outcome.state)
    }

    /// [`Self::ask_external_in`] in `mode`, with why there is no answer.
    pub async fn ask_external_mode_in(
        &self,
        conversation: &Conversation,
        client: &str,
        message: &str,
        mode: RequestMode,
    ) -> ExternalOutcome {
        self.ask_external(client, message, Some(conversation.key()), mode)
            .await
    }

    async fn ask_external(
        &self,
        client: &str,
        message: &str,
        conversation: Option<conversation::ConversationKey>,
        mode: RequestMode,
    ) -> ExternalOutcome {
        let world = self.inner.world();
        let Some(reception) = world.reception.clone() else {
            return ExternalOutcome::bare(PlanTaskState::Undeliverable);
        };
        // A person waits on `ask` (it ends with the question); the door's client is a program.
        let person = if conversation.is_none() {
            question::Presence::Suspends
        } else {
            question::Presence::Absent
        };
        // A dry-run's effects are collected along the whole chain and answered with it.
        let log = mode.dry_run.then(crate::safety::DryRunLog::default);
        let route = Route {
            conversation,
            person,
            dry_run: log.clone(),
            ..Route::default()
        };
        let budget = CausalBudget::new(world.token_budget);
        let mut outcome = self
            .external(reception.as_str(), client, message, route, budget, None)
            .await;
        outcome.effects = log.map(|l| l.effects()).unwrap_or_default();
        outcome
    }

    /// One outside request to `to` (a new causal root under `budget`), one at a time, waiting
    /// up to `askTimeoutSecs`; `resume` takes up a turn that waits for this answer.
    async fn external(
        &self,
        to: &str,
        client: &str,
        message: &str,
        route: Route,
        budget: Arc<CausalBudget>,
        resume: Option<Box<crate::sessions::QuestionRecord>>,
    ) -> ExternalOutcome {
        let _one_at_a_time = self.inner.one_external_at_a_time().await;
        let world = self.inner.world();
        let client = world
            .external_name
            .clone()
            .unwrap_or_else(|| client.to_owned());
        let (tx, rx) = oneshot::channel();
        let message = AgentMessage::new(
            Endpoint::External { client },
            Endpoint::Agent { id: to.to_owned() },
            message,
            route.hop,
            now_ms(),
        );
        let delivery = Delivery {
            message,
            budget,
            route,
            reply: Some(tx),
            resume,
        };
        let delivered = self.inner.post(to, delivery).await;
        if delivered.is_err() {
            return ExternalOutcome::bare(PlanTaskState::Undeliverable);
        }
        match tokio::time::timeout(Duration::from_secs(world.ask_timeout_secs()), rx).await {
            Ok(Ok(outcome)) => ExternalOutcome::of(outcome),
            Ok(Err(_)) => ExternalOutcome::bare(PlanTaskState::NoAnswer),
            Err(_) => ExternalOutcome::bare(PlanTaskState::TimedOut),
        }
    }
}
