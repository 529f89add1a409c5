//! `file remove` never deletes: it moves to a trash. On Linux the OS trash is the freedesktop
//! one (`$XDG_DATA_HOME/Trash`, with a `.trashinfo` record); elsewhere, or when the OS trash
//! cannot take the file, a `.trash/` folder the caller names. The entry is taken by its parent
//! folder's handle and name (resolved beneath the jail), never by a path string.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Where removed files go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrashTarget {
    /// The OS trash, falling back to the folder when it cannot be used.
    Os {
        /// The fallback folder.
        fallback: PathBuf,
    },
    /// Always this folder (tests, containers).
    Folder(PathBuf),
}

/// An entry to put in the trash: its parent folder's handle, its name, and the path shown in
/// the trash record.
#[derive(Debug)]
pub(crate) struct TrashSource<'a> {
    /// The parent folder.
    pub dir: &'a OwnedFd,
    /// The entry's name in it.
    pub name: &'a OsStr,
    /// Where it was, for the `.trashinfo` record.
    pub shown: &'a Path,
}

/// Moves the entry (file or folder) to the trash; returns where it went.
pub(crate) fn move_to_trash(source: &TrashSource<'_>, target: &TrashTarget) -> io::Result<PathBuf> {
    match target {
        TrashTarget::Os { fallback } => match os_trash(source) {
            Ok(dest) => Ok(dest),
            Err(_) => into_folder(source, fallback),
        },
        TrashTarget::Folder(folder) => into_folder(source, folder),
    }
}

fn unique_name(folder: &Path, name: &OsStr) -> PathBuf {
    let name = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "item".into());
    let mut candidate = folder.join(&name);
    let mut n = 1;
    while candidate.symlink_metadata().is_ok() {
        candidate = folder.join(format!("{name}.{n}"));
        n += 1;
    }
    candidate
}

fn take(source: &TrashSource<'_>, dest: &Path) -> io::Result<()> {
    rustix::fs::renameat(source.dir, source.name, rustix::fs::CWD, dest).map_err(io::Error::from)
}

fn into_folder(source: &TrashSource<'_>, folder: &Path) -> io::Result<PathBuf> {
    fs::create_dir_all(folder)?;
    let dest = unique_name(folder, source.name);
    take(source, &dest)?;
    Ok(dest)
}

#[cfg(target_os = "linux")]
fn os_trash(source: &TrashSource<'_>) -> io::Result<PathBuf> {
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .ok_or_else(|| io::Error::other("no home folder"))?;
    let trash = data_home.join("Trash");
    let (files, info) = (trash.join("files"), trash.join("info"));
    fs::create_dir_all(&files)?;
    fs::create_dir_all(&info)?;
    let dest = unique_name(&files, source.name);
    let stem = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let when = jiff::ZonedDateTime::now()
        .strftime("%Y-%m-%dT%H:%M:%S")
        .to_string();
    let record = format!(
        "[Trash Info]\nPath={}\nDeletionDate={when}\n",
        source.shown.display()
    );
    fs::write(info.join(format!("{stem}.trashinfo")), record)?;
    match take(source, &dest) {
        Ok(()) => Ok(dest),
        Err(e) => {
            let _ = fs::remove_file(info.join(format!("{stem}.trashinfo")));
            Err(e)
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn os_trash(_: &TrashSource<'_>) -> io::Result<PathBuf> {
    Err(io::Error::other(
        "the OS trash is not wired on this platform; the fallback folder is used",
    ))
}
