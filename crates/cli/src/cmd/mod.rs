//! One module per subcommand.

pub mod ask;
pub mod bake;
pub mod check;
pub mod headless;
pub mod init;
pub mod probe;
pub mod schedules;
pub mod secrets;
pub mod serve;
