//! `fuseforks-cli demo`'s parts in the host: the embedded demo model (`model.rs`, an
//! OpenAI-compatible server on loopback answering from `script.rs`), started by the boot for
//! every `demo` template, and the demo village (`village.rs`), founded through the core's API.

pub mod model;
pub mod script;
pub mod village;

pub use model::{DemoModel, DemoModelError};
pub use script::{DEMO_MARK_EN, DEMO_MARK_JA};
pub use village::{DemoLayout, found_demo_village};
