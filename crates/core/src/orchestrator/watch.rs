//! What a surface shows of the work in progress and the core keeps only in memory: the
//! details of the last tool calls (arguments and result, cut to a few thousand characters;
//! tool-call details are in memory only and never stored), looked up by the
//! agent and the call id of a `toolInvoked` event; and the causal roots still running, with
//! what is left of their budgets.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};

use serde::Serialize;

use super::Orchestrator;
use crate::budget::CausalBudget;
use crate::sync::LockOrRecover;

/// How many tool calls the ring keeps.
const RING: usize = 200;
/// The most characters kept of arguments and of a result.
const TEXT_CHARS: usize = 8_000;

/// One tool call, as the model asked and the tool answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallDetail {
    /// The agent.
    pub agent_id: String,
    /// The call id the model gave (the event's `callId`).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments (JSON text, cut).
    pub args: String,
    /// What the model read back (cut).
    pub result: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// When it ended, ms since the epoch.
    pub ts_ms: i64,
}

/// The ring of the last [`RING`] tool calls.
#[derive(Debug, Default)]
pub(crate) struct ToolRing {
    calls: Mutex<VecDeque<ToolCallDetail>>,
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(TEXT_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl ToolRing {
    /// Keeps a call (the oldest goes past [`RING`]).
    pub(super) fn push(&self, mut detail: ToolCallDetail) {
        detail.args = cut(&detail.args);
        detail.result = cut(&detail.result);
        let mut calls = self.calls.lock_or_recover();
        calls.push_back(detail);
        while calls.len() > RING {
            calls.pop_front();
        }
    }

    /// The latest call of `agent_id` with `call_id` (ids repeat across turns).
    pub(super) fn get(&self, agent_id: &str, call_id: &str) -> Option<ToolCallDetail> {
        self.calls
            .lock_or_recover()
            .iter()
            .rev()
            .find(|c| c.agent_id == agent_id && c.call_id == call_id)
            .cloned()
    }
}

/// A causal root still running and its budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningRoot {
    /// The root's id (as in `causalRoot` of the audit log).
    pub root_id: String,
    /// The ceiling (`None`: no budget).
    pub ceiling: Option<u64>,
    /// Effective tokens spent.
    pub spent: u64,
    /// What is left (`None`: no budget).
    pub remaining: Option<u64>,
}

/// The budgets of the deliveries made, held weakly: a root is running while a delivery (or a
/// turn) of its chain holds its budget.
#[derive(Debug, Default)]
pub(crate) struct Roots {
    roots: Mutex<Vec<Weak<CausalBudget>>>,
}

impl Roots {
    /// Notes a delivery's budget (once per root).
    pub(super) fn note(&self, budget: &Arc<CausalBudget>) {
        let mut roots = self.roots.lock_or_recover();
        roots.retain(|w| w.strong_count() > 0);
        if !roots
            .iter()
            .any(|w| w.upgrade().is_some_and(|b| Arc::ptr_eq(&b, budget)))
        {
            roots.push(Arc::downgrade(budget));
        }
    }

    /// The roots still held somewhere.
    pub(super) fn running(&self) -> Vec<RunningRoot> {
        self.roots
            .lock_or_recover()
            .iter()
            .filter_map(Weak::upgrade)
            .map(|b| RunningRoot {
                root_id: b.root_id().to_owned(),
                ceiling: b.ceiling(),
                spent: b.spent(),
                remaining: b.remaining(),
            })
            .collect()
    }
}

impl Orchestrator {
    /// The details of a tool call of `agent_id` (from its `toolInvoked` event), while it is
    /// among the last 200.
    pub fn tool_call(&self, agent_id: &str, call_id: &str) -> Option<ToolCallDetail> {
        self.inner.tool_ring().get(agent_id, call_id)
    }

    /// The causal roots still running, with their budgets.
    pub fn running_roots(&self) -> Vec<RunningRoot> {
        self.inner.roots().running()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{Roots, ToolCallDetail, ToolRing};
    use crate::budget::CausalBudget;

    fn detail(call: &str, args: String) -> ToolCallDetail {
        ToolCallDetail {
            agent_id: "a".into(),
            call_id: call.into(),
            tool: "file".into(),
            args,
            result: "r".into(),
            ok: true,
            ts_ms: 0,
        }
    }

    #[test]
    fn the_ring_keeps_the_last_calls_cut_and_finds_the_latest_of_an_id() {
        let ring = ToolRing::default();
        ring.push(detail("c1", "old".into()));
        ring.push(detail("c1", "x".repeat(9_000)));
        let got = ring.get("a", "c1").unwrap();
        assert_eq!(got.args.chars().count(), 8_001, "cut, with its mark");
        assert!(ring.get("b", "c1").is_none());
        for i in 0..250 {
            ring.push(detail(&format!("n{i}"), String::new()));
        }
        assert!(ring.get("a", "c1").is_none(), "evicted");
        assert!(ring.get("a", "n249").is_some());
    }

    #[test]
    fn a_root_runs_while_something_holds_its_budget() {
        let roots = Roots::default();
        let budget = CausalBudget::new(Some(100));
        roots.note(&budget);
        roots.note(&budget);
        assert_eq!(roots.running().len(), 1);
        assert_eq!(roots.running()[0].remaining, Some(100));
        drop(budget);
        assert!(roots.running().is_empty());
    }
}
