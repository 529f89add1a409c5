//! Agents (`world.json` `agents[]`): who they are, which template they think with, whom they
//! may talk to, and their switches.

use serde::{Deserialize, Serialize};

use super::Extra;
use super::ids::{AgentId, TemplateId};

/// One agent as stored in `world.json`. Optional values are written as `null`, as the original
/// writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpec {
    /// Agent id (`[A-Za-z0-9_-]{1,64}`; also the name of its folder under `agents/`).
    pub id: AgentId,
    /// Display name, unique across agents and judges.
    pub name: String,
    /// The model template this agent thinks with.
    pub model_template_id: TemplateId,
    /// Absolute folders the `rag` tool may read.
    #[serde(default)]
    pub rag_sources: Vec<String>,
    /// Outgoing edges: the only agents (and judges) this agent may address.
    #[serde(default)]
    pub connected_agents: Vec<AgentId>,
    /// Position in the list.
    #[serde(default)]
    pub order: u32,
    /// The agent's work folder (file tools are confined to it).
    #[serde(default)]
    pub work_dir: Option<String>,
    /// Per-agent cap on tool rounds (default 12 when absent).
    #[serde(default)]
    pub max_tool_iterations: Option<u8>,
    /// Enabled bundled tools; absent = the default set, a list = exactly those.
    #[serde(default)]
    pub enabled_tools: Option<Vec<String>>,
    /// Hears the public square.
    #[serde(default = "yes")]
    pub hears_room_log: bool,
    /// Offered `transfer_to_<id>` tools.
    #[serde(default = "yes")]
    pub allow_handoff: bool,
    /// Uses the blackboard.
    #[serde(default = "yes")]
    pub uses_blackboard: bool,
    /// Plan waves wait for a human's review.
    #[serde(default)]
    pub plan_review: bool,
    /// Started by batch start.
    #[serde(default = "yes")]
    pub batch_start: bool,
    /// Role label.
    #[serde(default)]
    pub role_id: Option<String>,
    /// Group (an unknown group id counts as no group).
    #[serde(default)]
    pub group_id: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The tool-round cap used when an agent sets none.
pub(crate) const DEFAULT_MAX_TOOL_ITERATIONS: u8 = 12;

impl AgentSpec {
    /// An agent with every default.
    pub fn new(id: AgentId, name: impl Into<String>, model_template_id: TemplateId) -> Self {
        Self {
            id,
            name: name.into(),
            model_template_id,
            rag_sources: Vec::new(),
            connected_agents: Vec::new(),
            order: 0,
            work_dir: None,
            max_tool_iterations: None,
            enabled_tools: None,
            hears_room_log: true,
            allow_handoff: true,
            uses_blackboard: true,
            plan_review: false,
            batch_start: true,
            role_id: None,
            group_id: None,
            extra: Extra::new(),
        }
    }

    /// The tool-round cap in effect: at most this many model calls per turn. `0` counts as 1
    /// (a turn needs one call to answer at all).
    pub fn max_tool_iterations(&self) -> u8 {
        self.max_tool_iterations
            .unwrap_or(DEFAULT_MAX_TOOL_ITERATIONS)
            .max(1)
    }
}

fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_of_0_counts_as_1_and_none_is_the_default() {
        let mut agent = AgentSpec::new(
            AgentId::new("a").unwrap(),
            "A",
            TemplateId::new("t").unwrap(),
        );
        assert_eq!(agent.max_tool_iterations(), DEFAULT_MAX_TOOL_ITERATIONS);
        agent.max_tool_iterations = Some(0);
        assert_eq!(agent.max_tool_iterations(), 1);
        agent.max_tool_iterations = Some(2);
        assert_eq!(agent.max_tool_iterations(), 2);
    }
}
