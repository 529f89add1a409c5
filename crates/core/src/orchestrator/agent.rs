//! One running agent: a task that takes deliveries from its mailbox one at a time, runs a turn
//! for each, answers the sender, and keeps the sliding window of recent exchanges.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::conversation::TURN_CONVERSATION;
use super::turn::Turn;
use super::{Delivery, Inner, TurnControl, TurnOutcome};
use crate::llm::Usage;
use crate::mcp::{McpConnections, McpContext};
use crate::prompt::RosterEntry;
use crate::sessions::TurnStop;
use crate::village::Language;

/// Exchanges an agent keeps in its prompt history.
pub(super) const HISTORY_TURNS: usize = 8;

/// A past exchange: the exact string sent, and the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exchange {
    pub sent: String,
    pub replied: String,
}

/// Whether the agent's `run.json` says `"network": false`.
fn denies_network(inner: &Inner, agent_id: &str) -> bool {
    crate::village::AgentId::new(agent_id)
        .ok()
        .and_then(|id| inner.store().agent_files(&id).ok())
        .and_then(|files| files.load_run_policy().ok())
        .is_some_and(|policy| policy.value.network == Some(false))
}

pub(crate) async fn run(
    inner: Arc<Inner>,
    agent_id: String,
    control: Arc<TurnControl>,
    mut mailbox: mpsc::Receiver<Delivery>,
) {
    let mut history = restore_history(&inner, &agent_id);
    let mut roster_seen = std::collections::HashMap::new();
    if let Some(line) = crate::process::unconfined_notice_once() {
        inner.log(line);
    }
    if let Some(line) =
        crate::process::network_unconfined_notice_once(denies_network(&inner, &agent_id))
    {
        inner.log(line);
    }
    let mcp = connect_mcp(&inner, &agent_id, control.stop.child_token()).await;
    inner.note_mcp_tools(&agent_id, Some(mcp.server_tools()));
    while let Some(delivery) = mailbox.recv().await {
        // A stopping agent starts no new turn: what is still queued is answered at once.
        if control.stop.is_cancelled() {
            inner.log(&format!(
                "turn skipped: agent={agent_id} hop={} from={} reason=stopping",
                delivery.message.hop,
                delivery.message.from.label()
            ));
            if let Some(reply) = delivery.reply {
                let _ = reply.send(TurnOutcome {
                    answer: None,
                    stop: TurnStop::Interrupted,
                    usage: Usage::default(),
                    handed_off: false,
                    model_time: std::time::Duration::ZERO,
                    failure: None,
                    session_id: None,
                    question: None,
                });
            }
            continue;
        }
        // A conversation apart (a door session) has its own history and records.
        let apart = delivery.route.conversation;
        // A summary was stored since the last turn: the history now starts with it.
        if apart.is_none() && inner.take_reload(&agent_id) {
            history = restore_history(&inner, &agent_id);
        }
        // Held for the whole turn: its records stay in one stored conversation even if the
        // conversation closes meanwhile.
        let turn_in = apart.map(|key| inner.conversations().enter(key));
        let mut own = apart.map(|key| inner.conversations().take_history(key, &agent_id));
        let turn_history = own.as_mut().unwrap_or(&mut history);
        let turn = Turn::new(&inner, &agent_id, &control, &mcp, &delivery)
            .run(turn_history, &mut roster_seen);
        let slot = turn_in.as_ref().map(|t| Arc::clone(&t.session));
        let outcome = TURN_CONVERSATION.scope(slot, turn).await;
        while turn_history.len() > HISTORY_TURNS {
            turn_history.pop_front();
        }
        if let (Some(key), Some(own)) = (apart, own) {
            inner.conversations().put_history(key, &agent_id, own);
        }
        drop(turn_in);
        control.reset();
        if let Some(reply) = delivery.reply {
            let _ = reply.send(outcome);
        }
    }
    // The agent stops: its MCP children go with it (without waiting once it was cut).
    inner.note_mcp_tools(&agent_id, None);
    mcp.close(&control.abort).await;
}

/// The last exchanges of this agent in the current conversation (its latest summary first,
/// in place of what it covers).
fn restore_history(inner: &Inner, agent_id: &str) -> VecDeque<Exchange> {
    let (Some(store), Some(session)) = (inner.sessions(), inner.current_session()) else {
        return VecDeque::new();
    };
    let records = store.history(&session).unwrap_or_default();
    let mut out = super::summary::history_from_records(&records, agent_id, inner.language());
    while out.len() > HISTORY_TURNS {
        out.pop_front();
    }
    out
}

/// Connects the agent's MCP servers (the shared `mcp.json`, then its own); `cancel` (the
/// agent's stop, not a turn's interrupt) ends a connect in progress at once.
async fn connect_mcp(
    inner: &Arc<Inner>,
    agent_id: &str,
    cancel: tokio_util::sync::CancellationToken,
) -> McpConnections {
    let mut configs = Vec::new();
    if let Ok(shared) = inner.store().load_shared_mcp() {
        configs.push(shared.value);
    }
    if let Some(files) = crate::village::AgentId::new(agent_id)
        .ok()
        .and_then(|id| inner.store().agent_files(&id).ok())
    {
        match files.load_mcp() {
            Ok(own) => configs.push(own.value),
            Err(e) => inner.log(&format!(
                "mcp: agent={agent_id} config=invalid code={}",
                e.code()
            )),
        }
    }
    if configs.iter().all(|c| c.mcp_servers.is_empty()) {
        return McpConnections::default();
    }
    let secrets = inner.secrets();
    let ctx = McpContext {
        secret: Arc::new(move |key: &str| secrets(key).map(|k| k.expose().to_owned())),
        log: inner.log_sink(),
        child_output: inner.mcp_child_output(),
        cancel,
    };
    McpConnections::connect(agent_id, &configs, &ctx).await
}

/// Join / leave notices for connected peers whose running state changed since the last turn
/// (nothing on the first turn: that is the baseline).
pub(super) fn roster_notices(
    roster: &[RosterEntry],
    seen: &mut HashMap<String, bool>,
    language: Language,
) -> String {
    let first = seen.is_empty();
    let mut lines = Vec::new();
    for peer in roster {
        let before = seen.insert(peer.id.clone(), peer.running);
        if first || before == Some(peer.running) {
            continue;
        }
        lines.push(match (language, peer.running) {
            (Language::Ja, true) => format!("- {}（{}）が加わりました。", peer.name, peer.id),
            (Language::Ja, false) => format!("- {}（{}）が抜けました。", peer.name, peer.id),
            (Language::En, true) => format!("- {} ({}) joined.", peer.name, peer.id),
            (Language::En, false) => format!("- {} ({}) left.", peer.name, peer.id),
        });
    }
    if lines.is_empty() {
        return String::new();
    }
    let head = language.pick("\n\n---\n顔ぶれの変化:\n", "\n\n---\nRoster changes:\n");
    format!("{head}{}\n", lines.join("\n"))
}
