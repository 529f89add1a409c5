//! The watchdog of a group (Linux): a program of its own, not a forked copy of our memory, and
//! it still ends the group when the `GroupChild` is dropped.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use super::spawn;

/// `(pid, state, pgrp)` of every process, from `/proc/<pid>/stat`.
fn processes() -> Vec<(u32, char, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let mut rest = stat.rsplit(')').next()?.split_whitespace();
        let state = rest.next()?.chars().next()?;
        let pgrp = rest.nth(1)?.parse().ok()?;
        Some((pid, state, pgrp))
    })
    .collect()
}

/// The live members of group `pgid` other than its leader.
fn others_in_group(pgid: i32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|&(pid, state, pgrp)| {
            pgrp == pgid && i32::try_from(pid).ok() != Some(pgid) && state != 'Z'
        })
        .map(|(pid, _, _)| pid)
        .collect()
}

fn alive(pid: u32) -> bool {
    processes()
        .iter()
        .any(|&(p, state, _)| p == pid && state != 'Z')
}

fn exe(pid: u32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

fn sleeper() -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sleep");
    command
        .arg("30")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// The watchdog of `group`'s group once it runs `wanted` (or whatever is there after 5 s).
async fn watchdog_of(pgid: i32, wanted: impl Fn(&PathBuf) -> bool) -> (u32, Option<PathBuf>) {
    let mut found = None;
    let runs_wanted = || {
        found = others_in_group(pgid).first().copied();
        found.is_some_and(|pid| exe(pid).is_some_and(|e| wanted(&e)))
    };
    fuseforks_testkit::within(Duration::from_secs(5), runs_wanted).await;
    let pid = found.expect("no watchdog in the child's group");
    (pid, exe(pid))
}

/// Drops `group` and waits until its leader and `watchdog` are gone.
async fn drop_ends_the_group(group: super::GroupChild, watchdog: u32) {
    let leader = u32::try_from(group.pgid()).expect("a positive pgid");
    drop(group);
    let gone = || !alive(leader) && !alive(watchdog);
    fuseforks_testkit::within(Duration::from_secs(5), gone).await;
    assert!(!alive(leader), "the child outlived its dropped GroupChild");
    assert!(!alive(watchdog), "the watchdog outlived its group");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_is_a_program_of_its_own_and_still_ends_the_group() {
    let group = spawn(sleeper(), None).unwrap();
    let ours = std::env::current_exe().unwrap();
    let (watchdog, program) = watchdog_of(group.pgid(), |e| *e != ours).await;
    assert!(
        program.as_ref().is_some_and(|e| *e != ours),
        "the watchdog is still a forked copy of this process ({program:?}), holding our memory"
    );
    drop_ends_the_group(group, watchdog).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_shell_the_watchdog_stays_a_forked_loop_and_still_ends_the_group() {
    let missing = Box::leak(Box::new(super::sys::WatchdogProgram::new(
        c"/nonexistent/fuseforks-sh",
    )));
    let group = super::spawn_linux(sleeper(), None, missing).unwrap();
    let ours = std::env::current_exe().unwrap();
    let (watchdog, program) = watchdog_of(group.pgid(), |e| *e == ours).await;
    // Asleep (in its read of the pipe) means past its exec: the forked loop only starts
    // after the exec failed, and nothing before the exec waits. A wrongly successful exec
    // shows as another program below.
    let waits = || {
        let state = processes().into_iter().find(|&(pid, _, _)| pid == watchdog);
        state.is_some_and(|(_, state, _)| state == 'S')
    };
    fuseforks_testkit::eventually("the watchdog past its exec", Duration::from_secs(5), waits)
        .await;
    let program = exe(watchdog).or(program);
    assert_eq!(
        program.as_ref(),
        Some(&ours),
        "the fallback is this program, forked"
    );
    drop_ends_the_group(group, watchdog).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_whose_watchdog_cannot_be_made_is_not_started() {
    let failing = Box::leak(Box::new(super::sys::WatchdogProgram::failing_fork()));
    let spawned = super::spawn_linux(sleeper(), None, failing);
    let error = spawned.expect_err("the child started without a watchdog");
    assert_eq!(
        error.kind(),
        Some(std::io::ErrorKind::WouldBlock),
        "{error}"
    );
}
