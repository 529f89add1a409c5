//! The village store: reads and writes the files of `data_dir/workspace` (world.json,
//! village_id, Ordinance.md, schedules.json, the shared mcp.json) and hands out the per-agent
//! and per-judge file sets.

use std::path::{Path, PathBuf};

use super::atomic::{self, Permissions, WriteMode};
use super::doc::{self, WhenMissing};
use super::error::{RuleCode, VillageError};
use super::files::{AgentFiles, JudgeFile};
use super::ids::AgentId;
use super::mcp_config::McpConfig;
use super::notice::Loaded;
use super::schedule::Schedules;
use super::world::World;

/// File names inside the workspace.
pub mod names {
    /// The village registry.
    pub const WORLD: &str = "world.json";
    /// The random village identifier.
    pub const VILLAGE_ID: &str = "village_id";
    /// The ordinance.
    pub const ORDINANCE: &str = "Ordinance.md";
    /// Scheduled tasks.
    pub const SCHEDULES: &str = "schedules.json";
    /// Shared MCP servers.
    pub const MCP: &str = "mcp.json";
    /// Per-agent folders.
    pub const AGENTS_DIR: &str = "agents";
    /// Per-judge folders.
    pub const JUDGES_DIR: &str = "judges";
}

/// Reads and writes one village (`data_dir/workspace`). Cheap to clone; holds no open file.
#[derive(Debug, Clone)]
pub struct VillageStore {
    workspace: PathBuf,
    mode: WriteMode,
}

impl VillageStore {
    /// A store for the village at `workspace` (which need not exist yet).
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            mode: WriteMode::Atomic,
        }
    }

    /// A store for a village being written into a staging folder: its writes are plain
    /// ([`WriteMode::Staged`]) until the caller makes the folder durable.
    pub fn staged(workspace: impl Into<PathBuf>) -> Self {
        Self {
            mode: WriteMode::Staged,
            ..Self::new(workspace)
        }
    }

    /// How this store writes: atomically, or plainly into a staging folder.
    pub(crate) fn write_mode(&self) -> WriteMode {
        self.mode
    }

    /// The workspace folder.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Path of a file in the workspace.
    pub fn path(&self, name: &str) -> PathBuf {
        self.workspace.join(name)
    }

    /// True when `world.json` exists (a village lives here).
    pub fn exists(&self) -> bool {
        self.path(names::WORLD).exists()
    }

    /// Reads `world.json`. A missing file is [`VillageError::Missing`].
    pub fn load_world(&self) -> Result<Loaded<World>, VillageError> {
        doc::load(&self.path(names::WORLD), WhenMissing::Fail)
    }

    /// Writes `world.json` atomically, after checking the rules; never over a file that does
    /// not read cleanly.
    pub fn save_world(&self, world: &World) -> Result<(), VillageError> {
        doc::save(&self.path(names::WORLD), world, self.mode)
    }

    /// Creates `world.json`, failing with [`VillageError::AlreadyExists`] if it exists (also
    /// when another process creates it at the same moment).
    pub fn create_world(&self, world: &World) -> Result<(), VillageError> {
        use super::doc::JsonDoc;
        let file = self.path(names::WORLD);
        world.validate_for_write(&file)?;
        let bytes = doc::to_pretty_json(world).map_err(|e| VillageError::write_failed(&file, e))?;
        doc::ensure_parent(&file)?;
        atomic::create_new_atomic(&file, &bytes).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => VillageError::AlreadyExists {
                file: file.clone(),
                data_dir_is_workspace: false,
            },
            _ => VillageError::write_failed(&file, e),
        })
    }

    /// Reads `village_id` without creating it; `None` when absent.
    pub fn read_village_id(&self) -> Result<Option<String>, VillageError> {
        let file = self.path(names::VILLAGE_ID);
        match doc::read_text(&file)? {
            None => Ok(None),
            Some(text) => {
                let id = text.trim();
                if id.is_empty() || id.chars().any(char::is_control) {
                    Err(VillageError::rule(
                        RuleCode::InvalidId,
                        &file,
                        "village_id",
                        "the village id is empty or holds control characters",
                        "restore the file from a backup; a new id would invalidate probe approvals",
                    ))
                } else {
                    Ok(Some(id.to_owned()))
                }
            }
        }
    }

    /// Reads `village_id`, creating a new random one when absent.
    pub fn village_id(&self) -> Result<String, VillageError> {
        if let Some(id) = self.read_village_id()? {
            return Ok(id);
        }
        let file = self.path(names::VILLAGE_ID);
        let id = uuid::Uuid::new_v4().to_string();
        doc::ensure_parent(&file)?;
        match atomic::create_new_atomic(&file, id.as_bytes()) {
            Ok(()) => Ok(id),
            // Someone else created it first: theirs wins.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => self
                .read_village_id()?
                .ok_or_else(|| VillageError::write_failed(&file, e)),
            Err(e) => Err(VillageError::write_failed(&file, e)),
        }
    }

    /// Reads `Ordinance.md` (empty when absent).
    pub fn read_ordinance(&self) -> Result<String, VillageError> {
        Ok(doc::read_text(&self.path(names::ORDINANCE))?.unwrap_or_default())
    }

    /// Writes `Ordinance.md` atomically.
    pub fn write_ordinance(&self, text: &str) -> Result<(), VillageError> {
        write_text(&self.path(names::ORDINANCE), text, self.mode)
    }

    /// Reads `schedules.json` (empty when absent).
    pub fn load_schedules(&self) -> Result<Loaded<Schedules>, VillageError> {
        doc::load(&self.path(names::SCHEDULES), WhenMissing::Default)
    }

    /// Writes `schedules.json` atomically.
    pub fn save_schedules(&self, schedules: &Schedules) -> Result<(), VillageError> {
        doc::save(&self.path(names::SCHEDULES), schedules, self.mode)
    }

    /// Writes `lastConsumedDueMs` of the tasks named (`(id, due)`) into `schedules.json`,
    /// keeping every other field as the file has it (`docs/formats/schedules.json.md`): the
    /// file on disk is read again, must read cleanly (else nothing is written,
    /// [`VillageError::WriteRefused`]), and only that one field of those tasks is set. A field
    /// the read defaults (`enabled`, `createdAtMs`, a probe's `timeoutSecs`) is not added, and a
    /// value it clamps is not replaced. Returns the ids written: a task no longer in the file
    /// (or a file no longer there) is not.
    pub fn record_consumed(&self, dues: &[(&str, i64)]) -> Result<Vec<String>, VillageError> {
        let file = self.path(names::SCHEDULES);
        let text = match doc::read_text(&file) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(Vec::new()),
            Err(e) => return Err(doc::refusal(&file, &e)),
        };
        if let Err(e) = doc::parse_text::<Schedules>(&file, &text) {
            return Err(doc::refusal(&file, &e));
        }
        let mut raw: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| VillageError::write_failed(&file, std::io::Error::other(e)))?;
        let mut written = Vec::new();
        let tasks = raw.as_array_mut().into_iter().flatten();
        for task in tasks.filter_map(serde_json::Value::as_object_mut) {
            let id = task.get("id").and_then(serde_json::Value::as_str);
            if let Some((id, due)) = dues.iter().find(|(d, _)| Some(*d) == id) {
                task.insert("lastConsumedDueMs".to_owned(), (*due).into());
                written.push((*id).to_owned());
            }
        }
        if written.is_empty() {
            return Ok(written);
        }
        let bytes = doc::to_pretty_json(&raw).map_err(|e| VillageError::write_failed(&file, e))?;
        atomic::write_as(self.mode, &file, &bytes, Permissions::KeepExisting)
            .map_err(|e| VillageError::write_failed(&file, e))?;
        Ok(written)
    }

    /// Reads the shared `mcp.json` (no servers when absent).
    pub fn load_shared_mcp(&self) -> Result<Loaded<McpConfig>, VillageError> {
        doc::load(&self.path(names::MCP), WhenMissing::Default)
    }

    /// Writes the shared `mcp.json` atomically (owner-only permissions: it may hold secrets).
    pub fn save_shared_mcp(&self, config: &McpConfig) -> Result<(), VillageError> {
        doc::save(&self.path(names::MCP), config, self.mode)
    }

    /// The files of one agent (`agents/<id>/`).
    pub fn agent_files(&self, id: &AgentId) -> Result<AgentFiles, VillageError> {
        let folder = self.path(names::AGENTS_DIR);
        checked_folder(&folder, id).map(|dir| AgentFiles::new(dir, self.mode))
    }

    /// The `judge.toml` of one judge (`judges/<id>/judge.toml`).
    pub fn judge_file(&self, id: &AgentId) -> Result<JudgeFile, VillageError> {
        let folder = self.path(names::JUDGES_DIR);
        checked_folder(&folder, id).map(|dir| JudgeFile::new(dir, self.mode))
    }
}

fn checked_folder(parent: &Path, id: &AgentId) -> Result<PathBuf, VillageError> {
    if id.is_safe() {
        Ok(parent.join(id.as_str()))
    } else {
        Err(VillageError::rule(
            RuleCode::InvalidId,
            parent,
            "id",
            format!("{:?} is not a safe identifier", id.as_str()),
            "use 1-64 characters from A-Z a-z 0-9 _ -",
        ))
    }
}

/// Writes a text file as `mode` says (atomically unless staged), creating its folder; never
/// over a file that is not readable text.
pub(crate) fn write_text(file: &Path, text: &str, mode: WriteMode) -> Result<(), VillageError> {
    if let Err(e) = doc::read_text(file) {
        return Err(doc::refusal(file, &e));
    }
    write_bytes(file, text.as_bytes(), mode)
}

/// Writes a file as `mode` says (atomically unless staged), creating its folder.
pub(crate) fn write_bytes(file: &Path, bytes: &[u8], mode: WriteMode) -> Result<(), VillageError> {
    doc::ensure_parent(file)?;
    atomic::write_as(mode, file, bytes, Permissions::KeepExisting)
        .map_err(|e| VillageError::write_failed(file, e))
}
