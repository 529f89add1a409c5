//! The one file of the workspace allowed `unsafe`: the raw libc calls around a child — the
//! watchdog pipe, signals to a process group, and the hook that runs in the forked child
//! before `exec` (parent-death signal, the group watchdog, Landlock's `restrict_self`).
//!
//! Everything in the hook is async-signal-safe: the parent process has many threads, so between
//! `fork` and `exec` the child may only make raw system calls — no allocation, no lock, no
//! `std` I/O. The values it needs are plain integers prepared by the parent.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// A close-on-exec pipe: `(read end, write end)`. The watchdog of a group reads the first and
/// acts when every copy of the second is closed (our guard dropped, or this process died).
pub(super) fn watchdog_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [libc::c_int; 2] = [-1, -1];
    // SAFETY: `fds` is a valid, writable array of two ints, which is all pipe2 needs.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and nothing else owns them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sends `signal` to every process of the group `pgid`; false when none received it.
/// Refuses the special ids (0, 1 and negatives), which would reach far more than one group.
pub(super) fn signal_group(pgid: i32, signal: libc::c_int) -> bool {
    if pgid <= 1 {
        return false;
    }
    // SAFETY: kill has no memory-safety preconditions; a negative pid names a process group.
    unsafe { libc::kill(-pgid, signal) == 0 }
}

/// The integers the child-side hook needs, prepared by the parent before `fork`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Hooks {
    /// Our pid: the child checks that its parent is still us after setting the death signal.
    pub parent: libc::pid_t,
    /// The read end of the watchdog pipe.
    pub watchdog: RawFd,
    /// A Landlock ruleset to enforce, when there is one.
    pub landlock: Option<RawFd>,
}

/// Installs the hook on `command`. `std` sets the process group (`process_group(0)`) before
/// running it, so the watchdog forked here is a member of the child's group.
pub(super) fn install(command: &mut tokio::process::Command, hooks: Hooks) {
    // SAFETY: the closure runs in the forked child before exec. It only reads the `Copy` values
    // captured above and calls async-signal-safe functions (see `child_setup`); it allocates
    // nothing and takes no lock, so a lock held by another thread at fork time cannot bite.
    unsafe {
        command.pre_exec(move || child_setup(hooks));
    }
}

/// Runs in the child between `fork` and `exec`.
fn child_setup(hooks: Hooks) -> io::Result<()> {
    // SAFETY: prctl, getppid, fork, waitpid, syscall and _exit are async-signal-safe system
    // calls; every pointer passed points into this stack frame.
    unsafe {
        // Die with the thread that forked us (a tokio worker, alive as long as the runtime).
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        // The parent may have died between fork and prctl: then no signal would ever come.
        if libc::getppid() != hooks.parent {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        spawn_watchdog(hooks.watchdog)?;
        if let Some(ruleset) = hooks.landlock {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0 as libc::c_uint) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Forks the watchdog through an intermediate process that exits at once, so the watchdog is
/// adopted by init (or the nearest subreaper) instead of becoming the child's own child.
///
/// # Safety
/// Only call in a forked child before exec (async-signal-safe calls only).
unsafe fn spawn_watchdog(read_end: RawFd) -> io::Result<()> {
    // SAFETY: see the function's contract; status points into this frame.
    unsafe {
        let first = libc::fork();
        if first < 0 {
            return Err(io::Error::last_os_error());
        }
        if first > 0 {
            let mut status: libc::c_int = 0;
            while libc::waitpid(first, &raw mut status, 0) < 0 {
                if *libc::__errno_location() != libc::EINTR {
                    break;
                }
            }
            return Ok(());
        }
        if libc::fork() != 0 {
            libc::_exit(0);
        }
        watch(read_end)
    }
}

/// The watchdog: holds only the read end, waits for end-of-file (our guard dropped or this
/// process died), then SIGTERM to the group, 2 s, SIGKILL to the group (itself included).
///
/// # Safety
/// Only call in a forked child that never returns to Rust code (async-signal-safe calls only).
unsafe fn watch(read_end: RawFd) -> ! {
    // SAFETY: see the function's contract; every pointer points into this frame.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        // Named for `ps`, and holding no folder busy (the child's cwd is the work folder).
        libc::prctl(libc::PR_SET_NAME, c"fuseforks-wd".as_ptr(), 0, 0, 0);
        libc::chdir(c"/".as_ptr());
        // Keep nothing else: not the child's stdio pipes (their readers wait for EOF), not the
        // write ends of other groups' watchdogs (those must see EOF when their owner closes).
        if libc::dup2(read_end, 0) < 0 {
            libc::_exit(1);
        }
        if libc::syscall(
            libc::SYS_close_range,
            1 as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        ) != 0
        {
            for fd in 1..4096 {
                libc::close(fd);
            }
        }
        let mut byte = 0u8;
        loop {
            let n = libc::read(0, (&raw mut byte).cast::<libc::c_void>(), 1);
            if n == 0 || (n < 0 && *libc::__errno_location() != libc::EINTR) {
                break;
            }
        }
        libc::kill(0, libc::SIGTERM);
        let pause = libc::timespec {
            tv_sec: 2,
            tv_nsec: 0,
        };
        libc::nanosleep(&raw const pause, std::ptr::null_mut());
        libc::kill(0, libc::SIGKILL);
        libc::_exit(0)
    }
}

/// Makes this process non-dumpable, so that no process of the same user — a child included,
/// an MCP server or a `run` command — can read `/proc/<our pid>/environ` (our secrets) or
/// attach to us; it also turns our core dumps off. Root (CAP_SYS_PTRACE) is not stopped.
pub(super) fn hide_own_environment() -> bool {
    // SAFETY: prctl(PR_SET_DUMPABLE) takes plain integers and touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0) == 0 }
}

/// Whether this process is non-dumpable (see [`hide_own_environment`]).
pub(super) fn own_environment_hidden() -> bool {
    // SAFETY: prctl(PR_GET_DUMPABLE) takes no pointer.
    unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 }
}
