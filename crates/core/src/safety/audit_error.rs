//! [`AuditError`]: why an audit line was not written, with the file, the operation and the
//! io error (or the conversation store's) kept as the source. Never a line's content.

use std::path::PathBuf;
use std::sync::Arc;

use crate::sessions::SessionError;

/// An audit append that failed: the lines of its batch are not acknowledged.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// Writing or syncing the lines to the file failed.
    #[error("{}: the audit lines could not be written ({})", path.display(), source.kind())]
    Write {
        /// `workspace/audit.jsonl`.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// Storing the chain's head in `sessions.redb` failed.
    #[error("the audit head could not be stored ({})", source.code())]
    HeadStore {
        /// The store's error.
        #[source]
        source: SessionError,
    },
    /// Recording the chain's head on the shelf failed.
    #[error("{}: the audit head could not be recorded ({})", path.display(), source.kind())]
    HeadShelf {
        /// `DATA_DIR/audit-head.json`.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// Rotating the full file failed (the lines go on into the current file).
    #[error("{}: the audit file could not be rotated ({})", path.display(), source.kind())]
    Rotate {
        /// The file being rotated.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// The writer thread is gone (the log was closed).
    #[error("the audit writer has stopped")]
    Stopped,
    /// One failed commit, shared by every append of its batch.
    #[error(transparent)]
    Batch(Arc<AuditError>),
}

impl crate::error::Coded for AuditError {
    fn code(&self) -> &'static str {
        "AUDIT_WRITE_FAILED"
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some("check the disk (space, permissions)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Coded;

    #[test]
    fn a_failed_write_names_the_file_and_keeps_the_io_error_for_every_append_of_its_batch() {
        let failed = Arc::new(AuditError::Write {
            path: PathBuf::from("/v/workspace/audit.jsonl"),
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
        });
        let answered = AuditError::Batch(Arc::clone(&failed));
        assert_eq!(answered.code(), "AUDIT_WRITE_FAILED");
        assert!(
            answered.to_string().contains("/v/workspace/audit.jsonl"),
            "{answered}"
        );
        let source =
            std::error::Error::source(&answered).and_then(|e| e.downcast_ref::<std::io::Error>());
        assert_eq!(
            source.map(std::io::Error::kind),
            Some(std::io::ErrorKind::StorageFull)
        );
    }
}
