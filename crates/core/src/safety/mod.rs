//! The safety layer (issue 15, seed 002 §3): the kill switch (`switch.rs`, one state machine
//! and the one command every channel sends), the `halt` marker on the shelf (`marker.rs`), and
//! the hash-chained audit log (`audit.rs` — the line —, `writer.rs` — group commit, head in
//! `sessions.redb`, rotation —, `verify.rs` — the first broken line and why).

mod audit;
mod effects;
mod marker;
mod switch;
mod verify;
mod writer;

pub use audit::{AuditEntry, AuditEvent, GENESIS, sha256_hex};
pub use effects::side_effect;
pub use marker::{
    HALT_MARKER, HaltMarker, clear_halt_marker, halt_marker_path, read_halt_marker,
    write_halt_marker,
};
pub use switch::{Channel, KillSwitch, SwitchCommand, SwitchState};
pub use verify::{
    AUDIT_FILE, BreakKind, HeadCheck, VerifyError, VerifyReport, audit_files, verify_chain,
};
pub use writer::{AuditLog, DEFAULT_MAX_BYTES};
