//! One module per subcommand.

pub(crate) mod ask;
pub(crate) mod ask_result;
pub(crate) mod ask_stream;
pub(crate) mod assist;
pub(crate) mod audit;
pub(crate) mod bake;
pub(crate) mod check;
pub(crate) mod completions;
pub(crate) mod control;
pub(crate) mod demo;
pub(crate) mod gui;
pub(crate) mod headless;
pub(crate) mod init;
pub(crate) mod judge;
pub(crate) mod judge_try;
pub(crate) mod pricing;
pub(crate) mod probe;
pub(crate) mod render;
pub(crate) mod schedules;
pub(crate) mod secrets;
pub(crate) mod servants;
pub(crate) mod serve;
pub(crate) mod sessions;
pub(crate) mod stats;
pub(crate) mod templates;
pub(crate) mod world_edit;
