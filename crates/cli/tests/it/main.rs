//! End-to-end tests of the `fuseforks-cli` binary on temporary villages.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "a test crate: its helpers fail the calling test with a panic that says why, and say skips on stderr"
)]

mod approved_by;
mod ask_user;
mod assist;
mod audit_key;
mod bake;
mod children;
mod completions;
mod container;
mod demo;
mod door;
mod dry_run;
mod durability;
mod errors;
mod first_hour;
mod goals;
mod guards;
mod gui;
mod image;
mod init;
mod init_probe;
mod judge_try;
mod judges;
mod safety;
mod schedules;
mod sections;
mod servants;
mod serve_schedules;
mod sessions_stats;
mod skill_goal_seek;
mod startup_block;

use std::process::{Command, Output};

#[test]
fn words_split_on_spaces_and_keep_quoted_ones() {
    assert_eq!(
        words(" ask --data-dir /tmp/x  'What is it?' '' hi"),
        ["ask", "--data-dir", "/tmp/x", "What is it?", "", "hi"]
    );
}

/// A command line written as one string, split into its arguments: words are separated by
/// whitespace, and `'…'` keeps an argument with spaces in one piece
/// (`ask --data-dir {dir} 'What is it?'`). Paths put in with `format!` must hold no space
/// (temporary folders do not).
pub fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let (word, after) = match rest.strip_prefix('\'') {
            Some(quoted) => quoted
                .split_once('\'')
                .unwrap_or_else(|| panic!("unclosed quote in {line:?}")),
            None => rest.split_at(rest.find(char::is_whitespace).unwrap_or(rest.len())),
        };
        out.push(word.to_owned());
        rest = after.trim_start();
    }
    out
}

/// Runs the binary with the arguments of `line` (see [`words`]) and a clean locale.
pub fn cli(line: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(words(line))
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap()
}

/// What `--version` says, without the program's name (`0.1.0+g1b33d9d`).
pub fn binary_version() -> String {
    let out = cli("--version");
    stdout(&out)
        .trim()
        .trim_start_matches("fuseforks-cli")
        .trim()
        .to_owned()
}

/// The version's exact form: the workspace's version (`X.Y.Z`), then `+g` and the short commit
/// when the build saw a git checkout (`0.1.0+g1b33d9d`), nothing else.
pub fn assert_version_form(version: &str) {
    let (base, commit) = version.split_once("+g").unwrap_or((version, ""));
    assert_eq!(base, env!("CARGO_PKG_VERSION"), "{version}");
    let parts: Vec<&str> = base.split('.').collect();
    assert!(
        parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())),
        "{version}"
    );
    assert!(
        (commit.is_empty() && !version.contains('+'))
            || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{version}"
    );
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
mod pricing;
mod read_notices;
mod secret_values;
mod secrets;
mod start_set;
mod traces;
