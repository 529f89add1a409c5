//! Judges (`world.json` `judges[]`): rule-file routers in the agents' id namespace. Their
//! `judge.toml` is parsed by `crate::judge`. `modelTemplateId` (ours, optional) picks the
//! model-template backend; absent = Jev, as in the original.

use serde::{Deserialize, Serialize};

use super::Extra;
use super::ids::{AgentId, TemplateId};

/// A judge as listed in `world.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeSpec {
    /// Judge id (same namespace and rule as agent ids).
    pub id: AgentId,
    /// Display name, unique across agents and judges.
    pub name: String,
    /// Position in the judge list.
    #[serde(default)]
    pub order: u32,
    /// Switched on (missing = true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The model template that answers the questions; absent = Jev (the original's backend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_template_id: Option<TemplateId>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

fn yes() -> bool {
    true
}
