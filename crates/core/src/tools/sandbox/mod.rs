//! The work-folder jail of the file tools. The folder is opened once and every path the model
//! gives is resolved by the kernel beneath that handle (`open.rs`), never as a checked string:
//! `..`, absolute paths elsewhere, symlinks out of the folder (also ones swapped in while a call
//! runs), NUL bytes and odd Unicode are refused. Reads may pass through links that stay inside;
//! writes pass through no link at all, create parents one folder at a time without following
//! links, and never follow a link as the last component. Only regular files are read or
//! written: a FIFO, socket or device is refused without blocking. Fenced sub-folders
//! (`blackboard/`, the village's `judges/`) refuse writes.

mod open;
mod ops;

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{FileType, Mode, OFlags};
use rustix::io::Errno;

pub(crate) use open::{Links, Resolver};
pub use ops::{Entry, EntryKind, WriteMode};

/// Why a path is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// No work folder is set for this agent.
    #[error("no work folder is set for this agent")]
    NoWorkDir,
    /// The path holds a NUL byte, a control character or odd Unicode.
    #[error(
        "the path holds a NUL byte, a control character or an invisible/bidirectional Unicode character"
    )]
    OddCharacters,
    /// The path leaves the work folder.
    #[error("the path leaves the work folder")]
    Escapes,
    /// The path passes through a symlink where links are not allowed, or a write would go
    /// through a hard link.
    #[error(
        "the path passes through a link (or the file has another name: a hard link); use the real path"
    )]
    Link,
    /// The path names something other than a regular file.
    #[error("not a regular file (a folder, FIFO, socket or device)")]
    NotRegular,
    /// The path is in a fenced folder (writes only).
    #[error("the path is in a fenced folder ({0}); this tool cannot write there")]
    Fenced(String),
    /// Nothing is there.
    #[error("no such file or folder")]
    NotFound,
    /// Something is there already.
    #[error("it exists already")]
    Exists,
    /// The file is larger than the tool takes.
    #[error("the file is larger than this tool takes ({0} bytes); use `run` for large files")]
    TooLarge(u64),
    /// The file system refused.
    #[error("{0}")]
    Io(String),
}

impl SandboxError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoWorkDir => "SANDBOX_NO_WORK_DIR",
            Self::OddCharacters => "SANDBOX_ODD_PATH",
            Self::Escapes => "SANDBOX_ESCAPE",
            Self::Link => "SANDBOX_LINK",
            Self::NotRegular => "SANDBOX_NOT_REGULAR",
            Self::Fenced(_) => "SANDBOX_FENCED",
            Self::NotFound => "SANDBOX_NOT_FOUND",
            Self::Exists => "SANDBOX_EXISTS",
            Self::TooLarge(_) => "SANDBOX_TOO_LARGE",
            Self::Io(_) => "SANDBOX_IO",
        }
    }

    fn from_errno(e: Errno) -> Self {
        match e {
            Errno::XDEV => Self::Escapes,
            Errno::LOOP | Errno::MLINK => Self::Link,
            Errno::NOENT => Self::NotFound,
            Errno::EXIST => Self::Exists,
            Errno::NXIO | Errno::NODEV | Errno::ISDIR => Self::NotRegular,
            other => Self::Io(std::io::Error::from(other).to_string()),
        }
    }
}

impl crate::error::Coded for SandboxError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }
}

/// Text read from a file, at most what the caller may show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedText {
    /// The text (UTF-8; a character cut at the bound is dropped).
    pub text: String,
    /// The file's size in bytes.
    pub size: u64,
    /// Whether the file holds more than was read.
    pub truncated: bool,
}

/// The jail of one agent's work folder (or of a `rag` source, read-only): an open handle on
/// the folder and the rules for paths beneath it.
#[derive(Debug, Clone)]
pub struct WorkDir {
    root: PathBuf,
    handle: Arc<OwnedFd>,
    fences: Vec<PathBuf>,
    read_links: Links,
    resolver: Resolver,
}

impl WorkDir {
    /// A jail rooted at `root` (canonicalised and opened; it must exist).
    pub fn new(root: &Path) -> Result<Self, SandboxError> {
        let root = root
            .canonicalize()
            .map_err(|e| SandboxError::Io(format!("work folder: {e}")))?;
        let handle = rustix::fs::open(
            &root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| SandboxError::Io(format!("work folder: {}", std::io::Error::from(e))))?;
        Ok(Self {
            root,
            handle: Arc::new(handle),
            fences: vec![PathBuf::from("blackboard")],
            read_links: Links::Beneath,
            resolver: Resolver::Kernel,
        })
    }

    /// The same jail resolving every path with the portable walk, as on a host without
    /// `openat2` — the jail's tests run each escape against both. Nothing in the product
    /// calls it: the resolver is never a setting a user or an agent can change.
    #[doc(hidden)]
    #[must_use]
    pub fn with_portable_resolver(mut self) -> Self {
        self.resolver = Resolver::Portable;
        self
    }

    /// Whether paths are resolved by the kernel (`openat2`, Linux 5.6+, unless a seccomp
    /// profile refuses it) rather than by the portable walk, which never follows a link.
    pub fn kernel_resolves(&self) -> bool {
        self.resolver == Resolver::Kernel && open::kernel_resolves(self.handle.as_fd())
    }

    /// Also refuses writes inside `folder` (the village's data folder, for instance) when it
    /// lies inside the jail; when it is the jail's root or holds it, every write is refused.
    pub fn fence(mut self, folder: &Path) -> Self {
        let real = folder
            .canonicalize()
            .unwrap_or_else(|_| folder.to_path_buf());
        if let Ok(rel) = real.strip_prefix(&self.root) {
            self.fences.push(rel.to_path_buf());
        } else if self.root.starts_with(&real) {
            self.fences.push(PathBuf::new());
        }
        self
    }

    /// The canonical root (for display and as the working folder of `run`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A jail on the sub-folder `name` (created when absent and `create`), with no fences and
    /// no links anywhere: the blackboard's own view.
    pub fn sub_jail(&self, name: &str, create: bool) -> Result<Self, SandboxError> {
        let rel = self.relative(name)?;
        if create {
            self.mkdir_all(&rel)?;
        }
        let handle = self.open_rel(&rel, OFlags::RDONLY | OFlags::DIRECTORY, Links::Refuse)?;
        Ok(Self {
            root: self.root.join(&rel),
            handle: Arc::new(handle),
            fences: Vec::new(),
            read_links: Links::Refuse,
            resolver: self.resolver,
        })
    }

    /// The checked relative form of a path the model gave: no odd characters, no `..`, no
    /// root; an absolute path is accepted only when it names something under the root.
    pub fn relative(&self, given: &str) -> Result<PathBuf, SandboxError> {
        if given.chars().any(is_odd) {
            return Err(SandboxError::OddCharacters);
        }
        let path = Path::new(given);
        let path = if path.is_absolute() {
            path.strip_prefix(&self.root)
                .map_err(|_| SandboxError::Escapes)?
        } else {
            path
        };
        let mut out = PathBuf::new();
        for component in path.components() {
            match component {
                Component::Normal(part) => out.push(part),
                Component::CurDir => {}
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                    return Err(SandboxError::Escapes);
                }
            }
        }
        Ok(out)
    }

    /// Opens an existing regular file for reading. A FIFO or device is refused without
    /// blocking (it is opened non-blocking and checked before any read).
    pub fn open_read(&self, given: &str) -> Result<File, SandboxError> {
        let rel = self.relative(given)?;
        let fd = self.open_rel(&rel, OFlags::RDONLY | OFlags::NONBLOCK, self.read_links)?;
        regular(fd)
    }

    /// Reads at most `max_bytes` of an existing regular file as UTF-8 text.
    pub fn read_text(&self, given: &str, max_bytes: u64) -> Result<BoundedText, ReadError> {
        let file = self.open_read(given)?;
        read_bounded(file, max_bytes)
    }

    /// Reads at most `max_bytes` of a regular file at `rel`, a path a walk found beneath the
    /// root (normal components only; the string rules of [`Self::relative`] are for the paths a
    /// model gives). Links, FIFOs and devices are treated as by [`Self::open_read`].
    pub(crate) fn read_text_at(
        &self,
        rel: &Path,
        max_bytes: u64,
    ) -> Result<BoundedText, ReadError> {
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(SandboxError::Escapes.into());
        }
        let fd = self.open_rel(rel, OFlags::RDONLY | OFlags::NONBLOCK, self.read_links)?;
        read_bounded(regular(fd)?, max_bytes)
    }

    /// Opens an existing folder beneath the root.
    pub(crate) fn open_dir(&self, rel: &Path) -> Result<OwnedFd, SandboxError> {
        self.open_rel(rel, OFlags::RDONLY | OFlags::DIRECTORY, self.read_links)
    }

    pub(crate) fn open_rel(
        &self,
        rel: &Path,
        flags: OFlags,
        links: Links,
    ) -> Result<OwnedFd, SandboxError> {
        open::open_beneath(
            self.handle.as_fd(),
            rel,
            flags,
            Mode::empty(),
            links,
            self.resolver,
        )
        .map_err(SandboxError::from_errno)
    }

    /// Refuses a write inside a fence (compared without case: some file systems ignore it).
    fn check_fences(&self, rel: &Path) -> Result<(), SandboxError> {
        if rel.as_os_str().is_empty() {
            return Err(SandboxError::Escapes);
        }
        let lower = |p: &Path| p.to_string_lossy().to_lowercase();
        let rel_lower = PathBuf::from(lower(rel));
        for fence in &self.fences {
            if rel_lower.starts_with(lower(fence)) {
                let name = fence.to_string_lossy().into_owned();
                return Err(SandboxError::Fenced(format!("{name}/")));
            }
        }
        Ok(())
    }

    /// Refuses moving or removing a folder that holds a fence (the fence would move with it).
    fn check_fence_ancestors(&self, rel: &Path) -> Result<(), SandboxError> {
        let lower = |p: &Path| PathBuf::from(p.to_string_lossy().to_lowercase());
        for fence in &self.fences {
            if lower(fence).starts_with(lower(rel)) {
                let name = fence.to_string_lossy().into_owned();
                return Err(SandboxError::Fenced(format!("{name}/")));
            }
        }
        Ok(())
    }
}

/// Why a bounded text read failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The path was refused or could not be opened.
    #[error(transparent)]
    Refused(#[from] SandboxError),
    /// The bytes are not UTF-8 text.
    #[error("not a UTF-8 text file")]
    NotText,
}

impl crate::error::Coded for ReadError {
    fn code(&self) -> &'static str {
        match self {
            Self::Refused(e) => e.code(),
            Self::NotText => "READ_NOT_TEXT",
        }
    }
}

/// Keeps `fd` only when it is a regular file; clears the non-blocking flag it was opened with.
fn regular(fd: OwnedFd) -> Result<File, SandboxError> {
    let stat = rustix::fs::fstat(&fd).map_err(SandboxError::from_errno)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(SandboxError::NotRegular);
    }
    let flags = rustix::fs::fcntl_getfl(&fd).map_err(SandboxError::from_errno)?;
    rustix::fs::fcntl_setfl(&fd, flags - OFlags::NONBLOCK).map_err(SandboxError::from_errno)?;
    Ok(File::from(fd))
}

/// Reads at most `max_bytes` (never more into memory), as UTF-8; a character cut at the bound
/// is dropped.
pub(super) fn read_bounded(file: File, max_bytes: u64) -> Result<BoundedText, ReadError> {
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(max_bytes)).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| SandboxError::Io(e.to_string()))?;
    let truncated = bytes.len() as u64 > max_bytes;
    bytes.truncate(usize::try_from(max_bytes).unwrap_or(usize::MAX));
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) if truncated && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| ReadError::NotText)?
        }
        Err(_) => return Err(ReadError::NotText),
    };
    Ok(BoundedText {
        text,
        size,
        truncated,
    })
}

/// Characters a path must not hold: NUL and other controls, bidirectional overrides and
/// isolates, zero-width characters and the BOM.
fn is_odd(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounded(bytes: &[u8], max: u64) -> Result<BoundedText, ReadError> {
        let dir = tempfile::tempdir().map_err(|e| SandboxError::Io(e.to_string()))?;
        let path = dir.path().join("f");
        std::fs::write(&path, bytes).map_err(|e| SandboxError::Io(e.to_string()))?;
        let file = File::open(&path).map_err(|e| SandboxError::Io(e.to_string()))?;
        read_bounded(file, max)
    }

    #[test]
    fn a_file_of_exactly_the_bound_is_whole() {
        let read = bounded(b"abcd", 4).ok();
        assert_eq!(
            read.map(|r| (r.text, r.truncated)),
            Some(("abcd".into(), false))
        );
        let read = bounded(b"abcde", 4).ok();
        assert_eq!(
            read.map(|r| (r.text, r.truncated, r.size)),
            Some(("abcd".into(), true, 5))
        );
    }

    #[test]
    fn a_character_cut_at_the_bound_is_dropped_but_bad_bytes_are_not_text() {
        // "aé" is 61 c3 a9: a bound of 2 cuts é in half.
        let read = bounded("aéz".as_bytes(), 2).ok();
        assert_eq!(
            read.map(|r| (r.text, r.truncated)),
            Some(("a".into(), true))
        );
        assert_eq!(bounded(b"a\xffb", 10), Err(ReadError::NotText));
        assert_eq!(bounded(b"a\xffbcdef", 4), Err(ReadError::NotText));
    }

    #[test]
    fn odd_characters() {
        assert!(is_odd('\0') && is_odd('\u{202E}') && is_odd('\u{200B}') && is_odd('\n'));
        assert!(!is_odd('é') && !is_odd('日'));
    }
}
