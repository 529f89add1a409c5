//! The specs of the bundled tools (docs/formats/world.json.md#tools): names, bilingual
//! descriptions, JSON schemas (`additionalProperties: false`) with the injected `reason` field. A
//! golden file pins them (`crates/core/tests/fixtures/tool_specs_*.txt`), so that any change is
//! deliberate: the descriptions are part of the cached prompt prefix. Each tool's own spec sits in
//! its module, named by its row in [`super::table`].

use serde_json::{Map, Value, json};

use super::table;
use crate::llm::ToolSpec;
use crate::village::Language;

/// The command-approval mode (status bar, in memory only).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RunApproval {
    /// Unknown commands are refused and recorded for a human (default).
    #[default]
    Required,
    /// Unknown commands are allowed by appending an exact allow line.
    AutoApprove,
    /// Unknown commands run; nothing is recorded.
    NoApproval,
}

impl RunApproval {
    /// The spelling in logs and events.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::AutoApprove => "auto_approve",
            Self::NoApproval => "no_approval",
        }
    }
}

/// A closed object schema of `properties` plus the injected `reason`.
pub(crate) fn schema(required: &[&str], properties: Value, language: Language) -> Value {
    let mut properties = match properties {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    properties.insert(
        "reason".into(),
        json!({"type": "string", "description": language.pick(
            "この呼び出しの理由（20〜40 字）。会話に表示されます。",
            "Why you make this call (20-40 characters). Shown in the conversation.")}),
    );
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// A property of a type, described.
pub(crate) fn prop(kind: &str, description: String) -> Value {
    json!({"type": kind, "description": description})
}

/// The spec of one bundled tool (or `rag`).
pub fn spec(name: &str, language: Language, approval: RunApproval) -> Option<ToolSpec> {
    let tool = table::find(name)?;
    let (description, parameters) = (tool.spec)(language, approval);
    Some(ToolSpec {
        name: name.to_owned(),
        description,
        parameters,
    })
}

/// The golden text of every base spec: name, description and schema, one block per tool.
pub fn golden(language: Language) -> String {
    let mut out = String::new();
    for tool in table::TOOLS {
        if let Some(s) = spec(tool.name, language, RunApproval::Required) {
            out.push_str(&format!(
                "## {}\n{}\n{}\n\n",
                s.name,
                s.description,
                serde_json::to_string_pretty(&s.parameters).unwrap_or_default()
            ));
        }
    }
    out
}
