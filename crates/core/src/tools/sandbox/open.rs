//! Opening beneath a folder handle (Unix): every path is resolved by the kernel relative to the
//! open root, never as a string. Linux uses `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS` (plus `RESOLVE_NO_SYMLINKS` when links are refused); elsewhere, or
//! on a kernel without `openat2`, the path is walked one component at a time with `O_NOFOLLOW`,
//! which refuses every symlink.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// Whether a resolution may pass through symlinks that stay beneath the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// Symlinks are followed while they stay beneath the root.
    Beneath,
    /// No symlink anywhere in the path.
    Refuse,
}

/// Which resolution a jail uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resolver {
    /// The kernel's (`openat2`) where it has it, else the portable walk.
    Kernel,
    /// Always the portable walk (the jail's tests of hosts without `openat2`).
    Portable,
}

/// Opens `rel` (components already checked: only normal names) beneath `root`.
pub(crate) fn open_beneath(
    root: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
    links: Links,
    resolver: Resolver,
) -> Result<OwnedFd, Errno> {
    // Never inherited by a child (a `run` command must get no descriptor of ours); a
    // terminal opened for reading must not become our controlling one.
    let flags = flags | OFlags::CLOEXEC;
    let flags = if flags.contains(OFlags::PATH) {
        flags
    } else {
        flags | OFlags::NOCTTY
    };
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if resolver == Resolver::Kernel {
        use rustix::fs::ResolveFlags;
        let mut resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        if links == Links::Refuse {
            resolve |= ResolveFlags::NO_SYMLINKS;
        }
        let target = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        match rustix::fs::openat2(root, target, flags, mode, resolve) {
            Err(Errno::NOSYS) | Err(Errno::PERM) if openat2_missing(root) => {}
            other => return other,
        }
    }
    let _ = (links, resolver);
    walk(root, rel, flags, mode)
}

/// Whether the kernel resolves beneath `root` here (`openat2` present and allowed).
pub(crate) fn kernel_resolves(root: BorrowedFd<'_>) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        !openat2_missing(root)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = root;
        false
    }
}

/// Whether `openat2` itself is unavailable (old kernels, some seccomp filters), as opposed to
/// refusing this one path.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn openat2_missing(root: BorrowedFd<'_>) -> bool {
    use rustix::fs::ResolveFlags;
    matches!(
        rustix::fs::openat2(
            root,
            ".",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH
        ),
        Err(Errno::NOSYS) | Err(Errno::PERM)
    )
}

/// The portable resolution: one component at a time, never following a link.
fn walk(root: BorrowedFd<'_>, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let names: Vec<&OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(Errno::XDEV),
        })
        .collect::<Result<_, _>>()?;
    let Some((last, parents)) = names.split_last() else {
        return rustix::fs::openat(root, ".", flags, mode);
    };
    let mut dir: Option<OwnedFd> = None;
    for name in parents {
        let at = dir.as_ref().map_or(root, AsFd::as_fd);
        let next = rustix::fs::openat(
            at,
            *name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        dir = Some(next);
    }
    let at = dir.as_ref().map_or(root, AsFd::as_fd);
    rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW, mode)
}
