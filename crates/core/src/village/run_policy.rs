//! `agents/<id>/run.json`: the command policy of the `run` tool (allow / deny / pending), with
//! the original's fail-closed default and read rules.

use serde::{Deserialize, Serialize};

use super::Extra;
use super::doc::JsonDoc;
use super::notice::{Notes, NoticeCode};

/// The most pending requests kept; older ones are evicted.
pub(crate) const MAX_PENDING: usize = 20;
/// The default command timeout, in seconds.
pub(crate) const DEFAULT_RUN_TIMEOUT_SECS: u64 = 60;

/// A command policy. A missing file reads as the default: nothing allowed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandPolicy {
    /// Format version (1).
    #[serde(default = "one")]
    pub version: u32,
    /// Allowed patterns (argv tokens; a trailing `*` = any remaining args).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Denied patterns (deny wins).
    #[serde(default)]
    pub deny: Vec<String>,
    /// Refused unknown commands waiting for a human.
    #[serde(default)]
    pub pending: Vec<PendingCommand>,
    /// Timeout of every command, 1..=3600 s.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// `false` refuses the commands TCP connect and bind (Landlock, Linux 6.7+); absent or
    /// `true`: the network is open. Written only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl Default for CommandPolicy {
    fn default() -> Self {
        Self {
            version: 1,
            allow: Vec::new(),
            deny: Vec::new(),
            pending: Vec::new(),
            timeout_secs: DEFAULT_RUN_TIMEOUT_SECS,
            network: None,
            extra: Extra::new(),
        }
    }
}

/// A refused command waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingCommand {
    /// Program.
    pub command: String,
    /// Arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// First request, ms since the epoch.
    #[serde(default)]
    pub first_requested_at_ms: i64,
    /// How often it was requested.
    #[serde(default)]
    pub count: u32,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl JsonDoc for CommandPolicy {
    fn normalize(&mut self, notes: &mut Notes<'_>) {
        let clamped = self.timeout_secs.clamp(1, 3600);
        if clamped != self.timeout_secs {
            notes.add(
                NoticeCode::ValueClamped,
                "timeoutSecs",
                format!("{} is outside 1..=3600; using {clamped}", self.timeout_secs),
            );
            self.timeout_secs = clamped;
        }
        if self.pending.len() > MAX_PENDING {
            let dropped = self.pending.len() - MAX_PENDING;
            // Oldest first, so the newest MAX_PENDING stay (stable for equal times).
            self.pending.sort_by_key(|p| p.first_requested_at_ms);
            self.pending.drain(..dropped);
            notes.add(
                NoticeCode::ListTrimmed,
                "pending",
                format!(
                    "more than {MAX_PENDING} pending requests; the {dropped} oldest were dropped"
                ),
            );
        }
    }
}

fn one() -> u32 {
    1
}
fn default_timeout() -> u64 {
    DEFAULT_RUN_TIMEOUT_SECS
}
