//! Build-time version: `FUSEFORKS_CLI_VERSION` if set, else the last git tag
//! plus the short commit (`0.4.0+g1b33d9d`), else `0.0.0+g…`, else `0.0.0`. Never panics
//! without git.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=FUSEFORKS_CLI_VERSION");
    if let Some(head) = git(&["rev-parse", "--git-path", "HEAD"]) {
        println!("cargo:rerun-if-changed={head}");
    }
    if let Some(reference) =
        git(&["symbolic-ref", "-q", "HEAD"]).and_then(|r| git(&["rev-parse", "--git-path", &r]))
        && std::path::Path::new(&reference).exists()
    {
        println!("cargo:rerun-if-changed={reference}");
    }
    let version = std::env::var("FUSEFORKS_CLI_VERSION")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| {
            let tag = git(&["describe", "--tags", "--abbrev=0"])
                .map(|t| t.trim_start_matches('v').to_owned());
            let commit = git(&["rev-parse", "--short", "HEAD"]);
            match commit {
                Some(c) => format!("{}+g{c}", tag.unwrap_or_else(|| "0.0.0".into())),
                None => tag.unwrap_or_else(|| "0.0.0".into()),
            }
        });
    println!("cargo:rustc-env=FUSEFORKS_VERSION={version}");
}
