//! The reasoning effort asked of a model: a template's `effort` (village) and a request's
//! (llm) are the one type, so it sits on the ground floor below both.

use serde::{Deserialize, Serialize};

/// Reasoning effort asked of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high.
    Xhigh,
    /// Maximum.
    Max,
}
