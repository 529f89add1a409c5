//! The village lock: `workspace/.fuseforks.lock`, an OS file lock taken first
//! (before the log is opened), held for the life of the host, never unlinked, nothing written
//! in it. A crashed process loses its lock with it; nobody has to delete a stale file.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The lock file's name.
pub const LOCK_FILE: &str = ".fuseforks.lock";

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it (the GUI or another fuseforks-cli).
    #[error("{0}: this village is open in another process (the Fuseforks GUI or fuseforks-cli)")]
    Held(PathBuf),
    /// The lock file could not be created or locked.
    #[error("{0}: {1}")]
    Io(PathBuf, String),
}

impl LockError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Held(_) => "VILLAGE_LOCKED",
            Self::Io(..) => "VILLAGE_LOCK_FAILED",
        }
    }
}

impl fuseforks_core::Coded for LockError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        match self {
            Self::Held(_) => Some("close that one first".into()),
            Self::Io(..) => None,
        }
    }
}

/// A held village lock; released when dropped (the file stays).
#[derive(Debug)]
pub struct VillageLock {
    _file: File,
    path: PathBuf,
}

impl VillageLock {
    /// Takes the lock of the village at `workspace` (which must exist).
    pub fn acquire(workspace: &Path) -> Result<Self, LockError> {
        let path = workspace.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| LockError::Io(path.clone(), e.to_string()))?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file, path }),
            Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Held(path)),
            Err(std::fs::TryLockError::Error(e)) => Err(LockError::Io(path, e.to_string())),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
