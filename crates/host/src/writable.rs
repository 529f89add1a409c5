//! Whether this process may write its data folder, asked of the kernel with `access(2)`, which
//! writes nothing, before the lock is taken: a read-only mount (`DATA_DIR_READ_ONLY`) or a
//! folder of another user (`DATA_DIR_NOT_WRITABLE`) is refused with a code that names it and
//! the fix, instead of failing at the first write (the lock) with the system's words alone.
//! Asked of the data folder (the shelf), the workspace, and the files a run writes in place;
//! everything else a run writes is replaced whole in those folders (docs/formats/README.md).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use fuseforks_core::Coded;
use rustix::fs::Access;
use rustix::io::Errno;

use crate::lock::LOCK_FILE;
use crate::paths::HostPaths;

/// The workspace's files a run opens for writing in place (appended or rewritten inside).
const WRITTEN_IN_PLACE: [&str; 4] = [LOCK_FILE, "fuseforks.log", "sessions.redb", "audit.jsonl"];

/// Why this process may not write its data folder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataDirUnwritable {
    /// `DATA_DIR_READ_ONLY`: the path lies on a read-only file system (EROFS).
    #[error(
        "{}: on a read-only file system; a running village writes its lock, log and conversations in its data folder",
        path.display()
    )]
    ReadOnly {
        /// The first path refused.
        path: PathBuf,
    },
    /// `DATA_DIR_NOT_WRITABLE`: the path's owner and mode refuse this process's user (EACCES).
    #[error(
        "{}: this process (uid {uid}, gid {gid}) may not write it{}",
        path.display(),
        owner.map(|(owner, mode)| format!("; it belongs to uid {owner}, mode {:o}", mode & 0o7777)).unwrap_or_default()
    )]
    NotWritable {
        /// The first path refused.
        path: PathBuf,
        /// This process's user.
        uid: u32,
        /// This process's group.
        gid: u32,
        /// The path's owner and mode, where they could be read.
        owner: Option<(u32, u32)>,
    },
}

impl Coded for DataDirUnwritable {
    fn code(&self) -> &'static str {
        match self {
            Self::ReadOnly { .. } => "DATA_DIR_READ_ONLY",
            Self::NotWritable { .. } => "DATA_DIR_NOT_WRITABLE",
        }
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(match self {
            Self::ReadOnly { .. } => "mount the data folder writable (no `:ro` or `readOnly: true` on its mount; a read-only root file system is fine when the data folder's own mount is writable)".into(),
            Self::NotWritable { uid, gid, .. } => format!(
                "give the data folder to this process's user: `chown -R {uid}:{gid}` the folder (on the host, the folder mounted here), or mount a folder that user may write"
            )
            .into(),
        })
    }
}

/// The first place of the data folder this process may not write, if any.
pub fn check(paths: &HostPaths) -> Result<(), DataDirUnwritable> {
    let workspace = paths.workspace();
    let files = WRITTEN_IN_PLACE
        .iter()
        .map(|name| workspace.join(name))
        .filter(|file| file.exists());
    [paths.data_dir().to_path_buf(), workspace.clone()]
        .into_iter()
        .chain(files)
        .try_for_each(|path| refused(&path).map_or(Ok(()), Err))
}

/// Why `path` may not be written, when the kernel says so; another answer (a path gone since)
/// is left to the write that meets it.
fn refused(path: &Path) -> Option<DataDirUnwritable> {
    match rustix::fs::access(path, Access::WRITE_OK) {
        Err(Errno::ROFS) => Some(DataDirUnwritable::ReadOnly {
            path: path.to_path_buf(),
        }),
        Err(Errno::ACCESS | Errno::PERM) => Some(DataDirUnwritable::NotWritable {
            path: path.to_path_buf(),
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            owner: std::fs::metadata(path).ok().map(|m| (m.uid(), m.mode())),
        }),
        Ok(()) | Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_village_passes_and_each_refusal_names_its_path_and_fix() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("workspace")).unwrap();
        assert_eq!(check(&HostPaths::new(dir.path())), Ok(()));
        let path = PathBuf::from("/data");
        let read_only = DataDirUnwritable::ReadOnly { path: path.clone() };
        assert_eq!(read_only.code(), "DATA_DIR_READ_ONLY");
        assert!(read_only.to_string().starts_with("/data: on a read-only"));
        let denied = DataDirUnwritable::NotWritable {
            path,
            uid: 10001,
            gid: 10001,
            owner: Some((1000, 0o40755)),
        };
        assert_eq!(denied.code(), "DATA_DIR_NOT_WRITABLE");
        assert!(
            denied.to_string().ends_with(
                "uid 10001, gid 10001) may not write it; it belongs to uid 1000, mode 755"
            ),
            "{denied}"
        );
        let fix = Coded::fix(&denied).unwrap().change;
        assert!(fix.contains("`chown -R 10001:10001`"), "{fix}");
    }
}
