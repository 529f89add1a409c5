//! What one tick does about one schedule (docs/formats/schedules.json.md).
//!
//! Only the **latest** due instant at or before now is looked at; everything before it is
//! gone. So, whatever happened meanwhile, one decision gives at most one firing:
//! - a due that `lastConsumedDueMs` already covers never fires again (a clock set back, a
//!   restart, a zone change that puts a due before the consumed one);
//! - a latest due not yet consumed fires when it is at most [`GRACE_MS`] late (5 minutes:
//!   4:59 late fires, 5:01 late does not), else it is consumed without firing
//!   ([`Decision::Consume`], with the reason for the `schedule skip:` line);
//! - periods missed while the process was down, or jumped over by the clock (suspend and
//!   resume, an NTP step), collapse into that one latest due: it fires once if within grace,
//!   never once per missed period, and consuming it consumes them all;
//! - otherwise the schedule waits for [`next_due`] after both now and the consumed due.
//!
//! **Intervals have no grace** (the 5-minute grace is for daily and weekly only:
//! docs/formats/schedules.json.md): an interval is "every N minutes from its creation", with no
//! wall time that could be wrong, so its latest due fires however late — once, after a downtime too
//! (`ask` and `check` never consume, and the next `serve` fires what is owed, once).
//!
//! The caller writes `lastConsumedDueMs = due_ms` for both `Fire` and `Consume` (before
//! delivering), and skips disabled schedules itself; [`decide`] does not read `enabled`.
//! A zone change between runs needs nothing more: the consumed due is an instant, so a due
//! of the new zone at or before it never fires, and the first one after it does (a westward
//! move can meet the same wall time again, later in absolute time: it fires, being a new
//! instant of the zone the process now runs in).

use jiff::tz::TimeZone;

use super::calendar::{latest_due, next_due};
use crate::village::schedule::{Recurrence, ScheduledTask};

/// How late a daily or weekly due may fire: 5 minutes (the original's `GRACE_MINUTES`).
pub const GRACE_MS: i64 = 5 * 60_000;

/// The calendar facts of a schedule.
#[derive(Debug, Clone, Copy)]
pub struct Timing<'a> {
    /// When it fires.
    pub recurrence: &'a Recurrence,
    /// Its creation (the interval's anchor; nothing is due at or before it).
    pub created_at_ms: i64,
    /// The last due instant handled (fired or consumed).
    pub last_consumed_due_ms: Option<i64>,
}

impl<'a> From<&'a ScheduledTask> for Timing<'a> {
    fn from(task: &'a ScheduledTask) -> Self {
        Self {
            recurrence: &task.recurrence,
            created_at_ms: task.created_at_ms,
            last_consumed_due_ms: task.last_consumed_due_ms,
        }
    }
}

impl Timing<'_> {
    /// The grace of this kind: 5 minutes for daily and weekly, none (no limit) for intervals.
    pub fn grace_ms(&self) -> Option<i64> {
        match self.recurrence {
            Recurrence::Interval(_) => None,
            Recurrence::Daily(_) | Recurrence::Weekly(_) => Some(GRACE_MS),
        }
    }
}

/// What to do about a schedule now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Consume `due_ms` and fire.
    Fire {
        /// The due instant fired (the new `lastConsumedDueMs`).
        due_ms: i64,
    },
    /// Consume `due_ms` without firing.
    Consume {
        /// The due instant consumed (the new `lastConsumedDueMs`).
        due_ms: i64,
        /// Why it does not fire.
        reason: SkipReason,
    },
    /// Nothing is owed; the next due instant (`None` past the calendar's range).
    Wait {
        /// When to look again at the latest.
        next_due_ms: Option<i64>,
    },
}

/// Why a due instant is consumed without firing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Found later than the grace allows.
    LateBeyondGrace {
        /// How late, in ms.
        late_ms: i64,
    },
}

impl SkipReason {
    /// The word of the `schedule skip: … reason=` log line.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::LateBeyondGrace { .. } => "late_beyond_grace",
        }
    }
}

/// Decides one schedule at `now_ms` in `zone` (see the module's rules).
pub fn decide(timing: Timing<'_>, zone: &TimeZone, now_ms: i64) -> Decision {
    let Timing {
        recurrence,
        created_at_ms,
        last_consumed_due_ms: consumed,
    } = timing;
    let owed = latest_due(recurrence, created_at_ms, zone, now_ms)
        .filter(|due| consumed.is_none_or(|c| *due > c));
    match owed {
        Some(due_ms) => {
            let late_ms = now_ms.saturating_sub(due_ms);
            match timing.grace_ms() {
                Some(grace) if late_ms > grace => Decision::Consume {
                    due_ms,
                    reason: SkipReason::LateBeyondGrace { late_ms },
                },
                _ => Decision::Fire { due_ms },
            }
        }
        None => {
            let after = consumed.map_or(now_ms, |c| c.max(now_ms));
            Decision::Wait {
                next_due_ms: next_due(recurrence, created_at_ms, zone, after),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::village::schedule::{ClockTime, Interval};

    const MIN: i64 = 60_000;
    const SEC: i64 = 1_000;

    fn daily_9() -> Recurrence {
        Recurrence::Daily(ClockTime {
            hour: 9,
            minute: 0,
            extra: Default::default(),
        })
    }

    fn at(recurrence: &Recurrence, consumed: Option<i64>) -> Timing<'_> {
        Timing {
            recurrence,
            created_at_ms: 0,
            last_consumed_due_ms: consumed,
        }
    }

    /// 2026-03-10 09:00 UTC.
    const DUE: i64 = 1_773_133_200_000;

    #[test]
    fn the_grace_edge_fires_at_4_59_and_consumes_at_5_01() {
        let rule = daily_9();
        let utc = TimeZone::UTC;
        let late = |ms| decide(at(&rule, None), &utc, DUE + ms);
        assert_eq!(late(0), Decision::Fire { due_ms: DUE });
        assert_eq!(late(4 * MIN + 59 * SEC), Decision::Fire { due_ms: DUE });
        assert_eq!(late(5 * MIN), Decision::Fire { due_ms: DUE });
        assert_eq!(
            late(5 * MIN + SEC),
            Decision::Consume {
                due_ms: DUE,
                reason: SkipReason::LateBeyondGrace {
                    late_ms: 5 * MIN + SEC
                }
            }
        );
        // Just before: yesterday's due, already consumed, leaves only the wait.
        assert_eq!(
            decide(at(&rule, Some(DUE - 86_400_000)), &utc, DUE - 1),
            Decision::Wait {
                next_due_ms: Some(DUE)
            }
        );
    }

    #[test]
    fn a_consumed_due_waits_for_the_next() {
        let rule = daily_9();
        let utc = TimeZone::UTC;
        let next = Decision::Wait {
            next_due_ms: Some(DUE + 86_400_000),
        };
        assert_eq!(decide(at(&rule, Some(DUE)), &utc, DUE + MIN), next);
        // The clock set back before the consumed due: still the next one after it.
        assert_eq!(decide(at(&rule, Some(DUE)), &utc, DUE - 3_600_000), next);
    }

    #[test]
    fn an_interval_has_no_grace_and_owes_one_firing() {
        let rule = Recurrence::Interval(Interval {
            every_minutes: 10,
            extra: Default::default(),
        });
        let timing = Timing {
            recurrence: &rule,
            created_at_ms: DUE,
            last_consumed_due_ms: Some(DUE + 10 * MIN),
        };
        // Three hours later: the latest due (exactly 180 minutes on) fires, once.
        let now = DUE + 185 * MIN;
        assert_eq!(
            decide(timing, &TimeZone::UTC, now),
            Decision::Fire {
                due_ms: DUE + 180 * MIN
            }
        );
        assert_eq!(timing.grace_ms(), None);
    }
}
