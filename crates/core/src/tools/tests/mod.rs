//! The tools' tests that need what is not public (the blackboard is the orchestrator's tool,
//! never reached through `run_tool`). Whatever `run_tool` reaches is tested through it in
//! `crates/core/tests/it/tools_*.rs`.

mod blackboard;
mod blackboard_hardening;
mod support;
