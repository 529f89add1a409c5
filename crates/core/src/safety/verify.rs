//! `audit verify`: walks the audit log's files in chain order (rotated `audit-<seq>.jsonl`
//! first, then `audit.jsonl`) and names the first broken line and why — edited (its text or
//! hash does not hold, or it does not follow the line before), deleted (a gap in `seq`),
//! reordered (a line out of place), truncated (a torn last line, or fewer lines than the head
//! stored in `sessions.redb`), malformed (not a line of ours at all).

use std::path::{Path, PathBuf};

use super::audit::{EntryRef, GENESIS};
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
        }
    }
}

/// What is known of the head stored in `sessions.redb`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadCheck {
    /// The last line is the stored head.
    Matches,
    /// No head stored (a new village, or the store was unavailable).
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
}

/// Why verification failed.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// A line breaks the chain.
    #[error("audit log broken at {file} line {line}{seq}: {kind}", file = .file.display(), kind = .kind.as_str(), seq = .seq.map(|s| format!(" (seq {s})")).unwrap_or_default())]
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

    fn fix(&self) -> Option<String> {
        Some(match self {
            Self::Broken { .. } => "the audit log was changed after it was written: keep this copy as evidence and compare it with a backup".into(),
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

/// Verifies the chain of the log in `workspace` against `head` (seq, sha256).
pub fn verify_chain(
    workspace: &Path,
    head: Option<&(u64, String)>,
) -> Result<VerifyReport, VerifyError> {
    let files = audit_files(workspace)?;
    let texts = read_texts(&files)?;
    let lines = split_lines(&texts);
    let broken = |l: &Line<'_>, seq: Option<u64>, kind| VerifyError::Broken {
        file: files[l.file].clone(),
        line: l.number,
        seq,
        kind,
    };
    let (mut expected, mut prev) = (1u64, GENESIS.to_owned());
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
        prev.clear();
        prev.push_str(&entry.sha256);
        expected += 1;
    }
    let count = expected - 1;
    let head = match head {
        None => HeadCheck::NotStored,
        Some((seq, _)) if count < *seq => {
            let (file, line) = lines
                .last()
                .map_or((files.len().saturating_sub(1), 0), |l| (l.file, l.number));
            return Err(VerifyError::Broken {
                file: files
                    .get(file)
                    .cloned()
                    .unwrap_or_else(|| workspace.join(AUDIT_FILE)),
                line,
                seq: Some(*seq),
                kind: BreakKind::Truncated,
            });
        }
        Some((seq, hash)) if count == *seq && prev != *hash => {
            let l = lines.last().ok_or(VerifyError::Unreadable {
                path: workspace.join(AUDIT_FILE),
                kind: std::io::ErrorKind::NotFound,
            })?;
            return Err(broken(l, Some(*seq), BreakKind::Edited));
        }
        Some((seq, _)) if count == *seq => HeadCheck::Matches,
        Some((seq, _)) => HeadCheck::Ahead(count - seq),
    };
    Ok(VerifyReport {
        lines: count,
        files: files.len(),
        head,
    })
}

/// The `seq` a line starts with (`{"seq":N,`), read without parsing the rest.
fn leading_seq(text: &str) -> Option<u64> {
    let rest = text.strip_prefix("{\"seq\":")?;
    let end = rest.find(',')?;
    rest[..end].parse().ok()
}
