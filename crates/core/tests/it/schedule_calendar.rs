//! The scheduler's calendar in virtual time: a [`ManualClock`] drives a minimal tick
//! loop that applies each [`Decision`] the way the real one will (write the consumed due, then
//! fire or log the skip), through every recurrence kind, the grace edge, downtime, DST in New
//! York and Berlin, a zone change between runs, clock jumps, and the `TZ` rules with the
//! preflight's `TIMEZONE_MISMATCH`.

use std::collections::BTreeSet;

use fuseforks_core::Coded;
use fuseforks_core::preflight::{HeadlessMode, HostView, Level, headless_preflight};
use fuseforks_core::schedule::{
    Clock, Decision, GRACE_MS, ManualClock, ProcessZone, SkipReason, Timing, decide, next_due,
    resolve_process_zone,
};
use fuseforks_core::tools::RunApproval;
use fuseforks_core::village::{Language, Recurrence, ScheduleProbe, ScheduledTask, World};
use serde_json::json;

const SEC: i64 = 1_000;
const MIN: i64 = 60 * SEC;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;
/// The original's ticker.
const TICK: i64 = 30 * SEC;

/// An instant written with its offset: `"2026-03-08T03:00:00-04:00"`.
fn t(text: &str) -> i64 {
    text.parse::<jiff::Timestamp>().unwrap().as_millisecond()
}

fn zone(name: &str) -> ProcessZone {
    resolve_process_zone(Some(name)).unwrap()
}

fn rule(value: serde_json::Value) -> Recurrence {
    serde_json::from_value(value).unwrap()
}

/// What a run of the loop did.
#[derive(Debug, Default)]
struct Run {
    /// `(due, fired at)`.
    fired: Vec<(i64, i64)>,
    /// `(due, reason)`.
    skipped: Vec<(i64, &'static str)>,
}

impl Run {
    fn dues(&self) -> Vec<i64> {
        self.fired.iter().map(|(due, _)| *due).collect()
    }
}

/// A schedule's state across runs of the loop (what `schedules.json` keeps).
struct Sched {
    recurrence: Recurrence,
    created_at_ms: i64,
    consumed: Option<i64>,
}

impl Sched {
    fn new(recurrence: Recurrence, created_at_ms: i64) -> Self {
        Self {
            recurrence,
            created_at_ms,
            consumed: None,
        }
    }

    fn timing(&self) -> Timing<'_> {
        Timing {
            recurrence: &self.recurrence,
            created_at_ms: self.created_at_ms,
            last_consumed_due_ms: self.consumed,
        }
    }

    /// One tick: decide and apply (at most one firing; a second decision at the same instant
    /// must wait — no burst).
    fn tick(&mut self, zone: &ProcessZone, now: i64, run: &mut Run) -> Decision {
        let decision = decide(self.timing(), zone.zone(), now);
        match decision {
            Decision::Fire { due_ms } => {
                self.consumed = Some(due_ms);
                run.fired.push((due_ms, now));
            }
            Decision::Consume { due_ms, reason } => {
                self.consumed = Some(due_ms);
                run.skipped.push((due_ms, reason.as_str()));
            }
            Decision::Wait { .. } => return decision,
        }
        let again = decide(self.timing(), zone.zone(), now);
        assert!(
            matches!(again, Decision::Wait { .. }),
            "a second decision at the same instant must wait: {again:?}"
        );
        decision
    }

    /// Ticks every `step` from the clock's time until `end` (inclusive).
    fn run_ticking(&mut self, zone: &ProcessZone, clock: &ManualClock, step: i64, end: i64) -> Run {
        let mut run = Run::default();
        while clock.now_ms() <= end {
            self.tick(zone, clock.now_ms(), &mut run);
            clock.advance(step);
        }
        run
    }

    /// Sleeps exactly until each next due (the tick loop's other possible form) until `end`.
    fn run_waking(&mut self, zone: &ProcessZone, clock: &ManualClock, end: i64) -> Run {
        let mut run = Run::default();
        for _ in 0..10_000 {
            match self.tick(zone, clock.now_ms(), &mut run) {
                Decision::Wait {
                    next_due_ms: Some(next),
                } if next <= end => clock.set(next),
                Decision::Wait { .. } => break,
                Decision::Fire { .. } | Decision::Consume { .. } => {}
            }
        }
        clock.set(end);
        run
    }
}

#[test]
fn every_kind_fires_once_per_period_in_virtual_time() {
    let tokyo = zone("Asia/Tokyo");
    let start = t("2026-05-04T00:00:00+09:00"); // a Monday
    let end = start + 14 * DAY - 1;
    let cases = [
        (
            rule(json!({"kind": "interval", "everyMinutes": 90})),
            (1..=14 * 16)
                .map(|k| start + k * 90 * MIN)
                .collect::<Vec<_>>(),
        ),
        (
            rule(json!({"kind": "daily", "hour": 7, "minute": 45})),
            (0..14)
                .map(|d| t("2026-05-04T07:45:00+09:00") + d * DAY)
                .collect(),
        ),
        (
            rule(json!({"kind": "weekly", "weekday": "thu", "hour": 18, "minute": 0})),
            vec![
                t("2026-05-07T18:00:00+09:00"),
                t("2026-05-14T18:00:00+09:00"),
            ],
        ),
    ];
    for (recurrence, expected) in cases {
        let expected: Vec<i64> = expected.into_iter().filter(|due| *due <= end).collect();
        // The original's 30 s ticker: each due fires within one tick of its instant.
        let clock = ManualClock::new(start);
        let mut sched = Sched::new(recurrence.clone(), start);
        let ticking = sched.run_ticking(&tokyo, &clock, TICK, end);
        assert_eq!(ticking.dues(), expected, "{recurrence:?}");
        assert!(ticking.fired.iter().all(|(due, at)| at - due < TICK));
        assert!(ticking.skipped.is_empty());
        // Waking exactly at each next due: the same dues, fired at their instant.
        let clock = ManualClock::new(start);
        let mut sched = Sched::new(recurrence.clone(), start);
        let waking = sched.run_waking(&tokyo, &clock, end);
        assert_eq!(waking.dues(), expected, "{recurrence:?}");
        assert!(waking.fired.iter().all(|(due, at)| due == at));
    }
}

#[test]
fn the_grace_edge_fires_at_4_59_late_and_consumes_at_5_01() {
    let berlin = zone("Europe/Berlin");
    let due = t("2026-02-10T09:00:00+01:00");
    for (late, fires) in [(4 * MIN + 59 * SEC, true), (5 * MIN + SEC, false)] {
        // The process starts `late` after the due (yesterday's was consumed).
        let mut sched = Sched::new(rule(json!({"kind": "daily", "hour": 9, "minute": 0})), 0);
        sched.consumed = Some(due - DAY);
        let mut run = Run::default();
        let decision = sched.tick(&berlin, due + late, &mut run);
        if fires {
            assert_eq!(decision, Decision::Fire { due_ms: due });
        } else {
            assert_eq!(
                decision,
                Decision::Consume {
                    due_ms: due,
                    reason: SkipReason::LateBeyondGrace { late_ms: late }
                }
            );
            assert_eq!(run.skipped, [(due, "late_beyond_grace")]);
        }
        assert_eq!(sched.consumed, Some(due), "consumed either way");
    }
    assert_eq!(GRACE_MS, 5 * MIN);
}

#[test]
fn a_long_downtime_fires_once_on_start_never_once_per_missed_period() {
    let ny = zone("America/New_York");
    let today = t("2026-06-20T09:00:00-04:00");
    // Daily, down for ten days, started 3 minutes after today's due: one firing, today's.
    let mut sched = Sched::new(rule(json!({"kind": "daily", "hour": 9, "minute": 0})), 0);
    sched.consumed = Some(today - 10 * DAY);
    let clock = ManualClock::new(today + 3 * MIN);
    let run = sched.run_ticking(&ny, &clock, TICK, today + DAY - MIN);
    assert_eq!(run.dues(), [today]);
    assert!(run.skipped.is_empty());
    // Started two hours after it: consumed without firing (one skip line), then tomorrow fires.
    let mut sched = Sched::new(rule(json!({"kind": "daily", "hour": 9, "minute": 0})), 0);
    sched.consumed = Some(today - 10 * DAY);
    let clock = ManualClock::new(today + 2 * HOUR);
    let run = sched.run_waking(&ny, &clock, today + DAY + HOUR);
    assert_eq!(run.skipped, [(today, "late_beyond_grace")]);
    assert_eq!(run.dues(), [today + DAY]);
    // Weekly, down for five weeks, started a minute late: one firing.
    let mut sched = Sched::new(
        rule(json!({"kind": "weekly", "weekday": "sat", "hour": 9, "minute": 0})),
        0,
    );
    sched.consumed = Some(today - 35 * DAY);
    let run = sched.run_ticking(&ny, &ManualClock::new(today + MIN), TICK, today + 6 * DAY);
    assert_eq!(run.dues(), [today]);
    // An interval has no grace: ten hours down, one firing of the latest due, then every 15 min.
    let created = today - 30 * DAY;
    let mut sched = Sched::new(
        rule(json!({"kind": "interval", "everyMinutes": 15})),
        created,
    );
    sched.consumed = Some(today - 10 * HOUR);
    let clock = ManualClock::new(today + 7 * MIN);
    let run = sched.run_waking(&ny, &clock, today + 46 * MIN);
    assert_eq!(
        run.dues(),
        [today, today + 15 * MIN, today + 30 * MIN, today + 45 * MIN]
    );
    assert_eq!(
        run.fired[0].1,
        today + 7 * MIN,
        "the owed one fires at start"
    );
}

/// Ticks a schedule every 30 s from `from` to `to` in `zone_name` and returns the fired dues.
fn fired_between(zone_name: &str, recurrence: serde_json::Value, from: &str, to: &str) -> Vec<i64> {
    let zone = zone(zone_name);
    let mut sched = Sched::new(rule(recurrence), 0);
    sched.consumed = Some(t(from) - MIN); // nothing owed at the start
    let run = sched.run_ticking(&zone, &ManualClock::new(t(from)), TICK, t(to));
    assert!(run.skipped.is_empty(), "{:?}", run.skipped);
    assert!(run.fired.iter().all(|(due, at)| at - due < TICK));
    run.dues()
}

#[test]
fn dst_spring_forward_fires_at_the_end_of_the_gap_in_new_york_and_berlin() {
    let daily = json!({"kind": "daily", "hour": 2, "minute": 30});
    let sunday = json!({"kind": "weekly", "weekday": "sun", "hour": 2, "minute": 30});
    // New York, 2026-03-08 (a Sunday): 02:00 EST → 03:00 EDT.
    assert_eq!(
        fired_between(
            "America/New_York",
            daily.clone(),
            "2026-03-07T00:00:00-05:00",
            "2026-03-09T23:00:00-04:00"
        ),
        [
            t("2026-03-07T02:30:00-05:00"),
            t("2026-03-08T03:00:00-04:00"),
            t("2026-03-09T02:30:00-04:00"),
        ]
    );
    assert_eq!(
        fired_between(
            "America/New_York",
            sunday.clone(),
            "2026-02-28T00:00:00-05:00",
            "2026-03-15T23:00:00-04:00"
        ),
        [
            t("2026-03-01T02:30:00-05:00"),
            t("2026-03-08T03:00:00-04:00"),
            t("2026-03-15T02:30:00-04:00"),
        ]
    );
    // Berlin, 2026-03-29 (a Sunday): 02:00 CET → 03:00 CEST.
    assert_eq!(
        fired_between(
            "Europe/Berlin",
            daily,
            "2026-03-28T00:00:00+01:00",
            "2026-03-30T23:00:00+02:00"
        ),
        [
            t("2026-03-28T02:30:00+01:00"),
            t("2026-03-29T03:00:00+02:00"),
            t("2026-03-30T02:30:00+02:00"),
        ]
    );
    assert_eq!(
        fired_between(
            "Europe/Berlin",
            sunday,
            "2026-03-21T00:00:00+01:00",
            "2026-04-05T23:00:00+02:00"
        ),
        [
            t("2026-03-22T02:30:00+01:00"),
            t("2026-03-29T03:00:00+02:00"),
            t("2026-04-05T02:30:00+02:00"),
        ]
    );
}

#[test]
fn dst_fall_back_fires_a_doubled_wall_time_once_in_new_york_and_berlin() {
    // New York, 2026-11-01 (a Sunday): 02:00 EDT → 01:00 EST; 01:30 happens twice.
    let daily = json!({"kind": "daily", "hour": 1, "minute": 30});
    let sunday = json!({"kind": "weekly", "weekday": "sun", "hour": 1, "minute": 30});
    assert_eq!(
        fired_between(
            "America/New_York",
            daily,
            "2026-10-31T00:00:00-04:00",
            "2026-11-02T23:00:00-05:00"
        ),
        [
            t("2026-10-31T01:30:00-04:00"),
            t("2026-11-01T01:30:00-04:00"),
            t("2026-11-02T01:30:00-05:00"),
        ]
    );
    assert_eq!(
        fired_between(
            "America/New_York",
            sunday,
            "2026-10-24T00:00:00-04:00",
            "2026-11-08T23:00:00-05:00"
        ),
        [
            t("2026-10-25T01:30:00-04:00"),
            t("2026-11-01T01:30:00-04:00"),
            t("2026-11-08T01:30:00-05:00"),
        ]
    );
    // Berlin, 2026-10-25 (a Sunday): 03:00 CEST → 02:00 CET; 02:30 happens twice.
    let daily = json!({"kind": "daily", "hour": 2, "minute": 30});
    let sunday = json!({"kind": "weekly", "weekday": "sun", "hour": 2, "minute": 30});
    assert_eq!(
        fired_between(
            "Europe/Berlin",
            daily,
            "2026-10-24T00:00:00+02:00",
            "2026-10-26T23:00:00+01:00"
        ),
        [
            t("2026-10-24T02:30:00+02:00"),
            t("2026-10-25T02:30:00+02:00"),
            t("2026-10-26T02:30:00+01:00"),
        ]
    );
    assert_eq!(
        fired_between(
            "Europe/Berlin",
            sunday,
            "2026-10-17T00:00:00+02:00",
            "2026-11-01T23:00:00+01:00"
        ),
        [
            t("2026-10-18T02:30:00+02:00"),
            t("2026-10-25T02:30:00+02:00"),
            t("2026-11-01T02:30:00+01:00"),
        ]
    );
}

#[test]
fn a_zone_change_between_runs_neither_fires_twice_nor_skips_beyond_grace() {
    let (ny, berlin) = (zone("America/New_York"), zone("Europe/Berlin"));
    let nine = || rule(json!({"kind": "daily", "hour": 9, "minute": 0}));
    // Eastward: 09:00 consumed in New York (13:00Z); the next run is in Berlin. Berlin's 09:00
    // of that date (07:00Z) lies before the consumed due: never fired; the next one is.
    let mut sched = Sched::new(nine(), 0);
    sched.consumed = Some(t("2026-06-09T09:00:00-04:00"));
    let run = sched.run_ticking(
        &ny,
        &ManualClock::new(t("2026-06-10T08:58:00-04:00")),
        TICK,
        t("2026-06-10T09:05:00-04:00"),
    );
    assert_eq!(run.dues(), [t("2026-06-10T13:00:00Z")]);
    let run = sched.run_ticking(
        &berlin,
        &ManualClock::new(t("2026-06-10T13:10:00Z")),
        TICK,
        t("2026-06-11T12:00:00Z"),
    );
    assert_eq!(run.dues(), [t("2026-06-11T09:00:00+02:00")]);
    assert!(
        run.skipped.is_empty(),
        "nothing was owed: {:?}",
        run.skipped
    );
    // Westward: consumed at Berlin's 09:00 (07:00Z); restarted in New York three minutes
    // after its 09:00 (13:03Z): a new instant after the consumed one, within grace — it fires.
    let mut sched = Sched::new(nine(), 0);
    sched.consumed = Some(t("2026-06-10T09:00:00+02:00"));
    let run = sched.run_ticking(
        &ny,
        &ManualClock::new(t("2026-06-10T09:03:00-04:00")),
        TICK,
        t("2026-06-11T09:01:00-04:00"),
    );
    assert_eq!(
        run.dues(),
        [
            t("2026-06-10T09:00:00-04:00"),
            t("2026-06-11T09:00:00-04:00")
        ]
    );
    // Restarted in New York an hour after its 09:00: beyond grace, consumed with a reason.
    let mut sched = Sched::new(nine(), 0);
    sched.consumed = Some(t("2026-06-10T09:00:00+02:00"));
    let run = sched.run_waking(
        &ny,
        &ManualClock::new(t("2026-06-10T10:00:00-04:00")),
        t("2026-06-11T10:00:00-04:00"),
    );
    assert_eq!(
        run.skipped,
        [(t("2026-06-10T09:00:00-04:00"), "late_beyond_grace")]
    );
    assert_eq!(run.dues(), [t("2026-06-11T09:00:00-04:00")]);
}

#[test]
fn a_clock_jump_forward_gives_no_burst_and_backward_never_refires() {
    let utc = zone("UTC");
    let due = t("2026-04-01T09:00:00Z");
    // Forward three days (suspend/resume) to 2 minutes after that day's due: one firing.
    let mut sched = Sched::new(rule(json!({"kind": "daily", "hour": 9, "minute": 0})), 0);
    sched.consumed = Some(due);
    let clock = ManualClock::new(due + MIN);
    let mut run = sched.run_ticking(&utc, &clock, TICK, due + 2 * MIN);
    clock.set(due + 3 * DAY + 2 * MIN);
    run.fired.extend(
        sched
            .run_ticking(&utc, &clock, TICK, due + 3 * DAY + HOUR)
            .fired,
    );
    assert_eq!(run.dues(), [due + 3 * DAY]);
    // An NTP step of a day on a one-minute interval: one firing of the latest, then the next.
    let mut sched = Sched::new(rule(json!({"kind": "interval", "everyMinutes": 1})), due);
    sched.consumed = Some(due + MIN);
    let mut run = Run::default();
    let jumped = due + DAY + 90 * SEC;
    assert_eq!(
        sched.tick(&utc, jumped, &mut run),
        Decision::Fire {
            due_ms: due + DAY + MIN
        }
    );
    assert_eq!(
        sched.tick(&utc, jumped, &mut run),
        Decision::Wait {
            next_due_ms: Some(due + DAY + 2 * MIN)
        }
    );
    // Backward an hour right after a firing: the consumed due never fires again; the next does.
    let mut sched = Sched::new(rule(json!({"kind": "daily", "hour": 9, "minute": 0})), 0);
    sched.consumed = Some(due - DAY);
    let clock = ManualClock::new(due - MIN);
    let first = sched.run_ticking(&utc, &clock, TICK, due + MIN);
    assert_eq!(first.dues(), [due]);
    clock.advance(-HOUR);
    let after = sched.run_ticking(&utc, &clock, TICK, due + DAY + MIN);
    assert_eq!(after.dues(), [due + DAY]);
    assert!(after.skipped.is_empty());
    // And the wait says so: after a step back, the next due is the one after the consumed.
    assert_eq!(
        next_due(&sched.recurrence, 0, utc.zone(), due - HOUR),
        Some(due),
        "the calendar alone would say today's"
    );
    sched.consumed = Some(due);
    let mut run = Run::default();
    assert_eq!(
        sched.tick(&utc, due - HOUR, &mut run),
        Decision::Wait {
            next_due_ms: Some(due + DAY)
        }
    );
}

#[test]
fn tz_with_a_colon_resolves_and_a_zone_that_does_not_exist_is_an_error() {
    let berlin = resolve_process_zone(Some(":Europe/Berlin")).unwrap();
    assert_eq!(berlin.name(), "Europe/Berlin");
    assert!(berlin.is_named("Europe/Berlin"));
    let err = resolve_process_zone(Some("Europe/Berlinn")).unwrap_err();
    assert_eq!(err.code(), "TIMEZONE_UNKNOWN");
    assert!(err.fix().unwrap().change.contains("IANA"));
    assert!(resolve_process_zone(Some(":Not/AZone")).is_err());
}

/// `TIMEZONE_MISMATCH` findings for a serve with one schedule of `recurrence`.
fn tz_findings(
    tz: Option<&str>,
    baked: Option<&str>,
    recurrence: serde_json::Value,
    enabled: bool,
) -> Vec<String> {
    let schedules: Vec<ScheduledTask> = serde_json::from_value(json!([
        {"id": "s1", "to": "a", "message": "m", "recurrence": recurrence, "createdAtMs": 0, "enabled": enabled}
    ]))
    .unwrap();
    let start: BTreeSet<String> = ["a".to_owned()].into();
    let view = HostView {
        mode: HeadlessMode::Serve,
        start: &start,
        secret_present: &|_: &str| true,
        probe_approved: &|_: &ScheduleProbe| true,
        command_found: &|_: &str| true,
        dir_exists: &|_: &str| true,
        dir_holds_village: &|_: &str| false,
        mcp: &[],
        run_allow: &[],
        run_network_denied: &[],
        judge_invalid: &[],
        bypass_plan_review: true,
        run_approval: RunApproval::NoApproval,
        door_port: None,
        time_zone: resolve_process_zone(tz),
        baked_time_zone: baked.map(str::to_owned),
        language: Language::En,
    };
    headless_preflight(&World::default(), &schedules, &view)
        .into_iter()
        .filter(|f| f.code == "TIMEZONE_MISMATCH")
        .inspect(|f| assert_eq!(f.level, Level::Warn))
        .map(|f| format!("{} | {}", f.message, f.fix))
        .collect()
}

#[test]
fn timezone_mismatch_strips_the_colon_and_names_a_zone_that_does_not_exist() {
    let daily = || json!({"kind": "daily", "hour": 9, "minute": 0});
    // The same zone, however written: no finding.
    for tz in [
        "Asia/Tokyo",
        ":Asia/Tokyo",
        ":/usr/share/zoneinfo/Asia/Tokyo",
    ] {
        assert_eq!(
            tz_findings(Some(tz), Some("Asia/Tokyo"), daily(), true),
            Vec::<String>::new(),
            "{tz}"
        );
    }
    // Another zone: named, with the fix.
    let found = tz_findings(Some("Etc/UTC"), Some("Asia/Tokyo"), daily(), true);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].contains("Etc/UTC (TZ)") && found[0].contains("Set TZ=Asia/Tokyo"),
        "{found:?}"
    );
    // A zone that does not exist: named, bake or no bake.
    for baked in [Some("Asia/Tokyo"), None] {
        let found = tz_findings(Some(":Asia/Tokio"), baked, daily(), true);
        assert_eq!(found.len(), 1, "{baked:?}");
        assert!(
            found[0].contains("\":Asia/Tokio\" names no time zone"),
            "{found:?}"
        );
    }
    // Only enabled wall-clock schedules count; without a bake a real zone is not compared.
    assert!(tz_findings(Some("Etc/UTC"), Some("Asia/Tokyo"), daily(), false).is_empty());
    let interval = json!({"kind": "interval", "everyMinutes": 5});
    assert!(tz_findings(Some("Nowhere/Land"), Some("Asia/Tokyo"), interval, true).is_empty());
    assert!(tz_findings(Some("Etc/UTC"), None, daily(), true).is_empty());
}
