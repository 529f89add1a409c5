//! What a delivery ended as: the turn's outcome, and the task states of a plan wave.

use super::failure::TurnFailure;
use crate::events::PendingQuestion;
pub use crate::events::PlanTaskState;
use crate::llm::Usage;
use crate::sessions::TurnStop;
use crate::village::Language;

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
            (Self::ToolLimit, _) => super::failure::tool_limit_line(language),
            (Self::Repeat, _) => super::failure::repeat_line(language),
            (Self::NeedsInput, Language::Ja) => "（人の答えを待っています）",
            (Self::NeedsInput, Language::En) => "(Waiting for a person's answer.)",
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
    /// Why there is no answer (a failed call, the tool-round cap, the repeat guard).
    pub failure: Option<TurnFailure>,
    /// The stored conversation the turn was recorded under (`None` without a store).
    pub session_id: Option<String>,
    /// The question the turn ended waiting on (its stop is `NeedsInput`).
    pub question: Option<PendingQuestion>,
}

impl TurnOutcome {
    /// The sender's view of this outcome.
    pub fn state(&self) -> PlanTaskState {
        match (&self.stop, &self.answer) {
            (TurnStop::Interrupted, _) => PlanTaskState::Interrupted,
            (TurnStop::BudgetExhausted | TurnStop::ReserveShort, _) => {
                PlanTaskState::BudgetExhausted
            }
            (TurnStop::ToolLimit, _) => PlanTaskState::ToolLimit,
            (TurnStop::Repeat { .. }, _) => PlanTaskState::Repeat,
            (TurnStop::NeedsInput, _) => PlanTaskState::NeedsInput,
            (TurnStop::Failed { .. }, _) | (_, None) => PlanTaskState::NoAnswer,
            _ if self.handed_off => PlanTaskState::HandedOff,
            _ => PlanTaskState::Answered,
        }
    }
}

/// What an outside request (`ask`, the door) ended as.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalOutcome {
    /// The answer; `Some` only when the state is answered or handed off.
    pub answer: Option<String>,
    /// The state.
    pub state: PlanTaskState,
    /// Why there is no answer, when a turn said why.
    pub failure: Option<TurnFailure>,
    /// The stored conversation the turn was recorded under.
    pub session_id: Option<String>,
    /// The question waiting for the person's answer (the state is `NeedsInput`).
    pub question: Option<PendingQuestion>,
    /// A dry-run request: the effects it would have had, in call order (empty otherwise).
    pub effects: Vec<crate::safety::DryRunEffect>,
}

/// How a request runs: given by whoever starts it (the CLI, the GUI, the door, a schedule).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestMode {
    /// Side-effecting tools of the request's whole chain stop at their side effect and say
    /// what they would do; the effects are collected (docs/gui-api.md, `dryRunEffect`).
    pub dry_run: bool,
}

impl ExternalOutcome {
    /// An outcome without a turn (undeliverable, timed out, …).
    pub(crate) fn bare(state: PlanTaskState) -> Self {
        Self {
            answer: None,
            state,
            failure: None,
            session_id: None,
            question: None,
            effects: Vec::new(),
        }
    }

    /// The outcome of a turn: a partial text of a turn that ended without answering (the cap,
    /// the repeat guard) is not an answer.
    pub(crate) fn of(outcome: TurnOutcome) -> Self {
        let state = outcome.state();
        let answer = outcome
            .answer
            .filter(|_| matches!(state, PlanTaskState::Answered | PlanTaskState::HandedOff));
        Self {
            answer,
            state,
            failure: outcome.failure,
            session_id: outcome.session_id,
            question: outcome.question,
            effects: Vec::new(),
        }
    }
}
