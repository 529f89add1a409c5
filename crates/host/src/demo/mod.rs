//! `fuseforks-cli demo`'s parts in the host: the embedded demo model (`model.rs`, an
//! OpenAI-compatible server on loopback answering from `script.rs`), started by the boot for
//! every `demo` template, and the demo village (`village.rs`), founded through the core's API.
//!
//! # Parts
//!
//! `fuseforks-cli demo`'s parts:
//!
//! - `model.rs`: the embedded demo model, an OpenAI-compatible chat-completions server on 127.0.0.1
//!   in our process — `POST /v1/chat/completions`, `GET /v1/models` —, bodies up to 4 MiB, an
//!   optional pace before each answer; `build_host` starts one per `demo` template on its
//!   `baseUrl`'s port, after the bootstrap and before any agent starts, held in `Host::demo_models`
//!   and stopped on drop; a port that cannot be bound is `DEMO_PORT_UNAVAILABLE`, exit 5
//! - `script.rs`: the pure script: the agent read from the tools it is offered — `plan` reception,
//!   `file` writer, `grep` searcher —, the step from the last message; every text carries "demo
//!   model — scripted, not an AI" or its Japanese mark
//! - `village.rs`: the demo village through `found_village_with` and the store: `ROOT/village` the
//!   data folder, `ROOT/work/servant-{a,b}` the work folders, outside it). The template provider
//!   `demo` (core `village/template.rs`, wire OpenAI-compatible) is written only by `demo`; its
//!   `baseUrl` must be exactly `http://127.0.0.1:<port>/v1` — one rule, `village::demo_port`, used
//!   by the endpoint rule (`check`, the LLM client) and by the boot that starts the demo model
//!   (else `ENDPOINT_INVALID`) — so the demo model never leaves this machine; `check` names it
//!   `DEMO_MODEL` (info.

pub mod model;
pub mod script;
pub mod village;

pub use model::{DemoModel, DemoModelError};
pub use script::{DEMO_MARK_EN, DEMO_MARK_JA};
pub use village::{DemoLayout, found_demo_village};
