//! The safety layer (docs/formats/audit.jsonl.md): the kill switch (`switch.rs`, one
//! state machine and the one command every channel sends), the `halt` marker on the shelf
//! (`marker.rs`), the sections an abort waits for (`section.rs`), and the hash-chained, keyed audit log (`audit.rs` — the line —, `key.rs` — the
//! key and its marks —, `head.rs` — the recorded heads in `sessions.redb` and on the shelf —,
//! `writer.rs` — group commit, heads, rotation —, `verify.rs` — the first broken line and why).
//!
//! # Parts
//!
//! The safety layer (`docs/formats/audit.jsonl.md`):
//!
//! - `switch.rs`: `KillSwitch`: one state machine running / paused / aborting / halted per open
//!   village, moved only by a `SwitchCommand` — `next_state` is the rule —; the gate a turn passes
//!   before **every model call and every tool call** (paused: waits; halted, or the turn cut
//!   meanwhile: nothing starts); the cut token an abort cancels once and re-arms
//! - `section.rs`: `Sections`/`Section`: the sections an abort waits for — a file write, a `run`
//!   child, an MCP call already sent, a paid call's record —, each with its bound after the cut;
//!   abort waits until none is held, 35 s at most, halt waits for nothing; `docs/threat-model.md`
//! - `marker.rs`: the `halt` marker on the shelf, `DATA_DIR/halt`, 0600, atomic: `ask`/`serve`
//!   refuse a marked village with exit 14 until `resume` removes it; any entry under that name
//!   counts
//! - `audit.rs`: the audit line `{seq, tsMs, agent, causalRoot, action, target, argsSha256,
//!   outcome, approvedBy?, prevSha256, sha256, mac?}`: `sha256` is the hash of the line's own text
//!   without that field, `prevSha256` the previous line's, 64 zeros first, `mac` the HMAC-SHA256 of
//!   `sha256` under the audit key (absent when written without one; old logs read), `approvedBy`
//!   who let the effect happen (`approver.rs`, `ApprovedBy`: `person:<surface>`, `rule:run.json`,
//!   `rule:probe_approvals.json`, `rule:schedules.json`, `mode:auto_approve`, `none`; on every line
//!   written now, absent from older lines, which still verify); hashes and names only, never bodies
//! - `key.rs`: `AuditKey`: 32 bytes handed over by the caller — the host's secret store,
//!   `audit_key` —, never read by the core itself; `Debug` hides it; the line's and the head's
//!   marks, compared in constant time
//! - `head.rs`: `RecordedHead {seq, sha256, keyedFrom?, mac?}`, the head as the writer recorded it
//!   in `sessions.redb` — table `audit_head_record`, beside `audit_head` — and on the shelf,
//!   `DATA_DIR/audit-head.json`
//! - `effects.rs`: which tool calls have side effects and their `action`/`target`; `DryRunEffect
//!   {tool, target, argumentsDigest}` — the digest over the canonical arguments —, and `DryRunLog`,
//!   a dry-run request's list
//! - `writer.rs`: `AuditLog`: one writer thread, group commit — one `write` and one fsync per batch
//!   (the lines are durable before any caller is answered), then the head `(seq, sha256)` in
//!   `sessions.redb`'s `audit_head` table with its keyed record, committed non-durably (made
//!   durable at least every second and at close — and then also written atomically to
//!   `DATA_DIR/audit-head.json`: a head can only fall behind the file), then the callers are
//!   answered; a torn tail cut at open; rotation past 16 MiB to `audit-<last seq>.jsonl`, the chain
//!   going on; `AuditSetup` — key and shelf — comes from `OrchestratorConfig::audit`
//! - `audit_error.rs`: `AuditError`, why an append failed (file, operation, io source)
//! - `verify.rs` (`verify_keyed`: the first broken line and why — edited, deleted, reordered,
//!   truncated, malformed, forged (a mark that does not hold), unkeyed (no mark from the first
//!   marked line, or the head's `keyedFrom`, on) —, then the recorded heads — with the key only
//!   those whose mark holds (an unmarked one only where nothing is marked) —: each must match its
//!   line, the highest decides truncated / matches / `ahead`, and lines past it or no head at all
//!   are refused unless `VerifyOptions` accepts them; `verify_chain` is the unkeyed, accepting
//!   form). The orchestrator's side is `orchestrator/safety.rs`: `Orchestrator::control(command,
//!   channel)`, **the one call of every channel** (line `kill switch: command= from= to= channel=`,
//!   event `killSwitchChanged`, audit line): abort = the cut token cancelled and re-armed — each
//!   turn holds the token of its start, so every turn running now ends (its model call cut through
//!   the request's abort token, a read-only tool dropped, a side-effecting tool or MCP call inside
//!   its section let finish up to its bound — a `run` child's group then gets SIGTERM and SIGKILL
//!   after 2 s from its watchdog —, recorded `interrupted`, a cut call's usage unknown; the abort
//!   answers once no section is held, 35 s at most, `abort wait:` line) while an idle agent's next
//!   turn is untouched; a schedule's probe is cut the same way; halt = abort + every turn
//!   interrupted + every agent stopped (2 s grace); a firing waits while paused and is skipped when
//!   halted (`schedule/firing.rs`); and the audit line of each side-effecting tool call, on disk
//!   before the result reaches the model (`outcome` `ok`, `failed`, `dry_run`, `dry_run_failed`);
//!   budget stops and kill-switch changes too. **Dry-run** is a request's mode (`RequestMode
//!   {dry_run}`, given where a request starts: `ask --dry-run`, the GUI chat's Dry-run switch —
//!   `sendMessage {dryRun}` —, the door's `dryRun` argument, a schedule's `dryRun` field;
//!   `Route::dry_run` carries its `DryRunLog` down the whole causal chain, delegations and plan
//!   waves included) or the process's (`set_dry_run`, `serve --dry-run`). Each stopped effect joins
//!   the request's list and is said in a `dryRunEffect` event; `ExternalOutcome::effects` gives the
//!   list to `ask --output json` and the door's structured content. The stop itself is
//!   `ToolContext::would`, the one stop placed right at the side effect of each tool (after its
//!   validation, sandbox and policy checks), answers `dry-run: would …` (the diff for edits, the
//!   argv for `run`); MCP calls stop in `turn/call.rs`. Invariants: no model call or tool call
//!   starts while paused or halted; nothing a dry-run touches changes outside the log, the audit
//!   log and `sessions.redb`.

mod approver;
mod audit;
mod audit_error;
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
pub use audit_error::AuditError;
pub use effects::{DryRunEffect, DryRunLog, canonical, side_effect};
pub use head::{AUDIT_HEAD_FILE, RecordedHead, read_session_heads, read_shelf_head};
pub use key::{AUDIT_KEY_BYTES, AuditKey, AuditKeyInvalid};
pub use marker::{
    HALT_MARKER, HaltMarker, HaltMarkerError, clear_halt_marker, halt_marker_path,
    read_halt_marker, write_halt_marker,
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
