//! Build-time version: `FUSEFORKS_CLI_VERSION` if set, else the workspace's version plus the
//! short commit (`0.1.0+g1b33d9d`), else the workspace's version alone. Never panics without
//! git. The binary hands it to `fuseforks_core::version`, so every surface says the same.

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
            // The workspace's version is the one place a release changes.
            let base = std::env::var("CARGO_PKG_VERSION").unwrap_or_else(|_| "0.0.0".into());
            match git(&["rev-parse", "--short", "HEAD"]) {
                Some(c) => format!("{base}+g{c}"),
                None => base,
            }
        });
    println!("cargo:rustc-env=FUSEFORKS_VERSION={version}");
}
