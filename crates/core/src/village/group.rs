//! Groups (`world.json` `groups[]`): list sections with their own batch-start switch.

use serde::{Deserialize, Serialize};

use super::Extra;

/// A group. The array order of `groups` is the heading order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentGroup {
    /// Group id (a UUID v4, never reused).
    pub id: String,
    /// Heading.
    pub name: String,
    /// Members take part in batch start only when this is on.
    #[serde(default = "yes")]
    pub batch_start: bool,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

fn yes() -> bool {
    true
}
