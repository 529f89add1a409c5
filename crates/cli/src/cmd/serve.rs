//! `fuseforks-cli serve …`: starts the start set, opens the door (`--door-port`, or
//! `mcp_server.json`) and runs until SIGINT / SIGTERM, then closes: door → stop agents and
//! interrupt their turns (30 s grace from the signal, then the cut) → drop the host. The
//! scheduler starts once the start set runs and stops with the door. All of it is the host's
//! `lifecycle::serve`; this module parses and says.

use std::sync::Arc;

use clap::Args;
use fuseforks_host::door::DoorAsked;
use fuseforks_host::lifecycle::{self, ServeRequest, Served};

use super::headless::{Common, open_options};
use super::render::Renderer;
use crate::exit;
use crate::output::Out;
use crate::signals::SignalCount;

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub common: Common,
    /// Open the door on 127.0.0.1:PORT with the secret `door_token`.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub door_port: Option<u16>,
    /// Also open the web GUI on 127.0.0.1:PORT, its link's token being the secret `gui_token`.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub gui_port: Option<u16>,
    /// Also print info findings and log lines.
    #[arg(long)]
    pub verbose: bool,
    /// Models are called as usual, but every side-effecting tool stops at its side effect and
    /// answers `dry-run: would …` (audited as dry_run).
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `serve`: parses, runs the host's lifecycle once (until a signal or a halt), and gives
/// the exit code.
pub(crate) async fn run(args: &ServeArgs, out: &Out, signals: SignalCount) -> u8 {
    let renderer = Renderer::new(*out, &args.common.data_dir).verbose(args.verbose);
    let door = DoorAsked {
        open: true,
        port: args.door_port,
    };
    let options = open_options(
        &args.common.data_dir,
        args.common.secret_source(),
        door,
        Some(out.serve_echo()),
        out,
    );
    let request = ServeRequest {
        gui_port: args.gui_port,
    };
    let headless = args.common.headless(args.dry_run);
    match lifecycle::serve(options, headless, request, Arc::new(renderer), signals).await {
        Served::Closed => exit::OK,
        Served::Halted => exit::HALTED,
        Served::Failed(failure) => super::render::exit_code(&failure),
    }
}
