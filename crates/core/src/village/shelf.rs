//! The shelf: per-machine files in `data_dir`, deliberately outside the village
//! (`mcp_server.json`, `probe_approvals.json`, `pricing.json`, `jev.json`, `bake.json`).
//! [`DoorSettings`] and [`BakeRecord`] are host concepts kept here as shelf data only: core
//! reads and writes them as files (with the same notices, atomic writes and owner-only modes as
//! every shelf file) and never acts on them; the door and the bake live in the host.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Extra;
use super::doc::JsonDoc;
use super::error::{RuleCode, VillageError};
use super::notice::{Notes, NoticeCode};

/// The door's default port.
pub const DEFAULT_DOOR_PORT: u16 = 39641;

/// `mcp_server.json`: the door (the village's own MCP server). Holds the bearer token, so it is
/// written readable by the owner only.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DoorSettings {
    /// Open the door at start.
    #[serde(default)]
    pub enabled: bool,
    /// Port on 127.0.0.1.
    #[serde(default = "default_door_port")]
    pub port: u16,
    /// Bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for DoorSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            port: DEFAULT_DOOR_PORT,
            token: None,
            extra: Extra::new(),
        }
    }
}

impl fmt::Debug for DoorSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DoorSettings")
            .field("enabled", &self.enabled)
            .field("port", &self.port)
            .field("token", &self.token.as_ref().map(|_| "<hidden>"))
            .field("extra_keys", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl JsonDoc for DoorSettings {
    const MAY_HOLD_SECRETS: bool = true;
}

/// `probe_approvals.json`: SHA-256 keys of the probes a human approved on this machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeApprovals {
    /// Lower-case hex SHA-256 keys.
    #[serde(default)]
    pub hashes: Vec<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl JsonDoc for ProbeApprovals {
    /// Not a secret, but the trust list of this machine: written owner-only (0600).
    const MAY_HOLD_SECRETS: bool = true;

    fn validate(&self, file: &Path) -> Result<(), VillageError> {
        for (i, hash) in self.hashes.iter().enumerate() {
            let ok = hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit());
            if !ok {
                return Err(VillageError::rule(
                    RuleCode::InvalidValue,
                    file,
                    format!("hashes[{i}]"),
                    "not a SHA-256 key (64 hex digits)",
                    "remove the entry and approve the probe again",
                ));
            }
        }
        Ok(())
    }
}

/// The default price-table source.
pub const DEFAULT_PRICING_URL: &str = "https://betyourluck.github.io/prices.json";

/// `pricing.json`: where the price table is fetched from (https, or http to this machine).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PricingSource {
    /// The price table's URL.
    #[serde(default = "default_pricing_url")]
    pub url: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for PricingSource {
    fn default() -> Self {
        Self {
            url: DEFAULT_PRICING_URL.to_owned(),
            extra: Extra::new(),
        }
    }
}

impl JsonDoc for PricingSource {
    /// https, or plain http to this machine (the endpoint rule of `template.rs`, so that a
    /// table can be served locally); see docs/formats/prices.json.md.
    fn validate(&self, file: &Path) -> Result<(), VillageError> {
        match crate::endpoint_rule::endpoint_security(&self.url, false) {
            Ok(_) => Ok(()),
            Err(_) => Err(VillageError::rule(
                RuleCode::InvalidValue,
                file,
                "url",
                "the price table must be fetched over https (plain http only to this machine)",
                format!(
                    "use an https:// URL, or remove the file for the default {DEFAULT_PRICING_URL}"
                ),
            )),
        }
    }
}

/// The thresholds Jev pruning accepts.
pub(crate) const JEV_THRESHOLDS: [f64; 4] = [0.1, 0.2, 0.3, 0.5];
/// The default Jev threshold.
pub(crate) const DEFAULT_JEV_THRESHOLD: f64 = 0.2;

/// `jev.json`: Jev (Cloudflare Workers AI) settings; the token itself is a secret
/// (`jev_api_token`), not in this file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JevSettings {
    /// Tool-result pruning switched on.
    #[serde(default)]
    pub enabled: bool,
    /// Cloudflare account id.
    #[serde(default)]
    pub account_id: String,
    /// Pruning threshold (0.1, 0.2, 0.3 or 0.5).
    #[serde(default = "default_threshold")]
    pub threshold: f64,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for JevSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            account_id: String::new(),
            threshold: DEFAULT_JEV_THRESHOLD,
            extra: Extra::new(),
        }
    }
}

impl JsonDoc for JevSettings {
    fn normalize(&mut self, notes: &mut Notes<'_>) {
        if !JEV_THRESHOLDS.contains(&self.threshold) {
            notes.add(
                NoticeCode::ValueDefaulted,
                "threshold",
                format!(
                    "{} is not one of 0.1, 0.2, 0.3, 0.5; using 0.2",
                    self.threshold
                ),
            );
            self.threshold = DEFAULT_JEV_THRESHOLD;
        }
    }

    fn validate_for_write(&self, file: &Path) -> Result<(), VillageError> {
        if JEV_THRESHOLDS.contains(&self.threshold) {
            Ok(())
        } else {
            Err(VillageError::rule(
                RuleCode::InvalidValue,
                file,
                "threshold",
                format!("{} is not an allowed threshold", self.threshold),
                "use 0.1, 0.2, 0.3 or 0.5",
            ))
        }
    }
}

/// `bake.json`: written only in a bake copy; records where the copy came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BakeRecord {
    /// When the copy was made, ms since the epoch.
    #[serde(default)]
    pub baked_at_ms: i64,
    /// Version of the binary that baked it.
    #[serde(default)]
    pub app_version: String,
    /// `village_id` of the source village.
    #[serde(default)]
    pub source_village_id: String,
    /// IANA time zone of the source machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_time_zone: Option<String>,
    /// Path maps applied (longest prefix first).
    #[serde(default)]
    pub maps: Vec<PathMap>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One `--map FROM=TO`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathMap {
    /// Source prefix.
    pub from: String,
    /// Target prefix.
    pub to: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl JsonDoc for BakeRecord {}

fn default_door_port() -> u16 {
    DEFAULT_DOOR_PORT
}
fn default_pricing_url() -> String {
    DEFAULT_PRICING_URL.to_owned()
}
fn default_threshold() -> f64 {
    DEFAULT_JEV_THRESHOLD
}
