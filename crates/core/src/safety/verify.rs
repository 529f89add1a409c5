//! `audit verify`: walks the audit log's files in chain order (rotated `audit-<seq>.jsonl`
//! first, then `audit.jsonl`) and names the first broken line and why — edited (its text or
//! hash does not hold, or it does not follow the line before), deleted (a gap in `seq`),
//! reordered (a line out of place), truncated (a torn last line, or fewer lines than the head
//! recorded), malformed (not a line of ours at all); with the audit key, forged (a mark that
//! does not hold) and unkeyed (no mark where marks are due) — and compares the log with the
//! recorded heads (`head.rs`): truncated below one, edited at one, or lines past the highest
//! (`ahead`), and no recorded head at all, which the caller may accept (`VerifyOptions`).

use std::path::{Path, PathBuf};

use super::audit::{EntryRef, GENESIS};
use super::head::RecordedHead;
use super::key::AuditKey;
use crate::error::Coded;

/// The current file.
pub const AUDIT_FILE: &str = "audit.jsonl";

/// Why a line breaks the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakKind {
    /// The line's text or hash changed, or it does not follow the line before.
    Edited,
    /// One or more lines before it are missing.
    Deleted,
    /// It is out of place (moved, swapped or repeated).
    Reordered,
    /// The log ends early (a torn last line, or fewer lines than the stored head).
    Truncated,
    /// Not a line of the audit log.
    Malformed,
    /// Its mark does not hold under the audit key.
    Forged,
    /// No mark, after marked lines (or from the recorded first marked seq on).
    Unkeyed,
    /// Lines past the recorded head, not accepted.
    Ahead,
    /// Lines and no recorded head, not accepted.
    UnrecordedHead,
}

impl BreakKind {
    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Edited => "edited",
            Self::Deleted => "deleted",
            Self::Reordered => "reordered",
            Self::Truncated => "truncated",
            Self::Malformed => "malformed",
            Self::Forged => "forged",
            Self::Unkeyed => "unkeyed",
            Self::Ahead => "ahead",
            Self::UnrecordedHead => "unrecorded_head",
        }
    }

    /// The words of the error message.
    fn describe(self) -> &'static str {
        match self {
            Self::Forged => "forged (its mark does not hold under the audit key)",
            Self::Unkeyed => "unkeyed (no mark where the chain is keyed: written without the key)",
            Self::Ahead => "ahead (lines past the recorded head)",
            Self::UnrecordedHead => {
                "unrecorded head (the log has lines but no head is recorded: sessions.redb and DATA_DIR/audit-head.json hold none)"
            }
            other => other.as_str(),
        }
    }

    /// What to do about it.
    fn fix(self) -> &'static str {
        match self {
            Self::Ahead => {
                "the head is committed at most every second and at close, so a crash (or a process running this village now) can leave a second of lines past it: if you know the process crashed, pass --accept-ahead to accept them"
            }
            Self::UnrecordedHead => {
                "without a recorded head, lines cut off the end cannot be seen: if you know why both heads are gone, pass --accept-unrecorded-head"
            }
            _ => {
                "the audit log was changed after it was written: keep this copy as evidence and compare it with a backup"
            }
        }
    }
}

/// What is known of the head stored in `sessions.redb`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadCheck {
    /// The last line is the stored head.
    Matches,
    /// No head recorded (a new village, the stores unavailable, or accepted missing).
    NotStored,
    /// The log has this many lines past the stored head (the head is committed durably at
    /// most every second and at close: a crash leaves at most that long of lines past it).
    Ahead(u64),
}

/// A chain that holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Lines checked.
    pub lines: u64,
    /// Files read.
    pub files: usize,
    /// The head's check.
    pub head: HeadCheck,
    /// Whether the marks were checked (the key was given).
    pub keyed: bool,
    /// Lines without a mark (before the first marked line: an old village, or written without
    /// the key).
    pub unkeyed_lines: u64,
    /// Recorded heads set aside: their mark does not hold under the key (or they carry none in a
    /// keyed chain).
    pub heads_refused: usize,
}

/// What `verify_keyed` checks against, and what it accepts.
#[derive(Debug, Default)]
pub struct VerifyOptions<'a> {
    /// Every recorded head found (`sessions.redb`, the shelf).
    pub heads: Vec<RecordedHead>,
    /// The audit key (none: marks are not checked).
    pub key: Option<&'a AuditKey>,
    /// Accept lines past the recorded head (a crash).
    pub accept_ahead: bool,
    /// Accept a log with lines and no recorded head.
    pub accept_unrecorded_head: bool,
}

/// Why verification failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A line breaks the chain.
    #[error("audit log broken at {file} line {line}{seq}: {kind}", file = .file.display(), kind = .kind.describe(), seq = .seq.map(|s| format!(" (seq {s})")).unwrap_or_default())]
    Broken {
        /// The file.
        file: PathBuf,
        /// The line in that file, from 1.
        line: u64,
        /// Its `seq`, when it reads.
        seq: Option<u64>,
        /// Why.
        kind: BreakKind,
    },
    /// A file could not be read.
    #[error("cannot read the audit log {}: {kind}", .path.display())]
    Unreadable {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error's kind.
        kind: std::io::ErrorKind,
    },
}

impl Coded for VerifyError {
    fn code(&self) -> &'static str {
        match self {
            Self::Broken { .. } => "AUDIT_CHAIN_BROKEN",
            Self::Unreadable { .. } => "AUDIT_UNREADABLE",
        }
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some(match self {
            Self::Broken { kind, .. } => kind.fix().into(),
            Self::Unreadable { .. } => "check the file's permissions".into(),
        })
    }
}

/// The log's files in chain order.
pub fn audit_files(workspace: &Path) -> Result<Vec<PathBuf>, VerifyError> {
    let unreadable = |e: std::io::Error| VerifyError::Unreadable {
        path: workspace.to_path_buf(),
        kind: e.kind(),
    };
    let mut rotated: Vec<PathBuf> = std::fs::read_dir(workspace)
        .map_err(unreadable)?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("audit-") && n.ends_with(".jsonl"))
        .map(|n| workspace.join(n))
        .collect();
    rotated.sort();
    let current = workspace.join(AUDIT_FILE);
    if current.exists() {
        rotated.push(current);
    }
    Ok(rotated)
}

/// One line as read: where, and its text (borrowed from the file's text).
struct Line<'a> {
    file: usize,
    number: u64,
    text: &'a str,
    torn: bool,
}

/// Reads every file whole (one allocation per file, none per line).
fn read_texts(files: &[PathBuf]) -> Result<Vec<String>, VerifyError> {
    files
        .iter()
        .map(|path| {
            let bytes = std::fs::read(path).map_err(|e| VerifyError::Unreadable {
                path: path.clone(),
                kind: e.kind(),
            })?;
            Ok(String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
        })
        .collect()
}

/// The lines of every file, in chain order.
fn split_lines(texts: &[String]) -> Vec<Line<'_>> {
    let mut lines = Vec::with_capacity(texts.iter().map(|t| t.len() / 256 + 1).sum());
    for (file, text) in texts.iter().enumerate() {
        let ends_clean = text.is_empty() || text.ends_with('\n');
        let mut parts = text.split_terminator('\n').peekable();
        let mut number = 0;
        while let Some(part) = parts.next() {
            number += 1;
            lines.push(Line {
                file,
                number,
                text: part,
                torn: !ends_clean && parts.peek().is_none(),
            });
        }
    }
    lines
}

/// Verifies the chain of the log in `workspace` against `head` (seq, sha256), without the key;
/// lines past the head, or no head, are reported, not refused.
pub fn verify_chain(
    workspace: &Path,
    head: Option<&(u64, String)>,
) -> Result<VerifyReport, VerifyError> {
    verify_keyed(
        workspace,
        &VerifyOptions {
            heads: head
                .map(|(seq, sha)| RecordedHead::new(*seq, sha, None, None))
                .into_iter()
                .collect(),
            key: None,
            accept_ahead: true,
            accept_unrecorded_head: true,
        },
    )
}

/// What the walk learnt of the lines.
struct Walk {
    count: u64,
    last: String,
    unkeyed: u64,
    /// The `sha256` of the lines at the recorded heads' seqs.
    at_heads: Vec<(u64, String)>,
}

/// Verifies the chain of the log in `workspace`: every line, its mark under `options.key`, and
/// the recorded heads.
pub fn verify_keyed(
    workspace: &Path,
    options: &VerifyOptions<'_>,
) -> Result<VerifyReport, VerifyError> {
    let files = audit_files(workspace)?;
    let texts = read_texts(&files)?;
    let lines = split_lines(&texts);
    // With the key, a head counts when its mark holds; an unmarked one only in a village with
    // no sign of the key (no marked head, no marked line: an old village).
    let marked_head = options.heads.iter().any(|h| h.mac.is_some());
    let heads: Vec<&RecordedHead> = options
        .heads
        .iter()
        .filter(|h| {
            options
                .key
                .is_none_or(|key| h.mac_holds(key) || (h.mac.is_none() && !marked_head))
        })
        .collect();
    let keyed_from = heads.iter().filter_map(|h| h.keyed_from).min();
    let walk = walk(&files, &lines, &heads, options.key, keyed_from)?;
    let marked_line = walk.unkeyed < walk.count;
    let heads: Vec<&RecordedHead> = heads
        .into_iter()
        .filter(|h| options.key.is_none() || h.mac.is_some() || !marked_line)
        .collect();
    let refused = options.heads.len() - heads.len();
    check_heads(workspace, &files, &lines, &walk, &heads, options, refused)
}

fn walk(
    files: &[PathBuf],
    lines: &[Line<'_>],
    heads: &[&RecordedHead],
    key: Option<&AuditKey>,
    mut keyed_from: Option<u64>,
) -> Result<Walk, VerifyError> {
    let broken = |l: &Line<'_>, seq: Option<u64>, kind| VerifyError::Broken {
        file: files[l.file].clone(),
        line: l.number,
        seq,
        kind,
    };
    let (mut expected, mut prev) = (1u64, GENESIS.to_owned());
    let (mut unkeyed, mut at_heads) = (0, Vec::new());
    let mut scratch = Vec::with_capacity(512);
    for (i, l) in lines.iter().enumerate() {
        if l.torn {
            return Err(broken(l, leading_seq(l.text), BreakKind::Truncated));
        }
        let Ok(entry) = serde_json::from_str::<EntryRef<'_>>(l.text) else {
            return Err(broken(l, leading_seq(l.text), BreakKind::Malformed));
        };
        let seq = Some(entry.seq);
        if entry.seq != expected {
            let later = lines[i + 1..]
                .iter()
                .any(|l| leading_seq(l.text) == Some(expected));
            let kind = if entry.seq > expected && !later {
                BreakKind::Deleted
            } else {
                BreakKind::Reordered
            };
            return Err(broken(l, seq, kind));
        }
        if entry.prev_sha256 != prev || !entry.holds(l.text, &mut scratch) {
            return Err(broken(l, seq, BreakKind::Edited));
        }
        match mark(&entry, key, &mut keyed_from) {
            Mark::Holds => {}
            Mark::Absent => unkeyed += 1,
            Mark::Broken(kind) => return Err(broken(l, seq, kind)),
        }
        if heads.iter().any(|h| h.seq == entry.seq) {
            at_heads.push((entry.seq, entry.sha256.to_string()));
        }
        prev.clear();
        prev.push_str(&entry.sha256);
        expected += 1;
    }
    Ok(Walk {
        count: expected - 1,
        last: prev,
        unkeyed,
        at_heads,
    })
}

/// A line's mark, as checked.
enum Mark {
    /// It holds (or cannot be checked without the key).
    Holds,
    /// None, and none is due yet.
    Absent,
    /// It breaks the chain.
    Broken(BreakKind),
}

/// Checks a line's mark: a mark that does not hold is forged; a line without one is unkeyed
/// once the chain is keyed (from the recorded first keyed seq, or the first marked line).
fn mark(entry: &EntryRef<'_>, key: Option<&AuditKey>, keyed_from: &mut Option<u64>) -> Mark {
    match (&entry.mac, key) {
        (None, _) if keyed_from.is_some_and(|from| entry.seq >= from) => {
            Mark::Broken(BreakKind::Unkeyed)
        }
        (None, _) => Mark::Absent,
        (Some(mac), Some(key)) if !key.line_mac_holds(&entry.sha256, mac) => {
            Mark::Broken(BreakKind::Forged)
        }
        (Some(_), _) => {
            keyed_from.get_or_insert(entry.seq);
            Mark::Holds
        }
    }
}

/// Compares the walked log with the recorded `heads`.
fn check_heads(
    workspace: &Path,
    files: &[PathBuf],
    lines: &[Line<'_>],
    walk: &Walk,
    heads: &[&RecordedHead],
    options: &VerifyOptions<'_>,
    heads_refused: usize,
) -> Result<VerifyReport, VerifyError> {
    let at = |seq: u64, kind| {
        let l = usize::try_from(seq.saturating_sub(1))
            .ok()
            .and_then(|i| lines.get(i))
            .or(lines.last());
        VerifyError::Broken {
            file: l.map_or_else(|| workspace.join(AUDIT_FILE), |l| files[l.file].clone()),
            line: l.map_or(0, |l| l.number),
            seq: Some(seq),
            kind,
        }
    };
    for head in heads {
        let line = walk.at_heads.iter().find(|(seq, _)| *seq == head.seq);
        if line.is_some_and(|(_, sha)| *sha != head.sha256) {
            return Err(at(head.seq, BreakKind::Edited));
        }
    }
    let count = walk.count;
    let head = match heads.iter().max_by_key(|h| h.seq) {
        None if count > 0 && !options.accept_unrecorded_head => {
            return Err(at(count, BreakKind::UnrecordedHead));
        }
        None => HeadCheck::NotStored,
        Some(h) if count < h.seq => return Err(at(h.seq, BreakKind::Truncated)),
        Some(h) if count == h.seq && walk.last != h.sha256 => {
            return Err(at(h.seq, BreakKind::Edited));
        }
        Some(h) if count == h.seq => HeadCheck::Matches,
        Some(h) if !options.accept_ahead => return Err(at(h.seq + 1, BreakKind::Ahead)),
        Some(h) => HeadCheck::Ahead(count - h.seq),
    };
    Ok(VerifyReport {
        lines: count,
        files: files.len(),
        head,
        keyed: options.key.is_some(),
        unkeyed_lines: walk.unkeyed,
        heads_refused,
    })
}

/// The `seq` a line starts with (`{"seq":N,`), read without parsing the rest.
fn leading_seq(text: &str) -> Option<u64> {
    let rest = text.strip_prefix("{\"seq\":")?;
    let end = rest.find(',')?;
    rest[..end].parse().ok()
}
