//! `ask --output stream-json` and `ask --stream`: what the village does while the request runs,
//! on stdout as it happens. `stream-json`: one JSON line per answer piece (`{"type":"delta",
//! agentId, text}`, from templates with `streaming`) and per tool call (`{"type":"tool",
//! agentId, tool, ok}`, with `exitCode` for `run`), then the result object with `"type":
//! "result"`; a stream sent again after its connection broke says `"restart": true`.
//! `--stream` (text): the reception's answer pieces as they arrive, then a line end instead of
//! the whole answer.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use fuseforks_core::events::CoreEvent;
use fuseforks_core::orchestrator::Orchestrator;
use serde_json::json;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

/// What is streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// JSON lines of every piece and tool call.
    Json,
    /// The reception's answer text.
    Text,
}

/// The running forwarder.
pub struct Streamer {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    /// Some of the reception's answer was printed (text mode).
    pub printed: Arc<AtomicBool>,
}

/// The `exit: N` a `run` tool result begins with.
fn exit_code(orchestrator: &Orchestrator, agent: &str, call: &str) -> Option<i64> {
    let detail = orchestrator.tool_call(agent, call)?;
    let first = detail.result.lines().next()?;
    first.strip_prefix("exit: ")?.trim().parse().ok()
}

fn say(
    event: &CoreEvent,
    mode: Mode,
    orchestrator: &Orchestrator,
    reception: &str,
    printed: &AtomicBool,
) {
    let mut stdout = std::io::stdout().lock();
    match (event, mode) {
        (
            CoreEvent::MessageDelta {
                agent_id,
                text,
                restart,
            },
            Mode::Json,
        ) => {
            let mut line = json!({"type": "delta", "agentId": agent_id, "text": text});
            if *restart {
                line["restart"] = json!(true);
            }
            let _ = writeln!(stdout, "{line}");
        }
        (
            CoreEvent::MessageDelta {
                agent_id,
                text,
                restart,
            },
            Mode::Text,
        ) if agent_id == reception => {
            // A stream sent again starts on a line of its own: what was printed stays printed.
            let text = if *restart { "\n" } else { text.as_str() };
            let _ = write!(stdout, "{}", crate::terminal::for_stdout(text));
            printed.store(true, Ordering::SeqCst);
        }
        (
            CoreEvent::ToolInvoked {
                agent_id,
                tool,
                ok,
                call_id,
                ..
            },
            Mode::Json,
        ) => {
            let mut line = json!({"type": "tool", "agentId": agent_id, "tool": tool, "ok": ok});
            if tool == "run"
                && let Some(code) = exit_code(orchestrator, agent_id, call_id)
            {
                line["exitCode"] = json!(code);
            }
            let _ = writeln!(stdout, "{line}");
        }
        _ => return,
    }
    let _ = stdout.flush();
}

/// Starts forwarding the events of `orchestrator`.
pub fn start(orchestrator: &Orchestrator, mode: Mode) -> Streamer {
    let mut events = orchestrator.events();
    let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
    let printed = Arc::new(AtomicBool::new(false));
    let (orch, seen) = (orchestrator.clone(), Arc::clone(&printed));
    let reception = orchestrator
        .world()
        .reception
        .map(|r| r.to_string())
        .unwrap_or_default();
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                got = events.recv() => match got {
                    Ok(event) => say(&event, mode, &orch, &reception, &seen),
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => return,
                },
                _ = &mut stopped => {
                    // What was sent before the answer is said before the result.
                    loop {
                        match events.try_recv() {
                            Ok(event) => say(&event, mode, &orch, &reception, &seen),
                            Err(TryRecvError::Lagged(_)) => continue,
                            Err(_) => return,
                        }
                    }
                }
            }
        }
    });
    Streamer {
        stop,
        task,
        printed,
    }
}

impl Streamer {
    /// Stops forwarding once what was already sent is said.
    pub async fn stop(self) -> Arc<AtomicBool> {
        let _ = self.stop.send(());
        let _ = self.task.await;
        self.printed
    }
}
