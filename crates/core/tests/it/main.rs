//! Integration tests of `fuseforks-core`: real files in temporary folders, the original's
//! village fixture, broken-file corpora.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "a test crate: its helpers fail the calling test with a panic that says why, and say skips on stderr"
)]

mod assist;
mod assist_replies;
mod broken_files;
mod budget;
mod cast;
mod editable;
mod formats_docs;
mod founding;
mod human_decisions;
mod intent;
mod judge_eval;
mod judge_file;
mod judge_grammar;
mod judge_props;
mod judge_route;
mod llm_cache;
mod llm_capability;
mod llm_conformance;
mod llm_fixtures;
mod llm_limits;
mod llm_probe;
mod llm_retry;
mod llm_stream;
mod llm_stream_breaks;
mod llm_stream_fixtures;
mod llm_support;
mod mcp_client;
mod not_offered;
mod orch_support;
mod orchestrator;
mod original_village;
mod other_files;
mod preflight;
mod probes;
mod round_trip;
mod safety_audit;
mod safety_audit_durable;
mod safety_audit_key;
mod safety_switch;
mod schedule_calendar;
mod schedule_runner;
mod schedule_summary;
mod schedule_verifier;
mod sessions;
mod skill_front_matter;
mod stopping;
mod tidy;
mod tidy_js;
mod together;
mod tools_files;
mod tools_hardening;
mod tools_ignore;
mod tools_run;
mod tools_sandbox;
mod tools_specs;
mod tools_support;
mod turn_ends;
