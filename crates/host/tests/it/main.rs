//! Integration tests of `fuseforks-host`, one binary: the lock, the secret stores and
//! `build_host`'s refusals (`host`); the door opened from `mcp_server.json` (`door`); the
//! embedded demo model over HTTP (`demo`); the lifecycle a command calls once (`lifecycle`).

mod demo;
mod door;
mod gui;
mod gui_editing;
mod gui_live;
mod gui_pricing;
mod host;
mod lifecycle;
