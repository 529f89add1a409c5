//! `fuseforks-cli completions bash|zsh|fish|elvish|powershell` and `fuseforks-cli man`: the
//! shell completion script and the man page (roff), generated from the same clap grammar the
//! binary parses, so they never drift from it. Printed on stdout.

use clap::Args;

use crate::exit;
use crate::output::Out;

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Prints the completion script for `shell`.
pub(crate) fn completions(args: &CompletionsArgs, mut grammar: clap::Command) -> u8 {
    let name = grammar.get_name().to_owned();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut grammar, name, &mut script);
    crate::output::stdout_write(&script);
    exit::OK
}

/// Prints the man page.
pub(crate) fn man(grammar: clap::Command, out: &Out) -> u8 {
    let mut page = Vec::new();
    match clap_mangen::Man::new(grammar).render(&mut page) {
        Ok(()) => {
            out.result(&String::from_utf8_lossy(&page));
            exit::OK
        }
        Err(e) => {
            out.cli(
                "error",
                "MAN_FAILED",
                &format!("cannot render the man page: {}", e.kind()),
                None,
            );
            exit::CORE_ERROR
        }
    }
}
