//! Per-agent files (`agents/<id>/`: Construct.md, SKILL.md, Memory.md, mcp.json, run.json,
//! icon.webp) and per-judge files (`judges/<id>/judge.toml`, kept as text for now).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::atomic::WriteMode;
use super::doc::{self, WhenMissing};
use super::error::VillageError;
use super::mcp_config::McpConfig;
use super::notice::Loaded;
use super::run_policy::CommandPolicy;
use super::store::{write_bytes, write_text};

/// File names inside an agent's folder.
pub mod names {
    /// Persona.
    pub const CONSTRUCT: &str = "Construct.md";
    /// Procedure.
    pub const SKILL: &str = "SKILL.md";
    /// Long-term memory.
    pub const MEMORY: &str = "Memory.md";
    /// Per-agent MCP servers.
    pub const MCP: &str = "mcp.json";
    /// Command policy.
    pub const RUN: &str = "run.json";
    /// Icon.
    pub const ICON: &str = "icon.webp";
    /// A judge's rules.
    pub const JUDGE: &str = "judge.toml";
}

/// The files of one agent. Absent text files read as empty; absent JSON files as their default.
#[derive(Debug, Clone)]
pub struct AgentFiles {
    dir: PathBuf,
    mode: WriteMode,
}

impl AgentFiles {
    pub(crate) fn new(dir: PathBuf, mode: WriteMode) -> Self {
        Self { dir, mode }
    }

    /// The agent's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of one of the agent's files.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Reads `Construct.md`.
    pub fn read_construct(&self) -> Result<String, VillageError> {
        self.read_markdown(names::CONSTRUCT)
    }

    /// Writes `Construct.md`.
    pub fn write_construct(&self, text: &str) -> Result<(), VillageError> {
        write_text(&self.path(names::CONSTRUCT), text, self.mode)
    }

    /// Reads `SKILL.md`.
    pub fn read_skill(&self) -> Result<String, VillageError> {
        self.read_markdown(names::SKILL)
    }

    /// Reads `SKILL.md` with its front matter: the procedure, the terms, and what the read
    /// could not take as written (`docs/formats/skill-front-matter.md`).
    pub fn load_skill(&self) -> Result<Loaded<super::Skill>, VillageError> {
        let text = self.read_skill()?;
        Ok(super::skill::parse_skill(&text, &self.path(names::SKILL)))
    }

    /// Writes `SKILL.md`.
    pub fn write_skill(&self, text: &str) -> Result<(), VillageError> {
        write_text(&self.path(names::SKILL), text, self.mode)
    }

    /// Reads `Memory.md`.
    pub fn read_memory(&self) -> Result<String, VillageError> {
        self.read_markdown(names::MEMORY)
    }

    /// Writes `Memory.md`.
    pub fn write_memory(&self, text: &str) -> Result<(), VillageError> {
        write_text(&self.path(names::MEMORY), text, self.mode)
    }

    /// Reads the agent's `mcp.json` (no servers when absent).
    pub fn load_mcp(&self) -> Result<Loaded<McpConfig>, VillageError> {
        doc::load(&self.path(names::MCP), WhenMissing::Default)
    }

    /// Writes the agent's `mcp.json` (owner-only permissions: it may hold secrets).
    pub fn save_mcp(&self, config: &McpConfig) -> Result<(), VillageError> {
        doc::save(&self.path(names::MCP), config, self.mode)
    }

    /// Reads `run.json` (the fail-closed default when absent: nothing allowed).
    pub fn load_run_policy(&self) -> Result<Loaded<CommandPolicy>, VillageError> {
        doc::load(&self.path(names::RUN), WhenMissing::Default)
    }

    /// Writes `run.json`.
    pub fn save_run_policy(&self, policy: &CommandPolicy) -> Result<(), VillageError> {
        doc::save(&self.path(names::RUN), policy, self.mode)
    }

    /// Reads `icon.webp`; `None` when absent.
    pub fn read_icon(&self) -> Result<Option<Vec<u8>>, VillageError> {
        let file = self.path(names::ICON);
        match fs::read(&file) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(VillageError::unreadable(&file, e)),
        }
    }

    /// Writes `icon.webp`.
    pub fn write_icon(&self, webp: &[u8]) -> Result<(), VillageError> {
        write_bytes(&self.path(names::ICON), webp, self.mode)
    }

    fn read_markdown(&self, name: &str) -> Result<String, VillageError> {
        Ok(doc::read_text(&self.path(name))?.unwrap_or_default())
    }
}

/// One judge's `judge.toml`, as text (its grammar is checked where judges run).
#[derive(Debug, Clone)]
pub struct JudgeFile {
    file: PathBuf,
    mode: WriteMode,
}

impl JudgeFile {
    pub(crate) fn new(dir: PathBuf, mode: WriteMode) -> Self {
        Self {
            file: dir.join(names::JUDGE),
            mode,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// Reads the text; `None` when absent (an invalid judge, not an error of the village).
    pub fn read_text(&self) -> Result<Option<String>, VillageError> {
        doc::read_text(&self.file)
    }

    /// Writes the text atomically.
    pub fn write_text(&self, text: &str) -> Result<(), VillageError> {
        write_text(&self.file, text, self.mode)
    }
}
