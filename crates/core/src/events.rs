//! `CoreEvent`: what the core tells its surfaces (GUI, CLI `--events jsonl`), on a broadcast bus
//! of 1,024 (JSON tag `type`, camelCase names; docs/gui-api.md).

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::sessions::AgentMessage;

/// An agent's life-cycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// Not running.
    Idle,
    /// Being started.
    Starting,
    /// Running (takes turns).
    Running,
    /// Being stopped.
    Stopping,
    /// Failed to start or crashed.
    Failed,
}

/// An event of the core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[allow(missing_docs)] // field names are the reference's; each variant is documented
pub enum CoreEvent {
    /// An agent changed state.
    #[serde(rename_all = "camelCase")]
    AgentStatusChanged {
        agent_id: String,
        status: AgentStatus,
    },
    /// An agent's running totals.
    #[serde(rename_all = "camelCase")]
    AgentStatsUpdated {
        agent_id: String,
        uptime_secs: u64,
        total_tokens: u64,
        prompt_tokens: u64,
        cached_tokens: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        last_prompt_tokens: Option<u64>,
    },
    /// A message was delivered.
    MessageSent { message: Box<AgentMessage> },
    /// Text of an answer being written (a streaming template): the next piece, in order; the
    /// whole answer follows as `messageSent`. With `restart` (and no text) the stream broke
    /// and the call is sent again: the pieces so far are void. Not a variant of the original.
    #[serde(rename_all = "camelCase")]
    MessageDelta {
        agent_id: String,
        text: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        restart: bool,
    },
    /// An agent failed to start, or a turn of it failed (then with the code, the HTTP status
    /// or network class, the template and the endpoint's host — never a key or a body).
    #[serde(rename_all = "camelCase")]
    AgentFailed {
        agent_id: String,
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        template: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// What to change (never a value or a body).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fix: Option<String>,
    },
    /// A template could not be used.
    #[serde(rename_all = "camelCase")]
    BackendDegraded {
        model_template_id: String,
        reason: String,
    },
    /// The conversation was cleared.
    ConversationCleared,
    /// Another conversation became current.
    #[serde(rename_all = "camelCase")]
    SessionSwitched { session_id: String },
    /// A turn record was written.
    #[serde(rename_all = "camelCase")]
    TurnRecorded {
        agent_id: String,
        session_id: String,
    },
    /// An agent is (not) thinking.
    #[serde(rename_all = "camelCase")]
    AgentTyping { agent_id: String, active: bool },
    /// A tool ran.
    #[serde(rename_all = "camelCase")]
    ToolInvoked {
        agent_id: String,
        tool: String,
        ok: bool,
        reason: ReasonState,
        call_id: String,
    },
    /// A turn used every tool round.
    #[serde(rename_all = "camelCase")]
    ToolLimitReached {
        agent_id: String,
        max_iterations: u32,
    },
    /// Identical calls repeated; the turn was cut.
    #[serde(rename_all = "camelCase")]
    ToolRepeatBlocked {
        agent_id: String,
        tool: String,
        repeats: u32,
    },
    /// A turn was interrupted.
    #[serde(rename_all = "camelCase")]
    TurnInterrupted { agent_id: String, turn_seq: u64 },
    /// A chain hit the hop limit.
    #[serde(rename_all = "camelCase")]
    HopLimitReached { agent_id: String, max_hops: u32 },
    /// The command approval mode changed.
    RunApprovalChanged { mode: String },
    /// A plan wave started.
    #[serde(rename_all = "camelCase")]
    PlanWaveStarted {
        plan_id: String,
        agent_id: String,
        wave: u32,
        tasks: Vec<String>,
        started_at_ms: i64,
    },
    /// One task of a wave ended.
    #[serde(rename_all = "camelCase")]
    PlanTaskResolved {
        plan_id: String,
        to: String,
        state: PlanTaskState,
        elapsed_ms: u64,
    },
    /// A wave's bundle is ready.
    #[serde(rename_all = "camelCase")]
    PlanWaveFinished {
        plan_id: String,
        bundle_chars: u64,
        elapsed_ms: u64,
    },
    /// A wave waits for a human's review.
    #[serde(rename_all = "camelCase")]
    PlanWaveProposed {
        plan_id: String,
        agent_id: String,
        wave: u32,
        tasks: Vec<PlanTask>,
    },
    /// A proposed wave was discarded.
    #[serde(rename_all = "camelCase")]
    PlanWaveDiscarded { plan_id: String },
    /// The process-wide plan-review bypass changed.
    PlanReviewBypassChanged { enabled: bool },
    /// The kill switch changed (`kill switch:` line): the command, the states before and
    /// after, and the channel it came through.
    KillSwitchChanged {
        command: crate::safety::SwitchCommand,
        from: crate::safety::SwitchState,
        to: crate::safety::SwitchState,
        channel: crate::safety::Channel,
    },
    /// Under dry-run, a side-effecting call stopped at its side effect: what it would have
    /// done (`{tool, target, argumentsDigest}`).
    #[serde(rename_all = "camelCase")]
    DryRunEffect {
        agent_id: String,
        #[serde(flatten)]
        effect: crate::safety::DryRunEffect,
    },
    /// A turn asked the person (`ask_user`) and waits for the answer (the GUI answers with
    /// `answerQuestion`); headless, the question is the `ask`'s outcome instead.
    #[serde(rename_all = "camelCase")]
    QuestionAsked { question: PendingQuestion },
    /// A question stopped waiting: answered, or withdrawn (its turn was interrupted or
    /// stopped).
    #[serde(rename_all = "camelCase")]
    QuestionSettled { question_id: String, answered: bool },
}

/// A question (`ask_user`) waiting for a person's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingQuestion {
    /// Its id (the GUI answers by it).
    pub question_id: String,
    /// The agent that asked.
    pub agent_id: String,
    /// The question.
    pub question: String,
    /// The choices offered (empty: a free answer).
    pub choices: Vec<String>,
    /// The stored conversation it was asked in (`ask --resume` answers by it).
    pub session_id: Option<String>,
}

impl PendingQuestion {
    pub(crate) fn of(record: &crate::sessions::QuestionRecord, session_id: Option<String>) -> Self {
        Self {
            question_id: record.question_id.clone(),
            agent_id: record.agent_id.clone(),
            question: record.question.clone(),
            choices: record.choices.clone(),
            session_id,
        }
    }
}

impl CoreEvent {
    /// The `agentFailed` event of a failed turn.
    pub fn agent_failed(failure: &TurnFailure) -> Self {
        Self::AgentFailed {
            agent_id: failure.agent_id.clone(),
            error: failure.message.clone(),
            code: Some(failure.code.clone()),
            status: failure.status,
            class: failure.class.clone(),
            template: failure.template.clone(),
            host: failure.host.clone(),
            fix: failure.fix.clone(),
        }
    }
}

/// Whether a tool call gave its `reason` (tag `kind`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReasonState {
    /// The model wrote a reason (shown in the chat, ≤ 60 characters).
    Written {
        /// The reason, cut to 60 characters.
        text: String,
    },
    /// The model left it out.
    Omitted,
    /// The tool has no reason field (MCP tools).
    Unsupported,
}

/// The broadcast bus.
#[derive(Debug, Clone)]
pub(crate) struct EventBus {
    sender: broadcast::Sender<CoreEvent>,
}

/// The bus capacity.
pub(crate) const EVENT_CAPACITY: usize = 1_024;

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus {
    /// A bus with the reference's capacity.
    pub(crate) fn new() -> Self {
        Self {
            sender: broadcast::channel(EVENT_CAPACITY).0,
        }
    }

    /// Sends an event (dropped when nobody listens).
    pub(crate) fn emit(&self, event: CoreEvent) {
        let _ = self.sender.send(event);
    }

    /// A new receiver.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<CoreEvent> {
        self.sender.subscribe()
    }
}

/// How a delivered request ended, as its sender sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanTaskState {
    /// Still running.
    Running,
    /// Answered.
    Answered,
    /// Handed to another agent.
    HandedOff,
    /// Could not be delivered (no such agent, not running).
    Undeliverable,
    /// The turn ended without an answer.
    NoAnswer,
    /// The wait ran out.
    TimedOut,
    /// Interrupted.
    Interrupted,
    /// The budget ran out.
    BudgetExhausted,
    /// The turn used every model call its tool-round cap (`maxToolIterations`) allows without
    /// answering (not a state of the original).
    ToolLimit,
    /// The repeat guard stopped the turn: the same tool call again and again (not a state of
    /// the original).
    Repeat,
    /// The turn asked the person (`ask_user`) and waits for the answer (not a state of the
    /// original).
    NeedsInput,
}

/// One task of a wave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanTask {
    /// The agent.
    pub to: String,
    /// The request.
    pub message: String,
}

/// Why a turn ended without an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnFailure {
    /// The agent whose turn it was.
    pub agent_id: String,
    /// The stable code (`LLM_HTTP`, `LLM_KEY_MISSING`, `TOOL_LIMIT`, `TOOL_REPEAT`, …).
    pub code: String,
    /// The HTTP status of the provider's answer, when there was one.
    pub status: Option<u16>,
    /// `auth`, `rate_limit`, … for an HTTP failure; `connection_refused`, `dns`, `tls`,
    /// `timeout`, … when no status came back.
    pub class: Option<String>,
    /// The model template of the turn.
    pub template: Option<String>,
    /// The endpoint's host (and port), from the template's `baseUrl`.
    pub host: Option<String>,
    /// What happened, in one line (English, like every CLI diagnostic).
    pub message: String,
    /// What to change.
    pub fix: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let e = CoreEvent::ToolInvoked {
            agent_id: "a".into(),
            tool: "grep".into(),
            ok: true,
            reason: ReasonState::Written {
                text: "find".into(),
            },
            call_id: "c".into(),
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "toolInvoked");
        assert_eq!(v["agentId"], "a");
        assert_eq!(v["reason"]["kind"], "written");
        let s = serde_json::to_value(CoreEvent::AgentStatusChanged {
            agent_id: "a".into(),
            status: AgentStatus::Running,
        })
        .unwrap();
        assert_eq!(
            s,
            serde_json::json!({"type": "agentStatusChanged", "agentId": "a", "status": "running"})
        );
        // A start failure keeps the original's two fields; a failed turn adds why.
        let start = CoreEvent::AgentFailed {
            agent_id: "a".into(),
            error: "e".into(),
            code: None,
            status: None,
            class: None,
            template: None,
            host: None,
            fix: None,
        };
        assert_eq!(
            serde_json::to_value(&start).unwrap(),
            serde_json::json!({"type": "agentFailed", "agentId": "a", "error": "e"})
        );
        let old: CoreEvent =
            serde_json::from_str(r#"{"type":"agentFailed","agentId":"a","error":"e"}"#).unwrap();
        assert_eq!(old, start);
    }
}
