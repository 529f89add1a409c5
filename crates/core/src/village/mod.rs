//! The village on disk: typed models of every file, and the stores that read and write them.
//!
//! Files are the source of truth for the village. Every write is atomic ([`atomic`]), every
//! read keeps fields this version does not know ([`Extra`]), and every bad file yields a
//! [`VillageError`] with a stable code, the file, the field and a fix.

pub mod agent;
mod atomic;
pub mod doc;
pub mod error;
pub mod files;
pub mod founding;
mod founding_text;
pub mod group;
pub mod ids;
pub mod judge;
pub mod language;
pub mod mcp_config;
pub mod names;
pub mod notice;
pub mod presets;
pub mod role;
pub mod run_policy;
pub mod schedule;
pub mod shelf;
pub mod shelf_store;
pub mod store;
pub mod template;
pub mod world;
mod world_rules;

/// Fields of a JSON object that this version does not know. They are kept on read and written
/// back unchanged, so that a newer version's data survives a round trip through this one.
pub type Extra = serde_json::Map<String, serde_json::Value>;

/// Replaces `path` with `bytes` atomically (temp file, fsync, rename), for files outside the
/// village model that must never be half-written (exports, logs' side files).
pub(crate) fn write_file_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    atomic::write_atomic(path, bytes, atomic::Permissions::KeepExisting)
}

pub use agent::AgentSpec;
pub use error::{InvalidFile, RuleCode, RuleViolation, VillageError};
pub use files::AgentFiles;
pub use ids::{AgentId, TemplateId};
pub use language::{Language, LanguageTag};
pub use notice::{Loaded, Notice, NoticeCode};
pub use shelf_store::ShelfStore;
pub use store::VillageStore;
pub use template::{
    Credential, Effort, EndpointProblem, EndpointSecurity, ModelTemplate, Provider,
};
pub use world::World;
