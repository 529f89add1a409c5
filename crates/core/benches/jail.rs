//! What resolving every path beneath the work folder's handle costs per file call, against a
//! plain path-based read or write of the same small file (the jail's overhead), and a whole
//! `file read` tool call (the blocking-pool hop included). Median and p99 of 5,000 calls each.
//!
//! Run with `cargo bench -p fuseforks-core --bench jail`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::time::{Duration, Instant};

use fuseforks_core::tools::{RunApproval, ToolContext, TrashTarget, WorkDir, WriteMode, run_tool};
use fuseforks_core::village::{AgentId, Language, VillageStore};
use fuseforks_testkit::TempDataDir;
use serde_json::json;

const RUNS: usize = 5_000;

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "{name:<44} median {:>7.1} µs   p99 {:>7.1} µs",
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6
    );
}

fn time(mut call: impl FnMut(usize)) -> Vec<Duration> {
    (0..RUNS)
        .map(|i| {
            let started = Instant::now();
            call(i);
            started.elapsed()
        })
        .collect()
}

fn main() {
    let data = TempDataDir::new();
    let work = data.data_dir().join("work");
    std::fs::create_dir_all(work.join("a/b")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(work.join("a/b/notes.txt"), "alpha\nbeta\n".repeat(100))
        .unwrap_or_else(|e| panic!("{e}"));
    let jail = WorkDir::new(&work).unwrap_or_else(|e| panic!("{e}"));
    let plain = work.join("a/b/notes.txt");
    summary(
        "read, plain std::fs::read_to_string",
        time(|_| drop(std::fs::read_to_string(&plain))),
    );
    summary(
        "read, beneath the handle (WorkDir::read_text)",
        time(|_| drop(jail.read_text("a/b/notes.txt", 48_000))),
    );
    summary(
        "write, plain std::fs::write",
        time(|i| drop(std::fs::write(work.join(format!("a/b/p{i}.txt")), "x"))),
    );
    summary(
        "write, beneath the handle (create_file)",
        time(|i| {
            let file = jail.create_file(&format!("a/b/j{i}.txt"), WriteMode::CreateNew);
            drop(file.map(|mut f| std::io::Write::write_all(&mut f, b"x")));
        }),
    );
    let store = VillageStore::new(data.workspace());
    let ctx = ToolContext {
        agent_id: "a1".into(),
        work_dir: Some(jail),
        agent_files: store
            .agent_files(&AgentId::new("a1").unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}")),
        rag_sources: Vec::new(),
        approval: RunApproval::Required,
        language: Language::En,
        trash: TrashTarget::Folder(data.data_dir().join("trash")),
        dry_run: false,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let args = json!({"op": "read", "path": "a/b/notes.txt"});
    summary(
        "`file read` tool call (blocking pool included)",
        time(|_| drop(runtime.block_on(run_tool("file", &args, &ctx)))),
    );
}
