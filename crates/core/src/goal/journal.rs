//! The goals log: `workspace/goals/<goal-id>.jsonl`, append-only, one JSON line per attempt;
//! the folder is created private (0700), each file is created new (never over another goal's).

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The folder of the goals logs, under the workspace.
pub const GOALS_DIR: &str = "goals";

/// One line of a goals log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoalLine {
    /// SHA-256 (hex) of the original request text: the same on every line of a goal.
    pub goal_sha256: String,
    /// The attempt, from 1.
    pub attempt: u8,
    /// The acceptance outcome (`match`, `no_match`, `error`, `timeout`).
    pub outcome: crate::probe::Outcome,
    /// The characters of the output excerpt (the excerpt itself is not written).
    pub excerpt_chars: usize,
    /// When the attempt's check ended (Unix ms).
    pub ts_ms: i64,
}

/// The goals log could not be written.
#[derive(Debug, thiserror::Error)]
pub enum GoalError {
    /// The folder or file could not be created or appended to.
    #[error("cannot write the goals log {path}: {kind}")]
    LogUnwritable {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error's class.
        kind: std::io::ErrorKind,
    },
}

impl crate::Coded for GoalError {
    fn code(&self) -> &'static str {
        match self {
            Self::LogUnwritable { .. } => "GOAL_LOG_UNWRITABLE",
        }
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some("make the village's workspace/goals folder writable by this user".into())
    }
}

/// SHA-256 (hex) of a request's text.
pub fn goal_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An open goals log.
#[derive(Debug)]
pub(crate) struct Journal {
    id: String,
    path: PathBuf,
    file: std::fs::File,
}

impl Journal {
    /// Creates `workspace/goals` (0700) if needed and a new file for a goal: its id is
    /// `<tsMs>-<first 8 hex of the goal hash>-<6 random hex>` (sortable by time, grouped by
    /// goal, only `[0-9a-f-]`: safe as a file name).
    pub(crate) fn create(
        workspace: &Path,
        goal_hash: &str,
        now_ms: i64,
    ) -> Result<Self, GoalError> {
        let dir = workspace.join(GOALS_DIR);
        let unwritable = |path: &Path| {
            let path = path.to_path_buf();
            move |e: std::io::Error| GoalError::LogUnwritable {
                path,
                kind: e.kind(),
            }
        };
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(unwritable(&dir))?;
        loop {
            let random = uuid::Uuid::new_v4().simple().to_string();
            let id = format!("{now_ms}-{}-{}", &goal_hash[..8], &random[..6]);
            let path = dir.join(format!("{id}.jsonl"));
            match std::fs::OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => return Ok(Self { id, path, file }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(unwritable(&path)(e)),
            }
        }
    }

    /// The goal id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// Appends one line (written whole, then flushed to disk).
    pub(crate) fn append(&mut self, line: &GoalLine) -> Result<(), GoalError> {
        let mut text = serde_json::to_string(line).unwrap_or_default();
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| GoalError::LogUnwritable {
                path: self.path.clone(),
                kind: e.kind(),
            })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::probe::Outcome;

    #[test]
    fn a_journal_is_private_new_and_appended_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let hash = goal_sha256("fix the build");
        let mut a = Journal::create(dir.path(), &hash, 1_700_000_000_000).unwrap();
        let b = Journal::create(dir.path(), &hash, 1_700_000_000_000).unwrap();
        assert_ne!(a.id(), b.id(), "unique even in the same millisecond");
        assert!(
            a.id()
                .starts_with(&format!("1700000000000-{}-", &hash[..8]))
        );
        assert!(a.id().chars().all(|c| c.is_ascii_hexdigit() || c == '-'));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(GOALS_DIR))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        for attempt in 1..=2 {
            let line = GoalLine {
                goal_sha256: hash.clone(),
                attempt,
                outcome: Outcome::NoMatch,
                excerpt_chars: 3,
                ts_ms: 5,
            };
            a.append(&line).unwrap();
        }
        let text =
            std::fs::read_to_string(dir.path().join(GOALS_DIR).join(format!("{}.jsonl", a.id())))
                .unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["attempt"], 2);
        assert_eq!(lines[0]["outcome"], "no_match");
        assert_eq!(lines[0]["goalSha256"], hash.as_str());
        assert_eq!(lines[0]["excerptChars"], 3);
    }

    #[test]
    fn the_goal_hash_is_sha256_hex() {
        assert_eq!(
            goal_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
