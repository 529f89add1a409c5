//! What the village page shows that only the event stream tells (the core keeps no snapshot of
//! it): each agent's running totals, last tool and typing state, folded from `CoreEvent`s by one
//! task per GUI; and the stream itself for the browser (Server-Sent Events, one `core` event
//! per `CoreEvent`, `lagged` when the page fell behind, ended when the GUI closes).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use fuseforks_core::events::CoreEvent;
use fuseforks_core::orchestrator::Orchestrator;
use futures_util::stream::{Stream, StreamExt};
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::GuiState;
use super::contract::Lagged;

/// One agent's live facts.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentLive {
    /// Seconds since it started.
    pub uptime_secs: u64,
    /// Tokens so far.
    pub total_tokens: u64,
    /// Prompt tokens so far.
    pub prompt_tokens: u64,
    /// Cached prompt tokens so far.
    pub cached_tokens: u64,
    /// The last call's prompt (how full the context is).
    pub last_prompt_tokens: Option<u64>,
    /// The last tool and whether it succeeded.
    pub last_tool: Option<(String, bool)>,
    /// A turn is thinking.
    pub typing: bool,
}

/// The live facts of every agent.
#[derive(Debug, Default)]
pub(crate) struct Live {
    agents: Mutex<HashMap<String, AgentLive>>,
}

impl Live {
    /// Starts folding `orchestrator`'s events until `stop`.
    pub(crate) fn spawn(orchestrator: &Orchestrator, stop: CancellationToken) -> Arc<Self> {
        let live = Arc::new(Self::default());
        let mut events = orchestrator.events();
        let folding = Arc::clone(&live);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    got = events.recv() => match got {
                        Ok(event) => folding.apply(&event),
                        Err(RecvError::Lagged(_)) => continue,
                        Err(RecvError::Closed) => return,
                    },
                    () = stop.cancelled() => return,
                }
            }
        });
        live
    }

    /// One agent's facts (defaults when nothing was heard yet).
    pub(crate) fn agent(&self, id: &str) -> AgentLive {
        self.lock().get(id).cloned().unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, AgentLive>> {
        self.agents
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn apply(&self, event: &CoreEvent) {
        let mut agents = self.lock();
        match event {
            CoreEvent::AgentStatsUpdated {
                agent_id,
                uptime_secs,
                total_tokens,
                prompt_tokens,
                cached_tokens,
                last_prompt_tokens,
            } => {
                let a = agents.entry(agent_id.clone()).or_default();
                a.uptime_secs = *uptime_secs;
                a.total_tokens = *total_tokens;
                a.prompt_tokens = *prompt_tokens;
                a.cached_tokens = *cached_tokens;
                if last_prompt_tokens.is_some() {
                    a.last_prompt_tokens = *last_prompt_tokens;
                }
            }
            CoreEvent::ToolInvoked {
                agent_id, tool, ok, ..
            } => {
                agents.entry(agent_id.clone()).or_default().last_tool = Some((tool.clone(), *ok));
            }
            CoreEvent::AgentTyping { agent_id, active } => {
                agents.entry(agent_id.clone()).or_default().typing = *active;
            }
            _ => {}
        }
    }
}

/// `GET /api/events`: every `CoreEvent` as it happens.
pub(super) async fn events(
    State(state): State<Arc<GuiState>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let receiver = state.orchestrator.events();
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let event = match receiver.recv().await {
            Ok(event) => Event::default()
                .event("core")
                .json_data(&event)
                .unwrap_or_else(|_| lagged()),
            Err(RecvError::Lagged(_)) => lagged(),
            Err(RecvError::Closed) => return None,
        };
        Some((Ok(event), receiver))
    })
    .take_until(state.stop.clone().cancelled_owned());
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// `lagged`: the page fell behind (or an event did not serialise) and reloads its views; its
/// body is [`Lagged`].
fn lagged() -> Event {
    let event = Event::default().event("lagged");
    event.clone().json_data(Lagged {}).unwrap_or(event)
}
