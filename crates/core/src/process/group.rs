//! A child that leads its own process group, with the group's watchdog: the group is ended
//! (SIGTERM, then SIGKILL 2 s later) when [`GroupChild::terminate`] is called, when the
//! `GroupChild` is dropped, and when this process dies, even by SIGKILL.

use std::os::fd::OwnedFd;
use std::time::Duration;

/// How long the group gets between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// A spawned child, leader of its own process group.
#[derive(Debug)]
pub struct GroupChild {
    child: tokio::process::Child,
    pgid: i32,
    /// Whether a Landlock ruleset was enforced on it.
    confined: bool,
    /// The write end of the watchdog pipe: closing it (drop, or our death) ends the group.
    _watchdog: Option<OwnedFd>,
}

impl GroupChild {
    pub(super) fn new(
        child: tokio::process::Child,
        confined: bool,
        watchdog: Option<OwnedFd>,
    ) -> Self {
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .unwrap_or(0);
        Self {
            child,
            pgid,
            confined,
            _watchdog: watchdog,
        }
    }

    /// The child (to take its pipes, wait for it).
    pub fn child_mut(&mut self) -> &mut tokio::process::Child {
        &mut self.child
    }

    /// The process group id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// Whether a Landlock ruleset confines the child.
    pub fn confined(&self) -> bool {
        self.confined
    }

    /// Sends a signal to the whole group (Linux; elsewhere only `terminate` kills the leader).
    #[cfg(target_os = "linux")]
    pub fn signal(&self, signal: i32) -> bool {
        super::sys::signal_group(self.pgid, signal)
    }

    /// Ends the whole group: SIGTERM, up to [`KILL_GRACE`] for the leader to exit, then
    /// SIGKILL to whatever is left of the group; the leader is reaped.
    pub async fn terminate(&mut self) {
        #[cfg(target_os = "linux")]
        self.signal(libc::SIGTERM);
        let _ = tokio::time::timeout(KILL_GRACE, self.child.wait()).await;
        #[cfg(target_os = "linux")]
        self.signal(libc::SIGKILL);
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

#[cfg(target_os = "linux")]
impl Drop for GroupChild {
    fn drop(&mut self) {
        // Off the list of live children: from now on the watchdog ends the group.
        super::orphans::remove(self.pgid);
    }
}
