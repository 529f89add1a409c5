//! `completions` and `man` through the binary: generated from the same grammar, so every
//! subcommand is in them; an unknown shell is a usage error.

use crate::{cli, stdout};

#[test]
fn completions_and_the_man_page_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = cli(&format!("completions {shell}"));
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = stdout(&out);
        for sub in ["ask", "serve", "gui", "sessions", "stats", "bake", "judge"] {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
    }
    let man = cli("man");
    assert_eq!(man.status.code(), Some(0));
    let page = stdout(&man);
    assert!(
        page.starts_with(".ie") || page.contains(".TH fuseforks-cli"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(page.contains("gui") && page.contains("sessions"));
    assert_eq!(cli("completions tcsh").status.code(), Some(2));
}
