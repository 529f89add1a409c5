//! The scheduler's calendar (docs/formats/schedules.json.md): when a schedule of
//! `schedules.json` is due, in which time zone, and what one tick does about it — pure
//! functions of the schedule, the zone and an instant, so that every rule is tested in virtual
//! time; `runner.rs` and `firing.rs` are the tick loop that calls them.
//!
//! - `zone.rs`: the process time zone — `TZ` first (a leading `:` stripped), else the
//!   system's — from the system tz database or the one bundled in the binary; a name that
//!   neither knows is an error ([`ZoneError`], `TIMEZONE_UNKNOWN`), never a silent UTC.
//! - `calendar.rs`: [`next_due`] / [`latest_due`] for `interval` (anchored at `createdAtMs`),
//!   `daily` and `weekly` (local wall time; a time in a DST gap is due at the first instant
//!   after the gap, a time that occurs twice is due once, at the earlier instant).
//! - `decide.rs`: [`decide`] — fire, consume (late beyond the grace), or wait.
//! - `clock.rs`: [`Clock`], with [`SystemClock`] and the [`ManualClock`] of tests.
//! - `runner.rs`: [`ScheduleRunner`], the tick loop `serve` starts: re-reads the file,
//!   decides, writes `lastConsumedDueMs` atomically before delivering (at most once).
//! - `firing.rs`: one firing — pre-check probe, delivery from System with the origin marker,
//!   acceptance probe and its retries under one budget ([`FiringReport`]).
//!
//! Every instant is milliseconds since the Unix epoch (`i64`), as in `schedules.json`. The zone
//! type is jiff's `TimeZone` (named once, as `stats::TimeZone`); a caller gets it from
//! [`ProcessZone::zone`].

mod calendar;
mod clock;
mod decide;
mod firing;
mod runner;
mod zone;

pub use calendar::{latest_due, next_due};
pub use clock::{Clock, ManualClock, SystemClock};
pub use decide::{Decision, GRACE_MS, SkipReason, Timing, decide};
pub use firing::FiringReport;
pub use runner::{Firing, RunnerConfig, ScheduleRunner, TICK};
pub use zone::{ProcessZone, ZoneError, ZoneSource, resolve_process_zone};
