//! Why `bake` stopped: one error type, each variant one exit class (the CLI
//! maps [`BakeFailure`] to its exit code). A stopped bake has written nothing.

use std::path::PathBuf;

use fuseforks_core::Coded;
use fuseforks_core::village::VillageError;

use crate::lock::LockError;

/// The exit class of a failed bake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BakeFailure {
    /// 2: arguments (`--map`, `--out`, `--env-out`, the time zone).
    Usage,
    /// 3: an absolute path in a path field that no `--map` covers.
    Unmapped,
    /// 4: the lock of the source or (with `--update`) of the copy is held.
    Locked,
    /// 5: the source does not read, or the copy cannot be written.
    Unreadable,
    /// 10: a credential-like header holds a plaintext value.
    PlaintextHeaders,
    /// 11: `--out` or `--env-out` is not in the state the command needs.
    OutState,
}

/// A failed bake.
#[derive(Debug, thiserror::Error)]
pub enum BakeError {
    /// A usage error, with its own code.
    #[error("{message}")]
    Usage {
        /// The stable code.
        code: &'static str,
        /// What is wrong.
        message: String,
        /// What to do.
        fix: String,
    },
    /// Absolute paths no map covers: `(field, value)` each.
    #[error("{} path field(s) hold an absolute path no --map covers: {}", .0.len(), list(.0))]
    Unmapped(Vec<(String, String)>),
    /// A lock is held or cannot be taken.
    #[error("{0}")]
    Lock(#[from] LockError),
    /// A source file does not read.
    #[error("the source village does not read: {0}")]
    Source(VillageError),
    /// A source file is not a regular file or is too large (`file`, why).
    #[error("{}: {}", .0.display(), .1)]
    SourceFile(PathBuf, String),
    /// Credential-like headers with plaintext values: `file: server / header` each.
    #[error("credential-like MCP headers hold plaintext values (values not shown): {}", .0.join("; "))]
    PlaintextHeaders(Vec<String>),
    /// `--out` or `--env-out` is in the wrong state.
    #[error("{message}")]
    OutState {
        /// The stable code.
        code: &'static str,
        /// What is wrong.
        message: String,
        /// What to do.
        fix: String,
    },
    /// A file of the copy (or the `.env`) could not be written; nothing was put in place.
    #[error("{}: {}", .0.display(), .1)]
    Write(PathBuf, String),
    /// A secret could not be read from the store (`--env-out`).
    #[error("the secret store did not answer: {0}")]
    Secrets(String),
}

fn list(items: &[(String, String)]) -> String {
    items
        .iter()
        .map(|(field, value)| format!("{field} = {value}"))
        .collect::<Vec<_>>()
        .join("; ")
}

impl BakeError {
    /// The exit class.
    pub fn failure(&self) -> BakeFailure {
        match self {
            Self::Usage { .. } => BakeFailure::Usage,
            Self::Unmapped(_) => BakeFailure::Unmapped,
            Self::Lock(LockError::Held(_)) => BakeFailure::Locked,
            Self::Lock(LockError::Io(..))
            | Self::Source(_)
            | Self::SourceFile(..)
            | Self::Write(..)
            | Self::Secrets(_) => BakeFailure::Unreadable,
            Self::PlaintextHeaders(_) => BakeFailure::PlaintextHeaders,
            Self::OutState { .. } => BakeFailure::OutState,
        }
    }

    pub(crate) fn write(path: impl Into<PathBuf>, e: impl std::fmt::Display) -> Self {
        Self::Write(path.into(), e.to_string())
    }
}

impl Coded for BakeError {
    fn code(&self) -> &'static str {
        match self {
            Self::Usage { code, .. } | Self::OutState { code, .. } => code,
            Self::Unmapped(_) => "BAKE_PATH_UNMAPPED",
            Self::Lock(e) => e.code(),
            Self::Source(e) => e.code(),
            Self::SourceFile(..) => "BAKE_SOURCE_FILE",
            Self::PlaintextHeaders(_) => "BAKE_PLAINTEXT_HEADERS",
            Self::Write(..) => "BAKE_WRITE_FAILED",
            Self::Secrets(_) => "BAKE_SECRETS_UNREADABLE",
        }
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        match self {
            Self::Usage { fix, .. } | Self::OutState { fix, .. } => Some(fix.clone().into()),
            Self::Unmapped(_) => Some(
                "add a --map SOURCE=/container/path that covers each (the longest source prefix wins)"
                    .into(),
            ),
            Self::Lock(e) => Coded::fix(e).map(|f| fuseforks_core::Fix {
                change: format!(
                    "{} (close the GUI before baking; stop the container before --update)",
                    f.change
                ),
                ..f
            }),
            Self::Source(e) => e.fix(),
            Self::SourceFile(..) => {
                Some("replace it with a regular file (not a link, folder or FIFO) of at most 16 MiB".into())
            }
            Self::PlaintextHeaders(_) => Some(
                "write the value as a reference, e.g. \"Bearer ${secret:NAME}\", and store NAME's value (secrets set mcp:NAME); or pass --allow-plaintext-headers to copy them as they are"
                    .into(),
            ),
            Self::Write(..) => Some("check free space and permissions of the destination".into()),
            Self::Secrets(_) => Some("unlock the OS keyring, or use --secrets env".into()),
        }
    }
}
