//! `CoreError`: what the orchestrator's API can fail with, each with a stable code.

use crate::error::{Coded, Fix, Remedy};
use crate::sessions::SessionError;
use crate::village::VillageError;

/// An error of the core's API.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A village file could not be read or written.
    #[error(transparent)]
    Village(#[from] VillageError),
    /// The conversation store failed (or is open in another process).
    #[error(transparent)]
    Sessions(#[from] SessionError),
    /// No agent with this id.
    #[error("no agent {0}")]
    AgentNotFound(String),
    /// The agent is not running.
    #[error("agent {0} is not running")]
    NotRunning(String),
    /// The village has no reception agent.
    #[error("the village has no reception agent")]
    ReceptionUnset,
    /// The wave is not waiting for review.
    #[error("plan {0} is not waiting for review")]
    PlanWaveNotPending(String),
    /// An edited wave names an agent the coordinator is not connected to, or has no task.
    #[error("{0}")]
    PlanDispatchInvalid(String),
    /// No pending `run` request of this agent matches the command and arguments.
    #[error("agent {0} has no pending request for this command")]
    PendingNotFound(String),
    /// The pending request cannot be written as an allow or deny line (an argument with a
    /// space, an empty one, or one ending in `*`).
    #[error("the command cannot be written as a run.json line: {0}")]
    PendingUnrepresentable(String),
    /// The kill switch is at halt: no agent starts until `resume`.
    #[error("the village is halted; no agent starts until it is resumed")]
    Halted,
    /// A change the village's cast refuses: its field and why, and what to give instead.
    #[error("{what}")]
    CastRefused {
        /// The field and why (`workDir: an absolute path`).
        what: String,
        /// What to give instead.
        fix: crate::error::Fix,
    },
    /// The agent runs: stop it first.
    #[error("agent {0} is running")]
    StillRunning(String),
    /// A new servant's or template's id is already held (by a servant, a judge, a template).
    #[error("id: {0} is taken")]
    IdTaken(String),
    /// No model template with this id.
    #[error("no model template {0}")]
    TemplateNotFound(String),
    /// No question (`ask_user`) waits for an answer there: the conversation (headless) or the
    /// question id (the GUI) names none, or it was answered already.
    #[error("{0}")]
    QuestionNotPending(String),
    /// A servant or a judge thinks with the template: it is not removed.
    #[error("model template {id} is in use by {}", .users.join(", "))]
    TemplateInUse {
        /// The template.
        id: String,
        /// The servants and judges that use it, by id.
        users: Vec<String>,
    },
}

impl CoreError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Village(e) => e.code(),
            Self::Sessions(e) => e.code(),
            Self::AgentNotFound(_) => "AGENT_NOT_FOUND",
            Self::NotRunning(_) => "NOT_RUNNING",
            Self::ReceptionUnset => "EXTERNAL_RECEPTION_UNSET",
            Self::PlanWaveNotPending(_) => "PLAN_WAVE_NOT_PENDING",
            Self::PlanDispatchInvalid(_) => "PLAN_DISPATCH_INVALID",
            Self::PendingNotFound(_) => "RUN_PENDING_NOT_FOUND",
            Self::PendingUnrepresentable(_) => "RUN_PENDING_UNREPRESENTABLE",
            Self::Halted => "VILLAGE_HALTED",
            Self::CastRefused { .. } => "INVALID_CAST_CHANGE",
            Self::StillRunning(_) => "AGENT_RUNNING",
            // One of the cast's refusals (the field named), typed apart for the CLI's exit 11.
            Self::IdTaken(_) => "INVALID_CAST_CHANGE",
            Self::TemplateNotFound(_) => "TEMPLATE_NOT_FOUND",
            Self::TemplateInUse { .. } => "TEMPLATE_IN_USE",
            Self::QuestionNotPending(_) => "QUESTION_NOT_PENDING",
        }
    }
}

impl Coded for CoreError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        match self {
            Self::Village(e) => e.fix(),
            Self::Sessions(e) => e.fix(),
            Self::ReceptionUnset => Some(Fix::remedy(
                Remedy::MakeReception,
                "or set `reception` in world.json",
            )),
            Self::PendingNotFound(_) => {
                Some("reload the approvals: the request was decided or evicted".into())
            }
            Self::PendingUnrepresentable(_) => {
                Some("approve the pattern (`command *`) instead, or edit run.json by hand".into())
            }
            Self::Halted => Some(Fix::remedy(Remedy::Resume, "first")),
            Self::AgentNotFound(_) => Some(Fix::remedy(
                Remedy::ListServants,
                "and use an id of world.json `agents` (or, as an edge's end, `judges`)",
            )),
            Self::CastRefused { fix, .. } => Some(fix.clone()),
            Self::StillRunning(_) => Some("stop the agent first".into()),
            Self::IdTaken(_) => Some("pick another id".into()),
            Self::TemplateNotFound(_) => Some("use an id from world.json `modelTemplates`".into()),
            Self::QuestionNotPending(_) => Some(
                "give the id of a conversation whose last request ended with a question (exit 15 names it), or send a new request that is not an answer".into(),
            ),
            Self::TemplateInUse { .. } => Some(Fix::remedy(
                Remedy::RetemplateServant,
                "and point those judges at another template first",
            )),
            _ => None,
        }
    }
}
