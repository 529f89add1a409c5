//! The orchestrator: opens a village (`bootstrap`), starts and stops agents (one task and one
//! bounded mailbox each; turns of one agent in sequence, agents in parallel), delivers
//! messages under a causal root's budget, takes outside requests through the reception, and
//! interrupts turns. Opening a village starts nobody.

mod agent;
mod conversation;
mod delegation;
pub mod failure;
pub mod outcome;
pub mod plan;
pub mod repeat_guard;
mod square;
mod stopping;
mod turn;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::budget::CausalBudget;
use crate::error::CoreError;
use crate::events::{AgentStatus, CoreEvent, EventBus};
use crate::llm::{ApiKey, LlmClient};
use crate::log::LogSink;
use crate::sessions::{AgentMessage, Endpoint, Record, SessionError, SessionStore, SessionWriter};
use crate::tools::{RunApproval, TrashTarget};
use crate::village::{AgentId, Language, VillageStore, World};
pub use conversation::Conversation;
pub use failure::TurnFailure;
pub use outcome::{ExternalOutcome, PlanTaskState, TurnOutcome};
pub use plan::{PlanTask, PlanWave, WaveStatus};

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
}

/// A message waiting in an agent's mailbox.
pub(crate) struct Delivery {
    pub message: AgentMessage,
    pub budget: Arc<CausalBudget>,
    pub route: Route,
    pub reply: Option<oneshot::Sender<TurnOutcome>>,
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
    /// Who receives a handed-off answer (the root's sender).
    pub answer_to: Option<Endpoint>,
    /// The conversation apart (a door MCP session) the chain belongs to; `None`: the current one.
    pub conversation: Option<conversation::ConversationKey>,
}

/// Per-agent controls shared between the handle and the agent's task.
#[derive(Debug)]
pub(crate) struct TurnControl {
    pub interrupted: AtomicBool,
    /// The current turn's interrupt (re-armed after each turn).
    pub cancel: Mutex<CancellationToken>,
    /// This agent's hard stop, a child of the village-wide [`Inner::abort`]: cancelled when its
    /// stop's grace runs out (or the close's), it cuts the agent's model calls and tools in
    /// flight. Never reset: once cut, the agent sends nothing more.
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
    pub fn token(&self) -> CancellationToken {
        self.cancel.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Clears the interrupt and arms a fresh token for the next turn.
    pub fn reset(&self) {
        self.interrupted.store(false, Ordering::SeqCst);
        if let Ok(mut token) = self.cancel.lock() {
            *token = CancellationToken::new();
        }
    }
}

struct AgentSlot {
    status: AgentStatus,
    sender: Option<mpsc::Sender<Delivery>>,
    /// The supervisor, which ends with the agent's task.
    task: Option<tokio::task::JoinHandle<()>>,
    /// The agent's task itself (aborting the supervisor would only detach it).
    agent: tokio::task::AbortHandle,
    control: Arc<TurnControl>,
}

pub(crate) struct Inner {
    pub store: VillageStore,
    pub world: RwLock<World>,
    pub language: Language,
    pub sessions: Option<Arc<SessionStore>>,
    pub writer: Option<SessionWriter>,
    pub session_id: Mutex<Option<String>>,
    /// The current conversation last named by a `session:` log line.
    session_named: Mutex<Option<String>>,
    pub events: EventBus,
    pub log: Arc<dyn LogSink>,
    pub llm: LlmClient,
    pub secrets: SecretLookup,
    pub approval: RwLock<RunApproval>,
    pub trash: TrashTarget,
    pub mcp_child_output: Option<Arc<dyn crate::mcp::ChildOutput>>,
    pub square: square::Square,
    pub plans: plan::PlanBook,
    pub plan_bypass: AtomicBool,
    pub conversations: Arc<conversation::ConversationBook>,
    agents: Mutex<HashMap<String, AgentSlot>>,
    external_gate: tokio::sync::Mutex<()>,
    /// The village-wide hard stop, cancelled once when a close's grace runs out: every agent's
    /// calls and tools in flight are cut (each agent's `TurnControl::abort` is a child; a single
    /// agent's stop cuts only its own).
    pub abort: CancellationToken,
}

impl Inner {
    pub(crate) fn world(&self) -> World {
        self.world.read().map(|w| w.clone()).unwrap_or_default()
    }

    pub(crate) fn mark_failed(&self, id: &str, error: &str) {
        if let Ok(mut agents) = self.agents.lock()
            && let Some(slot) = agents.get_mut(id)
        {
            slot.status = AgentStatus::Failed;
            slot.sender = None;
        }
        self.log.line(&format!("agent failed: agent={id}"));
        self.events.emit(CoreEvent::AgentFailed {
            agent_id: id.into(),
            error: error.into(),
            code: None,
            status: None,
            class: None,
            template: None,
            host: None,
        });
        self.events.emit(CoreEvent::AgentStatusChanged {
            agent_id: id.into(),
            status: AgentStatus::Failed,
        });
    }

    pub(crate) fn is_running(&self, id: &str) -> bool {
        self.agents
            .lock()
            .map(|a| a.get(id).is_some_and(|s| s.status == AgentStatus::Running))
            .unwrap_or(false)
    }

    /// Appends to the current conversation (creating one if none is open), in one commit
    /// shared with whatever else is waiting. A store failure is logged and the turn goes on:
    /// losing a record must not lose the answer.
    pub(crate) async fn deliver(
        &self,
        to: &str,
        from: Endpoint,
        content: &str,
        budget: Arc<CausalBudget>,
        route: Route,
        reply: Option<oneshot::Sender<TurnOutcome>>,
    ) -> Result<(), CoreError> {
        let sender = {
            let agents = self
                .agents
                .lock()
                .map_err(|_| CoreError::NotRunning(to.to_owned()))?;
            match agents.get(to) {
                Some(slot) if slot.status == AgentStatus::Running => slot.sender.clone(),
                _ => None,
            }
        };
        let Some(sender) = sender else {
            return Err(CoreError::NotRunning(to.to_owned()));
        };
        let message = AgentMessage::new(
            from,
            Endpoint::Agent { id: to.to_owned() },
            content,
            route.hop,
            now_ms(),
        );
        sender
            .send(Delivery {
                message,
                budget,
                route,
                reply,
            })
            .await
            .map_err(|_| CoreError::NotRunning(to.to_owned()))
    }

    /// A turn in a conversation apart (see `conversation.rs`, set around the turn by the
    /// agent's task) records into that conversation's own.
    pub(crate) async fn record(&self, records: Vec<Record>) -> Option<String> {
        let (sessions, writer) = (self.sessions.as_ref()?, self.writer.as_ref()?);
        let first = records.first()?;
        let now = now_ms();
        let (id, created, apart) = {
            let created = std::cell::Cell::new(false);
            let create = || {
                created.set(true);
                sessions.create(&title_of(first), now).ok()
            };
            let apart = conversation::current();
            let id = match &apart {
                Some(slot) => slot.session(create)?,
                None => {
                    let mut current = self.session_id.lock().ok()?;
                    if current.is_none() {
                        *current = create();
                    }
                    current.clone()?
                }
            };
            (id, created.get(), apart.is_some())
        };
        self.name_session(&id, created, apart);
        let kinds: Vec<&str> = records.iter().map(Record::kind).collect();
        let kinds = kinds.join(",");
        let items = records.into_iter().map(|r| (id.clone(), r)).collect();
        if let Err(e) = writer.append(items, now).await {
            self.log.line(&format!(
                "session append failed: session={id} kinds={kinds} code={}",
                e.code()
            ));
        }
        Some(id)
    }
}

impl Inner {
    /// The `session:` log line: it names the stored conversation turns are recorded under,
    /// when it is created (`new`) or first recorded into by this process; a conversation apart
    /// from the current one (a door session's) is named when it is created (`apart`).
    fn name_session(&self, id: &str, created: bool, apart: bool) {
        if apart {
            if created {
                self.log.line(&format!("session: {id} new apart"));
            }
            return;
        }
        let Ok(mut named) = self.session_named.lock() else {
            return;
        };
        if named.as_deref() == Some(id) {
            return;
        }
        *named = Some(id.to_owned());
        self.log.line(&format!(
            "session: {id}{}",
            if created { " new" } else { "" }
        ));
    }
}

fn title_of(record: &Record) -> String {
    match record {
        Record::Message(m) => m.content.chars().take(30).collect(),
        _ => "conversation".into(),
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
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
        let store = VillageStore::new(&config.workspace);
        let world = store.load_world()?.value;
        let language = world.effective_language(config.os_locale.as_deref());
        let sessions = match SessionStore::open(&config.workspace.join("sessions.redb")) {
            Ok(s) => Some(s),
            Err(e @ SessionError::Locked(_)) => return Err(e.into()),
            Err(e) => {
                config.log.line(&format!(
                    "session store unavailable: code={} (conversations are not saved)",
                    e.code()
                ));
                None
            }
        };
        let session_id = sessions
            .as_ref()
            .and_then(|s| s.list().ok())
            .and_then(|l| l.into_iter().next())
            .map(|(id, _)| id);
        let sessions = sessions.map(Arc::new);
        let writer = match &sessions {
            Some(store) => match SessionWriter::spawn(Arc::clone(store)) {
                Ok(w) => Some(w),
                Err(e) => {
                    config.log.line(&format!(
                        "session writer unavailable: {} (conversations are not saved)",
                        e.kind()
                    ));
                    None
                }
            },
            None => None,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                store,
                world: RwLock::new(world),
                language,
                sessions,
                writer,
                session_id: Mutex::new(session_id),
                session_named: Mutex::default(),
                events: EventBus::new(),
                log: config.log,
                llm: config.llm,
                secrets: config.secrets,
                approval: RwLock::new(RunApproval::Required),
                trash: config.trash,
                mcp_child_output: config.mcp_child_output,
                square: square::Square::default(),
                plans: plan::PlanBook::default(),
                plan_bypass: AtomicBool::new(false),
                conversations: Arc::default(),
                agents: Mutex::new(HashMap::new()),
                external_gate: tokio::sync::Mutex::new(()),
                abort: CancellationToken::new(),
            }),
        })
    }

    /// The event bus.
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<CoreEvent> {
        self.inner.events.subscribe()
    }

    /// The village language in effect.
    pub fn language(&self) -> Language {
        self.inner.language
    }

    /// A copy of the village registry.
    pub fn world(&self) -> World {
        self.inner.world()
    }

    /// The conversation store, when open.
    pub fn sessions(&self) -> Option<&SessionStore> {
        self.inner.sessions.as_deref()
    }

    /// The current conversation.
    pub fn current_session(&self) -> Option<String> {
        self.inner.session_id.lock().ok().and_then(|s| s.clone())
    }

    /// Starts a new conversation (created on its first record).
    pub fn new_conversation(&self) {
        if let Ok(mut s) = self.inner.session_id.lock() {
            *s = None;
        }
        self.inner.events.emit(CoreEvent::ConversationCleared);
    }

    /// Continues an existing conversation.
    pub fn continue_conversation(&self, session_id: &str) -> Result<(), CoreError> {
        if let Some(store) = &self.inner.sessions {
            store.meta(session_id)?;
        }
        if let Ok(mut s) = self.inner.session_id.lock() {
            *s = Some(session_id.to_owned());
        }
        self.inner.events.emit(CoreEvent::SessionSwitched {
            session_id: session_id.to_owned(),
        });
        Ok(())
    }

    /// Sets the command-approval mode (in memory only).
    pub fn set_run_approval(&self, mode: RunApproval) {
        let was = self.inner.approval.read().map(|m| *m).unwrap_or_default();
        if let Ok(mut m) = self.inner.approval.write() {
            *m = mode;
        }
        self.inner.log.line(&format!(
            "run approval: mode={} was={}",
            mode.as_str(),
            was.as_str()
        ));
        self.inner.events.emit(CoreEvent::RunApprovalChanged {
            mode: mode.as_str().into(),
        });
    }

    /// An agent's state.
    pub fn status(&self, id: &str) -> AgentStatus {
        self.inner
            .agents
            .lock()
            .ok()
            .and_then(|a| a.get(id).map(|s| s.status))
            .unwrap_or(AgentStatus::Idle)
    }

    /// Starts an agent: one task, one mailbox.
    pub fn start_agent(&self, id: &str) -> Result<(), CoreError> {
        let agent_id = AgentId::new(id).map_err(|_| CoreError::AgentNotFound(id.to_owned()))?;
        if self.inner.world().agent(&agent_id).is_none() {
            return Err(CoreError::AgentNotFound(id.to_owned()));
        }
        let mut agents = self
            .inner
            .agents
            .lock()
            .map_err(|_| CoreError::NotRunning(id.to_owned()))?;
        if agents
            .get(id)
            .is_some_and(|s| matches!(s.status, AgentStatus::Running | AgentStatus::Starting))
        {
            return Ok(());
        }
        self.inner.events.emit(CoreEvent::AgentStatusChanged {
            agent_id: id.into(),
            status: AgentStatus::Starting,
        });
        let (sender, receiver) = mpsc::channel(MAILBOX_CAPACITY);
        let control = Arc::new(TurnControl::new(&self.inner.abort));
        let inner_task = tokio::spawn(agent::run(
            Arc::clone(&self.inner),
            id.to_owned(),
            Arc::clone(&control),
            receiver,
        ));
        let agent = inner_task.abort_handle();
        // A supervisor: an agent task that dies (a panic) marks the agent Failed; one ended by
        // its stop (aborted after the cut) is a stop like any other.
        let (inner, agent_id) = (Arc::clone(&self.inner), id.to_owned());
        let task = tokio::spawn(async move {
            if let Err(e) = inner_task.await
                && !e.is_cancelled()
            {
                inner.mark_failed(&agent_id, "the agent's task stopped unexpectedly");
            }
        });
        agents.insert(
            id.to_owned(),
            AgentSlot {
                status: AgentStatus::Running,
                sender: Some(sender),
                task: Some(task),
                agent,
                control,
            },
        );
        drop(agents);
        self.inner.log.line(&format!("agent started: agent={id}"));
        self.inner.events.emit(CoreEvent::AgentStatusChanged {
            agent_id: id.into(),
            status: AgentStatus::Running,
        });
        Ok(())
    }

    /// Delivers a message to an agent as a new causal root (with a fresh budget) and waits for
    /// the turn's outcome.
    pub async fn deliver_and_wait(
        &self,
        to: &str,
        from: Endpoint,
        content: &str,
    ) -> Result<TurnOutcome, CoreError> {
        let ceiling = self.inner.world().token_budget;
        let (tx, rx) = oneshot::channel();
        self.deliver(to, from, content, CausalBudget::new(ceiling), Some(tx))
            .await?;
        rx.await.map_err(|_| CoreError::NotRunning(to.to_owned()))
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

    /// The process-wide switch that lets plan waves skip review (headless runs).
    pub fn set_plan_review_bypass(&self, enabled: bool) {
        self.inner.plan_bypass.store(enabled, Ordering::SeqCst);
        self.inner
            .events
            .emit(CoreEvent::PlanReviewBypassChanged { enabled });
    }

    /// The waves in memory (newest last).
    pub fn plans(&self) -> Vec<PlanWave> {
        self.inner.plans.all()
    }

    /// Dispatches a proposed wave (optionally edited) as a new causal root; its bundle comes
    /// back to the coordinator from System.
    pub fn dispatch_plan(
        &self,
        plan_id: &str,
        edited: Option<Vec<PlanTask>>,
    ) -> Result<(), CoreError> {
        let wave = self
            .inner
            .plans
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
        self.inner.plans.update(plan_id, |w| {
            w.tasks = tasks.clone();
            w.status = WaveStatus::Running;
        });
        self.inner.log.line(&format!(
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
            };
            let bundle =
                plan::run_wave(&inner, &wave.agent_id, &plan_id, wave.wave, &tasks, &root).await;
            let text = match inner.language {
                Language::Ja => format!("確認済みの計画（{plan_id}）の結果です。\n\n{bundle}"),
                Language::En => format!("Results of the reviewed plan ({plan_id}):\n\n{bundle}"),
            };
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
    pub fn discard_plan(&self, plan_id: &str) -> Result<(), CoreError> {
        let pending = self
            .inner
            .plans
            .get(plan_id)
            .is_some_and(|w| w.status == WaveStatus::Proposed);
        if !pending {
            return Err(CoreError::PlanWaveNotPending(plan_id.to_owned()));
        }
        self.inner
            .plans
            .update(plan_id, |w| w.status = WaveStatus::Discarded);
        self.inner
            .log
            .line(&format!("plan discard: plan={plan_id}"));
        self.inner.events.emit(CoreEvent::PlanWaveDiscarded {
            plan_id: plan_id.into(),
        });
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
        let outcome = self.ask_external(client, message, None).await;
        (outcome.answer, outcome.state)
    }

    /// [`Self::ask_external_outcome`], with why there is no answer and the stored
    /// conversation the turn was recorded under.
    pub async fn ask_external_detailed(&self, client: &str, message: &str) -> ExternalOutcome {
        self.ask_external(client, message, None).await
    }

    /// Opens a conversation apart from the current one (one per door MCP session): the agents
    /// keep a history of their own for it, and its records go to a stored conversation of its
    /// own. Dropping the handle forgets the histories.
    pub fn open_conversation(&self) -> Conversation {
        Conversation::open(&self.inner.conversations)
    }

    /// [`Self::ask_external_outcome`] in `conversation`: a new causal root whose history is
    /// that conversation's, never the current one's or another's.
    pub async fn ask_external_in(
        &self,
        conversation: &Conversation,
        client: &str,
        message: &str,
    ) -> (Option<String>, PlanTaskState) {
        let outcome = self
            .ask_external_detailed_in(conversation, client, message)
            .await;
        (outcome.answer, outcome.state)
    }

    /// [`Self::ask_external_in`], with why there is no answer.
    pub async fn ask_external_detailed_in(
        &self,
        conversation: &Conversation,
        client: &str,
        message: &str,
    ) -> ExternalOutcome {
        self.ask_external(client, message, Some(conversation.key()))
            .await
    }

    async fn ask_external(
        &self,
        client: &str,
        message: &str,
        conversation: Option<conversation::ConversationKey>,
    ) -> ExternalOutcome {
        let _one_at_a_time = self.inner.external_gate.lock().await;
        let world = self.inner.world();
        let Some(reception) = world.reception.clone() else {
            return ExternalOutcome::bare(PlanTaskState::Undeliverable);
        };
        let client = world
            .external_name
            .clone()
            .unwrap_or_else(|| client.to_owned());
        let (tx, rx) = oneshot::channel();
        let route = Route {
            conversation,
            ..Route::default()
        };
        let delivered = self
            .inner
            .deliver(
                reception.as_str(),
                Endpoint::External { client },
                message,
                CausalBudget::new(world.token_budget),
                route,
                Some(tx),
            )
            .await;
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
