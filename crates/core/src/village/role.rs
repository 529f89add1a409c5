//! Roles (`world.json` `roles[]`): creation-time templates for agents plus a coloured label.

use serde::{Deserialize, Serialize};

use super::Extra;
use super::ids::TemplateId;

/// A role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentRole {
    /// Role id.
    pub id: String,
    /// Label.
    pub name: String,
    /// What the role is for.
    #[serde(default)]
    pub description: String,
    /// Badge colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<RoleColor>,
    /// Values copied into an agent when it is created with this role.
    #[serde(default)]
    pub defaults: RoleDefaults,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The eight badge colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoleColor {
    /// Red.
    Red,
    /// Orange.
    Orange,
    /// Amber.
    Amber,
    /// Green.
    Green,
    /// Teal.
    Teal,
    /// Blue.
    Blue,
    /// Violet.
    Violet,
    /// Pink.
    Pink,
}

/// Values a role copies into a new agent (only at creation).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoleDefaults {
    /// Construct text.
    #[serde(default)]
    pub construct: String,
    /// Model template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_template_id: Option<TemplateId>,
    /// Enabled tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    /// Tool-round cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_iterations: Option<u8>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}
