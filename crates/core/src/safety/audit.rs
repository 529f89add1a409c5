//! The audit log's line (`workspace/audit.jsonl`): one JSON object per side effect and per
//! safety event, `{seq, tsMs, agent, causalRoot, action, target, argsSha256, outcome,
//! approvedBy?, prevSha256, sha256, mac?}`, hash-chained — `sha256` is the SHA-256 of the line's own text up
//! to (without) the `sha256` field, and `prevSha256` is the previous line's `sha256` (64 zeros
//! for the first line of the village) — and keyed: `mac`, when the writer has the key, is the
//! HMAC-SHA256 of the `sha256` under the [`AuditKey`] (absent in lines written without one,
//! so that old logs still read). `approvedBy` (who let the effect happen, [`ApprovedBy`]) is
//! on every line written now and absent from lines written before it existed: an absent field
//! is not in the hashed text, so those lines still verify. No bodies, no secrets: hashes, names and counts.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::approver::ApprovedBy;
use super::key::AuditKey;

/// The `prevSha256` of the first line.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// The most characters of a target (longer ones are cut, with `…`).
const MAX_TARGET_CHARS: usize = 512;

/// What a caller records (the writer adds seq, time and the chain).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEvent {
    /// The agent (or `-` for the process itself, e.g. a kill-switch change).
    pub agent: String,
    /// The causal root the side effect belongs to (`-` when none).
    pub causal_root: String,
    /// What happened: `file_write`, `run`, `mcp_call`, `kill_switch`, …
    pub action: String,
    /// On what: a path in the work folder, a command name, `server/tool`, a state.
    pub target: String,
    /// The SHA-256 of the arguments (never the arguments themselves).
    pub args_sha256: String,
    /// How it ended: `ok`, `failed`, `dry_run`, `cut`, or the change's channel.
    pub outcome: String,
    /// Who let it happen (`none` unless said).
    pub approved_by: ApprovedBy,
}

impl AuditEvent {
    /// An event with the arguments hashed.
    pub fn new(agent: &str, causal_root: &str, action: &str, target: &str, args: &[u8]) -> Self {
        Self {
            agent: agent.to_owned(),
            causal_root: causal_root.to_owned(),
            action: action.to_owned(),
            target: cut_target(target),
            args_sha256: sha256_hex(args),
            outcome: "ok".to_owned(),
            approved_by: ApprovedBy::Nobody,
        }
    }

    /// The same event with who approved it.
    #[must_use]
    pub fn approved_by(mut self, by: ApprovedBy) -> Self {
        self.approved_by = by;
        self
    }

    /// The same event with another outcome.
    #[must_use]
    pub fn with_outcome(mut self, outcome: &str) -> Self {
        outcome.clone_into(&mut self.outcome);
        self
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditEntry {
    /// Position in the chain, from 1, across rotated files.
    pub seq: u64,
    /// When it was written (ms since the epoch).
    pub ts_ms: i64,
    /// See [`AuditEvent`].
    pub agent: String,
    /// See [`AuditEvent`].
    pub causal_root: String,
    /// See [`AuditEvent`].
    pub action: String,
    /// See [`AuditEvent`].
    pub target: String,
    /// See [`AuditEvent`].
    pub args_sha256: String,
    /// See [`AuditEvent`].
    pub outcome: String,
    /// Who let it happen (absent on lines written before the field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// The previous line's `sha256`.
    pub prev_sha256: String,
    /// The SHA-256 of this line's text without this field.
    pub sha256: String,
    /// The HMAC-SHA256 of `sha256` under the audit key (none when written without the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

/// The body a line's hash covers: every field but `sha256`, in order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    seq: u64,
    ts_ms: i64,
    agent: &'a str,
    causal_root: &'a str,
    action: &'a str,
    target: &'a str,
    args_sha256: &'a str,
    outcome: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    approved_by: Option<&'a str>,
    prev_sha256: &'a str,
}

impl AuditEntry {
    /// Chains an event after `prev` (seq and hash of the line before).
    pub fn chain(event: AuditEvent, seq: u64, ts_ms: i64, prev_sha256: &str) -> Self {
        let mut entry = Self {
            seq,
            ts_ms,
            agent: event.agent,
            causal_root: event.causal_root,
            action: event.action,
            target: event.target,
            args_sha256: event.args_sha256,
            outcome: event.outcome,
            approved_by: Some(event.approved_by.as_str().to_owned()),
            prev_sha256: prev_sha256.to_owned(),
            sha256: String::new(),
            mac: None,
        };
        entry.sha256 = sha256_hex(entry.body().as_bytes());
        entry
    }

    /// The same line marked with `key`.
    #[must_use]
    pub fn sign(mut self, key: &AuditKey) -> Self {
        self.mac = Some(key.line_mac(&self.sha256));
        self
    }

    fn body(&self) -> String {
        serde_json::to_string(&Body {
            seq: self.seq,
            ts_ms: self.ts_ms,
            agent: &self.agent,
            causal_root: &self.causal_root,
            action: &self.action,
            target: &self.target,
            args_sha256: &self.args_sha256,
            outcome: &self.outcome,
            approved_by: self.approved_by.as_deref(),
            prev_sha256: &self.prev_sha256,
        })
        .unwrap_or_default()
    }

    /// Chains `event` after `prev` straight into `out` (the line and its newline, the body
    /// serialised once, marked when `key` is given) and returns the line's hash: the writer's
    /// hot path, same text as `chain(..).sign(key).line()`.
    pub(crate) fn push_line(
        event: &AuditEvent,
        seq: u64,
        ts_ms: i64,
        prev_sha256: &str,
        key: Option<&AuditKey>,
        out: &mut Vec<u8>,
    ) -> String {
        let start = out.len();
        let body = Body {
            seq,
            ts_ms,
            agent: &event.agent,
            causal_root: &event.causal_root,
            action: &event.action,
            target: &event.target,
            args_sha256: &event.args_sha256,
            outcome: &event.outcome,
            approved_by: Some(event.approved_by.as_str()),
            prev_sha256,
        };
        if serde_json::to_writer(&mut *out, &body).is_err() {
            out.truncate(start);
            out.extend_from_slice(b"{}");
        }
        let hash = hex_digest(&out[start..]);
        let hash: String = hash.iter().map(|b| char::from(*b)).collect();
        out.pop();
        out.extend_from_slice(b",\"sha256\":\"");
        out.extend_from_slice(hash.as_bytes());
        if let Some(key) = key {
            out.extend_from_slice(b"\",\"mac\":\"");
            out.extend_from_slice(key.line_mac(&hash).as_bytes());
        }
        out.extend_from_slice(b"\"}\n");
        hash
    }

    /// The line's text (without the newline): the body with `sha256` (and `mac`) appended.
    pub fn line(&self) -> String {
        let mut body = self.body();
        body.pop();
        match &self.mac {
            None => format!("{body},\"sha256\":\"{}\"}}", self.sha256),
            Some(mac) => format!("{body},\"sha256\":\"{}\",\"mac\":\"{mac}\"}}", self.sha256),
        }
    }

    /// Whether the stored hash is the hash of the body.
    pub fn hash_holds(&self) -> bool {
        sha256_hex(self.body().as_bytes()) == self.sha256
    }
}

/// One line read without copying its strings (verify's hot path).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct EntryRef<'a> {
    pub(crate) seq: u64,
    ts_ms: i64,
    #[serde(borrow)]
    agent: Cow<'a, str>,
    #[serde(borrow)]
    causal_root: Cow<'a, str>,
    #[serde(borrow)]
    action: Cow<'a, str>,
    #[serde(borrow)]
    target: Cow<'a, str>,
    #[serde(borrow)]
    args_sha256: Cow<'a, str>,
    #[serde(borrow)]
    outcome: Cow<'a, str>,
    #[serde(borrow, default)]
    approved_by: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(crate) prev_sha256: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) sha256: Cow<'a, str>,
    #[serde(borrow, default)]
    pub(crate) mac: Option<Cow<'a, str>>,
}

impl EntryRef<'_> {
    /// Whether `text` is exactly the line the writer writes for this entry and the stored hash
    /// is the hash of its body. The body is serialised once, into `scratch` (reused).
    pub(crate) fn holds(&self, text: &str, scratch: &mut Vec<u8>) -> bool {
        scratch.clear();
        let body = Body {
            seq: self.seq,
            ts_ms: self.ts_ms,
            agent: &self.agent,
            causal_root: &self.causal_root,
            action: &self.action,
            target: &self.target,
            args_sha256: &self.args_sha256,
            outcome: &self.outcome,
            approved_by: self.approved_by.as_deref(),
            prev_sha256: &self.prev_sha256,
        };
        if serde_json::to_writer(&mut *scratch, &body).is_err() {
            return false;
        }
        // The line is the body without its `}`, then `,"sha256":"…"}` (or `…","mac":"…"}`).
        let open = scratch.len().saturating_sub(1);
        let canonical = text
            .as_bytes()
            .strip_prefix(&scratch[..open])
            .and_then(|rest| rest.strip_prefix(b",\"sha256\":\""))
            .and_then(|rest| rest.strip_prefix(self.sha256.as_bytes()))
            .is_some_and(|rest| self.tail_is_canonical(rest));
        canonical && hex_digest(scratch) == *self.sha256.as_bytes()
    }

    /// Whether what follows the hash is exactly `"}` or `","mac":"<mac>"}`.
    fn tail_is_canonical(&self, rest: &[u8]) -> bool {
        match &self.mac {
            None => rest == b"\"}",
            Some(mac) => rest
                .strip_prefix(b"\",\"mac\":\"")
                .and_then(|r| r.strip_suffix(b"\"}"))
                .is_some_and(|m| m == mac.as_bytes()),
        }
    }
}

/// Lower-case hex SHA-256, on the stack.
fn hex_digest(bytes: &[u8]) -> [u8; 64] {
    let digest = Sha256::digest(bytes);
    let mut out = [0u8; 64];
    for (i, b) in digest.iter().enumerate() {
        out[2 * i] = b"0123456789abcdef"[usize::from(b >> 4)];
        out[2 * i + 1] = b"0123456789abcdef"[usize::from(b & 15)];
    }
    out
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex_digest(bytes).iter().map(|b| char::from(*b)).collect()
}

fn cut_target(target: &str) -> String {
    if target.chars().count() <= MAX_TARGET_CHARS {
        return target.to_owned();
    }
    let mut out: String = target.chars().take(MAX_TARGET_CHARS).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_and_its_hash_holds() {
        let e = AuditEvent::new("a", "r", "file_write", "notes/x.md", b"{}");
        let entry = AuditEntry::chain(e, 1, 5, GENESIS);
        let line = entry.line();
        let back: AuditEntry = serde_json::from_str(&line).unwrap();
        assert_eq!(back, entry);
        assert!(back.hash_holds());
        assert_eq!(back.line(), line);
        let mut forged = back;
        forged.target = "other".into();
        assert!(!forged.hash_holds());
    }

    #[test]
    fn the_borrowed_reader_agrees_with_the_owned_one() {
        let e = AuditEvent::new("a\"b", "r\\", "file_write", "notes/ü\n.md", b"{}");
        let entry = AuditEntry::chain(e, 3, 5, GENESIS);
        let line = entry.line();
        let mut scratch = Vec::new();
        let read: EntryRef<'_> = serde_json::from_str(&line).unwrap();
        assert!(read.holds(&line, &mut scratch));
        let spaced = line.replacen(',', ", ", 1);
        let read: EntryRef<'_> = serde_json::from_str(&spaced).unwrap();
        assert!(!read.holds(&spaced, &mut scratch), "not the writer's text");
        let forged = AuditEntry {
            target: "x".into(),
            ..entry.clone()
        }
        .line();
        let read: EntryRef<'_> = serde_json::from_str(&forged).unwrap();
        assert!(!read.holds(&forged, &mut scratch), "the hash does not hold");
        let e = AuditEvent::new("a\"b", "r\\", "file_write", "notes/ü\n.md", b"{}");
        let mut out = b"x\n".to_vec();
        let hash = AuditEntry::push_line(&e, 3, 5, GENESIS, None, &mut out);
        assert_eq!(hash, entry.sha256);
        assert_eq!(out, format!("x\n{line}\n").into_bytes());
    }

    /// A line written before `approvedBy` existed still reads, holds and re-serialises to
    /// the same text; a line written now carries it inside the hashed text.
    #[test]
    fn a_line_without_approved_by_still_holds_and_a_new_line_hashes_it() {
        let old = AuditEntry {
            approved_by: None,
            ..AuditEntry::chain(AuditEvent::new("a", "r", "run", "sh", b"{}"), 1, 5, GENESIS)
        };
        let old = AuditEntry {
            sha256: sha256_hex(old.body().as_bytes()),
            ..old
        };
        let text = old.line();
        assert!(!text.contains("approvedBy"));
        let mut scratch = Vec::new();
        let read: EntryRef<'_> = serde_json::from_str(&text).unwrap();
        assert!(read.holds(&text, &mut scratch));
        let event = AuditEvent::new("a", "r", "run", "sh", b"{}").approved_by(ApprovedBy::RunRule);
        let new = AuditEntry::chain(event, 1, 5, GENESIS).line();
        assert!(new.contains(r#""outcome":"ok","approvedBy":"rule:run.json","prevSha256""#));
        let read: EntryRef<'_> = serde_json::from_str(&new).unwrap();
        assert!(read.holds(&new, &mut scratch));
        let forged = new.replace("rule:run.json", "person:gui");
        let read: EntryRef<'_> = serde_json::from_str(&forged).unwrap();
        assert!(!read.holds(&forged, &mut scratch), "approvedBy is hashed");
    }

    #[test]
    fn a_marked_line_reads_back_and_its_mark_is_after_the_hash() {
        let key = AuditKey::from_bytes([9; 32]);
        let e = AuditEvent::new("a", "r", "file_write", "notes/x.md", b"{}");
        let entry = AuditEntry::chain(e.clone(), 2, 5, GENESIS).sign(&key);
        let line = entry.line();
        assert!(line.ends_with(&format!(",\"mac\":\"{}\"}}", key.line_mac(&entry.sha256))));
        let back: AuditEntry = serde_json::from_str(&line).unwrap();
        assert_eq!(back, entry);
        assert!(back.hash_holds(), "the hash is the unmarked line's");
        let mut out = Vec::new();
        let hash = AuditEntry::push_line(&e, 2, 5, GENESIS, Some(&key), &mut out);
        assert_eq!(hash, entry.sha256);
        assert_eq!(out, format!("{line}\n").into_bytes());
        let mut scratch = Vec::new();
        let read: EntryRef<'_> = serde_json::from_str(&line).unwrap();
        assert!(read.holds(&line, &mut scratch));
        let moved = line.replacen(",\"mac\"", ", \"mac\"", 1);
        let read: EntryRef<'_> = serde_json::from_str(&moved).unwrap();
        assert!(!read.holds(&moved, &mut scratch), "not the writer's text");
    }
}
