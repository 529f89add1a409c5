//! What the tools do beneath the jail's handle: create and write files, make folders, look at
//! an entry, list a folder, rename, copy, and hand an entry to the trash. Writes resolve their
//! parent folder without following any link and open the last component with `O_NOFOLLOW`, so a
//! dangling symlink is never written through.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::open::Links;
use super::{SandboxError, WorkDir, regular};

/// How a write opens its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Create; refuse when anything is there.
    CreateNew,
    /// Create or replace the content of a regular file.
    Replace,
    /// Create or append to a regular file.
    Append,
}

/// What an entry is (its own type: links are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symlink.
    Link,
    /// A FIFO, socket or device.
    Other,
}

/// One entry of a listed folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: OsString,
    /// What it is.
    pub kind: EntryKind,
}

/// The largest file `copy` takes (a sparse file would otherwise fill the disk).
pub(super) const MAX_COPY_BYTES: u64 = 64 * 1024 * 1024;

/// The most entries one listing returns.
const MAX_LISTED: usize = 10_000;

fn kind_of(file_type: FileType) -> EntryKind {
    match file_type {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Folder,
        FileType::Symlink => EntryKind::Link,
        _ => EntryKind::Other,
    }
}

fn split(rel: &Path) -> Result<(&Path, &OsStr), SandboxError> {
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(SandboxError::Escapes),
    }
}

impl WorkDir {
    /// Opens (creating parents) a file for writing; only a regular file, never through a link.
    pub fn create_file(&self, given: &str, mode: WriteMode) -> Result<File, SandboxError> {
        let rel = self.relative(given)?;
        self.check_fences(&rel)?;
        let (parent, name) = split(&rel)?;
        let dir = self.mkdir_all(parent)?;
        let mut flags = OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK;
        flags |= OFlags::CLOEXEC | OFlags::NOCTTY;
        match mode {
            WriteMode::CreateNew => flags |= OFlags::EXCL,
            WriteMode::Append => flags |= OFlags::APPEND,
            WriteMode::Replace => {}
        }
        let fd = rustix::fs::openat(&dir, name, flags, Mode::from_raw_mode(0o644))
            .map_err(SandboxError::from_errno)?;
        // A hard link is a link too: the same file may have a name outside the jail.
        let links = rustix::fs::fstat(&fd)
            .map_err(SandboxError::from_errno)?
            .st_nlink;
        if links > 1 {
            return Err(SandboxError::Link);
        }
        let file = regular(fd)?;
        if mode == WriteMode::Replace {
            file.set_len(0)
                .map_err(|e| SandboxError::Io(e.to_string()))?;
        }
        Ok(file)
    }

    /// Makes a folder and its parents (none through a link); returns the folder's handle.
    pub(crate) fn mkdir_all(&self, rel: &Path) -> Result<OwnedFd, SandboxError> {
        let mut dir = self.open_rel(
            Path::new(""),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Links::Refuse,
        )?;
        for part in rel.iter() {
            match rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(SandboxError::from_errno(e)),
            }
            dir = rustix::fs::openat(
                &dir,
                part,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| match e {
                Errno::NOTDIR => SandboxError::NotRegular,
                other => SandboxError::from_errno(other),
            })?;
        }
        Ok(dir)
    }

    /// Makes a folder the model named (refused inside a fence).
    pub fn make_folder(&self, given: &str) -> Result<(), SandboxError> {
        let rel = self.relative(given)?;
        self.check_fences(&rel)?;
        self.mkdir_all(&rel).map(drop)
    }

    /// What is at `given` for a writer (no link followed on the way, the entry itself not
    /// followed); `None` when nothing is there.
    pub fn entry_kind(&self, given: &str) -> Result<Option<EntryKind>, SandboxError> {
        let rel = self.relative(given)?;
        let (parent, name) = split(&rel)?;
        let dir = match self.open_parent(parent) {
            Ok(dir) => dir,
            Err(SandboxError::NotFound) => return Ok(None),
            Err(e) => return Err(e),
        };
        match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(kind_of(FileType::from_raw_mode(stat.st_mode)))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(SandboxError::from_errno(e)),
        }
    }

    /// Whether `given` resolves beneath the root for a reader.
    pub fn resolves_inside(&self, given: &str) -> bool {
        // Linux looks the path up without opening it; elsewhere a non-blocking read-only open.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let flags = OFlags::PATH;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let flags = OFlags::RDONLY | OFlags::NONBLOCK;
        self.relative(given)
            .and_then(|rel| self.open_rel(&rel, flags, self.read_links))
            .is_ok()
    }

    /// Lists a folder (at most 10,000 entries), sorted by name.
    pub fn list(&self, given: &str) -> Result<Vec<Entry>, SandboxError> {
        let rel = self.relative(given)?;
        let dir = self.open_dir(&rel)?;
        let mut entries = Vec::new();
        let reader = rustix::fs::Dir::read_from(&dir).map_err(SandboxError::from_errno)?;
        for item in reader {
            let item = item.map_err(SandboxError::from_errno)?;
            let name = OsStr::from_bytes(item.file_name().to_bytes());
            if name.is_empty() || name == "." || name == ".." {
                continue;
            }
            let kind = match item.file_type() {
                FileType::Unknown => rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map(|s| kind_of(FileType::from_raw_mode(s.st_mode)))
                    .unwrap_or(EntryKind::Other),
                known => kind_of(known),
            };
            entries.push(Entry {
                name: name.to_os_string(),
                kind,
            });
            if entries.len() >= MAX_LISTED {
                break;
            }
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// Renames within the jail (both ends outside fences, no link on the way; the source
    /// itself must not be a link). Without `overwrite`, an existing destination is refused.
    pub fn rename(&self, from: &str, to: &str, overwrite: bool) -> Result<(), SandboxError> {
        let (from_dir, from_name) = self.writable_entry(from)?;
        if rustix::fs::statat(&from_dir, &from_name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(SandboxError::from_errno)
            .map(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink)?
        {
            return Err(SandboxError::Link);
        }
        let to_rel = self.relative(to)?;
        self.check_fences(&to_rel)?;
        let (to_parent, to_name) = split(&to_rel)?;
        let to_dir = self.mkdir_all(to_parent)?;
        rename_at(&from_dir, &from_name, &to_dir, to_name, overwrite)
    }

    /// Copies a regular file (read through the jail) to a new or replaced regular file.
    pub fn copy(&self, from: &str, to: &str, overwrite: bool) -> Result<u64, SandboxError> {
        let source = self.open_read(from)?;
        if self.same_file(&source, to)? {
            return Err(SandboxError::Exists);
        }
        let size = source
            .metadata()
            .map_err(|e| SandboxError::Io(e.to_string()))?
            .len();
        if size > MAX_COPY_BYTES {
            return Err(SandboxError::TooLarge(MAX_COPY_BYTES));
        }
        let mode = if overwrite {
            WriteMode::Replace
        } else {
            WriteMode::CreateNew
        };
        let mut dest = self.create_file(to, mode)?;
        std::io::copy(&mut source.take(MAX_COPY_BYTES), &mut dest)
            .map_err(|e| SandboxError::Io(e.to_string()))
    }

    /// Whether `to` names the very file `source` is (a copy onto itself would empty it).
    fn same_file(&self, source: &File, to: &str) -> Result<bool, SandboxError> {
        let rel = self.relative(to)?;
        let Ok(dest) = self.open_rel(&rel, OFlags::RDONLY | OFlags::NONBLOCK, self.read_links)
        else {
            return Ok(false);
        };
        let (a, b) = (
            rustix::fs::fstat(source).map_err(SandboxError::from_errno)?,
            rustix::fs::fstat(&dest).map_err(SandboxError::from_errno)?,
        );
        Ok(a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    }

    /// The parent folder's handle and the name of an entry a writer may move or remove
    /// (outside fences, no link on the way, and not a folder that holds a fence).
    pub fn writable_entry(&self, given: &str) -> Result<(OwnedFd, OsString), SandboxError> {
        let rel = self.relative(given)?;
        self.check_fences(&rel)?;
        self.check_fence_ancestors(&rel)?;
        let (parent, name) = split(&rel)?;
        Ok((self.open_parent(parent)?, name.to_os_string()))
    }

    /// The real path of an entry, for display and records (never used to open it).
    pub fn shown(&self, given: &str) -> PathBuf {
        self.relative(given)
            .map(|rel| self.root.join(rel))
            .unwrap_or_else(|_| self.root.clone())
    }

    fn open_parent(&self, parent: &Path) -> Result<OwnedFd, SandboxError> {
        self.open_rel(parent, OFlags::RDONLY | OFlags::DIRECTORY, Links::Refuse)
    }
}

/// Renames between two folder handles; without `overwrite` an existing destination is refused
/// atomically where the OS can (`RENAME_NOREPLACE` on Linux).
pub(crate) fn rename_at(
    from_dir: &OwnedFd,
    from: &OsStr,
    to_dir: &OwnedFd,
    to: &OsStr,
    overwrite: bool,
) -> Result<(), SandboxError> {
    if overwrite {
        return rustix::fs::renameat(from_dir, from, to_dir, to).map_err(SandboxError::from_errno);
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::RenameFlags;
        match rustix::fs::renameat_with(from_dir, from, to_dir, to, RenameFlags::NOREPLACE) {
            Err(Errno::INVAL) | Err(Errno::NOSYS) => {}
            other => return other.map_err(SandboxError::from_errno),
        }
    }
    if rustix::fs::statat(to_dir, to, AtFlags::SYMLINK_NOFOLLOW).is_ok() {
        return Err(SandboxError::Exists);
    }
    rustix::fs::renameat(from_dir, from, to_dir, to).map_err(SandboxError::from_errno)
}
