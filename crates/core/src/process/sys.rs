//! The one file of the workspace allowed `unsafe`: the raw libc calls around a child — the
//! watchdog pipe, signals to a process group or one process, reaping, the child subreaper, and
//! the hook that runs in the forked child before `exec` (parent-death signal, the group
//! watchdog, the subreaper and the orphan mark of a contained child, Landlock's
//! `restrict_self`).
//!
//! What holds in the hook: the parent process has many threads, so between `fork` and `exec`
//! the child makes only raw system calls through libc's thin wrappers (`prctl`, `getppid`,
//! `clone`, `waitpid`, `dup2`, `close_range`, `open`, `chdir`, `execve`, `read`, `kill`,
//! `nanosleep`, `_exit`) — no allocation, no lock, no `std` I/O. The watchdog's processes
//! are made with the raw `clone` system call, not libc's `fork`, so no `pthread_atfork`
//! handler of any library runs in the hook. Everything it reads — integers, and the
//! watchdog's `argv`/`envp` as C strings — was prepared by the parent before the spawn.

#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

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

/// What the child-side hook needs, prepared by the parent before `fork`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Hooks {
    /// Our pid: the child checks that its parent is still us after setting the death signal.
    pub parent: libc::pid_t,
    /// The read end of the watchdog pipe.
    pub watchdog: RawFd,
    /// A Landlock ruleset to enforce, when there is one.
    pub landlock: Option<RawFd>,
    /// The program the watchdog becomes (see [`watchdog_program`]).
    pub program: &'static WatchdogProgram,
    /// Contain what the child starts (`run`, probes): it becomes a child subreaper (orphans
    /// of its descendants come back to it while it lives, then to us) and carries the orphan
    /// mark (see [`install_orphan_mark`]), which nothing it starts can shed.
    pub contain: bool,
    /// Tests only: a seccomp filter answering `openat2` with `ENOSYS` (a host whose kernel or
    /// container runtime lacks it), so that the jail's portable resolver can be proven.
    pub deny_openat2: bool,
}

/// The watchdog as a program of its own: `/bin/sh` running a three-line script, with the
/// pipe's read end on its standard input. Executing it drops the copy-on-write image of our
/// memory (heap, caches, keys) that a forked process would otherwise keep for its lifetime.
/// Built once, in the parent; the hook only reads the pointers.
#[derive(Debug)]
pub(super) struct WatchdogProgram {
    path: CString,
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    /// Tests only: behave as if the watchdog's own fork failed.
    fail_fork: bool,
}

// SAFETY: the raw pointers point into the `CString`s owned by the same value (their heap
// buffers never move); the value is never mutated after construction and lives in a static.
unsafe impl Send for WatchdogProgram {}
// SAFETY: as above: shared only for reading.
unsafe impl Sync for WatchdogProgram {}

/// The shell the watchdog runs (absent in distroless images: then it stays a forked loop).
const WATCHDOG_SHELL: &CStr = c"/bin/sh";

/// The watchdog program, built on first use (in the parent, before any spawn).
pub(super) fn watchdog_program() -> &'static WatchdogProgram {
    static PROGRAM: OnceLock<WatchdogProgram> = OnceLock::new();
    PROGRAM.get_or_init(|| WatchdogProgram::new(WATCHDOG_SHELL))
}

impl WatchdogProgram {
    /// The watchdog script run by `shell`.
    pub(super) fn new(shell: &CStr) -> Self {
        let grace = super::KILL_GRACE.as_secs().max(1);
        // TERM, INT and HUP ignored (a kill of the group must not end the watchdog before it
        // acts); `read` returns non-zero at end-of-file, when every write end is closed.
        let script = format!(
            "trap '' TERM INT HUP; while read _; do :; done; kill -TERM 0; sleep {grace}; kill -KILL 0"
        );
        let strings: Vec<CString> = ["fuseforks-wd", "-c", script.as_str(), "PATH=/usr/bin:/bin"]
            .into_iter()
            .filter_map(|s| CString::new(s).ok())
            .collect();
        let pointer = |i: usize| strings.get(i).map_or(std::ptr::null(), |s| s.as_ptr());
        let argv = vec![pointer(0), pointer(1), pointer(2), std::ptr::null()];
        let envp = vec![pointer(3), std::ptr::null()];
        Self {
            path: shell.to_owned(),
            _strings: strings,
            argv,
            envp,
            fail_fork: false,
        }
    }

    /// Tests only: a program whose watchdog fork "fails" (as with no process slot left).
    #[cfg(test)]
    pub(super) fn failing_fork() -> Self {
        Self {
            fail_fork: true,
            ..Self::new(WATCHDOG_SHELL)
        }
    }
}

/// Installs the hook on `command`. `std` sets the process group (`process_group(0)`) before
/// running it, so the watchdog forked here is a member of the child's group.
pub(super) fn install(command: &mut tokio::process::Command, hooks: Hooks) {
    // SAFETY: the closure runs in the forked child before exec. It only reads the `Copy` values
    // captured above (and the static program they point to) and makes raw system calls (see
    // `child_setup`); it allocates nothing and takes no lock, so a lock held by another
    // thread at fork time cannot bite.
    unsafe {
        command.pre_exec(move || child_setup(hooks));
    }
}

/// Runs in the child between `fork` and `exec`.
fn child_setup(hooks: Hooks) -> io::Result<()> {
    // SAFETY: prctl, getppid and syscall are raw system calls; every pointer passed points
    // into this stack frame; `spawn_watchdog`'s contract holds (we are the forked child).
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
        spawn_watchdog(hooks.watchdog, hooks.program)?;
        // After the watchdog: it must be adopted by us (or init), never by this child.
        if hooks.contain {
            if libc::prctl(
                libc::PR_SET_CHILD_SUBREAPER,
                1 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // Best effort: without seccomp the orphans of this child are only not told apart.
            install_orphan_mark();
        }
        if hooks.deny_openat2 {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if !install_openat2_denial() {
                return Err(io::Error::last_os_error());
            }
        }
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

/// `BPF_RET | BPF_K`: return the constant.
const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

/// Installs the orphan mark: a seccomp filter of one instruction that allows every system
/// call. It changes nothing the child may do, but it is inherited by everything the child
/// starts and can never be removed, and `/proc/<pid>/status` counts it (`Seccomp_filters`):
/// a process with more filters than we have is one that a contained child started. Needs
/// no-new-privs set first. False when the kernel refused.
///
/// # Safety
/// Only call in a forked child before exec (raw system calls only; the filter is on the stack).
unsafe fn install_orphan_mark() -> bool {
    let mut filter = [libc::sock_filter {
        code: RET_K,
        jt: 0,
        jf: 0,
        k: libc::SECCOMP_RET_ALLOW,
    }];
    install_filter(&mut filter)
}

/// Installs a filter that answers `openat2` with `ENOSYS` and allows everything else (tests
/// of the portable resolver). Needs no-new-privs set first.
///
/// # Safety
/// As [`install_orphan_mark`].
unsafe fn install_openat2_denial() -> bool {
    let load_nr = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let jump_eq = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    #[allow(clippy::cast_sign_loss)]
    let openat2 = libc::SYS_openat2 as u32;
    #[allow(clippy::cast_sign_loss)]
    let enosys = libc::SECCOMP_RET_ERRNO | (libc::ENOSYS as u32);
    let mut filter = [
        // The system call's number is the first word of `seccomp_data`.
        libc::sock_filter {
            code: load_nr,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: jump_eq,
            jt: 0,
            jf: 1,
            k: openat2,
        },
        libc::sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: enosys,
        },
        libc::sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    install_filter(&mut filter)
}

/// `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog)` on `filter`.
fn install_filter(filter: &mut [libc::sock_filter]) -> bool {
    let Ok(len) = u16::try_from(filter.len()) else {
        return false;
    };
    let program = libc::sock_fprog {
        len,
        filter: filter.as_mut_ptr(),
    };
    // SAFETY: `program` points at `filter`, which outlives the call; the kernel copies it.
    unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            (&raw const program) as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        ) == 0
    }
}

/// Makes this process a child subreaper: an orphan among its descendants is adopted by it
/// instead of init, so nothing a child started can leave its reach by `setsid` and a double
/// fork. False when the kernel refused.
pub(super) fn become_subreaper() -> bool {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) takes plain integers.
    unsafe {
        libc::prctl(
            libc::PR_SET_CHILD_SUBREAPER,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        ) == 0
    }
}

/// Reaps `pid` if it is a child of ours that has exited; true when it was reaped.
pub(super) fn reap(pid: i32) -> bool {
    if pid <= 1 {
        return false;
    }
    let mut status: libc::c_int = 0;
    // SAFETY: `status` points into this frame; WNOHANG never blocks.
    unsafe { libc::waitpid(pid, &raw mut status, libc::WNOHANG) == pid }
}

/// Sends `signal` to the one process `pid` (never a group, never 0, 1 or a negative id).
pub(super) fn signal_process(pid: i32, signal: libc::c_int) -> bool {
    if pid <= 1 {
        return false;
    }
    // SAFETY: kill has no memory-safety preconditions; a positive pid names one process.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// A new process as by `fork`, through the raw `clone` system call: unlike libc's `fork`, it
/// runs no `pthread_atfork` handler. The child runs on a copy of the caller's stack.
///
/// # Safety
/// Only call in a forked child before exec; the new process must only make raw system calls
/// until it execs or `_exit`s (libc's cached thread state is stale in it).
unsafe fn raw_fork() -> libc::pid_t {
    // SAFETY: flags SIGCHLD only and a null stack: the kernel copies the caller's stack, as for
    // fork. On these architectures the flags come first; elsewhere, libc's fork.
    #[cfg(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "x86",
        target_arch = "arm"
    ))]
    unsafe {
        let pid = libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
        libc::pid_t::try_from(pid).unwrap_or(-1)
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64",
        target_arch = "x86",
        target_arch = "arm"
    )))]
    unsafe {
        libc::fork()
    }
}

/// Starts the watchdog through an intermediate process that exits at once, so the watchdog is
/// adopted by init (or the nearest subreaper) instead of becoming the child's own child. An
/// error when either process could not be made: the child must not run without a watchdog.
///
/// # Safety
/// Only call in a forked child before exec (raw system calls only).
unsafe fn spawn_watchdog(read_end: RawFd, program: &WatchdogProgram) -> io::Result<()> {
    // SAFETY: see the function's contract; status points into this frame.
    unsafe {
        let first = raw_fork();
        if first < 0 {
            return Err(io::Error::last_os_error());
        }
        if first == 0 {
            let second = if program.fail_fork { -1 } else { raw_fork() };
            if second == 0 {
                watch(read_end, program);
            }
            // Tell the child whether the watchdog exists.
            libc::_exit(i32::from(second < 0));
        }
        let mut status: libc::c_int = 0;
        loop {
            if libc::waitpid(first, &raw mut status, 0) >= 0 {
                break;
            }
            match *libc::__errno_location() {
                libc::EINTR => {}
                // SIGCHLD ignored (inherited SIG_IGN): the intermediate was reaped by the
                // kernel and its status is lost; assume the watchdog exists, as before.
                libc::ECHILD => return Ok(()),
                _ => return Err(io::Error::last_os_error()),
            }
        }
        if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(libc::EAGAIN))
        }
    }
}

/// The watchdog: keeps only the read end (as its standard input), then becomes the watchdog
/// program; when that cannot be executed (no `/bin/sh`), does the same in this process: wait
/// for end-of-file (our guard dropped or this process died), then SIGTERM to the group, 2 s,
/// SIGKILL to the group (itself included).
///
/// # Safety
/// Only call in a forked child that never returns to Rust code (raw system calls only).
unsafe fn watch(read_end: RawFd, program: &WatchdogProgram) -> ! {
    // SAFETY: see the function's contract; every pointer points into this frame or into the
    // program, which the parent built and keeps alive in a static.
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
        // Standard output and error on /dev/null (a shell may complain there, harmlessly).
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            if null > 2 {
                libc::close(null);
            }
        }
        libc::execve(
            program.path.as_ptr(),
            program.argv.as_ptr(),
            program.envp.as_ptr(),
        );
        // No shell: the same loop, in this (forked) process.
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
