//! `fuseforks-cli`: the Fuseforks command line. Parses arguments, runs one subcommand, and maps
//! its outcome to the exit codes of reference §3.11.

mod cmd;
mod exit;

use clap::{Parser, Subcommand};

const EXAMPLES: &str = "\
Examples:
  Found a village with an OpenAI template, in English:
    fuseforks-cli init --data-dir ~/villages/demo --language en --provider openai
  Found a village on a local Ollama (no API key needed):
    fuseforks-cli init --data-dir ./village --provider ollama

Exit codes: 0 ok, 2 usage, 5 a village file could not be read or written,
11 a village already exists at --data-dir (nothing was changed).";

/// Keeps a village of AI agents on this machine.
#[derive(Debug, Parser)]
#[command(
    name = "fuseforks-cli",
    version,
    about = "Fuseforks: keep a village of AI agents on this machine, from the command line.",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a new village in DATA_DIR/workspace: a model template, a reception agent with
    /// its construct and skill, an ordinance and a village id.
    #[command(after_help = cmd::init::EXAMPLES)]
    Init(cmd::init::InitArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Init(args) => cmd::init::run(&args),
    };
    std::process::ExitCode::from(code)
}
