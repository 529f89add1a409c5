//! `fuseforks-core`: the engine of Fuseforks, free of HTTP servers, CLI parsing, keyrings and
//! terminal output (it never prints: the lints below deny it).
//!
//! It owns [`village`] (the typed model of every file of a village and of the machine's shelf,
//! and the store that reads and writes them atomically, keeping unknown fields), [`llm`] (one
//! canonical interface to every model wire, with capability flags, retries and cancellation),
//! [`tools`] (the bundled tools and their jail), [`mcp`] (the MCP client), [`process`] (every
//! child process), [`sessions`] (conversations in `sessions.redb`), [`orchestrator`] (agents,
//! turns, delegation, plans), the headless [`preflight`], and [`error::Coded`] (how every error
//! of the workspace gives its code and fix).

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod budget;
pub mod error;
pub mod events;
pub mod llm;
pub mod log;
pub mod mcp;
pub mod orchestrator;
pub mod preflight;
pub mod process;
pub mod prompt;
pub mod sessions;
pub mod stats;
pub mod tools;
pub mod village;
