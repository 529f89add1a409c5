//! The editors' answers: the file list and one file (`GET /api/files…`), `checkFile`,
//! `saveFile`, `setMcpSecret`, `assist`, and the stats page (`GET /api/stats`):
//! docs/gui-api.md.

// The fields are the wire names, described in docs/gui-api.md (a test holds the two together).
#![allow(missing_docs)]

use fuseforks_core::assist::AssistReply;
use fuseforks_core::village::TextFinding;
use serde::Serialize;

/// `GET /api/files`.
#[derive(Debug, Clone, Serialize)]
pub struct FileList {
    pub files: Vec<FileEntry>,
}

/// An editable file: the village's own, or one of a servant or a judge.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum FileEntry {
    /// `{path}`.
    Village(VillageFile),
    /// `{path, owner, ownerName, draft, judge?}`.
    Owned(OwnedFile),
}

/// A file of the village itself.
#[derive(Debug, Clone, Serialize)]
pub struct VillageFile {
    pub path: String,
}

/// A file of a servant or a judge.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnedFile {
    pub path: String,
    pub owner: String,
    pub owner_name: String,
    /// The kind the assistant drafts (`skill`, `construct`, `judge`); `null` when none.
    pub draft: Option<&'static str>,
    /// Present (true) for a judge's file only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub judge: bool,
}

/// `GET /api/files/{path}`.
#[derive(Debug, Clone, Serialize)]
pub struct FileText {
    pub path: String,
    pub text: String,
    pub hash: String,
    pub findings: Vec<TextFinding>,
    pub secrets: Vec<SecretRef>,
}

/// A `${secret:NAME}` an `mcp.json` references, and whether a value is stored.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    pub name: String,
    pub has_value: bool,
}

/// `checkFile`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    pub findings: Vec<TextFinding>,
    pub check_micros: u64,
    /// For a `schedules.json` without problems only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_due: Option<Vec<NextDue>>,
}

/// A schedule task's next due time.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NextDue {
    pub id: String,
    pub to: String,
    pub enabled: bool,
    pub next_due_ms: Option<i64>,
    pub next_due: Option<String>,
}

/// `saveFile`: the file as now on disk.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    pub path: String,
    pub hash: String,
    /// `null` for an `mcp.json` that does not parse (it may hold secret values).
    pub text: Option<String>,
}

/// `setMcpSecret`.
#[derive(Debug, Clone, Serialize)]
pub struct SecretStored {
    pub name: String,
}

/// `assist`.
#[derive(Debug, Clone, Serialize)]
pub struct AssistAnswer {
    pub reply: AssistReplyView,
}

/// The assistant's reply with the exchange's usage.
#[derive(Debug, Clone, Serialize)]
pub struct AssistReplyView {
    #[serde(flatten)]
    pub reply: AssistReply,
    pub usage: AssistUsage,
}

/// The tokens of an exchange's model calls.
#[derive(Debug, Clone, Serialize)]
pub struct AssistUsage {
    pub prompt: u64,
    pub cached: u64,
    pub completion: u64,
    pub reasoning: u64,
    pub calls: usize,
}

/// `GET /api/stats`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub pricing_as_of: Option<String>,
    pub pricing_age_days: Option<i64>,
    pub rows: Vec<StatsRowView>,
    pub assist: AssistTable,
    pub cost: Option<f64>,
    pub totals: StatsTotalsView,
    pub days: Vec<DayTokens>,
    pub judges: Vec<String>,
    pub agents: Vec<AgentCost>,
}

/// A turn row of the stats.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatsRowView {
    pub session_id: String,
    pub agent_id: String,
    pub model: String,
    pub stop: String,
    pub turns: u64,
    pub prompt: u64,
    pub cached: u64,
    pub completion: u64,
    pub effective: u64,
    pub cost_usd: Option<f64>,
}

/// The assistant's calls: by model and template, and in all.
#[derive(Debug, Clone, Serialize)]
pub struct AssistTable {
    pub rows: Vec<AssistSliceRow>,
    pub total: AssistSlice,
}

/// A slice of the assistant's calls (`turns` = its model calls).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistSlice {
    pub turns: u64,
    pub prompt: u64,
    pub completion: u64,
    pub effective: u64,
    pub cost_usd: Option<f64>,
}

/// The slice of one model and template.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistSliceRow {
    #[serde(flatten)]
    pub slice: AssistSlice,
    pub model: String,
    pub template_id: String,
}

/// The turns' totals.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatsTotalsView {
    pub turns: u64,
    pub prompt: u64,
    pub completion: u64,
    pub effective: u64,
    pub cost_usd: Option<f64>,
    pub priced_rows: usize,
    pub unpriced_rows: usize,
    pub unknown_usage_calls: u64,
}

/// The tokens of one day.
#[derive(Debug, Clone, Serialize)]
pub struct DayTokens {
    pub day: String,
    pub tokens: u64,
}

/// A servant's tokens and `≈ $`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCost {
    pub agent_id: String,
    pub tokens: u64,
    pub cost_usd: f64,
}
