//! `schedules.json`: scheduled tasks (interval / daily / weekly), their pre-check and
//! acceptance probes, and the rules a read applies.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Extra;
use super::doc::JsonDoc;
use super::error::{RuleCode, VillageError};
use super::ids::AgentId;
use super::notice::{Notes, NoticeCode};

/// The whole `schedules.json` (an array).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Schedules(pub Vec<ScheduledTask>);

/// One scheduled task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduledTask {
    /// Schedule id (a UUID).
    pub id: String,
    /// The agent that receives the message.
    pub to: AgentId,
    /// The message sent when it fires.
    pub message: String,
    /// When it fires.
    pub recurrence: Recurrence,
    /// Creation time (anchor of interval schedules), ms since the epoch.
    #[serde(default)]
    pub created_at_ms: i64,
    /// The last due time handled (fired or skipped), ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_consumed_due_ms: Option<i64>,
    /// Switched on.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Pre-check probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ScheduleProbe>,
    /// Continue the current conversation or start a fresh one.
    #[serde(default, skip_serializing_if = "SessionMode::is_continue")]
    pub session_mode: SessionMode,
    /// Summarise the conversation after the run.
    #[serde(default, skip_serializing_if = "is_false")]
    pub summarize_after: bool,
    /// Acceptance probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<AcceptanceProbe>,
    /// Plan waves of this schedule's runs skip review.
    #[serde(default, skip_serializing_if = "is_false")]
    pub auto_approve_plans: bool,
    /// Every firing is a dry-run request: side-effecting tools stop at their side effect,
    /// and what they would have done is audited and said in `dryRunEffect` events.
    #[serde(default, skip_serializing_if = "is_false")]
    pub dry_run: bool,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// When a schedule fires (tag `kind`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Recurrence {
    /// Every N minutes from `createdAtMs`.
    Interval(Interval),
    /// Every day at a local time.
    Daily(ClockTime),
    /// Every week on a day at a local time.
    Weekly(WeeklyTime),
}

/// An interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interval {
    /// Minutes between firings (≥ 1).
    pub every_minutes: u32,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A local time of day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockTime {
    /// Hour, 0-23.
    pub hour: u8,
    /// Minute, 0-59.
    pub minute: u8,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A weekday and a local time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeeklyTime {
    /// Day of the week.
    pub weekday: Weekday,
    /// Hour, 0-23.
    pub hour: u8,
    /// Minute, 0-59.
    pub minute: u8,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Days of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum Weekday {
    Mon,
    Tue,
    Wed,
    Thu,
    Fri,
    Sat,
    Sun,
}

/// Whether a firing continues the current conversation or starts a fresh one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    /// Continue the current conversation (the default; omitted when written).
    #[default]
    Continue,
    /// Start a fresh conversation.
    Fresh,
}

impl SessionMode {
    fn is_continue(&self) -> bool {
        *self == Self::Continue
    }
}

/// The default probe timeout, in seconds.
pub(crate) const DEFAULT_PROBE_TIMEOUT_SECS: u64 = 60;
/// The default number of acceptance attempts.
pub(crate) const DEFAULT_ACCEPTANCE_ATTEMPTS: u8 = 2;

/// A command run before (pre-check) or after (acceptance) a firing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleProbe {
    /// Program (no shell).
    pub command: String,
    /// Arguments, in order.
    #[serde(default)]
    pub args: Vec<String>,
    /// Expected first stdout line (trimmed).
    pub expect: String,
    /// Timeout, 1..=3600 s.
    #[serde(default = "default_probe_timeout")]
    pub timeout_secs: u64,
    /// Working folder (default: the workspace; checked when it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// An acceptance probe: a probe plus its retry count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AcceptanceProbe {
    /// The probe.
    #[serde(flatten)]
    pub probe: ScheduleProbe,
    /// Attempts, 1..=5.
    #[serde(default = "default_attempts")]
    pub max_attempts: u8,
}

impl JsonDoc for Schedules {
    const ARRAY: bool = true;

    fn normalize(&mut self, notes: &mut Notes<'_>) {
        for (i, task) in self.0.iter_mut().enumerate() {
            if let Some(probe) = &mut task.probe {
                clamp_timeout(probe, &format!("[{i}].probe"), notes);
            }
            if let Some(acc) = &mut task.acceptance {
                clamp_timeout(&mut acc.probe, &format!("[{i}].acceptance"), notes);
                let clamped = acc.max_attempts.clamp(1, 5);
                if clamped != acc.max_attempts {
                    notes.add(
                        NoticeCode::ValueClamped,
                        format!("[{i}].acceptance.maxAttempts"),
                        format!("{} is outside 1..=5; using {clamped}", acc.max_attempts),
                    );
                    acc.max_attempts = clamped;
                }
            }
        }
    }

    fn validate(&self, file: &Path) -> Result<(), VillageError> {
        let mut ids = HashSet::new();
        for (i, task) in self.0.iter().enumerate() {
            let bad = |field: &str, reason: String, fix: &str| {
                Err(VillageError::rule(
                    RuleCode::InvalidValue,
                    file,
                    format!("[{i}].{field}"),
                    reason,
                    fix,
                ))
            };
            if task.id.trim().is_empty() || !ids.insert(task.id.as_str()) {
                return Err(VillageError::rule(
                    RuleCode::DuplicateId,
                    file,
                    format!("[{i}].id"),
                    format!("schedule id {:?} is empty or used twice", task.id),
                    "give each schedule its own id (a new UUID)",
                ));
            }
            if !task.to.is_safe() {
                return Err(VillageError::rule(
                    RuleCode::InvalidId,
                    file,
                    format!("[{i}].to"),
                    format!("{:?} is not a safe identifier", task.to.as_str()),
                    "use the id of an agent (1-64 characters from A-Z a-z 0-9 _ -)",
                ));
            }
            match &task.recurrence {
                Recurrence::Interval(every) if every.every_minutes == 0 => {
                    return bad(
                        "recurrence.everyMinutes",
                        "0 minutes is not an interval".into(),
                        "use 1 or more minutes",
                    );
                }
                Recurrence::Daily(ClockTime { hour, minute, .. })
                | Recurrence::Weekly(WeeklyTime { hour, minute, .. })
                    if *hour > 23 || *minute > 59 =>
                {
                    return bad(
                        "recurrence",
                        format!("{hour:02}:{minute:02} is not a time of day"),
                        "use hour 0-23 and minute 0-59",
                    );
                }
                _ => {}
            }
            let probes = [
                ("probe", task.probe.as_ref()),
                ("acceptance", task.acceptance.as_ref().map(|a| &a.probe)),
            ];
            for (name, probe) in probes {
                if let Some(p) = probe {
                    if p.command.trim().is_empty() {
                        return bad(
                            &format!("{name}.command"),
                            "the command is empty".into(),
                            "name the program to run",
                        );
                    }
                    if p.expect.trim().is_empty() {
                        return bad(
                            &format!("{name}.expect"),
                            "the expected line is empty".into(),
                            "give the first stdout line the probe must print",
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

fn clamp_timeout(probe: &mut ScheduleProbe, field: &str, notes: &mut Notes<'_>) {
    let clamped = probe.timeout_secs.clamp(1, 3600);
    if clamped != probe.timeout_secs {
        notes.add(
            NoticeCode::ValueClamped,
            format!("{field}.timeoutSecs"),
            format!(
                "{} is outside 1..=3600; using {clamped}",
                probe.timeout_secs
            ),
        );
        probe.timeout_secs = clamped;
    }
}

fn default_probe_timeout() -> u64 {
    DEFAULT_PROBE_TIMEOUT_SECS
}
fn default_attempts() -> u8 {
    DEFAULT_ACCEPTANCE_ATTEMPTS
}
fn yes() -> bool {
    true
}
fn is_false(b: &bool) -> bool {
    !*b
}
