//! The scheduler's calendar (docs/formats/schedules.json.md): when a schedule of
//! `schedules.json` is due, in which time zone, and what one tick does about it — pure
//! functions of the schedule, the zone and an instant, so that every rule is tested in virtual
//! time; `runner.rs` and `firing.rs` are the tick loop that calls them.
//!
//! # Parts
//!
//! The scheduler:
//!
//! - a calendar, pure and tested in virtual time, and the tick loop `serve` runs over it: `zone.rs`
//!   (`resolve_process_zone(TZ)`: `TZ` first — a leading `:` stripped, `…/zoneinfo/NAME` read as
//!   `NAME`, POSIX rules accepted — else `/etc/localtime`, else UTC; names looked up in the
//!   system's zoneinfo, else the tz database bundled in the binary (jiff `tzdb-bundle-always`, ~200
//!   KB, a data crate that compiles in a second); a name neither knows is `TIMEZONE_UNKNOWN`, never
//!   a silent UTC; the preflight's `TIMEZONE_MISMATCH` uses the same function)
//! - `calendar.rs`: `next_due` / `latest_due`: interval from `createdAtMs`, daily, weekly; nothing
//!   due at or before `createdAtMs`; a wall time in a DST gap is due at the gap's end, one met
//!   twice is due once, at the earlier instant
//! - `decide.rs`: `decide` → `Fire` / `Consume{late_beyond_grace}` / `Wait{next}`: only the latest
//!   due not yet consumed counts, so downtime and clock jumps give at most one firing and a
//!   consumed due never fires again; grace 5 min for daily/weekly, none for intervals
//! - `clock.rs` (`Clock`: `SystemClock`, `ManualClock` for tests). Instants are ms since the epoch.
//! - `runner.rs`: `ScheduleRunner`: ticks at the earliest due ahead, at most `TICK` = 1 s apart (a
//!   firing leaves ~5 ms after its due), re-reads `schedules.json` through the village store when
//!   its mtime/length changed, decides each enabled schedule, and writes the `lastConsumedDueMs` of
//!   everything fired or consumed in one atomic write, **before any delivery**; a target not
//!   running is consumed as `schedule skip: … reason=target_stopped`; a broken file is logged once
//!   with its code and nothing fires until it reads again — a consume could not be recorded without
//!   writing over it, and it is never written
//! - `firing.rs`: one firing as a task of its own: pre-check probe via `probe::run_probe` —
//!   anything but `match` skips, logged; then the message from System with the origin marker
//!   `[Scheduled task ID]` (`[予定タスク ID]`), the probe's extra lines appended, as a new causal root
//!   through `Orchestrator::deliver_scheduled` (crate-private; its `Route.auto_approve_plans`
//!   carries the schedule's `autoApprovePlans`); `sessionMode: fresh` starts a new conversation
//!   first; then the acceptance probe, re-sending with the output excerpt on `no_match` up to
//!   `maxAttempts`, every delivery under the one `CausalBudget` of the firing;
//!   `error`/`timeout`/`unapproved` never retry). **At most once**: the consume is on disk before
//!   the request leaves; a crash (or `serve`'s close aborting a firing in flight) between the write
//!   and the delivery loses that firing and never doubles it
//!   (`serve_schedules::a_kill_between_consume_and_delivery_…`). `summarizeAfter`: after the chain
//!   (and the acceptance retries), `Orchestrator::summarize_agent` (`orchestrator/summary.rs`)
//!   under the firing's budget; `summary: agent= covers=<seq> chars=<n>`, or `summary failed:
//!   agent= schedule= reason=` (nothing stored; the firing still counts). **Default verifier**: a
//!   firing with `autoApprovePlans` sets `Route.verify_with` to the world's `defaultVerifier`
//!   (carried along the chain like `auto_approve_plans`); each plan wave of that chain, once
//!   bundled, sends the bundle to the verifier as a normal request from the planner
//!   (`plan::verify`, through `delegate`, same budget and ask timeout, the verifier's own chain
//!   without a verifier) and appends `### verifier (ID): <answer>` to the bundle the planner reads;
//!   a verifier not running or not answering appends a fixed line instead — never blocks the wave.
//!   Logged `verifier: plan= wave= verifier= outcome=answered|not_running|failed`. Only chains from
//!   a firing: `ask`, the GUI's switch and a human's dispatch have no verifier yet, and a judge's
//!   `to=[many]` fan-out never has one (reference.

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
