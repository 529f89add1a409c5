//! One module per subcommand.

pub mod ask;
pub mod ask_result;
pub mod ask_stream;
pub mod assist;
pub mod audit;
pub mod bake;
pub mod check;
pub mod completions;
pub mod control;
pub mod demo;
pub mod gui;
pub mod headless;
pub mod init;
pub mod judge;
pub mod judge_try;
pub mod pricing;
pub mod probe;
pub mod render;
pub mod schedules;
pub mod secrets;
pub mod servants;
pub mod serve;
pub mod sessions;
pub mod stats;
pub mod templates;
pub mod world_edit;
