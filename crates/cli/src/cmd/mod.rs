//! One module per subcommand.

pub mod ask;
pub mod audit;
pub mod check;
pub mod control;
pub mod headless;
pub mod init;
pub mod probe;
pub mod schedules;
pub mod secrets;
pub mod serve;
