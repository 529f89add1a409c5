//! What one scheduler tick costs with 1,000 schedules (target ≤ 1 ms): every
//! schedule decided (`schedule::decide`) in `America/New_York`, a third each interval, daily
//! and weekly, the clock moving 30 s per tick (the original's ticker) across a DST change, the
//! consumed due written back on every fire or skip. Median and p99 of 2,000 ticks; plus one
//! `next_due` per schedule (what a `schedules` listing computes).
//!
//! Run with `cargo bench -p fuseforks-core --bench schedule`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::time::{Duration, Instant};

use fuseforks_core::schedule::{Decision, Timing, decide, next_due, resolve_process_zone};
use fuseforks_core::village::Recurrence;
use serde_json::json;

const SCHEDULES: usize = 1_000;
const TICKS: usize = 2_000;
const TICK_MS: i64 = 30_000;

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "{name:<52} median {:>8.1} µs   p99 {:>8.1} µs",
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6
    );
}

fn recurrence(i: usize) -> Recurrence {
    let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    let value = match i % 3 {
        0 => json!({"kind": "interval", "everyMinutes": 1 + i % 120}),
        1 => json!({"kind": "daily", "hour": i % 24, "minute": (i * 7) % 60}),
        _ => {
            json!({"kind": "weekly", "weekday": days[i % 7], "hour": i % 24, "minute": (i * 11) % 60})
        }
    };
    serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let zone = resolve_process_zone(Some("America/New_York")).unwrap_or_else(|e| panic!("{e}"));
    let zone = zone.zone();
    // 2026-03-07 12:00 EST: 2,000 ticks of 30 s run across the spring-forward night.
    let start: i64 = 1_772_902_800_000;
    let rules: Vec<Recurrence> = (0..SCHEDULES).map(recurrence).collect();
    let created = start - 86_400_000;
    let mut consumed: Vec<Option<i64>> = vec![None; SCHEDULES];
    let (mut fired, mut skipped) = (0usize, 0usize);
    let ticks: Vec<Duration> = (0..TICKS)
        .map(|tick| {
            let now = start + tick as i64 * TICK_MS;
            let began = Instant::now();
            for (rule, last) in rules.iter().zip(consumed.iter_mut()) {
                let timing = Timing {
                    recurrence: rule,
                    created_at_ms: created,
                    last_consumed_due_ms: *last,
                };
                match decide(timing, zone, now) {
                    Decision::Fire { due_ms } => {
                        fired += 1;
                        *last = Some(due_ms);
                    }
                    Decision::Consume { due_ms, .. } => {
                        skipped += 1;
                        *last = Some(due_ms);
                    }
                    Decision::Wait { .. } => {}
                }
            }
            began.elapsed()
        })
        .collect();
    let over = ticks
        .iter()
        .filter(|d| **d > Duration::from_millis(1))
        .count();
    summary("tick: decide 1,000 schedules", ticks);
    // On a loaded machine a preempted tick shows as one time slice (~4 ms) here, not as cost.
    println!("  ticks over 1 ms: {over} of {TICKS}");
    println!("  ({fired} fired, {skipped} consumed late over {TICKS} ticks)");
    let listing: Vec<Duration> = (0..200)
        .map(|tick| {
            let now = start + tick * 3_600_000;
            let began = Instant::now();
            for rule in &rules {
                std::hint::black_box(next_due(rule, created, zone, now));
            }
            began.elapsed()
        })
        .collect();
    summary("listing: next_due of 1,000 schedules", listing);
}
