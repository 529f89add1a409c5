//! `fuseforks-host`: a running Fuseforks process around the core — the one boot wiring
//! (`build_host`), the village lock, the secret stores (OS keyring or environment), the host's
//! side of the headless preflight, and the door (the village's MCP server), the web GUI (`gui/`).

pub mod audit_key;
pub mod bake;
pub mod boot;
pub mod control;
pub mod demo;
pub mod door;
mod door_body;
pub mod gui;
pub mod lifecycle;
pub mod lock;
pub mod paths;
pub mod preflight_view;
pub mod pricing;
pub mod secret_names;
pub mod secret_store;
pub mod secrets;
pub mod startup;
pub mod surface_audit;
pub mod telemetry;
pub mod world_edit;

pub use boot::{Host, HostBootOptions, HostError, ScheduleLoop, SecretSource, build_host};
pub use paths::HostPaths;
