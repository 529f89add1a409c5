//! The agent table: one slot per agent that has a task (running, starting, stopping or
//! failed) with its state, mailbox, tasks, controls and connected MCP servers, under one lock,
//! and the village-wide hard stop every agent's controls descend from. The table only keeps
//! state; `inner.rs` spawns the tasks and says what changed (lines and events).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::stopping::Stopping;
use super::{Delivery, TurnControl};
use crate::events::AgentStatus;
use crate::mcp::ServerTools;
use crate::sync::LockOrRecover;

/// One agent's slot.
pub(super) struct AgentSlot {
    pub status: AgentStatus,
    pub sender: Option<mpsc::Sender<Delivery>>,
    /// The supervisor, which ends with the agent's task.
    pub task: Option<tokio::task::JoinHandle<()>>,
    /// The agent's task itself (aborting the supervisor would only detach it).
    pub agent: tokio::task::AbortHandle,
    pub control: Arc<TurnControl>,
    /// Its connected MCP servers with their tool names (the assistant's facts), noted by the
    /// agent's task once connected and forgotten at its stop.
    pub mcp_tools: ServerTools,
}

/// The agent slots and the village-wide hard stop.
#[derive(Default)]
pub(super) struct AgentTable {
    slots: Mutex<HashMap<String, AgentSlot>>,
    /// The village-wide hard stop, cancelled once when a close's grace runs out: every agent's
    /// calls and tools in flight are cut (each agent's `TurnControl::abort` is a child; a single
    /// agent's stop cuts only its own).
    abort: CancellationToken,
}

impl AgentTable {
    /// An agent's state (`Idle` without a slot).
    pub(super) fn status(&self, id: &str) -> AgentStatus {
        self.slots
            .lock_or_recover()
            .get(id)
            .map_or(AgentStatus::Idle, |s| s.status)
    }

    /// The agents that have a slot.
    pub(super) fn ids(&self) -> Vec<String> {
        self.slots.lock_or_recover().keys().cloned().collect()
    }

    /// Puts in the slot `make` builds from the village's hard stop, the table locked from the
    /// check to the insert (so an agent's task that looks itself up finds its slot); `false`,
    /// and `make` not called, when the agent runs or starts already. The MCP servers a failed
    /// slot noted stay until the new task notes its own.
    pub(super) fn start(
        &self,
        id: &str,
        make: impl FnOnce(&CancellationToken) -> AgentSlot,
    ) -> bool {
        let mut slots = self.slots.lock_or_recover();
        let old = slots.get(id);
        if old.is_some_and(|s| matches!(s.status, AgentStatus::Running | AgentStatus::Starting)) {
            return false;
        }
        let tools = old.map(|s| s.mcp_tools.clone()).unwrap_or_default();
        let mut slot = make(&self.abort);
        slot.mcp_tools = tools;
        slots.insert(id.to_owned(), slot);
        true
    }

    /// Marks an agent failed: its mailbox closes.
    pub(super) fn fail(&self, id: &str) {
        if let Some(slot) = self.slots.lock_or_recover().get_mut(id) {
            slot.status = AgentStatus::Failed;
            slot.sender = None;
        }
    }

    /// Marks an agent stopping: its mailbox closes and its stop token is cancelled. `None`: no
    /// such agent; `Some(None)`: another stop took its task already.
    pub(super) fn begin_stop(&self, id: &str) -> Option<Option<Stopping>> {
        let mut slots = self.slots.lock_or_recover();
        let slot = slots.get_mut(id)?;
        slot.status = AgentStatus::Stopping;
        slot.sender = None;
        slot.control.stop.cancel();
        Some(slot.task.take().map(|task| Stopping {
            id: id.to_owned(),
            task,
            agent: slot.agent.clone(),
            control: Arc::clone(&slot.control),
        }))
    }

    /// Forgets a stopped agent's slot.
    pub(super) fn remove(&self, id: &str) {
        self.slots.lock_or_recover().remove(id);
    }

    /// Interrupts an agent's turn; `cut_stream` also cuts its streamed answer in flight.
    pub(super) fn interrupt(&self, id: &str, cut_stream: bool) {
        if let Some(slot) = self.slots.lock_or_recover().get(id) {
            slot.control.interrupt(cut_stream);
        }
    }

    /// A running agent's mailbox (`None`: not running).
    pub(super) fn mailbox(&self, id: &str) -> Option<mpsc::Sender<Delivery>> {
        match self.slots.lock_or_recover().get(id) {
            Some(slot) if slot.status == AgentStatus::Running => slot.sender.clone(),
            _ => None,
        }
    }

    /// Notes (`Some`) or forgets (`None`, at its stop) an agent's connected MCP servers.
    pub(super) fn note_mcp_tools(&self, id: &str, servers: Option<ServerTools>) {
        if let Some(slot) = self.slots.lock_or_recover().get_mut(id) {
            slot.mcp_tools = servers.unwrap_or_default();
        }
    }

    /// An agent's connected MCP servers (empty when it has no slot).
    pub(super) fn mcp_tools(&self, id: &str) -> ServerTools {
        self.slots
            .lock_or_recover()
            .get(id)
            .map(|s| s.mcp_tools.clone())
            .unwrap_or_default()
    }

    /// Cancels the village-wide hard stop, `first` said just before; nothing when it was
    /// cancelled already.
    pub(super) fn abort_all(&self, first: impl FnOnce()) {
        if !self.abort.is_cancelled() {
            first();
            self.abort.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot around a task that waits until it is aborted.
    fn slot(abort: &CancellationToken, status: AgentStatus) -> AgentSlot {
        let task = tokio::spawn(std::future::pending::<()>());
        AgentSlot {
            status,
            sender: None,
            agent: task.abort_handle(),
            task: Some(task),
            control: Arc::new(TurnControl::new(abort)),
            mcp_tools: Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_running_agent_is_not_started_twice_and_a_failed_one_keeps_its_tools() {
        let table = AgentTable::default();
        assert!(table.start("a1", |abort| slot(abort, AgentStatus::Running)));
        table.note_mcp_tools("a1", Some(vec![("kid".into(), vec!["noop".into()])]));
        let again = table.start("a1", |_| {
            unreachable!("a running agent is not started again")
        });
        assert!(!again);
        table.fail("a1");
        assert_eq!(table.status("a1"), AgentStatus::Failed);
        assert!(table.start("a1", |abort| slot(abort, AgentStatus::Running)));
        assert_eq!(
            table.mcp_tools("a1").len(),
            1,
            "kept until the new task notes its own"
        );
    }

    #[tokio::test]
    async fn a_stop_takes_the_task_once_and_its_end_forgets_the_tools() {
        let table = AgentTable::default();
        assert!(table.begin_stop("a1").is_none(), "no such agent");
        table.start("a1", |abort| slot(abort, AgentStatus::Running));
        table.note_mcp_tools("a1", Some(vec![("kid".into(), Vec::new())]));
        let first = table.begin_stop("a1").flatten();
        assert!(
            first
                .as_ref()
                .is_some_and(|s| s.control.stop.is_cancelled())
        );
        assert!(table.begin_stop("a1").is_some_and(|s| s.is_none()));
        assert_eq!(table.status("a1"), AgentStatus::Stopping);
        assert!(table.mailbox("a1").is_none());
        table.remove("a1");
        assert_eq!(table.status("a1"), AgentStatus::Idle);
        assert!(table.mcp_tools("a1").is_empty());
        if let Some(s) = first {
            s.agent.abort();
        }
    }

    #[tokio::test]
    async fn the_village_abort_cuts_every_agent_once() {
        let table = AgentTable::default();
        table.start("a1", |abort| slot(abort, AgentStatus::Running));
        let said = std::cell::Cell::new(0);
        table.abort_all(|| said.set(said.get() + 1));
        table.abort_all(|| said.set(said.get() + 1));
        assert_eq!(said.get(), 1);
        let stopping = table.begin_stop("a1").flatten();
        assert!(stopping.is_some_and(|s| s.control.abort.is_cancelled()));
    }
}
