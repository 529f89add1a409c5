//! What one real scheduler tick costs with 1,000 schedules (target ≤ 1 ms):
//! `ScheduleRunner::tick` re-reading and parsing `schedules.json`, deciding every schedule in
//! `America/New_York`, and writing the file back atomically when something was consumed (the
//! targets are not running, so every owed due is consumed as `target_stopped`). The clock moves
//! 1 s per tick (the loop's period). Median and p99 of 600 ticks, with and without a write.
//!
//! Run with `cargo bench -p fuseforks-core --bench schedule_runner`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use fuseforks_core::llm::{LlmClient, Wire};
use fuseforks_core::log::VillageLog;
use fuseforks_core::orchestrator::{Orchestrator, OrchestratorConfig};
use fuseforks_core::schedule::{ManualClock, RunnerConfig, ScheduleRunner, resolve_process_zone};
use fuseforks_core::tools::TrashTarget;
use fuseforks_core::village::ShelfStore;
use fuseforks_testkit::{TempDataDir, TestVillage};
use serde_json::{Value, json};

const SCHEDULES: usize = 1_000;
const TICKS: usize = 600;

fn schedule(i: usize, created: i64) -> Value {
    let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    let recurrence = match i % 3 {
        0 => json!({"kind": "interval", "everyMinutes": 1 + i % 120}),
        1 => json!({"kind": "daily", "hour": i % 24, "minute": (i * 7) % 60}),
        _ => {
            json!({"kind": "weekly", "weekday": days[i % 7], "hour": i % 24, "minute": (i * 11) % 60})
        }
    };
    json!({"id": format!("s{i}"), "to": "a1", "message": "m", "recurrence": recurrence, "createdAtMs": created})
}

fn summary(name: &str, mut samples: Vec<Duration>) {
    if samples.is_empty() {
        return;
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "{name:<44} n={:>4} median {:>8.1} µs   p99 {:>8.1} µs",
        samples.len(),
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6
    );
}

fn main() {
    let data = TempDataDir::new();
    TestVillage::builder()
        .stub(Wire::OpenAiCompat, "http://127.0.0.1:9")
        .agent("a1", "Ada")
        .write(&data);
    // 2026-03-07 12:00 EST, the night before spring-forward.
    let start: i64 = 1_772_902_800_000;
    let doc: Vec<Value> = (0..SCHEDULES)
        .map(|i| schedule(i, start - 86_400_000))
        .collect();
    std::fs::write(
        data.workspace().join("schedules.json"),
        serde_json::to_vec(&doc).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let log = Arc::new(
        VillageLog::open(&data.workspace().join("fuseforks.log")).unwrap_or_else(|e| panic!("{e}")),
    );
    let orchestrator = Orchestrator::bootstrap(OrchestratorConfig {
        workspace: data.workspace(),
        secrets: Arc::new(|_: &str| None),
        log: log.clone(),
        llm: LlmClient::new().unwrap_or_else(|e| panic!("{e}")),
        os_locale: None,
        trash: TrashTarget::Folder(data.data_dir().join("trash")),
        mcp_child_output: None,
        tracer: None,
        audit: fuseforks_core::safety::AuditSetup::default(),
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let zone = resolve_process_zone(Some("America/New_York")).unwrap_or_else(|e| panic!("{e}"));
    let clock = Arc::new(ManualClock::new(start));
    let mut runner = ScheduleRunner::new(RunnerConfig {
        orchestrator,
        workspace: data.workspace(),
        village_id: "bench".into(),
        shelf: ShelfStore::new(data.data_dir()),
        zone: zone.zone().clone(),
        clock: clock.clone(),
        log,
    });
    runner.tick(); // the first tick consumes everything owed since creation
    let path = data.workspace().join("schedules.json");
    let (mut quiet, mut writing) = (Vec::new(), Vec::new());
    for _ in 0..TICKS {
        clock.advance(1_000);
        let before = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        let began = Instant::now();
        std::hint::black_box(runner.tick());
        let took = began.elapsed();
        let after = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
        if before == after {
            quiet.push(took)
        } else {
            writing.push(took)
        }
    }
    summary("tick, nothing owed (read+decide)", quiet);
    summary("tick with a consume (read+decide+write)", writing);
}
