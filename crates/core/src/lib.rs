//! `fuseforks-core`: the engine of Fuseforks, free of HTTP servers, CLI parsing, keyrings and
//! terminal output (it never prints: the lints below deny it).
//!
//! The public API is this file: the namespaces below, each naming its items with `pub use` in
//! its own `mod.rs` (their submodules are crate-private, so every item has one path), and the
//! root re-exports of the small modules. Everything else is `pub(crate)`.
//!
//! - [`village`]: the typed model of every file of a village and of the machine's shelf, and the
//!   store that reads and writes them atomically, keeping unknown fields.
//! - [`llm`]: one canonical interface to every model wire, with capability flags, retries,
//!   cancellation and the endpoint probe; [`model_endpoint`]: a village's model template made
//!   into what `llm` calls.
//! - [`orchestrator`]: agents, turns, delegation, plan waves; [`sessions`]: the conversation
//!   store; [`events`]: what the kernel reports; [`log`]: the village log; [`stats`]: usage
//!   totals; [`tools`]: the bundled tools; [`mcp`]: MCP servers as tool providers;
//!   [`preflight`]: the checks before a headless run; [`process`]: confined child processes.
//! - [`probe`]: schedule probes (run, outcome, approvals on this machine); [`schedule`]: the
//!   scheduler's calendar (time zone, due instants, fire/consume/wait); [`goal`]: goal loops
//!   for one-off requests (ask, acceptance check, re-send; the goals log).
//! - [`judge`]: judge files (`judge.toml`), their grammar, answers and evaluation.
//! - [`safety`]: the kill switch (pause / abort / halt), the halt marker, the audit log.
//!
//! Every error of the workspace gives its code and fix through [`Coded`].

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod assist;
mod budget;
mod clock;
mod effort;
mod endpoint_rule;
mod error;
pub mod events;
pub mod goal;
pub mod judge;
pub mod llm;
pub mod log;
pub mod mcp;
pub mod model_endpoint;
pub mod orchestrator;
pub mod preflight;
pub mod pricing;
pub mod probe;
pub mod process;
mod prompt;
pub mod safety;
pub mod schedule;
pub mod sessions;
pub mod stats;
mod sync;
pub mod tools;
pub mod trace;
pub mod version;
pub mod village;

pub use budget::{BudgetStop, CausalBudget, RESERVATION_FLOOR, Reservation, effective_tokens};
pub use error::{Coded, Fix, Remedy};
pub use orchestrator::error::CoreError;
