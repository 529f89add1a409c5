//! The children we own and the orphans they leave (Linux). Every child started through
//! [`super::spawn`] is listed here while its [`super::GroupChild`] lives, so that a halt can
//! SIGKILL every group at once ([`kill_every_group`]). A process that makes itself a child
//! subreaper ([`adopt_orphans`]) receives the orphans of its descendants — a `run` command's
//! `setsid` grandchild included — and [`end_orphans`] ends those that carry the orphan mark
//! of a contained child (`run`, probes; see `sys::install_orphan_mark`) and reaps whatever
//! adopted process has exited. Processes we spawned are never touched here: the list is
//! locked while one is spawned and while the orphans are looked for.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::sync::LockOrRecover;

/// Our live children: pid → process group id.
fn children() -> &'static Mutex<HashMap<i32, i32>> {
    static CHILDREN: OnceLock<Mutex<HashMap<i32, i32>>> = OnceLock::new();
    CHILDREN.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The list, locked: hold it from before a spawn until the child is [`Listed::add`]ed, so that
/// no sweep sees a fresh child before it is listed.
pub(super) struct Listed(MutexGuard<'static, HashMap<i32, i32>>);

/// Locks the list of our children.
pub(super) fn lock() -> Listed {
    Listed(children().lock_or_recover())
}

impl Listed {
    /// Lists a child (its pid leads its group).
    pub(super) fn add(&mut self, pid: i32) {
        self.0.insert(pid, pid);
    }
}

/// Takes a child off the list (its guard is dropped).
pub(super) fn remove(pid: i32) {
    children().lock_or_recover().remove(&pid);
}

/// SIGKILL to every group we spawned, at once (the halt: no grace). Returns how many groups
/// were signalled.
pub fn kill_every_group() -> usize {
    let groups: Vec<i32> = children().lock_or_recover().values().copied().collect();
    groups
        .into_iter()
        .filter(|pgid| super::sys::signal_group(*pgid, libc::SIGKILL))
        .count()
}

/// Makes this process a child subreaper, so that orphans of its children's descendants are
/// adopted by it rather than by init (call once, from the binary, before any child starts).
/// False when the kernel refused. Then call [`end_orphans`] on every SIGCHLD.
pub fn adopt_orphans() -> bool {
    super::sys::become_subreaper()
}

/// What one [`end_orphans`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OrphanSweep {
    /// Marked orphans sent SIGKILL (each with its process group when it leads one).
    pub killed: usize,
    /// Adopted processes that had exited, reaped.
    pub reaped: usize,
}

/// Ends every adopted orphan that carries the mark of a contained child (SIGKILL) and reaps
/// every adopted process that has exited. Our own listed children are left to their owners.
pub fn end_orphans() -> OrphanSweep {
    let own = std::process::id();
    let Some(own_filters) = seccomp_filters(own) else {
        return OrphanSweep::default();
    };
    let listed = children().lock_or_recover();
    let mut sweep = OrphanSweep::default();
    for (pid, stat) in children_of(own) {
        if listed.contains_key(&pid) {
            continue;
        }
        if stat.zombie {
            sweep.reaped += usize::from(super::sys::reap(pid));
        } else if seccomp_filters(u32::try_from(pid).unwrap_or(0)).is_some_and(|n| n > own_filters)
        {
            if stat.pgid == pid && !listed.values().any(|g| *g == pid) {
                super::sys::signal_group(pid, libc::SIGKILL);
            }
            sweep.killed += usize::from(super::sys::signal_process(pid, libc::SIGKILL));
        }
    }
    sweep
}

/// What `/proc/<pid>/stat` says of a process.
struct Stat {
    zombie: bool,
    pgid: i32,
}

/// The processes whose parent is `parent`, from `/proc`.
fn children_of(parent: u32) -> Vec<(i32, Stat)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (ppid, stat) = parse_stat(&text)?;
            (ppid == parent).then_some((pid, stat))
        })
        .collect()
}

/// The parent and the state of a `/proc/<pid>/stat` line (`pid (comm) state ppid pgrp …`; the
/// command name may hold spaces and parentheses, so the fields are read after the last `)`).
fn parse_stat(text: &str) -> Option<(u32, Stat)> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some((
        ppid,
        Stat {
            zombie: state == "Z",
            pgid,
        },
    ))
}

/// The parent of `pid` (`None` when it is gone or unreadable).
pub(super) fn parent_of(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text).map(|(ppid, _)| ppid)
}

/// Whether `pid` is a descendant of this process (its parent chain reaches us). With
/// [`adopt_orphans`], an orphan stays one: it is adopted by us, not by init.
pub fn is_own_descendant(pid: u32) -> bool {
    let own = std::process::id();
    let mut at = pid;
    // A chain longer than the kernel's pid space is not a chain.
    for _ in 0..4096 {
        match parent_of(at) {
            Some(parent) if parent == own => return true,
            Some(parent) if parent > 1 => at = parent,
            _ => return false,
        }
    }
    false
}

/// How many seccomp filters `/proc/<pid>/status` counts (`None`: no such line, a kernel
/// before 5.9, or the process is gone).
fn seccomp_filters(pid: u32) -> Option<u32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Seccomp_filters:"))
        .and_then(|n| n.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::parse_stat;

    #[test]
    fn a_stat_line_is_read_after_the_last_parenthesis() {
        let (ppid, stat) = parse_stat("42 (a) b (c)) S 7 42 42 0 -1").unwrap();
        assert_eq!((ppid, stat.pgid, stat.zombie), (7, 42, false));
        let (ppid, stat) = parse_stat("9 (sh) Z 1 5 5 0").unwrap();
        assert_eq!((ppid, stat.pgid, stat.zombie), (1, 5, true));
        assert!(parse_stat("garbage").is_none());
        assert!(parse_stat("1 (x) S").is_none());
    }
}
