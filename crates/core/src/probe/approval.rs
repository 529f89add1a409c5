//! Probe approvals on this machine (`probe_approvals.json` on the shelf; key =
//! [`probe_key`]). [`approve_probe`] is the one writer: the CLI's `schedules approve`, and
//! `bake`, which re-keys a copy's approvals through [`approve_probes`].

use sha2::{Digest, Sha256};

use crate::village::{ScheduleProbe, ShelfStore, VillageError};

/// The SHA-256 key of a probe approval: canonical JSON `{args, command, cwd, villageId}`.
pub fn probe_key(probe: &ScheduleProbe, village_id: &str) -> String {
    let canonical = serde_json::json!({"args": probe.args, "command": probe.command, "cwd": probe.cwd, "villageId": village_id});
    // serde_json (preserve_order) keeps the order written above, which is the sorted order.
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a probe may run on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalState {
    /// Its key is in `probe_approvals.json`.
    Approved,
    /// It is not (or the file is absent).
    Unapproved,
    /// `probe_approvals.json` does not read (its error code): nothing counts as approved.
    Unreadable(&'static str),
}

impl ApprovalState {
    /// `approved`, `unapproved` or `unreadable` (for listings and JSON).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::Unapproved => "unapproved",
            Self::Unreadable(_) => "unreadable",
        }
    }
}

/// Whether `probe` of the village `village_id` is approved on the shelf.
pub fn approval_state(
    shelf: &ShelfStore,
    probe: &ScheduleProbe,
    village_id: &str,
) -> ApprovalState {
    match shelf.load_probe_approvals() {
        Ok(loaded) if loaded.value.hashes.contains(&probe_key(probe, village_id)) => {
            ApprovalState::Approved
        }
        Ok(_) => ApprovalState::Unapproved,
        Err(e) => ApprovalState::Unreadable(e.code()),
    }
}

/// What [`approve_probe`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalWrite {
    /// The approval key (SHA-256 hex).
    pub key: String,
    /// It was approved already; the file was not written.
    pub already: bool,
}

/// Approves `probe` of the village `village_id` on this machine: adds its key to
/// `probe_approvals.json`, written atomically, owner-only (0600), unknown fields kept. A file
/// that does not read is never written over (its error is returned). The only writer of
/// approvals: call it only on a human's decision (or `bake`'s carrying of one).
pub fn approve_probe(
    shelf: &ShelfStore,
    probe: &ScheduleProbe,
    village_id: &str,
) -> Result<ApprovalWrite, VillageError> {
    let mut written = approve_probes(shelf, std::slice::from_ref(probe), village_id)?;
    Ok(written.remove(0))
}

/// [`approve_probe`] for several probes of one village at once: one read and at most one
/// write of `probe_approvals.json` (`bake` carries a village's approvals this way). One
/// [`ApprovalWrite`] per probe, in order; a key given twice is `already` the second time.
pub fn approve_probes(
    shelf: &ShelfStore,
    probes: &[ScheduleProbe],
    village_id: &str,
) -> Result<Vec<ApprovalWrite>, VillageError> {
    let mut approvals = shelf.load_probe_approvals()?.value;
    let mut written = Vec::with_capacity(probes.len());
    for probe in probes {
        let key = probe_key(probe, village_id);
        let already = approvals.hashes.contains(&key);
        if !already {
            approvals.hashes.push(key.clone());
        }
        written.push(ApprovalWrite { key, already });
    }
    if written.iter().any(|w| !w.already) {
        shelf.save_probe_approvals(&approvals)?;
    }
    Ok(written)
}
