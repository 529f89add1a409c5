//! When a schedule is due (docs/formats/schedules.json.md). Every due instant lies strictly after
//! the schedule's `createdAtMs`:
//! - `interval{everyMinutes}`: `createdAtMs + k × everyMinutes` for k ≥ 1 (no time zone);
//! - `daily{hour, minute}`: that wall time on every date, in the zone;
//! - `weekly{weekday, hour, minute}`: that wall time on every such weekday, in the zone.
//!
//! A wall time the zone skips (a DST gap: 02:30 on the spring-forward night in New York) is due
//! at the first instant after the gap (03:00 EDT); a wall time the zone passes twice (01:30 on
//! the fall-back night) is due once, at the earlier instant (01:30 EDT). So the due instant of
//! a date never decreases as the date grows, which is what lets [`next_due`] and
//! [`latest_due`] look at a few dates around the instant only.

use jiff::civil::{Date, Time};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{Span, Timestamp};

use crate::village::schedule::{ClockTime, Recurrence, Weekday, WeeklyTime};

const MINUTE_MS: i64 = 60_000;

/// The first due instant strictly after `after_ms` (and after `created_at_ms`); `None` only
/// past the calendar's range (year 9999) or for a time of day that does not exist.
pub fn next_due(
    recurrence: &Recurrence,
    created_at_ms: i64,
    zone: &TimeZone,
    after_ms: i64,
) -> Option<i64> {
    let after = after_ms.max(created_at_ms);
    match recurrence {
        Recurrence::Interval(every) => {
            let period = period_ms(every.every_minutes)?;
            let k = after.checked_sub(created_at_ms)? / period + 1;
            created_at_ms.checked_add(k.checked_mul(period)?)
        }
        Recurrence::Daily(ClockTime { hour, minute, .. }) => {
            let rule = WallRule::new(*hour, *minute, None)?;
            rule.first_after(zone, after)
        }
        Recurrence::Weekly(WeeklyTime {
            weekday,
            hour,
            minute,
            ..
        }) => {
            let rule = WallRule::new(*hour, *minute, Some(jiff_weekday(*weekday)))?;
            rule.first_after(zone, after)
        }
    }
}

/// The last due instant at or before `at_ms` that lies after `created_at_ms`; `None` when the
/// first one is still to come.
pub fn latest_due(
    recurrence: &Recurrence,
    created_at_ms: i64,
    zone: &TimeZone,
    at_ms: i64,
) -> Option<i64> {
    let due = match recurrence {
        Recurrence::Interval(every) => {
            let period = period_ms(every.every_minutes)?;
            let k = at_ms.checked_sub(created_at_ms)?.checked_div(period)?;
            created_at_ms.checked_add(k.checked_mul(period)?)?
        }
        Recurrence::Daily(ClockTime { hour, minute, .. }) => {
            WallRule::new(*hour, *minute, None)?.last_at_or_before(zone, at_ms)?
        }
        Recurrence::Weekly(WeeklyTime {
            weekday,
            hour,
            minute,
            ..
        }) => WallRule::new(*hour, *minute, Some(jiff_weekday(*weekday)))?
            .last_at_or_before(zone, at_ms)?,
    };
    (due > created_at_ms).then_some(due)
}

fn period_ms(every_minutes: u32) -> Option<i64> {
    (every_minutes > 0).then(|| i64::from(every_minutes) * MINUTE_MS)
}

fn jiff_weekday(day: Weekday) -> jiff::civil::Weekday {
    use jiff::civil::Weekday as J;
    match day {
        Weekday::Mon => J::Monday,
        Weekday::Tue => J::Tuesday,
        Weekday::Wed => J::Wednesday,
        Weekday::Thu => J::Thursday,
        Weekday::Fri => J::Friday,
        Weekday::Sat => J::Saturday,
        Weekday::Sun => J::Sunday,
    }
}

/// A wall-clock rule: a time of day, on every date or on one weekday.
struct WallRule {
    time: Time,
    weekday: Option<jiff::civil::Weekday>,
}

impl WallRule {
    fn new(hour: u8, minute: u8, weekday: Option<jiff::civil::Weekday>) -> Option<Self> {
        let hour = i8::try_from(hour).ok()?;
        let minute = i8::try_from(minute).ok()?;
        let time = Time::new(hour, minute, 0, 0).ok()?;
        Some(Self { time, weekday })
    }

    /// Days between dates the rule fires on.
    fn step(&self) -> i64 {
        if self.weekday.is_some() { 7 } else { 1 }
    }

    /// The first due instant strictly after `after_ms`: from the first rule date on or after
    /// the day before `after_ms`'s local date, four candidates (a fold at midnight can put
    /// the next date's time before the instant).
    fn first_after(&self, zone: &TimeZone, after_ms: i64) -> Option<i64> {
        let start = shift(local_date(zone, after_ms)?, -1)?;
        let first = match self.weekday {
            Some(day) => shift(start, i64::from(start.weekday().until(day)))?,
            None => start,
        };
        (0..4)
            .map(|n| shift(first, n * self.step()).and_then(|d| self.due_on(zone, d)))
            .find(|due| due.is_some_and(|due| due > after_ms))
            .flatten()
    }

    /// The last due instant at or before `at_ms`: from the last rule date on or before the
    /// day after `at_ms`'s local date, four candidates backwards.
    fn last_at_or_before(&self, zone: &TimeZone, at_ms: i64) -> Option<i64> {
        let end = shift(local_date(zone, at_ms)?, 1)?;
        let last = match self.weekday {
            Some(day) => shift(end, -i64::from(end.weekday().since(day)))?,
            None => end,
        };
        (0..4)
            .map(|n| shift(last, -n * self.step()).and_then(|d| self.due_on(zone, d)))
            .find(|due| due.is_some_and(|due| due <= at_ms))
            .flatten()
    }

    /// The due instant of the rule's time on `date`, by the DST rules above.
    fn due_on(&self, zone: &TimeZone, date: Date) -> Option<i64> {
        let wall = date.to_datetime(self.time);
        let instant = match zone.to_ambiguous_timestamp(wall).offset() {
            AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(wall).ok()?,
            // Twice: the earlier instant is the one read with the offset before the change.
            AmbiguousOffset::Fold { before, .. } => before.to_timestamp(wall).ok()?,
            // Skipped: read with the later offset, the wall time lands before the change;
            // the change itself is the first instant after the gap.
            AmbiguousOffset::Gap { after, .. } => {
                let early = after.to_timestamp(wall).ok()?;
                zone.following(early).next()?.timestamp()
            }
        };
        Some(instant.as_millisecond())
    }
}

fn local_date(zone: &TimeZone, ms: i64) -> Option<Date> {
    Some(
        zone.to_datetime(Timestamp::from_millisecond(ms).ok()?)
            .date(),
    )
}

fn shift(date: Date, days: i64) -> Option<Date> {
    match days {
        0 => Some(date),
        1 => date.tomorrow().ok(),
        -1 => date.yesterday().ok(),
        _ => date.checked_add(Span::new().try_days(days).ok()?).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::village::schedule::Interval;

    fn zone(name: &str) -> TimeZone {
        jiff::tz::db().get(name).unwrap()
    }

    fn ms(text: &str) -> i64 {
        text.parse::<Timestamp>().unwrap().as_millisecond()
    }

    fn daily(hour: u8, minute: u8) -> Recurrence {
        Recurrence::Daily(ClockTime {
            hour,
            minute,
            extra: Default::default(),
        })
    }

    fn weekly(weekday: Weekday, hour: u8, minute: u8) -> Recurrence {
        Recurrence::Weekly(WeeklyTime {
            weekday,
            hour,
            minute,
            extra: Default::default(),
        })
    }

    #[test]
    fn interval_counts_from_its_creation() {
        let every = Recurrence::Interval(Interval {
            every_minutes: 30,
            extra: Default::default(),
        });
        let utc = TimeZone::UTC;
        let created = ms("2026-01-01T00:00:00Z");
        assert_eq!(latest_due(&every, created, &utc, created), None);
        assert_eq!(
            next_due(&every, created, &utc, created),
            Some(ms("2026-01-01T00:30:00Z"))
        );
        // Before its creation (a clock set back), the first due is still creation + period.
        assert_eq!(
            next_due(&every, created, &utc, created - 86_400_000),
            Some(ms("2026-01-01T00:30:00Z"))
        );
        let at = ms("2026-01-01T10:17:00Z");
        assert_eq!(
            latest_due(&every, created, &utc, at),
            Some(ms("2026-01-01T10:00:00Z"))
        );
        assert_eq!(
            next_due(&every, created, &utc, ms("2026-01-01T10:00:00Z")),
            Some(ms("2026-01-01T10:30:00Z"))
        );
    }

    #[test]
    fn daily_is_the_wall_time_of_the_zone() {
        let tokyo = zone("Asia/Tokyo");
        let rule = daily(9, 0);
        // 2026-03-10 10:00 in Tokyo = 01:00Z.
        let at = ms("2026-03-10T01:00:00Z");
        assert_eq!(
            latest_due(&rule, 0, &tokyo, at),
            Some(ms("2026-03-10T00:00:00Z"))
        );
        assert_eq!(
            next_due(&rule, 0, &tokyo, at),
            Some(ms("2026-03-11T00:00:00Z"))
        );
        // Exactly at the due: it is the latest, and the next is a day on.
        let due = ms("2026-03-10T00:00:00Z");
        assert_eq!(latest_due(&rule, 0, &tokyo, due), Some(due));
        assert_eq!(next_due(&rule, 0, &tokyo, due), Some(due + 86_400_000));
        // Nothing due at or before the creation.
        assert_eq!(latest_due(&rule, due, &tokyo, due + 1), None);
    }

    #[test]
    fn weekly_finds_its_weekday_from_any_day() {
        let berlin = zone("Europe/Berlin");
        let rule = weekly(Weekday::Wed, 8, 15);
        // 2026-01-14 is a Wednesday; 08:15 CET = 07:15Z.
        let wed = ms("2026-01-14T07:15:00Z");
        for day in 0..7 {
            let at = ms("2026-01-14T09:00:00Z") + day * 86_400_000;
            assert_eq!(latest_due(&rule, 0, &berlin, at), Some(wed), "day +{day}");
            assert_eq!(
                next_due(&rule, 0, &berlin, at),
                Some(wed + 7 * 86_400_000),
                "day +{day}"
            );
        }
        assert_eq!(next_due(&rule, 0, &berlin, wed - 1), Some(wed));
    }

    #[test]
    fn a_skipped_wall_time_is_due_when_the_gap_ends() {
        let ny = zone("America/New_York");
        // 2026-03-08: 02:00 EST → 03:00 EDT (07:00Z). 02:30 does not exist.
        let rule = daily(2, 30);
        let before = ms("2026-03-08T05:00:00Z");
        assert_eq!(
            next_due(&rule, 0, &ny, before),
            Some(ms("2026-03-08T07:00:00Z"))
        );
        // The day before and after are plain.
        assert_eq!(
            latest_due(&rule, 0, &ny, before),
            Some(ms("2026-03-07T07:30:00Z"))
        );
        assert_eq!(
            next_due(&rule, 0, &ny, ms("2026-03-08T07:00:00Z")),
            Some(ms("2026-03-09T06:30:00Z"))
        );
    }

    #[test]
    fn a_wall_time_met_twice_is_due_once_the_first_time() {
        let ny = zone("America/New_York");
        // 2026-11-01: 02:00 EDT → 01:00 EST (06:00Z). 01:30 occurs at 05:30Z and 06:30Z.
        let rule = daily(1, 30);
        let first = ms("2026-11-01T05:30:00Z");
        assert_eq!(next_due(&rule, 0, &ny, first - 1), Some(first));
        // Between the two: the next is tomorrow's, never the second 01:30.
        assert_eq!(
            next_due(&rule, 0, &ny, first),
            Some(ms("2026-11-02T06:30:00Z"))
        );
        assert_eq!(
            latest_due(&rule, 0, &ny, ms("2026-11-01T06:45:00Z")),
            Some(first)
        );
    }
}
