//! Schedule probes (docs/formats/schedules.json.md, docs/formats/probe_approvals.json.md): a
//! command run before a firing (pre-check) or after it (acceptance), whose first stdout line,
//! trimmed, must equal `expect`.
//!
//! - `runner.rs`: [`run_probe`] (checks the approval on this machine, then runs) and
//!   [`execute_probe`] (runs without the check: for a command the person typed, `ask
//!   --accept`). No shell; `cwd` defaults to the workspace; the environment is cleared like the
//!   `run` tool's (`PATH`, and `TMPDIR` at a temp folder of the call); its own process group,
//!   ended on the timeout; Landlock where `run` uses it; output bounded. Every way it can go
//!   wrong is an [`Outcome`] with a reason, never a panic.
//! - `approval.rs`: the approvals of `probe_approvals.json` — [`approval_state`] and
//!   [`approve_probe`], **the only writer** of that file (the CLI's `schedules approve` today,
//!   the GUI and `bake` later).

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
