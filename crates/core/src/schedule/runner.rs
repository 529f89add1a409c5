//! The tick loop of `serve`: each tick (every second, or sooner: at the earliest
//! due instant ahead, so a firing leaves within milliseconds of its due) re-reads `schedules.json` through the village
//! store, [`decide`]s every enabled schedule, writes `lastConsumedDueMs` of everything fired or
//! consumed **atomically, before any delivery** (at most once: a crash between the write and
//! the delivery loses that firing and never doubles it), then fires — each firing a task of its
//! own, so that a long chain never delays the next tick.
//!
//! The file is parsed again only when its modification time or length changed (an edit on
//! disk is picked up at the next tick; an unchanged file costs one `stat`).
//!
//! A broken `schedules.json` is logged once (its code) and nothing fires until it reads again:
//! a consume cannot be recorded without writing over the file, and the file is never written
//! when it could not be read. The last good list is kept (its size is on the log line).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use jiff::tz::TimeZone;
use tokio_util::sync::CancellationToken;

use super::clock::Clock;
use super::decide::{Decision, Timing, decide};
use super::firing::{FiringReport, fire};
use crate::events::AgentStatus;
use crate::log::LogSink;
use crate::orchestrator::Orchestrator;
use crate::village::store::names::SCHEDULES as SCHEDULES_FILE;
use crate::village::{ScheduledTask, Schedules, ShelfStore, VillageStore};

/// How often the loop ticks (the original: 30 s; the firing latency target is ≤ 1 s).
pub const TICK: Duration = Duration::from_secs(1);

/// What the scheduler needs from the running village.
#[derive(Clone)]
pub struct RunnerConfig {
    /// The running village.
    pub orchestrator: Orchestrator,
    /// The village folder (`DATA_DIR/workspace`): `schedules.json`, the probes' default cwd.
    pub workspace: PathBuf,
    /// The village id (part of a probe's approval key).
    pub village_id: String,
    /// The shelf holding `probe_approvals.json`.
    pub shelf: ShelfStore,
    /// The process time zone.
    pub zone: TimeZone,
    /// Now.
    pub clock: Arc<dyn Clock>,
    /// The village log.
    pub log: Arc<dyn LogSink>,
}

/// A due instant consumed for firing (already written to `schedules.json`).
#[derive(Debug, Clone)]
pub struct Firing {
    /// The schedule, as read at the tick.
    pub task: ScheduledTask,
    /// The due instant fired.
    pub due_ms: i64,
}

/// The scheduler: one per `serve`.
pub struct ScheduleRunner {
    config: RunnerConfig,
    store: VillageStore,
    last_good: usize,
    broken: Option<String>,
    /// The last list read, and the file's stamp then: an unchanged file is not parsed again.
    cached: Option<(FileStamp, Schedules)>,
    /// The earliest due instant still ahead, as of the last tick: the loop wakes for it.
    next_due_ms: Option<i64>,
}

/// What tells an edit of `schedules.json`: its modification time and length (an atomic
/// replace, ours or an editor's, changes both or at least the time).
type FileStamp = (std::time::SystemTime, u64);

impl ScheduleRunner {
    /// A scheduler over the village of `config`.
    pub fn new(config: RunnerConfig) -> Self {
        let store = VillageStore::new(config.workspace.clone());
        Self {
            config,
            store,
            last_good: 0,
            broken: None,
            cached: None,
            next_due_ms: None,
        }
    }

    /// How long the loop sleeps after a tick: until the earliest due ahead (plus 1 ms), at
    /// most [`TICK`] (so that an edit, a clock jump or a mended file is seen within a second).
    pub fn next_wait(&self) -> Duration {
        let Some(due) = self.next_due_ms else {
            return TICK;
        };
        let ahead = due
            .saturating_sub(self.config.clock.now_ms())
            .saturating_add(1);
        Duration::from_millis(u64::try_from(ahead).unwrap_or(1).max(1)).min(TICK)
    }

    /// The schedules now: the cached list when the file's stamp did not change, else read
    /// (and parsed) again; `Err((code, what and where))` when the file cannot be read.
    fn current(&mut self) -> Result<Schedules, (&'static str, String)> {
        let stamp = self.stamp();
        if let (Some(stamp), Some((cached_stamp, list))) = (stamp, &self.cached)
            && stamp == *cached_stamp
        {
            return Ok(list.clone());
        }
        let list = match self.store.load_schedules() {
            Ok(loaded) => loaded.value,
            Err(e) => {
                self.cached = None;
                return Err((crate::Coded::code(&e), e.to_string()));
            }
        };
        self.cached = stamp.map(|stamp| (stamp, list.clone()));
        Ok(list)
    }

    fn stamp(&self) -> Option<FileStamp> {
        let meta = std::fs::metadata(self.store.path(SCHEDULES_FILE)).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }

    /// One tick: reads, decides, writes the consumed dues, logs skips; returns the firings to
    /// run (their consume is on disk already). Nothing is returned when the write failed.
    pub fn tick(&mut self) -> Vec<Firing> {
        let list = match self.current() {
            Ok(list) => list,
            Err((code, detail)) => {
                self.report_broken(code, &detail);
                return Vec::new();
            }
        };
        if self.broken.take().is_some() {
            self.config
                .log
                .line("schedules readable again: firing resumed");
        }
        self.last_good = list.0.len();
        let now_ms = self.config.clock.now_ms();
        self.next_due_ms = None;
        let mut firings = Vec::new();
        let mut consumed: Vec<(&str, i64)> = Vec::new();
        for task in list.0.iter().filter(|t| t.enabled) {
            let due_ms = match decide(Timing::from(task), &self.config.zone, now_ms) {
                Decision::Wait { next_due_ms } => {
                    self.next_due_ms = min_some(self.next_due_ms, next_due_ms);
                    continue;
                }
                Decision::Consume { due_ms, reason } => {
                    self.skip(&task.id, reason.as_str());
                    due_ms
                }
                Decision::Fire { due_ms } if !self.running(task.to.as_str()) => {
                    self.skip(&task.id, "target_stopped");
                    due_ms
                }
                Decision::Fire { due_ms } => {
                    firings.push(Firing {
                        task: task.clone(),
                        due_ms,
                    });
                    due_ms
                }
            };
            consumed.push((task.id.as_str(), due_ms));
        }
        if consumed.is_empty() {
            return firings;
        }
        self.cached = None;
        // Only `lastConsumedDueMs` of these tasks changes in the file; every other field stays
        // as written (`docs/formats/schedules.json.md`).
        match self.store.record_consumed(&consumed) {
            Ok(written) => {
                // A task gone from the file since the read has no consume on disk: not fired.
                firings.retain(|f| written.contains(&f.task.id));
                firings
            }
            Err(e) => {
                self.config.log.line(&format!(
                    "schedule consume failed: code={} firings_dropped={}",
                    crate::Coded::code(&e),
                    firings.len()
                ));
                Vec::new()
            }
        }
    }

    /// Runs one firing to its end (pre-check, delivery, acceptance).
    pub async fn fire(&self, firing: Firing) -> FiringReport {
        fire(&self.config, firing).await
    }

    /// Ticks at once, then after [`Self::next_wait`] each time (at most [`TICK`]), until
    /// `stop`; each firing runs as a task of its own (aborted at the stop).
    pub fn spawn(mut self, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut firings = tokio::task::JoinSet::new();
            loop {
                for firing in self.tick() {
                    let config = self.config.clone();
                    firings.spawn(async move { fire(&config, firing).await });
                }
                while firings.try_join_next().is_some() {}
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(self.next_wait()) => {}
                }
            }
            firings.abort_all();
        })
    }

    fn running(&self, agent: &str) -> bool {
        matches!(
            self.config.orchestrator.status(agent),
            AgentStatus::Running | AgentStatus::Starting
        )
    }

    fn skip(&self, id: &str, reason: &str) {
        self.config
            .log
            .line(&format!("schedule skip: id={id} reason={reason}"));
    }

    fn report_broken(&mut self, code: &str, detail: &str) {
        if self.broken.as_deref() != Some(code) {
            self.config.log.line(&format!(
                "schedules unreadable: code={code} kept={} firing=paused (the file is not written): {detail}",
                self.last_good
            ));
            self.broken = Some(code.to_owned());
        }
    }
}

fn min_some(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
