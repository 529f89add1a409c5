//! What the village keeps in memory only, each board behind its own short lock (none is held
//! while another is taken): the public square, the plan waves, the questions waiting for the
//! person, the last tool calls, the running causal roots, and the judges already said to be
//! unavailable.

use std::collections::HashSet;
use std::sync::Mutex;

use super::plan::PlanBook;
use super::question::Waiting;
use super::square::Square;
use super::watch::{Roots, ToolRing};
use crate::sync::LockOrRecover;

/// The memory-only boards.
#[derive(Default)]
pub(super) struct Memory {
    pub square: Square,
    pub plans: PlanBook,
    /// The GUI's questions (`ask_user`) waiting for the person.
    pub waiting: Waiting,
    /// The last tool calls' details.
    pub tool_ring: ToolRing,
    /// The causal roots of the deliveries made (weak: running while held).
    pub roots: Roots,
    pub judge_notes: JudgeNotes,
}

/// Judges already named in a `judge disabled:` line (id and reason), so it is said once.
#[derive(Default)]
pub(super) struct JudgeNotes(Mutex<HashSet<String>>);

impl JudgeNotes {
    /// True the first time a judge is unavailable for `why`.
    pub(super) fn first(&self, judge: &str, why: &str) -> bool {
        self.0
            .lock_or_recover()
            .insert(format!("{judge}\u{0}{why}"))
    }
}
