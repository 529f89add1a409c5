//! What a delivery ended as: the turn's outcome, and the task states of reference §3.2.

use serde::{Deserialize, Serialize};

use crate::llm::Usage;
use crate::sessions::TurnStop;
use crate::village::Language;

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
}

impl PlanTaskState {
    /// The fixed line an outside asker (`ask`, the door) gets when there is no answer.
    pub fn no_answer_line(self, language: Language) -> &'static str {
        match (self, language) {
            (Self::TimedOut, Language::Ja) => "（待ちの上限を超えました）",
            (Self::TimedOut, Language::En) => "(The wait ran out.)",
            (Self::Interrupted, Language::Ja) => "（打ち切られました）",
            (Self::Interrupted, Language::En) => "(Interrupted.)",
            (Self::BudgetExhausted, Language::Ja) => "（予算の上限で止まりました）",
            (Self::BudgetExhausted, Language::En) => "(Stopped at the token budget.)",
            (_, Language::Ja) => "（答えが返りませんでした）",
            (_, Language::En) => "(No answer.)",
        }
    }
}

/// The result of one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// The answer (`None` when the turn produced none).
    pub answer: Option<String>,
    /// How the turn ended.
    pub stop: TurnStop,
    /// Tokens the turn paid for.
    pub usage: Usage,
    /// The answer came from an agent the conversation was handed to.
    pub handed_off: bool,
    /// Time spent waiting for the model (HTTP and adapters included); the rest of the turn's
    /// wall time is the orchestrator's own work and the tools'.
    pub model_time: std::time::Duration,
}

impl TurnOutcome {
    /// The sender's view of this outcome.
    pub fn state(&self) -> PlanTaskState {
        match (&self.stop, &self.answer) {
            (TurnStop::Interrupted, _) => PlanTaskState::Interrupted,
            (TurnStop::BudgetExhausted | TurnStop::ReserveShort, _) => {
                PlanTaskState::BudgetExhausted
            }
            (TurnStop::Failed { .. }, _) | (_, None) => PlanTaskState::NoAnswer,
            _ if self.handed_off => PlanTaskState::HandedOff,
            _ => PlanTaskState::Answered,
        }
    }
}
