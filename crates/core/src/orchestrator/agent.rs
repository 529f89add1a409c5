//! One running agent: a task that takes deliveries from its mailbox one at a time, runs a turn
//! for each, answers the sender, and keeps the sliding window of recent exchanges.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::conversation::TURN_CONVERSATION;
use super::{Delivery, Inner, TurnControl, turn};
use crate::mcp::{McpConnections, McpContext};
use crate::sessions::Record;

/// Exchanges an agent keeps in its prompt history.
pub const HISTORY_TURNS: usize = 8;

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
        .and_then(|id| inner.store.agent_files(&id).ok())
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
        inner.log.line(line);
    }
    if let Some(line) =
        crate::process::network_unconfined_notice_once(denies_network(&inner, &agent_id))
    {
        inner.log.line(line);
    }
    let mcp = connect_until_stopped(&inner, &agent_id, &control, &mailbox).await;
    while let Some(delivery) = mailbox.recv().await {
        // A conversation apart (a door session) has its own history and records.
        let apart = delivery.route.conversation;
        let mut own = apart.map(|key| inner.conversations.take_history(key, &agent_id));
        let turn_history = own.as_mut().unwrap_or(&mut history);
        let turn = turn::run(
            &inner,
            &agent_id,
            &control,
            &delivery,
            turn_history,
            &mut roster_seen,
            &mcp,
        );
        let outcome = TURN_CONVERSATION.scope(apart, turn).await;
        while turn_history.len() > HISTORY_TURNS {
            turn_history.pop_front();
        }
        if let (Some(key), Some(own)) = (apart, own) {
            inner.conversations.put_history(key, &agent_id, own);
        }
        control.reset();
        if let Some(reply) = delivery.reply {
            let _ = reply.send(outcome);
        }
    }
    // The agent stops: its MCP children go with it.
    mcp.close().await;
}

/// The last exchanges of this agent in the current conversation.
fn restore_history(inner: &Inner, agent_id: &str) -> VecDeque<Exchange> {
    let session = inner.session_id.lock().ok().and_then(|s| s.clone());
    let (Some(store), Some(session)) = (inner.sessions.as_ref(), session) else {
        return VecDeque::new();
    };
    let mut out: VecDeque<Exchange> = store
        .history(&session)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(_, r)| match r {
            Record::Exchange {
                agent_id: a,
                sent,
                replied,
            } if a == agent_id => Some(Exchange { sent, replied }),
            _ => None,
        })
        .collect();
    while out.len() > HISTORY_TURNS {
        out.pop_front();
    }
    out
}

/// Connects the agent's MCP servers, cancelled at once when the agent is interrupted (a
/// shutdown interrupts every agent first) or stopped (its mailbox closes).
async fn connect_until_stopped(
    inner: &Arc<Inner>,
    agent_id: &str,
    control: &TurnControl,
    mailbox: &mpsc::Receiver<Delivery>,
) -> McpConnections {
    let cancel = control.token().child_token();
    let connecting = connect_mcp(inner, agent_id, cancel.clone());
    tokio::pin!(connecting);
    loop {
        tokio::select! {
            mcp = &mut connecting => return mcp,
            () = tokio::time::sleep(STOP_POLL), if !cancel.is_cancelled() => {
                if mailbox.is_closed() {
                    cancel.cancel();
                }
            }
        }
    }
}

/// How often a connecting agent looks whether it was stopped.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Connects the agent's MCP servers (the shared `mcp.json`, then its own).
async fn connect_mcp(
    inner: &Arc<Inner>,
    agent_id: &str,
    cancel: tokio_util::sync::CancellationToken,
) -> McpConnections {
    let mut configs = Vec::new();
    if let Ok(shared) = inner.store.load_shared_mcp() {
        configs.push(shared.value);
    }
    if let Some(files) = crate::village::AgentId::new(agent_id)
        .ok()
        .and_then(|id| inner.store.agent_files(&id).ok())
    {
        match files.load_mcp() {
            Ok(own) => configs.push(own.value),
            Err(e) => inner.log.line(&format!(
                "mcp: agent={agent_id} config=invalid code={}",
                e.code()
            )),
        }
    }
    if configs.iter().all(|c| c.mcp_servers.is_empty()) {
        return McpConnections::default();
    }
    let secrets = Arc::clone(&inner.secrets);
    let ctx = McpContext {
        secret: Arc::new(move |key: &str| secrets(key).map(|k| k.expose().to_owned())),
        log: Arc::clone(&inner.log),
        child_output: inner.mcp_child_output.clone(),
        cancel,
    };
    McpConnections::connect(agent_id, &configs, &ctx).await
}
