//! The switches a person sets for this process only (memory, never a file): the
//! command-approval mode and whether plan waves skip review, under one lock.

use std::sync::Mutex;

use crate::sync::LockOrRecover;
use crate::tools::RunApproval;

#[derive(Clone, Copy, Default)]
struct Switches {
    approval: RunApproval,
    plan_bypass: bool,
}

/// The in-memory modes (approval starts `Required`, plan review on).
#[derive(Default)]
pub(super) struct Modes(Mutex<Switches>);

impl Modes {
    /// The command-approval mode.
    pub(super) fn approval(&self) -> RunApproval {
        self.0.lock_or_recover().approval
    }

    /// Sets the command-approval mode; returns the one it replaced.
    pub(super) fn set_approval(&self, mode: RunApproval) -> RunApproval {
        std::mem::replace(&mut self.0.lock_or_recover().approval, mode)
    }

    /// Whether plan waves skip review (the process-wide switch).
    pub(super) fn plan_bypass(&self) -> bool {
        self.0.lock_or_recover().plan_bypass
    }

    pub(super) fn set_plan_bypass(&self, enabled: bool) {
        self.0.lock_or_recover().plan_bypass = enabled;
    }
}
