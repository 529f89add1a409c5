//! Goal loops for one-off requests: a request,
//! then an acceptance command the person typed, re-sending the request with the command's
//! output while it does not match, up to `maxAttempts`, all within one causal budget.
//!
//! # Parts
//!
//! `goal/` — goal loops for one-off requests, for `ask --accept` now and the GUI later: `run.rs`
//! (`run_goal`: each attempt a request to the reception in the current conversation through the
//! crate-private `Orchestrator::deliver`, all under **one** `CausalBudget`, waiting
//! `askTimeoutSecs`; then `probe::execute_probe` in the workspace; `no_match` re-sends the request
//! with the excerpt in fixed ja/en wording, `error`/`timeout` end it, a turn without an answer ends
//! it unchecked; the `goal:` log line; a callback per attempt for the surface), `journal.rs` (the
//! goal id `<tsMs>-<hash8>-<rand6>`, `workspace/goals/<id>.jsonl` created new in a 0700 folder, one
//! fsynced line per attempt `{goalSha256, attempt, outcome, excerptChars, tsMs}`). Invariants: the
//! goals log never holds the request or the output (hash and counts only); the loop never reports
//! reached unless the check matched. Unlike `ask_external`, it does not take the orchestrator's
//! one-outside-request-at-a-time gate (the CLI sends one request; a GUI calling it beside the door
//! should add the gate to the orchestrator's API).

mod journal;
mod run;

pub use journal::{GOALS_DIR, GoalError, GoalLine, goal_sha256};
pub use run::{AttemptReport, GoalOutcome, GoalRequest, GoalSpec, GoalVerdict, run_goal};

/// The fewest attempts.
pub const MIN_ATTEMPTS: u8 = 1;
/// The most attempts.
pub const MAX_ATTEMPTS: u8 = 5;
/// Attempts when none are given.
pub const DEFAULT_ATTEMPTS: u8 = 2;
/// The acceptance command's timeout when none is given (a schedule probe's default).
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
