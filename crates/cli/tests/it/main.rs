//! End-to-end tests of the `fuseforks-cli` binary on temporary villages.

#![allow(clippy::unwrap_used)]

mod children;
mod door;
mod errors;
mod init;
mod init_probe;

use std::process::{Command, Output};

/// Runs the binary with `args` and a clean locale.
pub fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(args)
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap()
}

/// Stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
mod hardening;
mod headless;
mod money;
mod outcomes;
mod secret_values;
mod secrets;
mod start_set;
