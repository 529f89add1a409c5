//! The tidy rule that core speaks no CLI: no string literal of core's production code names
//! the `fuseforks-cli` binary or one of its flags. A fix names the person's action as a
//! `Remedy`, which the CLI and the host put into their own words (ARCHITECTURE.md, "Core's
//! floors": core knows no surface).

use super::{lex, production, read, rust_files, without_tests};

/// The rule, as a failure names it.
pub(super) const RULE: &str = "core names no CLI command or flag (give the fix a Remedy)";

/// Flags of the CLI's grammar that a fix or a finding was tempted to name.
const CLI_FLAGS: &[&str] = &[
    "--acceptance",
    "--answer",
    "--base-url",
    "--data-dir",
    "--door-port",
    "--from",
    "--gui-port",
    "--model",
    "--port",
    "--reception",
    "--resume",
    "--secrets",
    "--template",
    "--update",
];

/// Whether `text` names `flag` as a flag (not as the start of a longer one).
fn names_flag(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(at, _)| {
        let after = text[at + flag.len()..].chars().next();
        !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// Each string literal of core's production code that names the CLI, as `path:line: words`
/// (and the flag reader itself, should it misread).
pub(super) fn problems() -> Vec<String> {
    let mut problems = Vec::new();
    if !reads_flags() {
        problems.push("tidy/cli_words.rs: the flag reader misreads a flag".to_owned());
    }
    for path in rust_files()
        .into_iter()
        .filter(|p| p.starts_with("crates/core/src/") && production(p))
    {
        let lexed = lex(&read(&path));
        let last_line = without_tests(&lexed.code).lines().count();
        for (line, text) in lexed.strings.iter().filter(|(l, _)| *l <= last_line) {
            let named = if text.contains("fuseforks-cli") {
                Some("fuseforks-cli")
            } else {
                CLI_FLAGS.iter().copied().find(|f| names_flag(text, f))
            };
            if let Some(named) = named {
                problems.push(format!("{path}:{line}: names {named}"));
            }
        }
    }
    problems
}

/// The flag reader: a flag counts alone, not as the start of a longer flag.
fn reads_flags() -> bool {
    names_flag("pass --secrets env", "--secrets")
        && names_flag("(--from)", "--from")
        && !names_flag("--secrets-file", "--secrets")
        && !names_flag("--model-id", "--model")
}
