//! `fuseforks-host`: a running Fuseforks process around the core.
//!
//! For now it owns [`paths::HostPaths`], the one way from a `data_dir` to the village and the
//! shelf, and [`secret_names`], the names secrets go by. Boot wiring, the village lock, secret stores, the door and the GUI's HTTP API arrive
//! with their issues.

pub mod paths;
pub mod secret_names;

pub use paths::HostPaths;
