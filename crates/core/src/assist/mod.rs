//! The drafting assistant (docs/decisions/0010-assist.md): a short Q&A with a model template chosen
//! by the user that ends in a draft of a `SKILL.md`, a `Construct.md` or a `judge.toml`, handed
//! back through the synthetic tool `submit_draft` and never saved here. Judge drafts are checked by
//! the real parser, up to three rounds, the finding fed back with its place. The exchange is
//! stateless: the caller keeps the `history` the replies `append` to. Never charged to the village
//! budget; each model call is one `assist` record and one `assist:` log line.
//!
//! # Parts
//!
//! The drafting assistant (decision 0010):
//!
//! - `mod.rs`: the request, the reply — `question`, or `draft` with `validation` and `attempts` —,
//!   `AssistError`: `INVALID_ASSIST_REQUEST` with the field, `SECRET_MISSING`, `ASSIST_EMPTY`
//!   (neither text nor a draft, and no draft before it)
//! - `prompt.rs`: the fixed texts in both languages: guidance per kind — the stable head of the
//!   system prompt —, the forced-draft line, the tool results, `submit_draft`
//! - `context.rs`: the two sections: the village's facts gathered from the target alone, then the
//!   editor's unsaved text
//! - `history.rs`: the shape a history must have
//! - `exchange.rs`: one exchange: forced or fallback by wire — never forced on Anthropic —, the
//!   answer read by its type, an empty answer giving back the last refused draft, a judge draft
//!   checked by `judge::validate_judge` up to three rounds with its finding fed back, every call
//!   answered.
//! - `orchestrator/assist.rs` runs it on the village's client and keys: one `assist:` line per call
//!   and, with a conversation open, one typed `assist` record (no text). **Invariants: nothing is
//!   saved; nothing is charged to a budget; no text in a record or a line.**

mod context;
mod exchange;
mod history;
mod prompt;

use serde::{Deserialize, Serialize};

use crate::llm::{ChatMessage, LlmError, Usage};

pub use exchange::{AssistCall, AssistSetup, Forced, run_exchange};
pub use prompt::SUBMIT_DRAFT;

/// The most characters of the editor's text (`current`) sent along.
pub const MAX_CURRENT_CHARS: usize = 100_000;
/// The most characters of one user message.
pub const MAX_INPUT_CHARS: usize = 20_000;
/// The most messages of a history.
pub const MAX_HISTORY_MESSAGES: usize = 200;
/// The check rounds of a judge draft.
pub const MAX_JUDGE_ROUNDS: u32 = 3;

/// What is drafted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DraftKind {
    /// An agent's `SKILL.md`.
    Skill,
    /// An agent's `Construct.md`.
    Construct,
    /// A judge's `judge.toml`.
    Judge,
}

impl DraftKind {
    /// The spelling of records and log lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skill => "skill",
            Self::Construct => "construct",
            Self::Judge => "judge",
        }
    }
}

/// The file drafted: its kind and the agent's or judge's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistTarget {
    /// What is drafted.
    pub kind: DraftKind,
    /// The agent's (skill, construct) or judge's id.
    pub id: String,
}

/// One exchange asked for (`assist_draft`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistRequest {
    /// The file drafted.
    pub target: AssistTarget,
    /// The model template (one with `useTools`).
    pub template_id: String,
    /// The earlier messages: the user's and every earlier reply's `appended`, in order.
    #[serde(default)]
    pub history: Vec<ChatMessage>,
    /// This turn's message (may be absent with `forceDraft`).
    #[serde(default)]
    pub input: Option<String>,
    /// Ask for a draft now.
    #[serde(default)]
    pub force_draft: bool,
    /// The editor's text, unsaved changes included.
    #[serde(default)]
    pub current: String,
}

/// A judge draft's check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validation {
    /// It passed the parser (targets included).
    pub valid: bool,
    /// Where the first finding is (`line:col`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// What is wrong and how to fix it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The answer of one exchange (tag `type`); `appended` goes onto the caller's history as is.
/// An answer with neither text nor a draft is no reply: the last draft of the exchange when
/// there is one (`valid: false`), else [`AssistError::Empty`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistReply {
    /// The model asks something.
    #[serde(rename_all = "camelCase")]
    Question {
        /// Messages to keep.
        appended: Vec<ChatMessage>,
        /// The question(s).
        text: String,
    },
    /// A draft (never saved here).
    #[serde(rename_all = "camelCase")]
    Draft {
        /// Messages to keep.
        appended: Vec<ChatMessage>,
        /// What the model wrote beside the draft.
        text: Option<String>,
        /// The draft.
        content: String,
        /// Its assumptions and open points.
        notes: Option<String>,
        /// Characters of `content`.
        draft_chars: usize,
        /// A judge draft's check (`None` for skill and construct).
        validation: Option<Validation>,
        /// Check rounds (1 for skill and construct).
        attempts: u32,
    },
}

impl AssistReply {
    /// `question` or `draft`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Question { .. } => "question",
            Self::Draft { .. } => "draft",
        }
    }
}

/// Why an exchange could not run.
#[derive(Debug, thiserror::Error)]
pub enum AssistError {
    /// The request is malformed (its field and why).
    #[error("{field}: {problem}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        problem: String,
        /// What to change.
        fix: String,
    },
    /// The template needs a key that is not stored. Nothing was sent.
    #[error("the template {template} needs an API key, and none is stored")]
    SecretMissing {
        /// The template.
        template: String,
    },
    /// The model gave neither a question nor a draft, and no draft came before it in the
    /// exchange: nothing to show (its call is still logged and recorded as `empty`).
    #[error("the model gave neither a question nor a draft")]
    Empty,
    /// The model call failed before any draft.
    #[error(transparent)]
    Llm(#[from] LlmError),
}

impl AssistError {
    pub(crate) fn invalid(field: &'static str, problem: impl Into<String>, fix: &str) -> Self {
        Self::Invalid {
            field,
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

impl crate::error::Coded for AssistError {
    fn code(&self) -> &'static str {
        match self {
            Self::Invalid { .. } => "INVALID_ASSIST_REQUEST",
            Self::SecretMissing { .. } => "SECRET_MISSING",
            Self::Empty => "ASSIST_EMPTY",
            Self::Llm(e) => e.code(),
        }
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        match self {
            Self::Invalid { fix, .. } => Some(fix.clone().into()),
            Self::SecretMissing { template } => Some(crate::error::Fix::remedy(
                crate::error::Remedy::StoreSecret {
                    name: template.clone(),
                    env: true,
                },
                "",
            )),
            Self::Empty => Some("ask again, or ask for the draft now (forceDraft)".into()),
            Self::Llm(e) => crate::error::Coded::fix(e),
        }
    }
}

/// What one exchange did: the reply and each model call's facts (for records and log lines).
#[derive(Debug, Clone)]
pub struct AssistOutcome {
    /// The reply.
    pub reply: AssistReply,
    /// One entry per model call, in order.
    pub calls: Vec<AssistCall>,
}

/// The usage of every call of an exchange, added up.
pub fn total_usage(calls: &[AssistCall]) -> Usage {
    let mut total = Usage::default();
    for call in calls {
        if let Some(u) = &call.usage {
            total.add(u);
        }
    }
    total
}
