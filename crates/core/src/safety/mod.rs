//! The safety layer (docs/formats/audit.jsonl.md): the kill switch (`switch.rs`, one
//! state machine and the one command every channel sends), the `halt` marker on the shelf
//! (`marker.rs`), the sections an abort waits for (`section.rs`), and the hash-chained, keyed audit log (`audit.rs` — the line —, `key.rs` — the
//! key and its marks —, `head.rs` — the recorded heads in `sessions.redb` and on the shelf —,
//! `writer.rs` — group commit, heads, rotation —, `verify.rs` — the first broken line and why).

mod approver;
mod audit;
mod effects;
mod head;
mod key;
mod marker;
mod section;
mod switch;
mod verify;
mod writer;

pub use approver::ApprovedBy;
pub use audit::{AuditEntry, AuditEvent, GENESIS, sha256_hex};
pub use effects::{DryRunEffect, DryRunLog, canonical, side_effect};
pub use head::{AUDIT_HEAD_FILE, RecordedHead, read_session_heads, read_shelf_head};
pub use key::{AUDIT_KEY_BYTES, AuditKey, AuditKeyInvalid};
pub use marker::{
    HALT_MARKER, HaltMarker, clear_halt_marker, halt_marker_path, read_halt_marker,
    write_halt_marker,
};
pub use section::{
    ABORT_WAIT_BOUND, MCP_ABORT_GRACE, RUN_ABORT_GRACE, Section, SectionKind, Sections,
};
pub use switch::{Channel, KillSwitch, SwitchCommand, SwitchState};
pub use verify::{
    AUDIT_FILE, BreakKind, HeadCheck, VerifyError, VerifyOptions, VerifyReport, audit_files,
    verify_chain, verify_keyed,
};
pub use writer::{AuditLog, AuditLogOptions, AuditSetup, DEFAULT_MAX_BYTES};
