//! `fuseforks-cli`: the Fuseforks command line. Parses arguments, runs one subcommand, and maps
//! its outcome to the exit codes of `exit.rs`. Owns the tokio runtime.
//!
//! # Parts
//!
//! The binary:
//!
//! - `main.rs`: grammar, `--events jsonl` even for argument errors, the runtime, the trace exporter
//!   around it
//! - `help.rs`: **the table of each subcommand's `--help` examples and exit codes**, attached to
//!   the grammar by `with_help`; its test parses every example with the real grammar
//! - `cmd/`: `init`, `check`, `assist` (the drafting assistant on a terminal, or one exchange with
//!   `--input`; writes the village only with `--save` and a yes), `ask` (with `--accept`: the
//!   core's goal loop, exit 12; a question from the reception, `ask_user`, ends it with exit 15 and
//!   the question on stdout, and `--resume ID` on that conversation answers it), `serve`,
//!   `secrets`, `schedules` (list, `approve`), `servants` and `templates` (lists from `world.json`;
//!   changes through `fuseforks_host::world_edit`, shared in `world_edit.rs`: exit 11 for an id
//!   taken, 2 for a refused field, 4 while the village is locked), `bake` (over
//!   `fuseforks_host::bake`; exit 10 and 11), `pricing` (`pricing fetch` over
//!   `fuseforks_host::pricing`, under the village lock through `open_for_edit`: exit 2 for a source
//!   the rule refuses, 7 timed out, 1 a table that does not come or read, 4 locked), `render.rs`
//!   (what the host's lifecycle says, put into stderr lines, `--events jsonl` and exit codes),
//!   `headless.rs` for what the headless commands share, `probe.rs`: `check --probe-endpoints` — the start set's templates probed
//!   at once on a small runtime of its own, each result a finding
//! - `exit.rs`: every exit code
//! - `output.rs`: stdout for results, stderr for diagnostics, JSON lines under `--events jsonl`
//! - `remedy.rs`: a fix's `Remedy` (and a preflight finding's) in the CLI's words, the exact command
//! - `signals.rs`: SIGINT/SIGTERM registered before the boot and counted, the count handed to the
//!   host's lifecycle as its stop requests; the kill switch's SIGUSR1 — pause/resume toggle — and
//!   SIGUSR2 — abort — are registered by the host's `control.rs` with the other channels, after the
//!   boot; SIGTERM stays the graceful close; halt has no signal
//! - `terminal.rs`: escape sequences, control characters and invisible bidi/format controls
//!   stripped from untrusted text on stderr whatever it is — a terminal, a pipe, a log file — and
//!   on stdout when it is a TTY
//! - `orphans.rs`: the binary made a child subreaper inside its runtime, `end_orphans` on every
//!   SIGCHLD and at exit
//! - `flag_order.rs`: `--data-dir`, `--json`, `--secrets` given before a subcommand moved to the
//!   leaf command before parsing
//! - `build.rs` (the version: the workspace's plus the commit, handed to `fuseforks_core::version`
//!   at start, so `--version`, the User-Agent, the MCP client's and the door's `serverInfo` and the
//!   traces say one version). Stdout is written through `output::stdout_write` (`outln!`): a reader
//!   that closed the pipe ends the output quietly. **Invariant: exit codes are defined only in
//!   `exit.rs`; stdout carries results only.**

mod cmd;
mod exit;
mod flag_order;
mod help;
mod orphans;
mod output;
mod remedy;
mod signals;
mod terminal;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use fuseforks_core::safety::SwitchCommand;

use crate::output::Out;

const EXAMPLES: &str = "\
Examples:
  Watch a village work, with no key and no network (scripted demo model, not an AI):
    fuseforks-cli demo
  Found a village with an OpenAI template, in English:
    fuseforks-cli init --data-dir ~/villages/demo --language en --provider openai
  Or for a model server on this machine (OpenAI-compatible, no key):
    fuseforks-cli init --data-dir ~/villages/local --base-url http://127.0.0.1:8080/v1 --model qwen3
  Check that it can run headless, with keys from the environment:
    fuseforks-cli check --for ask --data-dir ~/villages/demo --secrets env
  Ask the reception something (the answer alone goes to stdout):
    FUSEFORKS_SECRET_OPENAI=sk-... fuseforks-cli ask --data-dir ~/villages/demo --secrets env \"Hello\"
  Store the template's API key in the OS keyring (typed without echo), then list the keys:
    fuseforks-cli secrets set openai --data-dir ~/villages/demo
    fuseforks-cli secrets list --data-dir ~/villages/demo
  Keep the batch-start agents running until Ctrl+C:
    fuseforks-cli serve --data-dir ~/villages/demo --start batch --secrets env";

/// The text after `--help`: the examples, then the exit codes from `exit.rs`.
fn after_help() -> String {
    format!("{EXAMPLES}\n\n{}", exit::help_table())
}

/// Fuseforks: keep a village of AI agents on this machine, from the command line.
#[derive(Debug, Parser)]
#[command(name = "fuseforks-cli", version = env!("FUSEFORKS_VERSION"), after_help = after_help())]
struct Cli {
    /// One JSON object per stderr line (CoreEvents, CLI lines, log lines).
    #[arg(long, value_enum, global = true)]
    events: Option<cmd::headless::EventsArg>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a new village in DATA_DIR/workspace: a model template, a reception agent with
    /// its construct and skill, an ordinance and a village id.
    Init(cmd::init::InitArgs),
    /// Check whether the village can run headless (no model call, no writes, no lock).
    Check(cmd::check::CheckArgs),
    /// Send one request to the reception and print the answer.
    Ask(cmd::ask::AskArgs),
    /// Run the start set until SIGINT / SIGTERM.
    Serve(cmd::serve::ServeArgs),
    /// The village in the local web GUI on 127.0.0.1 (prints the URL; nothing starts on open).
    Gui(cmd::gui::GuiArgs),
    /// Store, delete or list API keys in the OS keyring (what `--secrets keyring` reads).
    Secrets(cmd::secrets::SecretsArgs),
    /// List the schedules with their probes' approval on this machine; `approve` one probe.
    Schedules(cmd::schedules::SchedulesArgs),
    /// List, add, connect, disconnect, set or remove servants (the GUI's edits; exit 4 while
    /// the village runs).
    Servants(cmd::servants::ServantsArgs),
    /// List, add, set or remove model templates (keys: `secrets set`).
    Templates(cmd::templates::TemplatesArgs),
    /// A village at work in one command, no key, no network: founds a demo village, runs one
    /// request through the engine on the embedded demo model (scripted, not an AI), and says
    /// what happened.
    Demo(cmd::demo::DemoArgs),
    /// Check judge files (`validate`) or run one on a text without delivering (`try`).
    Judge(cmd::judge::JudgeArgs),
    /// Kill switch: hold new model and tool calls in the running process (prints the state).
    Pause(cmd::control::ControlArgs),
    /// Kill switch: continue after pause, or lift a halt (also removes the halt marker).
    Resume(cmd::control::ControlArgs),
    /// Kill switch: cut every turn now (model calls, run children, MCP calls); agents stay.
    Abort(cmd::control::ControlArgs),
    /// Kill switch: abort, stop every agent, the scheduler and the door; stays halted across
    /// restarts until `resume`.
    Halt(cmd::control::ControlArgs),
    /// The audit log: `verify` its hash chain (exit 13 names the first broken line).
    Audit(cmd::audit::AuditArgs),
    /// The stored conversations: list, show, export, fork, delete (exit 4 while the village
    /// runs).
    Sessions(cmd::sessions::SessionsArgs),
    /// Tokens, effective tokens and ≈ $ from the turn records, by agent, model or stop.
    Stats(cmd::stats::StatsArgs),
    /// Fetch the price table and fill the templates' rates (exit 4 while the village runs).
    Pricing(cmd::pricing::PricingArgs),
    /// The shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(cmd::completions::CompletionsArgs),
    /// The man page (roff) on stdout: `fuseforks-cli man > fuseforks-cli.1`.
    Man,
    /// The drafting assistant: a Q&A with a model template that ends in a draft of an agent's
    /// SKILL.md or Construct.md, or a judge's judge.toml (never saved without --save and a yes).
    Assist(cmd::assist::AssistArgs),
    /// Make a path-rewritten copy of a GUI village for a container (exit 2, 3, 4, 5,
    /// 10, 11 write nothing).
    Bake(cmd::bake::BakeArgs),
}

/// `--events jsonl` seen in the raw arguments (before `--`), so that even argument errors are
/// JSON.
fn jsonl_requested(args: &[String]) -> bool {
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .collect();
    args.windows(2).any(|w| w == ["--events", "jsonl"]) || args.contains(&"--events=jsonl")
}

fn main() -> std::process::ExitCode {
    fuseforks_core::version::set(env!("FUSEFORKS_VERSION"));
    let grammar = help::with_help(Cli::command());
    let raw = flag_order::to_leaf(&std::env::args().collect::<Vec<_>>(), &grammar);
    let jsonl = jsonl_requested(&raw);
    let parsed = grammar
        .try_get_matches_from(&raw)
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            if code != 0 {
                Out {
                    jsonl,
                    verbose: false,
                }
                .usage_error(&e.to_string());
                return std::process::ExitCode::from(exit::USAGE);
            }
            let _ = e.print();
            return std::process::ExitCode::from(u8::try_from(code).unwrap_or(exit::USAGE));
        }
    };
    let verbose = match &cli.command {
        Command::Ask(a) => a.verbose,
        Command::Serve(s) => s.verbose,
        _ => false,
    };
    let out = Out {
        jsonl: cli.events.is_some(),
        verbose,
    };
    if matches!(
        cli.command,
        Command::Ask(_) | Command::Serve(_) | Command::Gui(_)
    ) {
        traces_on(&out);
    }
    let code = match cli.command {
        Command::Init(args) => cmd::init::run(&args, &out),
        Command::Secrets(args) => cmd::secrets::run(&args, &out),
        Command::Schedules(args) => cmd::schedules::run(&args, &out),
        Command::Servants(args) => cmd::servants::run(&args, &out),
        Command::Templates(args) => cmd::templates::run(&args, &out),
        Command::Bake(args) => cmd::bake::run(&args, &out),
        Command::Check(args) => cmd::check::run(&args, &out),
        Command::Judge(args) => cmd::judge::run(&args, &out),
        Command::Pause(args) => cmd::control::run(SwitchCommand::Pause, &args, &out),
        Command::Resume(args) => cmd::control::run(SwitchCommand::Resume, &args, &out),
        Command::Abort(args) => cmd::control::run(SwitchCommand::Abort, &args, &out),
        Command::Halt(args) => cmd::control::run(SwitchCommand::Halt, &args, &out),
        Command::Audit(args) => cmd::audit::run(&args, &out),
        Command::Sessions(args) => cmd::sessions::run(&args, &out),
        Command::Stats(args) => cmd::stats::run(&args, &out),
        Command::Pricing(args) => cmd::pricing::run(&args, &out),
        Command::Completions(args) => {
            cmd::completions::completions(&args, help::with_help(Cli::command()))
        }
        Command::Man => cmd::completions::man(help::with_help(Cli::command()), &out),
        Command::Ask(args) => with_runtime(&out, |signals| async move {
            cmd::ask::run(&args, &out, signals).await
        }),
        Command::Serve(args) => with_runtime(&out, |signals| async move {
            cmd::serve::run(&args, &out, signals).await
        }),
        Command::Gui(args) => with_runtime(&out, |signals| async move {
            cmd::gui::run(&args, &out, signals).await
        }),
        Command::Assist(args) => with_runtime(&out, |signals| async move {
            cmd::assist::run(&args, &out, signals).await
        }),
        Command::Demo(args) => with_runtime(&out, |signals| async move {
            cmd::demo::run(&args, &out, signals).await
        }),
    };
    fuseforks_host::telemetry::shutdown();
    std::process::ExitCode::from(code)
}

/// Installs the OTLP exporter when the environment asks for traces (before the runtime: its
/// client blocks on a thread of its own); a failure is said and the work goes on without.
fn traces_on(out: &Out) {
    if let Err(e) = fuseforks_host::telemetry::install_from_env() {
        use fuseforks_core::Coded as _;
        out.cli(
            "warning",
            e.code(),
            &e.to_string(),
            remedy::of(&e).as_deref(),
        );
    }
}

/// Runs an async command with its signal handlers registered first; the runtime is shut down
/// with a short timeout so that nothing left over delays the exit.
fn with_runtime<F, Fut>(out: &Out, command: F) -> u8
where
    F: FnOnce(signals::SignalCount) -> Fut,
    Fut: std::future::Future<Output = u8>,
{
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            out.cli("error", "RUNTIME_FAILED", &e.to_string(), None);
            return exit::CORE_ERROR;
        }
    };
    let code = runtime.block_on(async {
        orphans::start();
        match signals::install() {
            Ok(signals) => command(signals).await,
            Err(e) => {
                out.cli("error", "SIGNALS_FAILED", &e.to_string(), None);
                exit::CORE_ERROR
            }
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    orphans::finish();
    code
}
