//! One module per subcommand.

pub mod init;
