//! Schedule probes (docs/formats/schedules.json.md, docs/formats/probe_approvals.json.md): a
//! command run before a firing (pre-check) or after it (acceptance), whose first stdout line,
//! trimmed, must equal `expect`.
//!
//! # Parts
//!
//! Schedule probes (`docs/formats/schedules.json.md`):
//!
//! - `runner.rs`: `run_probe`: the approval check, then the command without a shell through
//!   `process/` — own group ended on the timeout, the `run` tool's environment and Landlock rules
//!   (`tools/run.rs`' `confinement`, `CallTemp`, `read_capped`), stdout bounded; the first line
//!   trimmed against `expect`; `execute_probe` without the check, for a command the person typed
//! - `approval.rs`: `approval_state`, and `approve_probe`, **the one writer** of
//!   `probe_approvals.json`: 0600, atomic, unknown fields kept — the CLI's `schedules approve` and
//!   `bake`
//! - `mod.rs` (`Outcome` `match|no_match|error|timeout|unapproved`, `Report` with its reason, extra
//!   lines and excerpt). Invariant: a probe that is not approved on this machine never starts; no
//!   outcome is a panic.

pub(crate) mod approval;
mod plain;
mod runner;

pub use approval::{ApprovalState, ApprovalWrite, approval_state, approve_probe, approve_probes};
pub use plain::plain_cwd;
pub use runner::{
    EXCERPT_MAX_CHARS, EXTRA_MAX_CHARS, EXTRA_MAX_LINES, ProbeContext, execute_probe, run_probe,
};

/// How a probe ended (the original's spellings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The first stdout line, trimmed, equals `expect`.
    Match,
    /// It ran and printed something else (or nothing).
    NoMatch,
    /// It could not run (command not found, cwd missing, sandbox, …).
    Error,
    /// It ran past `timeoutSecs`; its process group was ended.
    Timeout,
    /// It is not approved on this machine; nothing ran.
    Unapproved,
}

impl Outcome {
    /// The spelling in log lines and JSON (`match`, `no_match`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Match => "match",
            Self::NoMatch => "no_match",
            Self::Error => "error",
            Self::Timeout => "timeout",
            Self::Unapproved => "unapproved",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one probe run gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// How it ended.
    pub outcome: Outcome,
    /// Why, in a few words (the spawn failure's class, the exit status, the timeout); never
    /// the output itself, so it may go to a log line.
    pub reason: String,
    /// The first stdout line, trimmed (`None` when it did not run or printed nothing).
    pub first_line: Option<String>,
    /// The stdout lines after the first, for appending to the request: at most
    /// [`EXTRA_MAX_LINES`] lines and [`EXTRA_MAX_CHARS`] characters in all.
    pub extra_lines: Vec<String>,
    /// Whether lines or characters were left out of `extra_lines`.
    pub extra_truncated: bool,
    /// The exit code, when it exited by itself (ignored by the comparison).
    pub exit_code: Option<i32>,
}

impl Report {
    /// A report of a probe that did not run.
    pub(crate) fn without_run(outcome: Outcome, reason: impl Into<String>) -> Self {
        Self {
            outcome,
            reason: reason.into(),
            first_line: None,
            extra_lines: Vec::new(),
            extra_truncated: false,
            exit_code: None,
        }
    }

    /// The text to append to a request (the extra lines, one per line); `None` when there are
    /// none.
    pub fn appended_text(&self) -> Option<String> {
        (!self.extra_lines.is_empty()).then(|| {
            let mut text = self.extra_lines.join("\n");
            if self.extra_truncated {
                text.push_str("\n… [more output left out]");
            }
            text
        })
    }

    /// The output excerpt an acceptance retry sends back (first line and extra lines), at most
    /// [`EXCERPT_MAX_CHARS`] characters.
    pub fn excerpt(&self) -> String {
        let mut lines: Vec<&str> = self.first_line.iter().map(String::as_str).collect();
        lines.extend(self.extra_lines.iter().map(String::as_str));
        crate::tools::cap_chars(lines.join("\n"), EXCERPT_MAX_CHARS)
    }
}
