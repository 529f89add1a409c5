//! `Inner`: what the handle and the agent tasks of one open village share. Its fields are
//! private; the rest of the orchestrator goes through the narrow methods below: the agent
//! slots (start, stop, interrupt, deliver), the current conversation and its records, the
//! in-memory modes, and [`Inner::emit`], the one way a log line and its event leave together.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::conversation::{self, ConversationBook};
use super::plan::PlanBook;
use super::square::Square;
use super::stopping::Stopping;
use super::{
    Delivery, MAILBOX_CAPACITY, OrchestratorConfig, Route, SecretLookup, TurnControl, TurnOutcome,
    agent, now_ms,
};
use crate::CoreError;
use crate::budget::CausalBudget;
use crate::events::{AgentStatus, CoreEvent, EventBus};
use crate::llm::{ApiKey, LlmClient};
use crate::log::LogSink;
use crate::mcp::ChildOutput;
use crate::sessions::{
    AgentMessage, Endpoint, Record, SessionError, SessionMeta, SessionStore, SessionWriter,
};
use crate::sync::{LockOrRecover, RwLockOrRecover};
use crate::tools::{RunApproval, TrashTarget};
use crate::village::{AgentId, Language, VillageStore, World};

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
    store: VillageStore,
    world: RwLock<World>,
    /// Held by a change of `world.json` from start (the copy) to end (put in place).
    pub(super) world_edit: Mutex<()>,
    language: Language,
    sessions: Option<Arc<SessionStore>>,
    writer: Option<SessionWriter>,
    /// The current conversation.
    session_id: Mutex<Option<String>>,
    /// The current conversation last named by a `session:` log line.
    session_named: Mutex<Option<String>>,
    events: EventBus,
    log: Arc<dyn LogSink>,
    llm: LlmClient,
    secrets: SecretLookup,
    approval: RwLock<RunApproval>,
    trash: TrashTarget,
    mcp_child_output: Option<Arc<dyn ChildOutput>>,
    /// Each running agent's connected MCP servers with their tool names (the assistant's facts).
    mcp_tools: Mutex<HashMap<String, crate::mcp::ServerTools>>,
    tracer: Option<Arc<dyn crate::trace::Tracer>>,
    square: Square,
    plans: PlanBook,
    /// The GUI's questions (`ask_user`) waiting for the person.
    waiting: super::question::Waiting,
    plan_bypass: AtomicBool,
    conversations: Arc<ConversationBook>,
    agents: Mutex<HashMap<String, AgentSlot>>,
    external_gate: tokio::sync::Mutex<()>,
    /// The village-wide hard stop, cancelled once when a close's grace runs out: every agent's
    /// calls and tools in flight are cut (each agent's `TurnControl::abort` is a child; a single
    /// agent's stop cuts only its own).
    abort: CancellationToken,
    /// The kill switch (pause / abort / halt) and its audit log (`None`: it could not open).
    safety: super::safety::Safety,
    /// Judges already named in a `judge disabled:` line (id and reason), so it is said once.
    judge_notes: Mutex<std::collections::HashSet<String>>,
    /// The last tool calls' details (memory only).
    tool_ring: super::watch::ToolRing,
    /// The causal roots of the deliveries made (weak: running while held).
    roots: super::watch::Roots,
}

impl Inner {
    /// Reads the village and opens `sessions.redb` (see `Orchestrator::bootstrap`).
    pub(super) fn open(config: OrchestratorConfig) -> Result<Self, CoreError> {
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
        let latest = sessions
            .as_ref()
            .and_then(|s| s.list().ok())
            .and_then(|l| l.into_iter().next());
        config
            .log
            .line(&opened_session_line(language, latest.as_ref()));
        let session_id = latest.map(|(id, _)| id);
        let sessions = sessions.map(Arc::new);
        let (sessions_for_audit, log_for_audit) = (sessions.clone(), Arc::clone(&config.log));
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
            store,
            world: RwLock::new(world),
            world_edit: Mutex::default(),
            language,
            sessions,
            writer,
            session_named: Mutex::new(session_id.clone()),
            session_id: Mutex::new(session_id),
            events: EventBus::new(),
            log: config.log,
            llm: config.llm,
            secrets: config.secrets,
            approval: RwLock::new(RunApproval::Required),
            trash: config.trash,
            mcp_child_output: config.mcp_child_output,
            mcp_tools: Mutex::default(),
            tracer: config.tracer,
            square: Square::default(),
            plans: PlanBook::default(),
            waiting: super::question::Waiting::default(),
            plan_bypass: AtomicBool::new(false),
            conversations: Arc::default(),
            agents: Mutex::new(HashMap::new()),
            external_gate: tokio::sync::Mutex::new(()),
            abort: CancellationToken::new(),
            safety: super::safety::Safety::open(
                &config.workspace,
                sessions_for_audit,
                config.audit,
                &*log_for_audit,
            ),
            judge_notes: Mutex::default(),
            tool_ring: super::watch::ToolRing::default(),
            roots: super::watch::Roots::default(),
        })
    }

    /// True the first time a judge is unavailable for `why` (its `judge disabled:` line).
    pub(super) fn first_judge_note(&self, judge: &str, why: &str) -> bool {
        self.judge_notes
            .lock_or_recover()
            .insert(format!("{judge}\u{0}{why}"))
    }

    /// The kill switch and the audit log.
    pub(super) fn safety(&self) -> &super::safety::Safety {
        &self.safety
    }

    /// The village's files.
    pub(super) fn store(&self) -> &VillageStore {
        &self.store
    }

    /// A copy of the registry.
    pub(super) fn world(&self) -> World {
        self.world.read_or_recover().clone()
    }

    /// The GUI's questions waiting for the person.
    pub(super) fn waiting(&self) -> &super::question::Waiting {
        &self.waiting
    }

    /// The last tool calls' details.
    pub(super) fn tool_ring(&self) -> &super::watch::ToolRing {
        &self.tool_ring
    }

    /// The causal roots of the deliveries made.
    pub(super) fn roots(&self) -> &super::watch::Roots {
        &self.roots
    }

    /// Puts a registry in effect (written already: `world_edit.rs`).
    pub(super) fn set_world(&self, world: World) {
        *self.world.write_or_recover() = world;
    }

    /// The village language in effect.
    pub(super) fn language(&self) -> Language {
        self.language
    }

    /// The conversation store, when open.
    pub(super) fn sessions(&self) -> Option<&SessionStore> {
        self.sessions.as_deref()
    }

    /// The model client.
    pub(super) fn llm(&self) -> &LlmClient {
        &self.llm
    }

    /// A template's API key.
    pub(super) fn secret(&self, template_id: &str) -> Option<ApiKey> {
        (self.secrets)(template_id)
    }

    /// The key lookup itself (for the MCP headers' `${secret:NAME}`).
    pub(super) fn secrets(&self) -> SecretLookup {
        Arc::clone(&self.secrets)
    }

    /// The village log, for a part that writes its own lines (the MCP client).
    pub(super) fn log_sink(&self) -> Arc<dyn LogSink> {
        Arc::clone(&self.log)
    }

    /// Where MCP children's stderr goes.
    /// Where trace spans go (`None`: off).
    pub(super) fn tracer(&self) -> Option<&Arc<dyn crate::trace::Tracer>> {
        self.tracer.as_ref()
    }

    pub(super) fn mcp_child_output(&self) -> Option<Arc<dyn ChildOutput>> {
        self.mcp_child_output.clone()
    }

    /// Notes (`Some`) or forgets (`None`, at its stop) an agent's connected MCP servers.
    pub(super) fn note_mcp_tools(&self, agent_id: &str, servers: Option<crate::mcp::ServerTools>) {
        let mut all = self.mcp_tools.lock_or_recover();
        match servers {
            Some(s) => all.insert(agent_id.to_owned(), s),
            None => all.remove(agent_id),
        };
    }

    /// An agent's connected MCP servers with their tool names (empty when it is not running).
    pub(super) fn mcp_tools(&self, agent_id: &str) -> crate::mcp::ServerTools {
        self.mcp_tools
            .lock_or_recover()
            .get(agent_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Where `file remove` puts things.
    pub(super) fn trash(&self) -> &TrashTarget {
        &self.trash
    }

    /// The public square.
    pub(super) fn square(&self) -> &Square {
        &self.square
    }

    /// The waves in memory.
    pub(super) fn plans(&self) -> &PlanBook {
        &self.plans
    }

    /// The conversations apart.
    pub(super) fn conversations(&self) -> &Arc<ConversationBook> {
        &self.conversations
    }

    /// Subscribes to the events.
    pub(super) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<CoreEvent> {
        self.events.subscribe()
    }

    /// Writes a log line and sends the event that says the same, in that order.
    pub(super) fn emit(&self, line: &str, event: CoreEvent) {
        self.log.line(line);
        self.events.emit(event);
    }

    /// Writes a log line that has no event.
    pub(super) fn log(&self, line: &str) {
        self.log.line(line);
    }

    /// Sends an event that has no log line (or whose line is written apart from it).
    pub(super) fn event(&self, event: CoreEvent) {
        self.events.emit(event);
    }

    /// The command-approval mode.
    pub(super) fn approval(&self) -> RunApproval {
        *self.approval.read_or_recover()
    }

    /// Sets the command-approval mode; returns the one it replaced.
    pub(super) fn set_approval(&self, mode: RunApproval) -> RunApproval {
        std::mem::replace(&mut *self.approval.write_or_recover(), mode)
    }

    /// Whether plan waves skip review (the process-wide switch).
    pub(super) fn plan_bypass(&self) -> bool {
        self.plan_bypass.load(Ordering::SeqCst)
    }

    pub(super) fn set_plan_bypass(&self, enabled: bool) {
        self.plan_bypass.store(enabled, Ordering::SeqCst);
    }

    /// Waits for the outside requests before this one (one at a time).
    pub(super) async fn one_external_at_a_time(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.external_gate.lock().await
    }

    /// The current conversation.
    pub(super) fn current_session(&self) -> Option<String> {
        self.session_id.lock_or_recover().clone()
    }

    /// Makes `session` current (`None`: a new one, created on its first record).
    pub(super) fn set_current_session(&self, session: Option<String>) {
        *self.session_id.lock_or_recover() = session;
    }
}

/// The agent slots.
impl Inner {
    /// An agent's state.
    pub(super) fn status(&self, id: &str) -> AgentStatus {
        self.agents
            .lock_or_recover()
            .get(id)
            .map_or(AgentStatus::Idle, |s| s.status)
    }

    pub(super) fn is_running(&self, id: &str) -> bool {
        self.status(id) == AgentStatus::Running
    }

    /// The agents that have a slot (running, starting, stopping or failed).
    pub(super) fn agent_ids(&self) -> Vec<String> {
        self.agents.lock_or_recover().keys().cloned().collect()
    }

    /// Starts an agent: one task, one mailbox (nothing when it runs or starts already).
    pub(super) fn start_agent(self: &Arc<Self>, id: &str) -> Result<(), CoreError> {
        let agent_id = AgentId::new(id).map_err(|_| CoreError::AgentNotFound(id.to_owned()))?;
        if self.world().agent(&agent_id).is_none() {
            return Err(CoreError::AgentNotFound(id.to_owned()));
        }
        let mut agents = self.agents.lock_or_recover();
        if agents
            .get(id)
            .is_some_and(|s| matches!(s.status, AgentStatus::Running | AgentStatus::Starting))
        {
            return Ok(());
        }
        self.event(CoreEvent::AgentStatusChanged {
            agent_id: id.into(),
            status: AgentStatus::Starting,
        });
        let (sender, receiver) = mpsc::channel(MAILBOX_CAPACITY);
        let control = Arc::new(TurnControl::new(&self.abort));
        let inner_task = tokio::spawn(agent::run(
            Arc::clone(self),
            id.to_owned(),
            Arc::clone(&control),
            receiver,
        ));
        let agent = inner_task.abort_handle();
        // A supervisor: an agent task that dies (a panic) marks the agent Failed; one ended by
        // its stop (aborted after the cut) is a stop like any other.
        let (inner, agent_id) = (Arc::clone(self), id.to_owned());
        let task = tokio::spawn(async move {
            if let Err(e) = inner_task.await
                && !e.is_cancelled()
            {
                inner.mark_failed(&agent_id, "the agent's task stopped unexpectedly");
            }
        });
        let slot = AgentSlot {
            status: AgentStatus::Running,
            sender: Some(sender),
            task: Some(task),
            agent,
            control,
        };
        agents.insert(id.to_owned(), slot);
        drop(agents);
        self.emit(
            &format!("agent started: agent={id}"),
            CoreEvent::AgentStatusChanged {
                agent_id: id.into(),
                status: AgentStatus::Running,
            },
        );
        Ok(())
    }

    pub(super) fn mark_failed(&self, id: &str, error: &str) {
        if let Some(slot) = self.agents.lock_or_recover().get_mut(id) {
            slot.status = AgentStatus::Failed;
            slot.sender = None;
        }
        self.emit(
            &format!("agent failed: agent={id}"),
            CoreEvent::AgentFailed {
                agent_id: id.into(),
                error: error.into(),
                code: None,
                status: None,
                class: None,
                template: None,
                host: None,
                fix: None,
            },
        );
        self.event(CoreEvent::AgentStatusChanged {
            agent_id: id.into(),
            status: AgentStatus::Failed,
        });
    }

    /// Marks an agent stopping: its mailbox closes and its stop token is cancelled. Returns its
    /// task to wait for (`None`: no such agent, or another stop took it already).
    pub(super) fn begin_stop(&self, id: &str) -> Option<Stopping> {
        let stopping = {
            let mut agents = self.agents.lock_or_recover();
            let slot = agents.get_mut(id)?;
            slot.status = AgentStatus::Stopping;
            slot.sender = None;
            slot.control.stop.cancel();
            slot.task.take().map(|task| Stopping {
                id: id.to_owned(),
                task,
                agent: slot.agent.clone(),
                control: Arc::clone(&slot.control),
            })
        };
        self.event(CoreEvent::AgentStatusChanged {
            agent_id: id.into(),
            status: AgentStatus::Stopping,
        });
        stopping
    }

    /// Forgets a stopped agent's slot.
    pub(super) fn end_stop(&self, id: &str, joined: bool) {
        self.agents.lock_or_recover().remove(id);
        self.emit(
            &format!("agent stopped: agent={id} joined={joined}"),
            CoreEvent::AgentStatusChanged {
                agent_id: id.into(),
                status: AgentStatus::Idle,
            },
        );
    }

    /// Interrupts an agent's turn (at the next round boundary; its calls in flight now).
    /// Interrupts an agent's turn; `cut_stream` also cuts its streamed answer in flight.
    pub(super) fn interrupt(&self, id: &str, cut_stream: bool) {
        if let Some(slot) = self.agents.lock_or_recover().get(id) {
            slot.control.interrupt(cut_stream);
        }
    }

    /// The hard stop of a close (see `Orchestrator::abort_in_flight`).
    pub(super) fn abort_in_flight(&self) {
        if !self.abort.is_cancelled() {
            self.log("close: grace over; cutting model calls and tools in flight");
            self.abort.cancel();
        }
    }

    /// Puts a message in a running agent's mailbox.
    pub(super) async fn deliver(
        &self,
        to: &str,
        from: Endpoint,
        content: &str,
        budget: Arc<CausalBudget>,
        route: Route,
        reply: Option<oneshot::Sender<TurnOutcome>>,
    ) -> Result<(), CoreError> {
        let message = AgentMessage::new(
            from,
            Endpoint::Agent { id: to.to_owned() },
            content,
            route.hop,
            now_ms(),
        );
        let delivery = Delivery {
            message,
            budget,
            route,
            reply,
            resume: None,
        };
        self.post(to, delivery).await
    }

    /// Puts a delivery made whole by the caller (its message addressed to `to`) in a running
    /// agent's mailbox.
    pub(super) async fn post(&self, to: &str, delivery: Delivery) -> Result<(), CoreError> {
        let sender = match self.agents.lock_or_recover().get(to) {
            Some(slot) if slot.status == AgentStatus::Running => slot.sender.clone(),
            _ => None,
        };
        let Some(sender) = sender else {
            return Err(CoreError::NotRunning(to.to_owned()));
        };
        self.roots.note(&delivery.budget);
        sender
            .send(delivery)
            .await
            .map_err(|_| CoreError::NotRunning(to.to_owned()))
    }
}

/// The records.
impl Inner {
    /// Appends to the current conversation (creating one if none is open), in one commit
    /// shared with whatever else is waiting. A store failure is logged and the turn goes on:
    /// losing a record must not lose the answer. A turn in a conversation apart (see
    /// `conversation.rs`, set around the turn by the agent's task) records into that
    /// conversation's own.
    pub(super) async fn record(&self, records: Vec<Record>) -> Option<String> {
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
                    let mut current = self.session_id.lock_or_recover();
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
            self.log(&format!(
                "session append failed: session={id} kinds={kinds} code={}",
                e.code()
            ));
        }
        Some(id)
    }

    /// The `session:` log line: it names the stored conversation turns are recorded under,
    /// when it is created (`new`) or first recorded into by this process; a conversation apart
    /// from the current one (a door session's) is named when it is created (`apart`).
    fn name_session(&self, id: &str, created: bool, apart: bool) {
        if apart {
            if created {
                self.log(&format!("session: {id} new apart"));
            }
            return;
        }
        let mut named = self.session_named.lock_or_recover();
        if named.as_deref() == Some(id) {
            return;
        }
        *named = Some(id.to_owned());
        self.log(&format!(
            "session: {id}{}",
            if created { " new" } else { "" }
        ));
    }
}

/// The startup block's `session:` line: the conversation the village continues (the most
/// recent one), with its record count, or that the first record will create one
/// (`docs/formats/log-lines.md`).
fn opened_session_line(language: Language, latest: Option<&(String, SessionMeta)>) -> String {
    match latest {
        Some((id, meta)) => language.pick(
            format!(
                "session: {id} を開きました（記録 {} 件）",
                meta.record_count
            ),
            format!("session: {id} opened ({} records)", meta.record_count),
        ),
        None => language.pick(
            "session: なし（最初の記録で作ります）",
            "session: none (the first record creates one)",
        ),
    }
}

fn title_of(record: &Record) -> String {
    match record {
        Record::Message(m) => m.content.chars().take(30).collect(),
        _ => "conversation".into(),
    }
}
