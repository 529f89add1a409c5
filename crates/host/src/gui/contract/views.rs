//! The answers of the reads (`GET /api/village`, chat, approvals, questions, conversations,
//! settings, log): docs/gui-api.md "Reads".

// The fields are the wire names, described in docs/gui-api.md (a test holds the two together).
#![allow(missing_docs)]

use fuseforks_core::events::AgentStatus;
use fuseforks_core::orchestrator::{PendingQuestion, RunningRoot};
use fuseforks_core::sessions::Record;
use fuseforks_core::village::{Credential, Provider};
use serde::Serialize;

/// `GET /api/village`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Village {
    pub language: &'static str,
    pub version: String,
    pub agents: Vec<VillageAgent>,
    pub groups: Vec<VillageGroup>,
    pub switch: &'static str,
    pub run_approval: &'static str,
    pub plan_review_bypass: bool,
    pub pending_count: usize,
    pub door: DoorLink,
    pub roots: Vec<RunningRoot>,
    pub map: MapView,
}

/// A servant on the village page, with its live facts.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VillageAgent {
    pub id: String,
    pub name: String,
    pub status: AgentStatus,
    pub template_id: String,
    /// `null` when its template is gone.
    pub model: Option<String>,
    pub batch_start: bool,
    pub group_id: Option<String>,
    pub connected: Vec<String>,
    pub typing: bool,
    /// `null` before its first tool call.
    pub last_tool: Option<LastTool>,
    pub stats: AgentStatsView,
}

/// A servant's last tool call.
#[derive(Debug, Clone, Serialize)]
pub struct LastTool {
    pub tool: String,
    pub ok: bool,
}

/// A servant's running totals.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatsView {
    pub uptime_secs: u64,
    pub total_tokens: u64,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    /// `null` before any prompt.
    pub cache_rate: Option<f64>,
    pub last_prompt_tokens: Option<u64>,
    pub context_limit: Option<u64>,
}

/// A group on the village page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VillageGroup {
    pub id: String,
    pub name: String,
    pub batch_start: bool,
}

/// Whether the door is open, and where.
#[derive(Debug, Clone, Serialize)]
pub struct DoorLink {
    pub open: bool,
    pub url: Option<String>,
}

/// The connection map, laid out by the server.
#[derive(Debug, Clone, Serialize)]
pub struct MapView {
    pub width: f64,
    pub height: f64,
    pub nodes: Vec<MapNode>,
    pub edges: Vec<MapEdge>,
}

/// A servant or a judge on the map.
#[derive(Debug, Clone, Serialize)]
pub struct MapNode {
    pub id: String,
    pub name: String,
    /// `servant` or `judge`.
    pub kind: &'static str,
    pub x: f64,
    pub y: f64,
}

/// A connection on the map.
#[derive(Debug, Clone, Serialize)]
pub struct MapEdge {
    pub from: String,
    pub to: String,
}

/// `GET /api/chat/{agentId}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Chat {
    pub session_id: Option<String>,
    pub messages: Vec<Message>,
}

/// A stored message, with its sequence number.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: String,
    /// `user`, `system`, `agent:ID`, `external:NAME`.
    pub from: String,
    pub to: String,
    pub content: String,
    pub ts_ms: i64,
    pub seq: u64,
}

/// `GET /api/approvals`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approvals {
    pub runs: Vec<PendingRun>,
    pub plans: Vec<ProposedWave>,
    pub run_approval: &'static str,
    pub plan_review_bypass: bool,
}

/// A `run` request waiting for the person.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingRun {
    pub agent_id: String,
    pub command: String,
    pub args: Vec<String>,
    pub count: u32,
    pub first_requested_at_ms: i64,
}

/// A proposed plan wave.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedWave {
    pub plan_id: String,
    pub agent_id: String,
    pub wave: u32,
    pub tasks: Vec<WaveTask>,
}

/// A task of a proposed wave.
#[derive(Debug, Clone, Serialize)]
pub struct WaveTask {
    pub to: String,
    pub message: String,
}

/// `GET /api/questions`.
#[derive(Debug, Clone, Serialize)]
pub struct Questions {
    /// In a stable order (by id).
    pub questions: Vec<PendingQuestion>,
}

/// `GET /api/conversations`: newest first.
#[derive(Debug, Clone, Serialize)]
pub struct ConversationList {
    pub current: Option<String>,
    pub sessions: Vec<SessionRow>,
}

/// A stored conversation in the list.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRow {
    pub id: String,
    pub title: String,
    pub created_at_ms: i64,
}

/// `GET /api/conversations/{id}`.
#[derive(Debug, Clone, Serialize)]
pub struct Conversation {
    pub id: String,
    pub messages: Vec<Message>,
}

/// One line of `GET /api/conversations/{id}/export`: the record as stored, with its `seq`.
#[derive(Debug, Clone, Serialize)]
pub struct ExportLine<'a> {
    #[serde(flatten)]
    pub record: &'a Record,
    pub seq: u64,
}

/// `GET /api/settings` (never a secret value: `hasKey`, `hasToken`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    pub templates: Vec<TemplateRow>,
    pub secret_store: String,
    pub door: DoorView,
    pub token_budget: Option<u64>,
    pub ask_timeout_secs: u64,
}

/// A model template in the settings.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TemplateRow {
    pub id: String,
    pub name: String,
    pub provider: Option<Provider>,
    pub model: String,
    pub base_url: String,
    pub credential: Credential,
    pub has_key: bool,
    pub use_tools: bool,
}

/// The door's settings, or why `mcp_server.json` does not read.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum DoorView {
    /// The settings.
    Read(DoorSettingsRow),
    /// `{error: {code, message}}`.
    Unreadable(DoorProblem),
}

/// The door's settings as the page shows them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoorSettingsRow {
    pub enabled: bool,
    pub port: u16,
    pub has_token: bool,
}

/// A settings file that does not read.
#[derive(Debug, Clone, Serialize)]
pub struct DoorProblem {
    pub error: ProblemWords,
}

/// A code and its words.
#[derive(Debug, Clone, Serialize)]
pub struct ProblemWords {
    pub code: String,
    pub message: String,
}

/// `GET /api/log?lines=N`.
#[derive(Debug, Clone, Serialize)]
pub struct LogTail {
    pub lines: Vec<String>,
}
