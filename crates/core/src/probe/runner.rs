//! Running one probe: the approval check, then the command without a shell, through
//! [`crate::process`] (own process group, cleared environment, Landlock as for `run`), with a
//! timeout that ends the whole group, and its stdout read bounded.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::approval::{ApprovalState, approval_state};
use super::{Outcome, Report};
use crate::process;
use crate::tools::run::{CallTemp, confinement, read_capped};
use crate::village::{ScheduleProbe, ShelfStore};

/// The most stdout lines after the first kept for the request.
pub const EXTRA_MAX_LINES: usize = 50;
/// The most characters of those lines, in all.
pub const EXTRA_MAX_CHARS: usize = 4_000;
/// The most characters of an acceptance excerpt.
pub const EXCERPT_MAX_CHARS: usize = 2_000;
/// How long stdout is still read after the probe exited or was killed (what its group wrote
/// last; a background child holding the pipe open does not make it a timeout).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(1);

/// Where a scheduled probe runs and whose approvals apply.
#[derive(Debug, Clone, Copy)]
pub struct ProbeContext<'a> {
    /// The village folder (`DATA_DIR/workspace`): the default `cwd`, and the base of a
    /// relative one.
    pub workspace: &'a Path,
    /// The village id (part of the approval key).
    pub village_id: &'a str,
    /// The shelf holding `probe_approvals.json` (read at each run, so an approval given while
    /// `serve` runs counts at the next firing).
    pub shelf: &'a ShelfStore,
}

/// Runs a schedule's probe (pre-check or acceptance) if it is approved on this machine;
/// otherwise nothing runs and the outcome is `unapproved`.
pub async fn run_probe(probe: &ScheduleProbe, ctx: &ProbeContext<'_>) -> Report {
    match approval_state(ctx.shelf, probe, ctx.village_id) {
        ApprovalState::Approved => execute_probe(probe, ctx.workspace).await,
        ApprovalState::Unapproved => Report::without_run(
            Outcome::Unapproved,
            "not approved on this machine (approve the probe first)",
        ),
        ApprovalState::Unreadable(code) => Report::without_run(
            Outcome::Unapproved,
            format!("probe_approvals.json cannot be read ({code})"),
        ),
    }
}

/// Runs a probe without the approval check: for a command the person typed (`ask --accept`).
/// Spawn from async code on a tokio worker (see [`crate::process`]).
pub async fn execute_probe(probe: &ScheduleProbe, workspace: &Path) -> Report {
    // Checked at each run: a symlink re-pointed after the approval does not move the probe.
    let cwd = match super::plain::plain_cwd(probe, workspace) {
        Ok(cwd) => cwd,
        Err(why) => return Report::without_run(Outcome::Error, why),
    };
    if probe.command.trim().is_empty() || probe.command.contains('\0') {
        return Report::without_run(Outcome::Error, "the command is empty");
    }
    let temp = match CallTemp::create() {
        Ok(t) => t,
        Err(e) => {
            return Report::without_run(
                Outcome::Error,
                format!("cannot create a temp folder: {}", e.kind()),
            );
        }
    };
    let timeout = Duration::from_secs(probe.timeout_secs.clamp(1, 3600));
    spawn_and_read(probe, &cwd, &temp, timeout).await
}

/// Spawns the probe and reads its stdout until it exits or the timeout ends its group.
async fn spawn_and_read(
    probe: &ScheduleProbe,
    cwd: &PathBuf,
    temp: &CallTemp,
    timeout: Duration,
) -> Report {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut cmd = tokio::process::Command::new(&probe.command);
    cmd.args(&probe.args)
        .env_clear()
        .env("PATH", &path)
        .env("TMPDIR", temp.path())
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let rules = confinement(cwd, temp.path(), &path, false);
    let mut group = match process::spawn(cmd, Some(&rules)) {
        Ok(g) => g,
        Err(e) => return Report::without_run(Outcome::Error, spawn_reason(&e)),
    };
    let child = group.child_mut();
    let mut stdout = child.stdout.take();
    let mut out = Vec::new();
    let status = tokio::time::timeout(timeout, async {
        let mut reading = std::pin::pin!(read_capped(&mut stdout, &mut out));
        tokio::select! {
            // The probe exited: what it left running may hold stdout open; read on briefly.
            status = child.wait() => {
                let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, &mut reading).await;
                status
            }
            () = &mut reading => child.wait().await,
        }
    })
    .await;
    // End whatever the probe left in its group (at once when the leader has exited).
    group.terminate().await;
    match status {
        Ok(status) => {
            let exit_code = status.ok().and_then(|s| s.code());
            compare(probe, &out, exit_code)
        }
        Err(_) => {
            let _ =
                tokio::time::timeout(DRAIN_AFTER_EXIT, read_capped(&mut stdout, &mut out)).await;
            let mut report = compare(probe, &out, None);
            report.outcome = Outcome::Timeout;
            report.reason = format!(
                "ran past {} s; its process group was ended",
                timeout.as_secs()
            );
            report
        }
    }
}

/// The reason of a failed spawn: its class, never a path or the environment.
fn spawn_reason(e: &process::SpawnError) -> String {
    match (e, e.kind()) {
        (_, Some(std::io::ErrorKind::NotFound)) => "command not found".into(),
        (_, Some(std::io::ErrorKind::PermissionDenied)) => "permission denied".into(),
        (process::SpawnError::Sandbox(why), _) => format!("cannot build the sandbox: {why}"),
        (_, Some(kind)) => format!("cannot start: {kind}"),
        (_, None) => "cannot start".into(),
    }
}

/// Compares the first stdout line (trimmed) with `expect`, and keeps the extra lines.
fn compare(probe: &ScheduleProbe, stdout: &[u8], exit_code: Option<i32>) -> Report {
    let text = String::from_utf8_lossy(stdout);
    let mut lines = text.lines();
    let first_line = lines.next().map(|l| l.trim().to_owned());
    let (extra_lines, extra_truncated) = bounded_lines(lines);
    let exit = exit_code.map_or_else(|| "a signal".to_owned(), |c| format!("exit {c}"));
    let (outcome, reason) = match &first_line {
        Some(line) if *line == probe.expect.trim() => {
            (Outcome::Match, format!("first line matched ({exit})"))
        }
        Some(_) => (
            Outcome::NoMatch,
            format!("first line differs from expect ({exit})"),
        ),
        None => (Outcome::NoMatch, format!("no stdout ({exit})")),
    };
    Report {
        outcome,
        reason,
        first_line,
        extra_lines,
        extra_truncated,
        exit_code,
    }
}

/// At most [`EXTRA_MAX_LINES`] lines and [`EXTRA_MAX_CHARS`] characters in all (a line that
/// does not fit whole is cut), and whether anything was left out.
fn bounded_lines<'a>(lines: impl Iterator<Item = &'a str>) -> (Vec<String>, bool) {
    let (mut kept, mut chars) = (Vec::new(), 0usize);
    for line in lines {
        let room = EXTRA_MAX_CHARS.saturating_sub(chars);
        if kept.len() == EXTRA_MAX_LINES || room == 0 {
            return (kept, true);
        }
        let count = line.chars().count();
        if count > room {
            kept.push(line.chars().take(room).collect());
            return (kept, true);
        }
        chars += count;
        kept.push(line.to_owned());
    }
    (kept, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_lines_are_bounded_by_count_and_characters() {
        let many: Vec<String> = (0..80).map(|i| format!("line {i}")).collect();
        let (kept, cut) = bounded_lines(many.iter().map(String::as_str));
        assert_eq!((kept.len(), cut), (EXTRA_MAX_LINES, true));
        let long = "x".repeat(EXTRA_MAX_CHARS + 10);
        let (kept, cut) = bounded_lines([long.as_str(), "after"].into_iter());
        assert_eq!(
            (kept[0].chars().count(), kept.len(), cut),
            (EXTRA_MAX_CHARS, 1, true)
        );
        let (kept, cut) = bounded_lines(["a", "b"].into_iter());
        assert_eq!((kept, cut), (vec!["a".to_owned(), "b".to_owned()], false));
    }
}
