//! The village on disk: typed models of every file, and the stores that read and write them.
//!
//! Files are the source of truth for the village. Every write is atomic ([`atomic`]), every
//! read keeps fields this version does not know ([`Extra`]), and every bad file yields a
//! [`VillageError`] with a stable code, the file, the field and a fix.

pub(crate) mod agent;
pub(crate) mod atomic;
pub(crate) mod attachments;
pub(crate) mod doc;
pub(crate) mod editable;
pub(crate) mod error;
pub(crate) mod files;
pub(crate) mod founding;
mod founding_text;
pub(crate) mod group;
pub(crate) mod ids;
pub(crate) mod judge;
pub(crate) mod judge_rules;
pub(crate) mod language;
pub(crate) mod mcp_config;
pub(crate) mod names;
pub(crate) mod notice;
pub(crate) mod presets;
pub(crate) mod role;
pub(crate) mod run_policy;
pub(crate) mod schedule;
pub(crate) mod shelf;
pub(crate) mod shelf_store;
pub(crate) mod skill;
pub(crate) mod store;
pub(crate) mod template;
pub(crate) mod world;
mod world_rules;

/// Fields of a JSON object that this version does not know. They are kept on read and written
/// back unchanged, so that a newer version's data survives a round trip through this one.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// Replaces `path` with `bytes` atomically (temp file, fsync, rename), for files outside the
/// village model that must never be half-written (exports, logs' side files, `bake`'s byte
/// copies).
pub fn write_file_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    atomic::write_atomic(path, bytes, atomic::Permissions::KeepExisting)
}

/// [`write_file_atomically`], readable and writable by the owner only (0600 on Unix): for
/// files that hold secrets (`bake --env-out`).
pub fn write_secret_file_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    atomic::write_atomic(path, bytes, atomic::Permissions::OwnerOnly)
}

/// Writes `path` as `mode` says ([`WriteMode::Staged`]: plainly, inside a staging folder made
/// durable later with [`make_durable`]; else as [`write_file_atomically`]).
pub fn write_file(path: &std::path::Path, bytes: &[u8], mode: WriteMode) -> std::io::Result<()> {
    atomic::write_as(mode, path, bytes, atomic::Permissions::KeepExisting)
}

pub use atomic::{WriteMode, make_durable};

pub use agent::AgentSpec;
pub use attachments::AttachmentSurvey;
pub use editable::{EditError, EditableFile, MAX_EDIT_BYTES, TextFinding};
pub use error::{InvalidFile, RuleCode, RuleViolation, VillageError};
pub use files::AgentFiles;
pub use founding::{FoundingPlan, FoundingReport, found_village, found_village_with};
pub use ids::{AgentId, InvalidIdError, TemplateId};
pub use judge::JudgeSpec;
pub use language::{Language, LanguageTag};
pub use mcp_config::{McpConfig, McpServerEntry};
pub use notice::{Loaded, Notice, NoticeCode};
pub use presets::{PRESETS, ProviderPreset, preset};
pub use role::RoleColor;
pub use run_policy::CommandPolicy;
pub use schedule::{Recurrence, ScheduleProbe, ScheduledTask, Schedules, SessionMode, Weekday};
pub use shelf::{
    BakeRecord, DEFAULT_DOOR_PORT, DEFAULT_PRICING_URL, DoorSettings, JevSettings, PathMap,
    PricingSource, ProbeApprovals,
};
pub use shelf_store::ShelfStore;
pub use shelf_store::names::WORKSPACE;
pub use skill::{MAX_LOOPS, MAX_ROUND_CAP, Skill, SkillFork, SkillTerms};
pub use store::VillageStore;
pub use template::{
    Credential, DEFAULT_MAX_RESPONSE_BYTES, Effort, EndpointProblem, EndpointSecurity,
    MAX_RESPONSE_BYTES_LIMIT, ModelTemplate, Provider, endpoint_security,
};
pub use template::{DEMO_BASE_URL_FORM, demo_port, loopback_origin};
pub use world::World;
/// File names, one constant each: in an agent's or judge's folder, in the workspace, on the shelf.
pub use {
    files::names as agent_files, shelf_store::names as shelf_files, store::names as workspace_files,
};
