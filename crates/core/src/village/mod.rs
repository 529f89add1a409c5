//! The village on disk: typed models of every file, and the stores that read and write them.
//!
//! Files are the source of truth for the village. Every write is atomic ([`atomic`]), every
//! read keeps fields this version does not know ([`Extra`]), and every bad file yields a
//! [`VillageError`] with a stable code, the file, the field and a fix.
//!
//! # Parts
//!
//! `village/` — the village on disk:
//!
//! | module | owns |
//! |---|---|
//! | `world.rs`, `world_rules.rs` | `World` (`world.json`) and its read rules (defaults, clamps, dropped names, notices), validity rules (ids, duplicates, template references) and stricter write rules |
//! | `agent.rs`, `template.rs`, `role.rs`, `group.rs`, `judge.rs` | the parts of `world.json`; `template.rs` also applies the endpoint rule (the crate's `endpoint_rule.rs`, re-exported here: `baseUrl` absolute http(s), plain http only to loopback unless `allowInsecureHttp`: `ENDPOINT_INVALID` / `ENDPOINT_INSECURE`) to a template, its demo case included, for the preflight and the client — the village still opens with a bad endpoint, so that it can be fixed |
//! | `schedule.rs` | `schedules.json` |
//! | `run_policy.rs` | `agents/<id>/run.json` |
//! | `mcp_config.rs` | `mcp.json` (shared and per agent), Claude Desktop format, order kept, secrets hidden from `Debug` |
//! | `shelf.rs`, `shelf_store.rs` | the shelf files and their store |
//! | `files.rs` | per-agent files (`Construct.md`, `SKILL.md`, `Memory.md`, `mcp.json`, `run.json`, `icon.webp`) and `judges/<id>/judge.toml` (read as text here, parsed by `judge_rules/`) |
//! | `judge_rules/` | the judge file's model, `when` grammar, parser and checks (`model.rs`, `expr.rs`, `parse.rs`, `check.rs`, `error.rs`; pure; named by `judge`) |
//! | `skill.rs` | `SKILL.md` as a turn uses it: the front matter (`max_loops`, `fork: subagent`, `allowed-tools`, `goal_seek.engine`) read by a hand-written reader into `SkillTerms`, the procedure after it (the only part the model reads); bad input a notice (`SKILL_KEY_UNKNOWN`, `SKILL_VALUE_INVALID`, `VALUE_CLAMPED`), never a refusal (`docs/formats/skill-front-matter.md`) |
//! | `store.rs` | `VillageStore`: `world.json`, `village_id`, `Ordinance.md`, `schedules.json`, shared `mcp.json` |
//! | `editable.rs` | `EditableFile`: the files a person edits as text (an allowlist of workspace paths), read, checked with line and column by the parser of their kind, saved through the store |
//! | `doc.rs` | the one read/write path of every JSON file (`JsonDoc`): parse with field path and position, normalise, validate, refuse to overwrite an unreadable file |
//! | `atomic.rs` | atomic writes (temp + fsync + rename / link, folder fsync, stale-temp sweep); `WriteMode`: a store opened `staged` (`VillageStore::staged`, `ShelfStore::staged`, for `bake`'s staging folder) writes plainly, and only that store — the mode is a field, never a thread's state |
//! | `error.rs`, `notice.rs` | `VillageError` with stable codes; `Notice`s for what a read adjusted |
//! | `attachments.rs` | `AttachmentSurvey`: what `attachments/` holds (files, bytes by kind, links not followed), the startup block's `attachment gc:` line; removes nothing yet |
//! | `ids.rs`, `names.rs`, `language.rs` | identifiers, display names, the village language (`Language::pick(ja, en)` for one text in two languages; a `match` on `Language` where a whole table of texts changes) |
//! | `founding.rs`, `founding_text.rs`, `presets.rs` | founding a new village (all or nothing; from a preset, or `found_village_with` a template `init --base-url/--model` built and checked), its bilingual starting text, provider presets |

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
pub use files::{AgentFiles, JudgeFile};
pub use founding::{FoundingPlan, FoundingReport, found_village, found_village_with};
pub use group::AgentGroup;
pub use ids::{AgentId, InvalidIdError, TemplateId};
pub use judge::JudgeSpec;
pub use language::{Language, LanguageTag};
pub use mcp_config::{HttpServer, McpConfig, McpServerEntry, StdioServer};
pub use notice::{Loaded, Notice, NoticeCode};
pub use presets::{PRESETS, ProviderPreset, preset};
pub use role::{AgentRole, RoleColor, RoleDefaults};
pub use run_policy::{CommandPolicy, PendingCommand};
pub use schedule::{
    AcceptanceProbe, ClockTime, Interval, Recurrence, ScheduleProbe, ScheduledTask, Schedules,
    SessionMode, Weekday, WeeklyTime,
};
pub use shelf::{
    BakeRecord, DEFAULT_DOOR_PORT, DEFAULT_PRICING_URL, DoorSettings, JevSettings, PathMap,
    PricingSource, ProbeApprovals,
};
pub use shelf_store::ShelfStore;
pub use shelf_store::names::WORKSPACE;
pub use skill::{MAX_LOOPS, MAX_ROUND_CAP, Skill, SkillFork, SkillTerms};
pub use store::VillageStore;
// The effort and the endpoint rule live on the ground floor (llm keeps them too); their
// public paths stay here.
pub use crate::effort::Effort;
pub use crate::endpoint_rule::{
    DEMO_BASE_URL_FORM, EndpointProblem, EndpointSecurity, demo_port, endpoint_security,
    loopback_origin,
};
pub use template::{
    Credential, DEFAULT_MAX_RESPONSE_BYTES, MAX_RESPONSE_BYTES_LIMIT, ModelTemplate, Provider,
};
pub use world::{Position, World};
/// File names, one constant each: in an agent's or judge's folder, in the workspace, on the shelf.
pub use {
    files::names as agent_files, shelf_store::names as shelf_files, store::names as workspace_files,
};
