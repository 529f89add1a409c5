//! The `halt` marker on the shelf (`DATA_DIR/halt`): written when a village is halted, so that
//! `ask` and `serve` refuse to start it again until a human resumes it; removed by resume.
//! A small JSON file `{tsMs, channel}`, written atomically (0600).

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Channel;
use crate::village::atomic::{Permissions, write_atomic};

/// The marker's file name on the shelf.
pub const HALT_MARKER: &str = "halt";

/// What the marker says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HaltMarker {
    /// When the village was halted (ms since the epoch).
    pub ts_ms: i64,
    /// Who halted it.
    pub channel: Channel,
}

/// The marker's path on a shelf.
pub fn halt_marker_path(shelf: &Path) -> PathBuf {
    shelf.join(HALT_MARKER)
}

/// Writes the marker (atomic, 0600).
pub fn write_halt_marker(shelf: &Path, channel: Channel, ts_ms: i64) -> io::Result<()> {
    let marker = HaltMarker { ts_ms, channel };
    let bytes = serde_json::to_vec(&marker).map_err(io::Error::other)?;
    write_atomic(&halt_marker_path(shelf), &bytes, Permissions::OwnerOnly)
}

/// Whether the village is halted: any entry named `halt` on the shelf counts (an unreadable
/// or odd one too — refusing to start is the safe side). Returns the marker when it reads.
pub fn read_halt_marker(shelf: &Path) -> Option<Result<HaltMarker, HaltMarkerError>> {
    let path = halt_marker_path(shelf);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() {
        return Some(Err(HaltMarkerError::NotAFile { path }));
    }
    let text = match std::fs::read(&path) {
        Ok(text) => text,
        Err(source) => return Some(Err(HaltMarkerError::Read { path, source })),
    };
    if text.len() > MAX_MARKER_BYTES {
        return Some(Err(HaltMarkerError::TooLarge { path }));
    }
    Some(serde_json::from_slice(&text).map_err(|source| HaltMarkerError::Invalid { path, source }))
}

/// The largest marker read; a bigger file is no marker this version wrote.
const MAX_MARKER_BYTES: usize = 4096;

/// A `halt` entry on the shelf that does not read as a marker. The village still counts as
/// halted (the safe side), so its code is `VILLAGE_HALTED`.
#[derive(Debug, thiserror::Error)]
pub enum HaltMarkerError {
    /// A folder, a link or another non-file is in the marker's place.
    #[error("{}: the halt marker is not a regular file", path.display())]
    NotAFile {
        /// The marker's path.
        path: PathBuf,
    },
    /// The file could not be read.
    #[error("{}: the halt marker could not be read", path.display())]
    Read {
        /// The marker's path.
        path: PathBuf,
        /// The io error.
        #[source]
        source: io::Error,
    },
    /// The file is larger than any marker.
    #[error("{}: the halt marker is too large", path.display())]
    TooLarge {
        /// The marker's path.
        path: PathBuf,
    },
    /// The file is not the marker's JSON.
    #[error("{}: the halt marker is not valid JSON of a marker", path.display())]
    Invalid {
        /// The marker's path.
        path: PathBuf,
        /// serde's error.
        #[source]
        source: serde_json::Error,
    },
}

impl crate::error::Coded for HaltMarkerError {
    fn code(&self) -> &'static str {
        "VILLAGE_HALTED"
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some(crate::error::Fix::remedy(
            crate::error::Remedy::Resume,
            "(resuming removes the marker)",
        ))
    }
}

/// Removes the marker (resume). Absent is fine; a folder in its place is removed only when empty.
pub fn clear_halt_marker(shelf: &Path) -> io::Result<bool> {
    let path = halt_marker_path(shelf);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
        Ok(meta) if meta.is_dir() => std::fs::remove_dir(&path).map(|()| true),
        Ok(_) => std::fs::remove_file(&path).map(|()| true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_written_read_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_halt_marker(dir.path()).is_none());
        write_halt_marker(dir.path(), Channel::Cli, 7).unwrap();
        let marker = read_halt_marker(dir.path()).unwrap().unwrap();
        assert_eq!(marker.channel, Channel::Cli);
        assert!(clear_halt_marker(dir.path()).unwrap());
        assert!(read_halt_marker(dir.path()).is_none());
        std::fs::write(halt_marker_path(dir.path()), b"junk").unwrap();
        let junk = read_halt_marker(dir.path()).unwrap().unwrap_err();
        assert!(
            matches!(junk, HaltMarkerError::Invalid { .. }),
            "still halted: {junk:?}"
        );
        assert_eq!(crate::error::Coded::code(&junk), "VILLAGE_HALTED");
        assert!(
            std::error::Error::source(&junk).is_some(),
            "serde's error kept"
        );
        std::fs::remove_file(halt_marker_path(dir.path())).unwrap();
        std::fs::create_dir(halt_marker_path(dir.path())).unwrap();
        let folder = read_halt_marker(dir.path()).unwrap().unwrap_err();
        assert!(
            matches!(folder, HaltMarkerError::NotAFile { .. }),
            "{folder:?}"
        );
    }
}
