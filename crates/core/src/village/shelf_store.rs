//! The shelf store: reads and writes the per-machine files in `data_dir` (outside the
//! village). Absent files read as their defaults; `bake.json` exists only in a bake copy.

use std::path::{Path, PathBuf};

use super::atomic::WriteMode;
use super::doc::{self, WhenMissing};
use super::error::VillageError;
use super::notice::Loaded;
use super::shelf::{BakeRecord, DoorSettings, JevSettings, PricingSource, ProbeApprovals};

/// File names on the shelf.
pub mod names {
    /// Door settings.
    pub const DOOR: &str = "mcp_server.json";
    /// Probe approvals.
    pub const PROBE_APPROVALS: &str = "probe_approvals.json";
    /// Price-table source.
    pub const PRICING: &str = "pricing.json";
    /// Jev settings.
    pub const JEV: &str = "jev.json";
    /// Bake record.
    pub const BAKE: &str = "bake.json";
    /// The village folder inside `data_dir`.
    pub const WORKSPACE: &str = "workspace";
}

/// Reads and writes the shelf files of one `data_dir`.
#[derive(Debug, Clone)]
pub struct ShelfStore {
    data_dir: PathBuf,
    mode: WriteMode,
}

impl ShelfStore {
    /// A store for the shelf in `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            mode: WriteMode::Atomic,
        }
    }

    /// A store for a shelf being written into a staging folder: its writes are plain
    /// ([`WriteMode::Staged`]) until the caller makes the folder durable.
    pub fn staged(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            mode: WriteMode::Staged,
            ..Self::new(data_dir)
        }
    }

    /// The shelf folder.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Path of a shelf file.
    pub fn path(&self, name: &str) -> PathBuf {
        self.data_dir.join(name)
    }

    /// Reads `mcp_server.json`.
    pub fn load_door(&self) -> Result<Loaded<DoorSettings>, VillageError> {
        doc::load(&self.path(names::DOOR), WhenMissing::Default)
    }

    /// Writes `mcp_server.json` (owner-only permissions: it holds the token).
    pub fn save_door(&self, settings: &DoorSettings) -> Result<(), VillageError> {
        doc::save(&self.path(names::DOOR), settings, self.mode)
    }

    /// Reads `probe_approvals.json`.
    pub fn load_probe_approvals(&self) -> Result<Loaded<ProbeApprovals>, VillageError> {
        doc::load(&self.path(names::PROBE_APPROVALS), WhenMissing::Default)
    }

    /// Writes `probe_approvals.json`.
    pub fn save_probe_approvals(&self, approvals: &ProbeApprovals) -> Result<(), VillageError> {
        doc::save(&self.path(names::PROBE_APPROVALS), approvals, self.mode)
    }

    /// Reads `pricing.json`.
    pub fn load_pricing_source(&self) -> Result<Loaded<PricingSource>, VillageError> {
        doc::load(&self.path(names::PRICING), WhenMissing::Default)
    }

    /// Writes `pricing.json`.
    pub fn save_pricing_source(&self, source: &PricingSource) -> Result<(), VillageError> {
        doc::save(&self.path(names::PRICING), source, self.mode)
    }

    /// Reads `jev.json`.
    pub fn load_jev(&self) -> Result<Loaded<JevSettings>, VillageError> {
        doc::load(&self.path(names::JEV), WhenMissing::Default)
    }

    /// Writes `jev.json`.
    pub fn save_jev(&self, settings: &JevSettings) -> Result<(), VillageError> {
        doc::save(&self.path(names::JEV), settings, self.mode)
    }

    /// Whether `bake.json` is a file here: the shelf of a bake copy (read nothing else).
    pub fn is_bake_copy(&self) -> bool {
        self.path(names::BAKE).is_file()
    }

    /// Reads `bake.json`; `None` when this is not a bake copy.
    pub fn load_bake_record(&self) -> Result<Option<Loaded<BakeRecord>>, VillageError> {
        let file = self.path(names::BAKE);
        match doc::load::<BakeRecord>(&file, WhenMissing::Fail) {
            Ok(loaded) => Ok(Some(loaded)),
            Err(VillageError::Missing { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes `bake.json`.
    pub fn save_bake_record(&self, record: &BakeRecord) -> Result<(), VillageError> {
        doc::save(&self.path(names::BAKE), record, self.mode)
    }
}
