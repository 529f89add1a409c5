//! The work-folder jail of the file tools: a path given by the model is resolved against
//! `workDir`, canonicalised, and refused when it leaves the folder — through `..`, an absolute
//! path, a symlink (also one swapped in after the check: opened files are verified through
//! `/proc/self/fd` on Linux), a NUL byte or odd Unicode (controls, bidi overrides, zero-width
//! characters). Fenced sub-folders (`blackboard/`, the village's `judges/`) refuse writes.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Component, Path, PathBuf};

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
    /// The path is in a fenced folder (writes only).
    #[error("the path is in a fenced folder ({0}); this tool cannot write there")]
    Fenced(String),
    /// The file system refused.
    #[error("{0}")]
    Io(String),
}

/// The jail of one agent's work folder.
#[derive(Debug, Clone)]
pub struct WorkDir {
    root: PathBuf,
    fences: Vec<PathBuf>,
}

impl WorkDir {
    /// A jail rooted at `root` (canonicalised; it must exist).
    pub fn new(root: &Path) -> Result<Self, SandboxError> {
        let root = root
            .canonicalize()
            .map_err(|e| SandboxError::Io(format!("work folder: {e}")))?;
        let fences = vec![root.join("blackboard")];
        Ok(Self { root, fences })
    }

    /// Also refuses writes inside `folder` (the village's `judges/`, for instance).
    pub fn fence(mut self, folder: &Path) -> Self {
        self.fences.push(
            folder
                .canonicalize()
                .unwrap_or_else(|_| folder.to_path_buf()),
        );
        self
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves an existing path inside the jail.
    pub fn existing(&self, relative: &str) -> Result<PathBuf, SandboxError> {
        let joined = self.lexical(relative)?;
        let real = joined
            .canonicalize()
            .map_err(|e| SandboxError::Io(e.to_string()))?;
        self.inside(&real)
    }

    /// Resolves a path that may not exist yet: its nearest existing ancestor must be inside the
    /// jail, and no component may be `..`.
    pub fn creatable(&self, relative: &str) -> Result<PathBuf, SandboxError> {
        let joined = self.lexical(relative)?;
        let mut existing = joined.as_path();
        let mut rest = Vec::new();
        while !existing.exists() {
            rest.push(
                existing
                    .file_name()
                    .map(|n| n.to_os_string())
                    .ok_or(SandboxError::Escapes)?,
            );
            existing = existing.parent().ok_or(SandboxError::Escapes)?;
        }
        let mut real = existing
            .canonicalize()
            .map_err(|e| SandboxError::Io(e.to_string()))?;
        self.inside(&real)?;
        for part in rest.into_iter().rev() {
            real.push(part);
        }
        Ok(real)
    }

    /// Resolves a path for writing: creatable, inside the jail, outside every fence.
    pub fn writable(&self, relative: &str) -> Result<PathBuf, SandboxError> {
        let path = self.creatable(relative)?;
        if path == self.root {
            return Err(SandboxError::Escapes);
        }
        for fence in &self.fences {
            if path.starts_with(fence) {
                let name = fence
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Err(SandboxError::Fenced(format!("{name}/")));
            }
        }
        Ok(path)
    }

    /// Opens a resolved file for reading, refusing a symlink at the last component and
    /// verifying where the opened file really is.
    pub fn open_read(&self, path: &Path) -> Result<File, SandboxError> {
        let file = no_follow(OpenOptions::new().read(true))
            .open(path)
            .map_err(io_error)?;
        self.verify(&file)?;
        Ok(file)
    }

    /// Opens a resolved file for writing (created if absent; truncated or appended as asked),
    /// with the same checks as [`WorkDir::open_read`].
    pub fn open_write(&self, path: &Path, append: bool) -> Result<File, SandboxError> {
        let mut options = OpenOptions::new();
        options.write(true).create(true);
        if append {
            options.append(true);
        }
        let file = no_follow(&mut options).open(path).map_err(io_error)?;
        self.verify(&file)?;
        if !append {
            file.set_len(0).map_err(io_error)?;
        }
        Ok(file)
    }

    /// Joins without touching the disk, refusing odd characters and any `..`/root component.
    fn lexical(&self, relative: &str) -> Result<PathBuf, SandboxError> {
        if relative.chars().any(is_odd) {
            return Err(SandboxError::OddCharacters);
        }
        let given = Path::new(relative);
        let relative = if given.is_absolute() {
            // An absolute path is accepted only when it already points inside the jail.
            given
                .strip_prefix(&self.root)
                .map_err(|_| SandboxError::Escapes)?
        } else {
            given
        };
        let mut out = self.root.clone();
        for component in relative.components() {
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

    fn inside(&self, real: &Path) -> Result<PathBuf, SandboxError> {
        if real.starts_with(&self.root) {
            Ok(real.to_path_buf())
        } else {
            Err(SandboxError::Escapes)
        }
    }

    /// Where the opened file really is (Linux: `/proc/self/fd`), which defeats a symlink
    /// swapped into a parent folder after the path was checked.
    fn verify(&self, file: &File) -> Result<(), SandboxError> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
                .map_err(io_error)?;
            self.inside(&real)?;
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = file;
        }
        Ok(())
    }
}

fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A symlink as the last component is refused (ELOOP).
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options
}

fn io_error(e: io::Error) -> SandboxError {
    #[cfg(unix)]
    let refused_symlink = e.raw_os_error() == Some(libc::ELOOP);
    #[cfg(not(unix))]
    let refused_symlink = false;
    if refused_symlink {
        // ELOOP from O_NOFOLLOW: the file is a symlink.
        return SandboxError::Escapes;
    }
    SandboxError::Io(e.to_string())
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

    #[test]
    fn odd_characters() {
        assert!(is_odd('\0') && is_odd('\u{202E}') && is_odd('\u{200B}') && is_odd('\n'));
        assert!(!is_odd('é') && !is_odd('日'));
    }
}
