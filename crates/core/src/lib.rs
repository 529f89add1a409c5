//! `fuseforks-core`: the engine of Fuseforks, free of HTTP servers, CLI parsing, keyrings and
//! terminal output.
//!
//! It owns [`village`] (the typed model of every file of a village and of the machine's shelf,
//! and the store that reads and writes them atomically, keeping unknown fields) and [`llm`] (one
//! canonical interface to every model wire, with capability flags, retries and cancellation).

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
mod sync;
pub mod tools;
pub mod village;
