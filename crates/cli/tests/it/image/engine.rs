//! The container engine as a user drives it: `podman`/`docker` commands, containers removed
//! when their guard drops, and what the kernel says about a container's processes.

use std::path::Path;
use std::process::{Command, Output};

/// The engine `scripts/image.sh` chose (`FUSEFORKS_ENGINE`), Podman otherwise.
pub(crate) fn engine() -> String {
    std::env::var("FUSEFORKS_ENGINE").unwrap_or_else(|_| "podman".into())
}

/// `engine args…`, waited for.
pub(crate) fn run(args: &[&str]) -> Output {
    Command::new(engine()).args(args).output().unwrap()
}

/// `engine args…`, which must succeed; its stdout, trimmed.
pub(crate) fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{} {args:?}: {}",
        engine(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A container by name, removed (with its anonymous volumes) when the guard drops.
pub(crate) struct Container(pub(crate) String);

impl Container {
    /// A name no other run of the test uses.
    pub(crate) fn named(what: &str) -> Self {
        Self(format!("fuseforks-smoke-{what}-{}", std::process::id()))
    }

    /// `inspect --format`.
    pub(crate) fn inspect(&self, format: &str) -> String {
        ok(&["inspect", "--format", format, &self.0])
    }

    /// The host's process id of the container's PID 1.
    pub(crate) fn pid1(&self) -> u32 {
        self.inspect("{{.State.Pid}}").parse().unwrap()
    }

    /// Its stdout and stderr so far.
    pub(crate) fn logs(&self) -> String {
        let out = run(&["logs", &self.0]);
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// Whether it still runs.
    pub(crate) fn running(&self) -> bool {
        self.inspect("{{.State.Running}}") == "true"
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = run(&["rm", "--force", "--volumes", &self.0]);
    }
}

/// A process's `comm` and real UID, read from /proc on the host.
pub(crate) fn process(pid: u32) -> (String, u32) {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    (comm.trim().to_owned(), uid)
}

/// The children of `pid` (its main thread's).
pub(crate) fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// Gives `path` and everything under it to the image's user, as deploy/README.md tells users
/// to (`chown -R 10001:10001`).
pub(crate) fn give_to_image_user(path: &Path) {
    let out = Command::new("chown")
        .args(["-R", "10001:10001"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
