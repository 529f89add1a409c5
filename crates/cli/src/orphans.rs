//! The binary as a child subreaper (Linux): an orphan among its children's descendants — a
//! `run` command's `setsid` grandchild — is adopted by this process instead of init, and ended
//! on the next SIGCHLD when it carries a contained child's mark (see
//! `fuseforks_core::process`); adopted processes that exited are reaped. Started before the
//! command runs; [`finish`] ends what is left before the process exits, so nothing a turn
//! started outlives `ask` or `serve`.

/// How often the orphans are looked for without a SIGCHLD: a safety net only, as every
/// adoption follows the exit of one of our children (a SIGCHLD). A sweep reads
/// `/proc/<pid>/stat` of every process (about 4 ms for 76 processes, measured in Python).
#[cfg(target_os = "linux")]
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Makes this process a subreaper and sweeps on every SIGCHLD (call inside the runtime).
pub(crate) fn start() {
    #[cfg(target_os = "linux")]
    {
        use fuseforks_core::process::{adopt_orphans, end_orphans};
        use tokio::signal::unix::{SignalKind, signal};
        if !adopt_orphans() {
            return;
        }
        let Ok(mut children) = signal(SignalKind::child()) else {
            return;
        };
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = children.recv() => {}
                    () = tokio::time::sleep(SWEEP_EVERY) => {}
                }
                end_orphans();
            }
        });
    }
}

/// Ends the marked orphans left at exit (and those their deaths orphan in turn), for at most
/// half a second.
pub(crate) fn finish() {
    #[cfg(target_os = "linux")]
    {
        let until = std::time::Instant::now() + std::time::Duration::from_millis(500);
        while fuseforks_core::process::end_orphans().killed > 0 && std::time::Instant::now() < until
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}
