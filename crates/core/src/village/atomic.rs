//! Atomic file writes: a temp file in the same folder, fsync, rename (or link for create-only),
//! fsync of the folder. A crash at any point leaves either the old file or the new one.
//!
//! A store opened for a staging folder (a folder that nothing reads until it is made durable
//! with [`make_durable`] and renamed into place) writes plainly instead: no temp file, no fsync.
//! The store carries its [`WriteMode`], so a write is plain only where it was asked for.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// How the new file's permissions are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permissions {
    /// Keep the permissions of the file being replaced (or the process default for a new one).
    KeepExisting,
    /// Readable and writable by the owner only (0600 on Unix), for files that hold a secret.
    OwnerOnly,
}

/// How a store's writes reach the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteMode {
    /// Temp file, fsync, rename, fsync of the folder: a crash leaves the old file or the new.
    #[default]
    Atomic,
    /// Created or truncated in place: no temp file, no fsync, no sweep. Only for a staging
    /// folder that nobody reads before the caller makes it durable with [`make_durable`] and
    /// renames it (or its files) into place.
    Staged,
}

/// Replaces `path` with `bytes` atomically.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], permissions: Permissions) -> io::Result<()> {
    write_atomic_with(path, bytes, permissions, |_| Ok(()))
}

/// Writes `path` as `mode` says: [`write_atomic`], or plainly for a staging folder.
pub(crate) fn write_as(
    mode: WriteMode,
    path: &Path,
    bytes: &[u8],
    permissions: Permissions,
) -> io::Result<()> {
    match mode {
        WriteMode::Atomic => write_atomic(path, bytes, permissions),
        WriteMode::Staged => write_plain(path, bytes, permissions),
    }
}

/// A staged write: the file's permissions as [`write_atomic`] would give them — owner-only set
/// on the (new or truncated, so still empty) file before a byte is written.
fn write_plain(path: &Path, bytes: &[u8], permissions: Permissions) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    let mut file = options.open(path)?;
    #[cfg(unix)]
    if permissions == Permissions::OwnerOnly {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    file.write_all(bytes)
}

/// Makes everything written under `dir` durable: its files' data and its folders' entries. On
/// Linux one `syncfs` of `dir`'s file system; elsewhere an fsync of every file and folder under
/// `dir` (links are not followed).
pub fn make_durable(dir: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let handle = File::open(dir)?;
        rustix::fs::syncfs(&handle).map_err(io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        sync_tree(dir)
    }
}

/// fsync of every regular file and folder under `dir`, `dir` last.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn sync_tree(dir: &Path) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            sync_tree(&entry.path())?;
        } else if kind.is_file() {
            File::open(entry.path())?.sync_all()?;
        }
    }
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// [`write_atomic`] with a step between the durable temp file and the rename. Tests use it to
/// interrupt the write at its most delicate point.
pub(crate) fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    permissions: Permissions,
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let temp = TempFile::create(path, bytes, permissions)?;
    before_rename(temp.path())?;
    fs::rename(temp.path(), path)?;
    // The temp name is gone with the rename; dropping `temp` finds nothing left to remove.
    drop(temp);
    sync_parent(path)?;
    sweep_stale_temps(path);
    Ok(())
}

/// How old a leftover temp file must be before a later write removes it. A crash (power loss,
/// SIGKILL) can leave one behind; a write in progress is never this old.
const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes temp files of `path` left behind by a crashed writer. Best effort.
fn sweep_stale_temps(path: &Path) {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let prefix = format!(".{name}.");
    let Ok(entries) = fs::read_dir(parent_of(path)) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if !(file_name.starts_with(&prefix) && file_name.ends_with(".tmp")) {
            continue;
        }
        let age = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok());
        if age.is_some_and(|age| age >= STALE_TEMP_AGE) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Creates `path` with `bytes` atomically, failing with [`io::ErrorKind::AlreadyExists`] when
/// the file exists (also when another process creates it at the same moment).
pub(crate) fn create_new_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let temp = TempFile::create(path, bytes, Permissions::KeepExisting)?;
    // A hard link never replaces an existing file: this is the atomic "create if absent".
    fs::hard_link(temp.path(), path)?;
    drop(temp); // removes the temp name; the new file keeps the data
    sync_parent(path)
}

/// A durable temp file beside its target; its name is removed on drop (after a rename into
/// place there is nothing left under it).
struct TempFile {
    path: PathBuf,
}

impl TempFile {
    fn create(target: &Path, bytes: &[u8], permissions: Permissions) -> io::Result<Self> {
        let parent = parent_of(target);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = parent.join(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            if permissions == Permissions::OwnerOnly {
                options.mode(0o600);
            }
        }
        let mut file = options.open(&path)?;
        let temp = Self { path };
        if permissions == Permissions::KeepExisting
            && let Ok(meta) = fs::metadata(target)
        {
            file.set_permissions(meta.permissions())?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        Ok(temp)
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes the rename itself durable. Folders cannot be opened for syncing on every OS; there the
/// rename is as durable as the OS makes it.
fn sync_parent(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(parent_of(path))?.sync_all()?;
    }
    #[cfg(not(unix))]
    {
        let _ = (path, File::open);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn a_bare_file_name_is_written_in_the_current_folder() {
        assert_eq!(parent_of(Path::new("world.json")), Path::new("."));
        assert_eq!(parent_of(Path::new("/v/world.json")), Path::new("/v"));
        assert_eq!(parent_of(Path::new("v/world.json")), Path::new("v"));
    }

    #[test]
    fn no_temp_is_left_beside_the_target_after_a_success_or_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        for round in 0..3 {
            write_atomic(&path, format!("{round}").as_bytes(), Permissions::OwnerOnly).unwrap();
            create_new_atomic(&dir.path().join(format!("new-{round}")), b"x").unwrap();
            assert!(leftovers(dir.path()).is_empty(), "after round {round}");
        }
        // A failure at the rename itself: a folder (not empty) holds the target's name.
        let taken = dir.path().join("taken");
        fs::create_dir(&taken).unwrap();
        fs::write(taken.join("inside"), b"").unwrap();
        assert!(write_atomic(&taken, b"x", Permissions::OwnerOnly).is_err());
        assert!(leftovers(dir.path()).is_empty(), "after a failed rename");
        assert!(
            create_new_atomic(&dir.path().join("new-0"), b"y").is_err(),
            "an existing file is refused"
        );
        assert!(leftovers(dir.path()).is_empty(), "and its temp removed");
    }

    #[test]
    fn replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        fs::write(&path, b"old").unwrap();
        write_atomic(&path, b"new", Permissions::KeepExisting).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn an_interrupted_write_leaves_the_old_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        fs::write(&path, b"old").unwrap();
        let err = write_atomic_with(
            &path,
            b"new and longer",
            Permissions::KeepExisting,
            |temp| {
                // The temp file is complete and durable at this point; the target is untouched.
                assert_eq!(fs::read(temp).unwrap(), b"new and longer");
                assert_eq!(fs::read(&path).unwrap(), b"old");
                Err(io::Error::other("crash between temp-write and rename"))
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "crash between temp-write and rename");
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert!(leftovers(dir.path()).is_empty());
    }

    /// The file's inode: a plain write keeps it, an atomic one renames a new file over it.
    #[cfg(unix)]
    fn inode(path: &Path) -> u64 {
        std::os::unix::fs::MetadataExt::ino(&fs::metadata(path).unwrap())
    }

    #[cfg(unix)]
    #[test]
    fn staged_writes_are_plain_atomic_ones_replace_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        fs::write(&path, b"old").unwrap();
        let before = inode(&path);
        write_as(
            WriteMode::Staged,
            &path,
            b"staged",
            Permissions::KeepExisting,
        )
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"staged");
        assert_eq!(inode(&path), before, "a staged write is plain (in place)");
        write_as(
            WriteMode::Atomic,
            &path,
            b"atomic",
            Permissions::KeepExisting,
        )
        .unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"atomic");
        assert_ne!(
            inode(&path),
            before,
            "an atomic write renames a new file in"
        );
        make_durable(dir.path()).unwrap();
        assert!(leftovers(dir.path()).is_empty());
    }

    /// The mode belongs to the store it was asked of: a staged store's writes (its agents'
    /// files too) are plain, and a store opened after it, on the same thread, writes atomically.
    #[cfg(unix)]
    #[test]
    fn a_staged_store_leaves_no_mode_behind() {
        use crate::village::{AgentId, ShelfStore, VillageStore};
        let dir = tempfile::tempdir().unwrap();
        let agent = AgentId::new("a1").unwrap();
        let staged = VillageStore::staged(dir.path());
        staged.write_ordinance("one").unwrap();
        let ordinance = dir.path().join("Ordinance.md");
        let first = inode(&ordinance);
        staged.write_ordinance("two").unwrap();
        assert_eq!(inode(&ordinance), first, "the staged store writes in place");
        let files = staged.agent_files(&agent).unwrap();
        files.write_skill("one").unwrap();
        let skill = files.path("SKILL.md");
        let skill_first = inode(&skill);
        files.write_skill("two").unwrap();
        assert_eq!(
            inode(&skill),
            skill_first,
            "its agents' files are staged too"
        );
        let shelf = ShelfStore::staged(dir.path());
        shelf.save_jev(&Default::default()).unwrap();
        let jev = dir.path().join("jev.json");
        let jev_first = inode(&jev);
        shelf.save_jev(&Default::default()).unwrap();
        assert_eq!(inode(&jev), jev_first, "the staged shelf writes in place");

        VillageStore::new(dir.path())
            .write_ordinance("three")
            .unwrap();
        assert_ne!(
            inode(&ordinance),
            first,
            "a plain store writes atomically after it"
        );
        let atomic_files = VillageStore::new(dir.path()).agent_files(&agent).unwrap();
        atomic_files.write_skill("three").unwrap();
        assert_ne!(inode(&skill), skill_first);
        ShelfStore::new(dir.path())
            .save_jev(&Default::default())
            .unwrap();
        assert_ne!(inode(&jev), jev_first);
        assert_eq!(fs::read_to_string(&ordinance).unwrap(), "three");
    }

    #[cfg(unix)]
    #[test]
    fn staged_secret_files_are_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("mcp.json");
        fs::write(&secret, b"old").unwrap();
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o644)).unwrap();
        write_as(WriteMode::Staged, &secret, b"{}", Permissions::OwnerOnly).unwrap();
        assert_eq!(fs::read(&secret).unwrap(), b"{}");
        assert_eq!(
            fs::metadata(&secret).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn create_new_refuses_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        create_new_atomic(&path, b"first").unwrap();
        let err = create_new_atomic(&path, b"second").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&path).unwrap(), b"first");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn stale_temps_of_a_crashed_writer_are_swept_fresh_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        let stale = dir.path().join(".world.json.0123.tmp");
        let fresh = dir.path().join(".world.json.4567.tmp");
        let other = dir.path().join(".schedules.json.89ab.tmp");
        for p in [&stale, &fresh, &other] {
            fs::write(p, b"partial").unwrap();
        }
        let old = std::time::SystemTime::now() - STALE_TEMP_AGE - std::time::Duration::from_secs(1);
        for p in [&stale, &other] {
            File::options()
                .write(true)
                .open(p)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        write_atomic(&path, b"new", Permissions::KeepExisting).unwrap();
        assert!(!stale.exists(), "a stale temp of this file is removed");
        assert!(
            fresh.exists(),
            "a temp that may belong to a write in progress is kept"
        );
        assert!(
            other.exists(),
            "temps of other files are left to their own writes"
        );
    }

    #[cfg(unix)]
    #[test]
    fn owner_only_and_kept_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("mcp_server.json");
        write_atomic(&secret, b"{}", Permissions::OwnerOnly).unwrap();
        assert_eq!(
            fs::metadata(&secret).unwrap().permissions().mode() & 0o777,
            0o600
        );

        let shared = dir.path().join("Ordinance.md");
        fs::write(&shared, b"x").unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&shared, b"y", Permissions::KeepExisting).unwrap();
        assert_eq!(
            fs::metadata(&shared).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }
}
