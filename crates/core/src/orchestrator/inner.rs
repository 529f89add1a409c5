//! `Inner`: what the handle and the agent tasks of one open village share, as a handful of
//! parts, each with one reason to change and its own module: the registry (`world_edit.rs`),
//! the outlets (`outlets.rs`: log, events, model client, keys; fixed), the recording
//! (`recording.rs`: the stored conversations and the current one), the agent table
//! (`slots.rs`), the person's modes (`modes.rs`), the kill switch and audit log (`safety.rs`)
//! and the memory-only boards (`memory.rs`). The rest of the orchestrator goes through the
//! narrow methods below; [`Inner::emit`] is the one way a log line and its event leave
//! together.
//!
//! # Locks
//!
//! Every `std` lock here guards one part's state for a short critical section and is never
//! held across an `.await`; no code holds two of them at once except in this order (a lock
//! further down is never waited for while one further up is wanted):
//!
//! 1. the registry's edit lock (`Registry::update`: the copy, the save, the put), then
//! 2. the registry's `world` lock (read for a copy; written only to put a saved change), then
//! 3. any one leaf: the agent table (a start spawns the tasks and sends `Starting` under it;
//!    an interrupt re-reads, under it, the agent's turn tokens, `TurnControl`'s two locks,
//!    which take nothing further), the current conversation (a record that creates it commits
//!    the new conversation under it), a conversation apart's slot, the modes, one memory
//!    board, the conversation book. A leaf takes no other lock, except that the log sink and
//!    the event bus are written under some of them (neither waits on anything but its own
//!    line).
//!
//! Two `tokio` locks are gates, not state, and are held across `.await`s on purpose: the
//! outside-request gate (`one_external_at_a_time`) for a whole request, until its turn answers
//! or `askTimeoutSecs` runs out, so requests to the reception go one at a time; and the kill
//! switch's command lock (`safety.rs`), across a command's audit line and a halt's stop of
//! every agent (bounded by its grace), so commands do not interleave. Neither is taken while
//! a `std` lock is held.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::conversation::ConversationBook;
use super::memory::Memory;
use super::modes::Modes;
use super::outlets::Outlets;
use super::plan::PlanBook;
use super::recording::Recording;
use super::slots::{AgentSlot, AgentTable};
use super::square::Square;
use super::stopping::Stopping;
use super::world_edit::Registry;
use super::{
    Delivery, MAILBOX_CAPACITY, OrchestratorConfig, Route, SecretLookup, TurnControl, TurnOutcome,
    agent, now_ms,
};
use crate::CoreError;
use crate::budget::CausalBudget;
use crate::events::{AgentStatus, CoreEvent};
use crate::llm::{ApiKey, LlmClient};
use crate::log::LogSink;
use crate::mcp::ChildOutput;
use crate::sessions::{AgentMessage, Endpoint, Record, SessionStore};
use crate::tools::{RunApproval, TrashTarget};
use crate::village::{AgentId, Language, VillageStore, World};

pub(crate) struct Inner {
    registry: Registry,
    outlets: Outlets,
    recording: Recording,
    agents: AgentTable,
    modes: Modes,
    /// The kill switch (pause / abort / halt) and its audit log (`None`: it could not open).
    safety: super::safety::Safety,
    memory: Memory,
    /// One outside request at a time (a gate held for the whole request: see the module doc).
    external_gate: tokio::sync::Mutex<()>,
}

impl Inner {
    /// Reads the village and opens `sessions.redb` (see `Orchestrator::bootstrap`).
    pub(super) fn open(config: OrchestratorConfig) -> Result<Self, CoreError> {
        let registry = Registry::open(&config.workspace, config.os_locale.as_deref())?;
        let recording = Recording::open(&config.workspace, registry.language(), &*config.log)?;
        let safety = super::safety::Safety::open(
            &config.workspace,
            recording.store().cloned(),
            config.audit,
            &*config.log,
        );
        Ok(Self {
            registry,
            outlets: Outlets {
                events: crate::events::EventBus::new(),
                log: config.log,
                llm: config.llm,
                secrets: config.secrets,
                trash: config.trash,
                mcp_child_output: config.mcp_child_output,
                tracer: config.tracer,
            },
            recording,
            agents: AgentTable::default(),
            modes: Modes::default(),
            safety,
            memory: Memory::default(),
            external_gate: tokio::sync::Mutex::new(()),
        })
    }

    /// True the first time a judge is unavailable for `why` (its `judge disabled:` line).
    pub(super) fn first_judge_note(&self, judge: &str, why: &str) -> bool {
        self.memory.judge_notes.first(judge, why)
    }

    /// The kill switch and the audit log.
    pub(super) fn safety(&self) -> &super::safety::Safety {
        &self.safety
    }

    /// The village's files.
    pub(super) fn store(&self) -> &VillageStore {
        self.registry.store()
    }

    /// A copy of the registry.
    pub(super) fn world(&self) -> World {
        self.registry.world()
    }

    /// Applies `change` to the registry, saves it, and puts it in effect (`world_edit.rs`).
    pub(super) fn update_world(
        &self,
        change: impl FnOnce(&mut World) -> Result<(), CoreError>,
    ) -> Result<World, CoreError> {
        self.registry.update(change)
    }

    /// The GUI's questions waiting for the person.
    pub(super) fn waiting(&self) -> &super::question::Waiting {
        &self.memory.waiting
    }

    /// The last tool calls' details.
    pub(super) fn tool_ring(&self) -> &super::watch::ToolRing {
        &self.memory.tool_ring
    }

    /// The causal roots of the deliveries made.
    pub(super) fn roots(&self) -> &super::watch::Roots {
        &self.memory.roots
    }

    /// The village language in effect.
    pub(super) fn language(&self) -> Language {
        self.registry.language()
    }

    /// The conversation store, when open.
    pub(super) fn sessions(&self) -> Option<&SessionStore> {
        self.recording.store().map(|s| &**s)
    }

    /// The model client.
    pub(super) fn llm(&self) -> &LlmClient {
        &self.outlets.llm
    }

    /// A template's API key.
    pub(super) fn secret(&self, template_id: &str) -> Option<ApiKey> {
        self.outlets.secret(template_id)
    }

    /// The key lookup itself (for the MCP headers' `${secret:NAME}`).
    pub(super) fn secrets(&self) -> SecretLookup {
        self.outlets.secrets()
    }

    /// The village log, for a part that writes its own lines (the MCP client).
    pub(super) fn log_sink(&self) -> Arc<dyn LogSink> {
        Arc::clone(&self.outlets.log)
    }

    /// Where trace spans go (`None`: off).
    pub(super) fn tracer(&self) -> Option<&Arc<dyn crate::trace::Tracer>> {
        self.outlets.tracer.as_ref()
    }

    /// Where MCP children's stderr goes.
    pub(super) fn mcp_child_output(&self) -> Option<Arc<dyn ChildOutput>> {
        self.outlets.mcp_child_output.clone()
    }

    /// Notes (`Some`) or forgets (`None`, at its stop) an agent's connected MCP servers.
    pub(super) fn note_mcp_tools(&self, agent_id: &str, servers: Option<crate::mcp::ServerTools>) {
        self.agents.note_mcp_tools(agent_id, servers);
    }

    /// An agent's connected MCP servers with their tool names (empty when it is not running).
    pub(super) fn mcp_tools(&self, agent_id: &str) -> crate::mcp::ServerTools {
        self.agents.mcp_tools(agent_id)
    }

    /// Where `file remove` puts things.
    pub(super) fn trash(&self) -> &TrashTarget {
        &self.outlets.trash
    }

    /// The public square.
    pub(super) fn square(&self) -> &Square {
        &self.memory.square
    }

    /// The waves in memory.
    pub(super) fn plans(&self) -> &PlanBook {
        &self.memory.plans
    }

    /// The conversations apart.
    pub(super) fn conversations(&self) -> &Arc<ConversationBook> {
        self.recording.conversations()
    }

    /// Subscribes to the events.
    pub(super) fn subscribe(&self) -> tokio::sync::broadcast::Receiver<CoreEvent> {
        self.outlets.events.subscribe()
    }

    /// Writes a log line and sends the event that says the same, in that order.
    pub(super) fn emit(&self, line: &str, event: CoreEvent) {
        self.outlets.emit(line, event);
    }

    /// Writes a log line that has no event.
    pub(super) fn log(&self, line: &str) {
        self.outlets.log.line(line);
    }

    /// Sends an event that has no log line (or whose line is written apart from it).
    pub(super) fn event(&self, event: CoreEvent) {
        self.outlets.events.emit(event);
    }

    /// The command-approval mode.
    pub(super) fn approval(&self) -> RunApproval {
        self.modes.approval()
    }

    /// Sets the command-approval mode; returns the one it replaced.
    pub(super) fn set_approval(&self, mode: RunApproval) -> RunApproval {
        self.modes.set_approval(mode)
    }

    /// Whether plan waves skip review (the process-wide switch).
    pub(super) fn plan_bypass(&self) -> bool {
        self.modes.plan_bypass()
    }

    pub(super) fn set_plan_bypass(&self, enabled: bool) {
        self.modes.set_plan_bypass(enabled);
    }

    /// Waits for the outside requests before this one (one at a time).
    pub(super) async fn one_external_at_a_time(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.external_gate.lock().await
    }

    /// The current conversation.
    pub(super) fn current_session(&self) -> Option<String> {
        self.recording.current()
    }

    /// Makes `session` current (`None`: a new one, created on its first record).
    pub(super) fn set_current_session(&self, session: Option<String>) {
        self.recording.set_current(session);
    }

    /// Says that `agent_id` must re-read its history of the current conversation.
    pub(super) fn reload_history(&self, agent_id: &str) {
        self.recording.reload_history(agent_id);
    }

    /// Whether `agent_id` must re-read its history (asked once: the flag is cleared).
    pub(super) fn take_reload(&self, agent_id: &str) -> bool {
        self.recording.take_reload(agent_id)
    }
}

/// The agent slots.
impl Inner {
    /// An agent's state.
    pub(super) fn status(&self, id: &str) -> AgentStatus {
        self.agents.status(id)
    }

    pub(super) fn is_running(&self, id: &str) -> bool {
        self.status(id) == AgentStatus::Running
    }

    /// The agents that have a slot (running, starting, stopping or failed).
    pub(super) fn agent_ids(&self) -> Vec<String> {
        self.agents.ids()
    }

    /// Starts an agent: one task, one mailbox (nothing when it runs or starts already).
    pub(super) fn start_agent(self: &Arc<Self>, id: &str) -> Result<(), CoreError> {
        let agent_id = AgentId::new(id).map_err(|_| CoreError::AgentNotFound(id.to_owned()))?;
        if self.world().agent(&agent_id).is_none() {
            return Err(CoreError::AgentNotFound(id.to_owned()));
        }
        let started = self.agents.start(id, |village_abort| {
            self.event(CoreEvent::AgentStatusChanged {
                agent_id: id.into(),
                status: AgentStatus::Starting,
            });
            self.spawn_agent(id, village_abort)
        });
        if started {
            self.emit(
                &format!("agent started: agent={id}"),
                CoreEvent::AgentStatusChanged {
                    agent_id: id.into(),
                    status: AgentStatus::Running,
                },
            );
        }
        Ok(())
    }

    /// Spawns an agent's task and its supervisor; the slot they make.
    fn spawn_agent(
        self: &Arc<Self>,
        id: &str,
        village_abort: &tokio_util::sync::CancellationToken,
    ) -> AgentSlot {
        let (sender, receiver) = mpsc::channel(MAILBOX_CAPACITY);
        let control = Arc::new(TurnControl::new(village_abort));
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
        AgentSlot {
            status: AgentStatus::Running,
            sender: Some(sender),
            task: Some(task),
            agent,
            control,
            mcp_tools: Vec::new(),
        }
    }

    pub(super) fn mark_failed(&self, id: &str, error: &str) {
        self.agents.fail(id);
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
        let stopping = self.agents.begin_stop(id)?;
        self.event(CoreEvent::AgentStatusChanged {
            agent_id: id.into(),
            status: AgentStatus::Stopping,
        });
        stopping
    }

    /// Forgets a stopped agent's slot.
    pub(super) fn end_stop(&self, id: &str, joined: bool) {
        self.agents.remove(id);
        self.emit(
            &format!("agent stopped: agent={id} joined={joined}"),
            CoreEvent::AgentStatusChanged {
                agent_id: id.into(),
                status: AgentStatus::Idle,
            },
        );
    }

    /// Interrupts an agent's turn; `cut_stream` also cuts its streamed answer in flight.
    pub(super) fn interrupt(&self, id: &str, cut_stream: bool) {
        self.agents.interrupt(id, cut_stream);
    }

    /// The hard stop of a close (see `Orchestrator::abort_in_flight`).
    pub(super) fn abort_in_flight(&self) {
        self.agents.abort_all(|| {
            self.log("close: grace over; cutting model calls and tools in flight");
        });
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
        let Some(sender) = self.agents.mailbox(to) else {
            return Err(CoreError::NotRunning(to.to_owned()));
        };
        self.memory.roots.note(&delivery.budget);
        sender
            .send(delivery)
            .await
            .map_err(|_| CoreError::NotRunning(to.to_owned()))
    }
}

/// The records.
impl Inner {
    /// Appends to the current conversation (`Recording::record`); the conversation's id.
    pub(super) async fn record(&self, records: Vec<Record>) -> Option<String> {
        self.recording.record(records, &*self.outlets.log).await
    }
}
