//! A helper process for the memory tests: runs one bundled tool call in a work folder and
//! prints `ok=<bool> chars=<n>` and then its own peak resident memory (`VmHWM`, from
//! `/proc/self/status`), so that a test measures one tool call alone, not the test runner.
//!
//! Usage: `tool-call <work folder> <tool> <JSON arguments>`.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a helper process of the memory tests: its stdout is what the test reads, a broken call is said on stderr"
)]

use fuseforks_core::tools::{RunApproval, ToolContext, TrashTarget, WorkDir, run_tool};
use fuseforks_core::village::{AgentId, Language, VillageStore};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [work, tool, json] = args.as_slice() else {
        eprintln!("usage: tool-call <work folder> <tool> <JSON arguments>");
        std::process::exit(2);
    };
    let Ok(call_args) = serde_json::from_str::<serde_json::Value>(json) else {
        eprintln!("the arguments are not JSON");
        std::process::exit(2);
    };
    let village = tempfile::tempdir().unwrap_or_else(|e| fail(&e));
    let store = VillageStore::new(village.path().join("workspace"));
    let agent_files = AgentId::new("a1")
        .ok()
        .and_then(|id| store.agent_files(&id).ok())
        .unwrap_or_else(|| fail(&"agent files"));
    let ctx = ToolContext {
        agent_id: "a1".into(),
        work_dir: Some(WorkDir::new(std::path::Path::new(work)).unwrap_or_else(|e| fail(&e))),
        agent_files,
        rag_sources: Vec::new(),
        approval: RunApproval::Required,
        language: Language::En,
        trash: TrashTarget::Folder(village.path().join("trash")),
        dry_run: false,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&e));
    let output = runtime.block_on(run_tool(tool, &call_args, &ctx));
    println!("ok={} chars={}", output.ok, output.body.chars().count());
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:")) {
        println!("{line}");
    }
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("tool-call: {e}");
    std::process::exit(1);
}
