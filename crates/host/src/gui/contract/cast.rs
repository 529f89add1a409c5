//! The cast page's answers: `GET /api/cast`, the `cast` command and `tryJudge`:
//! docs/gui-api.md.

// The fields are the wire names, described in docs/gui-api.md (a test holds the two together).
#![allow(missing_docs)]

use fuseforks_core::events::AgentStatus;
use fuseforks_core::orchestrator::ServantReferences;
use serde::Serialize;

/// `GET /api/cast`.
#[derive(Debug, Clone, Serialize)]
pub struct CastView {
    pub servants: Vec<Servant>,
    pub judges: Vec<CastJudge>,
    pub roles: Vec<NamedItem>,
    pub groups: Vec<NamedItem>,
    pub tools: Vec<&'static str>,
}

/// A servant with its settings and what names it outside `world.json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Servant {
    pub id: String,
    pub name: String,
    pub role_id: Option<String>,
    pub group_id: Option<String>,
    pub work_dir: Option<String>,
    pub enabled_tools: Option<Vec<String>>,
    pub max_tool_iterations: Option<u8>,
    pub connected: Vec<String>,
    pub status: AgentStatus,
    pub named_by: ServantReferences,
}

/// A judge and its switch.
#[derive(Debug, Clone, Serialize)]
pub struct CastJudge {
    pub id: String,
    pub name: String,
    pub enabled: bool,
}

/// A role or a group: its id and name.
#[derive(Debug, Clone, Serialize)]
pub struct NamedItem {
    pub id: String,
    pub name: String,
}

/// What one `cast` edit did.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum CastDone {
    /// A servant was created.
    #[serde(rename_all = "camelCase")]
    Created { agent_id: String },
    /// A servant was deleted: its folder to the trash, what still names it.
    #[serde(rename_all = "camelCase")]
    Deleted {
        trashed: bool,
        named_by: ServantReferences,
        was_reception: bool,
    },
    /// Anything else.
    Changed {},
}

/// `tryJudge`: the rule a judge would take on a text (nothing delivered).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum TryJudge {
    /// The judge's rules do not parse (`outcome: invalid`).
    Invalid {
        outcome: &'static str,
        detail: String,
    },
    /// The backend gave no usable answer (`outcome: undecided`).
    Undecided {
        outcome: &'static str,
        reason: &'static str,
        detail: String,
        tokens: TryTokens,
    },
    /// The rule it takes.
    Decided {
        outcome: &'static str,
        rule: String,
        answers: String,
        tokens: TryTokens,
    },
}

/// The tokens of a judge's backend call.
#[derive(Debug, Clone, Serialize)]
pub struct TryTokens {
    pub input: u64,
    pub output: u64,
}
