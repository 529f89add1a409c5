//! `fuseforks-core`: the engine of Fuseforks, free of HTTP servers, CLI parsing, keyrings and
//! terminal output.
//!
//! For now it owns [`village`]: the typed model of every file of a village and of the machine's
//! shelf, and the store that reads and writes them atomically, keeping unknown fields.

pub mod village;
