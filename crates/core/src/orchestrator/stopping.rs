//! Stopping agents: one agent (`stop_agent`), all of them (`stop_all`), or the close; the
//! grace, then the cut of calls and tools in flight (one agent's, or the whole village's), the
//! short wait for the turn's record, and the end of a task that still runs; interrupts.

use std::sync::Arc;
use std::time::Duration;

use super::{CUT_GRACE, Orchestrator, TASK_END_WAIT, TurnControl};

/// An agent taken out of service by `Inner::begin_stop`.
pub(super) struct Stopping {
    pub id: String,
    pub task: tokio::task::JoinHandle<()>,
    pub agent: tokio::task::AbortHandle,
    pub control: Arc<TurnControl>,
}

/// What a stop does when its grace runs out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// Only this agent's calls and tools are cut (`stop_agent`, `stop_all`).
    Agent,
    /// The close: every call and tool of the village is cut, for good.
    Village,
}

impl Orchestrator {
    /// Stops one agent after its current turn: its mailbox closes, messages still queued are
    /// answered as interrupted without a turn, a connect in progress ends. Returns whether the
    /// task ended within `grace`; when not, this agent's calls and tools in flight are cut (no
    /// other agent's), its turn gets [`CUT_GRACE`] to record itself, and then its task is
    /// ended.
    pub async fn stop_agent(&self, id: &str, grace: Duration) -> bool {
        let stopping = self.inner.begin_stop(id);
        let joined = self.join_within(stopping, grace, Cut::Agent).await;
        self.inner.end_stop(id, joined);
        joined
    }

    /// Waits for a stopping agent's task; when the grace runs out, calls and tools in flight
    /// are cut (`cut`: the agent's, or the whole village's), the task gets [`CUT_GRACE`] to
    /// record its turn, and is then ended.
    async fn join_within(&self, stopping: Option<Stopping>, grace: Duration, cut: Cut) -> bool {
        let Some(mut stopping) = stopping else {
            return true;
        };
        if tokio::time::timeout(grace, &mut stopping.task)
            .await
            .is_ok()
        {
            return true;
        }
        match cut {
            Cut::Village => self.abort_in_flight(),
            Cut::Agent => {
                self.inner.log(&format!(
                    "stop: grace over; cutting the model calls and tools in flight: agent={}",
                    stopping.id
                ));
                stopping.control.abort.cancel();
            }
        }
        if tokio::time::timeout(CUT_GRACE, &mut stopping.task)
            .await
            .is_err()
        {
            self.inner.log(&format!(
                "stop: the agent's task did not end after the cut; ending it: agent={}",
                stopping.id
            ));
            stopping.agent.abort();
            // The supervisor ends as soon as the aborted task is dropped (its children's groups
            // with it).
            let _ = tokio::time::timeout(TASK_END_WAIT, &mut stopping.task).await;
        }
        false
    }

    /// The hard stop of a close: every model call and tool in flight is cut at once (a cut
    /// call's usage is recorded as unknown). Final: nothing is sent afterwards.
    pub fn abort_in_flight(&self) {
        self.inner.abort_in_flight();
    }

    /// Interrupts an agent's turn; it takes effect at the next round boundary.
    pub fn interrupt(&self, id: &str) {
        self.inner.interrupt(id, true);
    }

    /// Interrupts every agent.
    pub fn interrupt_all(&self) {
        for id in self.inner.agent_ids() {
            self.interrupt(&id);
        }
    }

    /// Stops every running agent at once; returns whether all ended within `grace` (when not,
    /// the calls and tools in flight of those that did not were cut, so the whole stop takes
    /// at most `grace` + [`CUT_GRACE`]).
    pub(crate) async fn stop_all(&self, grace: Duration) -> bool {
        self.stop_every(grace, false, Cut::Agent).await
    }

    /// The close: every agent stops at once and its running turn is interrupted (stopped first,
    /// so no queued message starts a turn in between); when the grace runs out, every model
    /// call and tool of the village still in flight is cut for good
    /// ([`Self::abort_in_flight`]). Takes at most `grace` + [`CUT_GRACE`]; returns whether
    /// every agent ended within `grace`.
    pub async fn close(&self, grace: Duration) -> bool {
        self.stop_every(grace, true, Cut::Village).await
    }

    async fn stop_every(&self, grace: Duration, interrupt: bool, cut: Cut) -> bool {
        let ids = self.inner.agent_ids();
        let stopping: Vec<_> = ids
            .iter()
            .map(|id| (id.clone(), self.inner.begin_stop(id)))
            .collect();
        if interrupt {
            // A close lets an answer in flight finish, streamed or not: it is paid for, and
            // `ask` prints it; the grace's end cuts what is still running.
            for id in &ids {
                self.inner.interrupt(id, false);
            }
        }
        let joining = stopping.into_iter().map(|(id, stopping)| async move {
            let joined = self.join_within(stopping, grace, cut).await;
            self.inner.end_stop(&id, joined);
            joined
        });
        futures_util::future::join_all(joining)
            .await
            .into_iter()
            .all(|joined| joined)
    }
}
