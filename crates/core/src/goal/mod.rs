//! Goal loops for one-off requests: a request,
//! then an acceptance command the person typed, re-sending the request with the command's
//! output while it does not match, up to `maxAttempts`, all within one causal budget.
//!
//! - `run.rs`: [`run_goal`], the loop (the request to the reception in the current
//!   conversation, [`crate::probe::execute_probe`] after each answer, the follow-up wording).
//! - `journal.rs`: the goal id and the append-only `workspace/goals/<goal-id>.jsonl` (one line
//!   per attempt: `goalSha256`, `attempt`, `outcome`, `excerptChars`, `tsMs`; folder 0700).

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
