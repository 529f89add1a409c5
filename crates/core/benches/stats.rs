//! `stats` over a large store: 50,000 turn records in 50 conversations of `sessions.redb`,
//! aggregated by `stats::aggregate` (what `fuseforks-cli stats` calls), all time and one month.
//! Target ≤ 200 ms. Run with `cargo bench -p fuseforks-core --bench stats`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::time::Instant;

use fuseforks_core::sessions::{Record, SessionStore, TurnRecord, TurnStop};
use fuseforks_core::stats::{Period, TimeZone, aggregate};
use fuseforks_testkit::{TempDataDir, TestVillage};

const CONVERSATIONS: usize = 50;
const PER_CONVERSATION: usize = 1_000;
/// 2026-11-15 12:00 UTC.
const NOV: i64 = 1_794_744_000_000;

fn turn(i: usize) -> Record {
    let agents = ["rec", "writer", "checker", "gate"];
    let models = ["gpt-5", "claude-sonnet-5", "gemini-3-pro"];
    Record::Turn(TurnRecord {
        agent_id: agents[i % agents.len()].into(),
        ts_ms: NOV - (i as i64 % 90) * 86_400_000,
        hop: 0,
        rounds: 1 + (i % 5) as u32,
        waves: 0,
        stop: if i.is_multiple_of(17) {
            TurnStop::ToolLimit
        } else {
            TurnStop::Completed
        },
        prompt: 1_000 + (i % 700) as u64,
        cached: 500,
        completion: 100 + (i % 90) as u64,
        reasoning: 10,
        cache_write: 0,
        cache_write_1h: 0,
        model: models[i % models.len()].into(),
        backend: "open_ai_compat".into(),
        elapsed_ms: 900,
        usage_unknown: false,
        skill: None,
    })
}

fn main() {
    let data = TempDataDir::new();
    TestVillage::builder()
        .stub(
            fuseforks_core::llm::Wire::OpenAiCompat,
            "http://127.0.0.1:9/v1",
        )
        .agent("rec", "Reception")
        .write(&data);
    let world = fuseforks_core::village::VillageStore::new(data.workspace())
        .load_world()
        .unwrap_or_else(|e| panic!("{e}"))
        .value;
    let store = SessionStore::open(&data.workspace().join("sessions.redb"))
        .unwrap_or_else(|e| panic!("{e}"));
    let filled = Instant::now();
    for c in 0..CONVERSATIONS {
        let id = store
            .create(&format!("c{c}"), NOV)
            .unwrap_or_else(|e| panic!("{e}"));
        let records: Vec<Record> = (0..PER_CONVERSATION)
            .map(|i| turn(c * PER_CONVERSATION + i))
            .collect();
        let items: Vec<(&str, &Record)> = records.iter().map(|r| (id.as_str(), r)).collect();
        store
            .append_many(&items, NOV)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    println!(
        "wrote {} turn records in {CONVERSATIONS} conversations in {:.1} s",
        CONVERSATIONS * PER_CONVERSATION,
        filled.elapsed().as_secs_f64()
    );
    let month = Period::Month {
        year: 2026,
        month: 11,
        closing_day: 31,
    };
    for (name, period) in [("all", Period::All), ("2026-11", month)] {
        let mut times = Vec::new();
        let mut turns = 0;
        for _ in 0..15 {
            let t = Instant::now();
            let report =
                aggregate(&store, &world, period, &TimeZone::UTC).unwrap_or_else(|e| panic!("{e}"));
            times.push(t.elapsed().as_secs_f64() * 1e3);
            turns = report.rows.iter().map(|r| r.turns).sum::<u64>();
        }
        times.sort_by(f64::total_cmp);
        println!(
            "aggregate --period {name}: {turns} turns, median {:.1} ms, max {:.1} ms (target ≤ 200 ms)",
            times[times.len() / 2],
            times[times.len() - 1]
        );
    }
}
