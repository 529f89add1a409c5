//! Every child process of the engine (the `run` tool, MCP stdio servers, later probes) starts
//! here, so that none outlives us and none sees our secrets:
//!
//! - its own process group (`process_group(0)`), so a kill reaches what it started too;
//! - on Linux, `PR_SET_PDEATHSIG(SIGKILL)` (checked against the race where we died first) and a
//!   group **watchdog**: a tiny process in the child's group holding the read end of a pipe
//!   whose write end only we hold. When we drop the [`GroupChild`] — or die, SIGKILL
//!   included — it reads end-of-file and ends the group: SIGTERM, 2 s, SIGKILL. The death signal
//!   alone would not do: it reaches only the direct child, never what that child started. The
//!   watchdog executes `/bin/sh` (a three-line script), so it keeps no copy of our memory;
//!   without a `/bin/sh` it stays a forked loop of raw system calls;
//! - an environment built from nothing ([`minimal_env`]): never `FUSEFORKS_SECRET_*`; and,
//!   before the first child starts, we make ourselves non-dumpable (Linux), so a child of the
//!   same user cannot read them from `/proc/<our pid>/environ` either (root still can);
//! - optionally a Landlock ruleset ([`Confinement`]), built here and enforced in the child;
//!   a confined child (`run`, probes) is also *contained*: it becomes a child subreaper and
//!   carries the orphan mark, so that a process it starts in a session of its own is adopted
//!   by it, then by us, and ended ([`end_orphans`], once the binary made itself a subreaper
//!   with [`adopt_orphans`]);
//! - listed while its [`GroupChild`] lives, so that a halt SIGKILLs every group at once
//!   ([`kill_every_group`]).
//!
//! The only `unsafe` of the workspace is in `sys.rs` (the pre-exec hook and raw calls).
//!
//! Caveat: the kernel sends the parent-death signal when the *thread* that forked the child
//! exits. Spawn from a tokio worker (async code), never from a `spawn_blocking` thread, which
//! ends after 10 s idle and would take the child with it.
//!
//! # Parts
//!
//! Every child process of the engine starts here (`spawn`):
//!
//! - `mod.rs`: own process group, Landlock when asked; a confined child is also *contained*
//! - `sys.rs`: **the only `unsafe` of the workspace**: the pre-exec hook — `PR_SET_PDEATHSIG`
//!   checked against the parent's early death, the group watchdog made there by raw `clone` and
//!   exec'd as a `/bin/sh` script (a forked loop without one), for a contained child
//!   `PR_SET_CHILD_SUBREAPER`, no-new-privs and the orphan mark (a one-instruction seccomp filter
//!   allowing everything, inherited and never removable), Landlock's `restrict_self` — raw signals,
//!   reaping and the subreaper
//! - `orphans.rs`: the list of our live children, locked across a spawn; `kill_every_group` — the
//!   halt's SIGKILL, no grace —; `adopt_orphans` and `end_orphans` — the binary as a child
//!   subreaper ends the adopted processes that carry the orphan mark and reaps those that exited,
//!   never touching a listed child —; `is_own_descendant`, the control socket's peer check
//! - `group.rs`: `GroupChild`: SIGTERM, 2 s, SIGKILL to the whole group; dropping it or our death
//!   wakes the watchdog, which does the same
//! - `env.rs`: `minimal_env`: `PATH HOME USER LANG TMPDIR` + the entry's `env`, never
//!   `FUSEFORKS_SECRET_*`
//! - `confine.rs`: Landlock rulesets built in the parent, support probed once
//! - `tests.rs` (the watchdog's own tests). **Invariants: no child sees our environment; no child
//!   outlives us, SIGKILL included, unless it leaves its group on purpose — and then, for `run` and
//!   probes, not past the next SIGCHLD of the binary; halt leaves no child a grace.** What this
//!   gives and does not: `docs/threat-model.md`.

#[cfg(target_os = "linux")]
mod confine;
mod env;
mod group;
#[cfg(target_os = "linux")]
mod orphans;
#[cfg(target_os = "linux")]
mod sys;

#[cfg(target_os = "linux")]
pub use confine::{Confinement, LandlockSupport, landlock_support};
pub use env::{PASSED, SECRET_PREFIX, minimal_env};
pub use group::{GroupChild, KILL_GRACE};
#[cfg(target_os = "linux")]
pub use orphans::{OrphanSweep, adopt_orphans, end_orphans, is_own_descendant, kill_every_group};

/// Why a child did not start.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The operating system refused (program missing, not executable, …).
    #[error("cannot start the program: {0}")]
    Io(#[from] std::io::Error),
    /// The Landlock ruleset could not be built.
    #[error("cannot build the sandbox: {0}")]
    Sandbox(String),
}

impl SpawnError {
    /// The `std::io::ErrorKind` when the OS refused.
    pub fn kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            Self::Io(e) => Some(e.kind()),
            Self::Sandbox(_) => None,
        }
    }
}

impl crate::error::Coded for SpawnError {
    fn code(&self) -> &'static str {
        match self {
            Self::Io(_) => "SPAWN_FAILED",
            Self::Sandbox(_) => "SPAWN_SANDBOX_FAILED",
        }
    }
}

/// What to confine a child to (Linux; elsewhere children run unconfined).
#[cfg(not(target_os = "linux"))]
#[derive(Debug, Clone, Default)]
pub struct Confinement {
    /// Ignored off Linux.
    pub read_write: Vec<std::path::PathBuf>,
    /// Ignored off Linux.
    pub read_only: Vec<std::path::PathBuf>,
    /// Ignored off Linux.
    pub deny_network: bool,
}

/// Spawns `command` (program, args, env, cwd and stdio already set; the caller clears the
/// environment) as the leader of a new process group with the death signal and watchdog, and
/// under `confinement` when given and the kernel supports Landlock.
pub fn spawn(
    command: tokio::process::Command,
    confinement: Option<&Confinement>,
) -> Result<GroupChild, SpawnError> {
    #[cfg(target_os = "linux")]
    {
        spawn_linux(command, confinement, sys::watchdog_program())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut command = command;
        #[cfg(unix)]
        command.process_group(0);
        let _ = confinement;
        let child = command.spawn()?;
        Ok(GroupChild::new(child, false, None))
    }
}

/// [`spawn`] under a seccomp filter that answers `openat2` with `ENOSYS`, as on a kernel
/// before 5.6 or under a container runtime's profile that refuses it: the jail's tests run
/// their escapes in such a child to prove the portable resolver takes over. Not for the
/// product: nothing in it calls this.
#[doc(hidden)]
#[cfg(target_os = "linux")]
pub fn spawn_without_openat2(command: tokio::process::Command) -> Result<GroupChild, SpawnError> {
    spawn_hooked(command, None, sys::watchdog_program(), true)
}

/// [`spawn`] on Linux, with the given watchdog program.
#[cfg(target_os = "linux")]
fn spawn_linux(
    command: tokio::process::Command,
    confinement: Option<&Confinement>,
    program: &'static sys::WatchdogProgram,
) -> Result<GroupChild, SpawnError> {
    spawn_hooked(command, confinement, program, false)
}

/// The spawn with every hook: group, death signal, watchdog, containment and Landlock for a
/// confined child, and (tests) the `openat2` denial.
#[cfg(target_os = "linux")]
fn spawn_hooked(
    mut command: tokio::process::Command,
    confinement: Option<&Confinement>,
    program: &'static sys::WatchdogProgram,
    deny_openat2: bool,
) -> Result<GroupChild, SpawnError> {
    command.process_group(0);
    static HIDDEN: std::sync::Once = std::sync::Once::new();
    HIDDEN.call_once(|| {
        let _ = sys::hide_own_environment();
    });
    let ruleset = match confinement {
        Some(c) => confine::build(c).map_err(|e| SpawnError::Sandbox(e.to_string()))?,
        None => None,
    };
    let (read_end, write_end) = sys::watchdog_pipe()?;
    use std::os::fd::AsRawFd;
    sys::install(
        &mut command,
        sys::Hooks {
            parent: i32::try_from(std::process::id()).unwrap_or(0),
            watchdog: read_end.as_raw_fd(),
            landlock: ruleset.as_ref().map(AsRawFd::as_raw_fd),
            program,
            // What a confined child starts is contained: nothing it leaves behind survives it.
            contain: confinement.is_some(),
            deny_openat2,
        },
    );
    // Listed before any sweep may look: a fresh child is never taken for an orphan.
    let mut listed = orphans::lock();
    let child = command.spawn()?;
    if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
        listed.add(pid);
    }
    drop(listed);
    let confined = ruleset.is_some();
    // Our copies of the read end and of the ruleset are no longer needed.
    drop(read_end);
    drop(ruleset);
    Ok(GroupChild::new(child, confined, Some(write_end)))
}

/// The village-log line to write, once per process, when `run` commands cannot be confined
/// (no Landlock in this kernel, or not Linux); `None` when they can, or after the first call.
pub(crate) fn unconfined_notice_once() -> Option<&'static str> {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if confinement_available() || SAID.swap(true, std::sync::atomic::Ordering::SeqCst) {
        return None;
    }
    Some(
        "run: landlock unavailable (kernel without Landlock, or not Linux); run commands are not confined to the work folder",
    )
}

/// The village-log line to write, once per process, when a `run.json` asks for
/// `"network": false` (`deny_network`) and this kernel cannot enforce it (Landlock ABI < 4:
/// Linux < 6.7, no Landlock, or not Linux); `None` otherwise, or after the first call.
pub(crate) fn network_unconfined_notice_once(deny_network: bool) -> Option<&'static str> {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !deny_network
        || network_confinement_available()
        || SAID.swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        return None;
    }
    Some(
        "run: network denial unavailable (Landlock ABI < 4: Linux < 6.7, no Landlock, or not Linux); \"network\": false in run.json is not enforced, run commands may open TCP connections",
    )
}

/// Whether `"network": false` is enforced on this machine (Landlock ABI v4, Linux 6.7+).
pub(crate) fn network_confinement_available() -> bool {
    #[cfg(target_os = "linux")]
    {
        confine::enforces_network(landlock_support())
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Whether `run` commands are confined by Landlock on this machine.
pub(crate) fn confinement_available() -> bool {
    #[cfg(target_os = "linux")]
    {
        matches!(landlock_support(), LandlockSupport::Available(_))
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Whether our environment is hidden from other processes of the same user (Linux: the
/// process is non-dumpable; done by the first [`spawn`]).
pub fn own_environment_hidden() -> bool {
    #[cfg(target_os = "linux")]
    {
        sys::own_environment_hidden()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests;
