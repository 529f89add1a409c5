//! `fuseforks-cli serve …`: starts the start set and runs until SIGINT / SIGTERM, then closes:
//! interrupt → stop agents (30 s grace) → drop the host. Schedules and the door join when their
//! issues land (the boot options already carry them).

use clap::Args;
use fuseforks_core::preflight::HeadlessMode;

use super::headless::{Common, boot, close, configure, report_findings, start_agents};
use crate::exit;
use crate::output::Out;
use crate::signals::{SignalCount, reached};

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub common: Common,
    /// Open the door on 127.0.0.1:PORT with the secret `door_token`.
    #[arg(long)]
    pub door_port: Option<u16>,
    /// Also print info findings and log lines.
    #[arg(long)]
    pub verbose: bool,
}

/// Runs `serve`.
pub async fn run(args: &ServeArgs, out: &Out, mut signals: SignalCount) -> u8 {
    let report = match args
        .common
        .preflight(HeadlessMode::Serve, args.door_port, out)
    {
        Ok(r) => r,
        Err(code) => return code,
    };
    if report_findings(&report, out, args.verbose) {
        return exit::REJECTED;
    }
    if *signals.borrow() > 0 {
        return exit::OK;
    }
    let host = match boot(&args.common, out, true, true, args.door_port) {
        Ok(h) => h,
        Err(code) => return code,
    };
    let orchestrator = host.orchestrator.clone();
    configure(&orchestrator, &args.common, *out);
    if let Err(code) = start_agents(&orchestrator, &report, out) {
        return code;
    }
    out.cli(
        "info",
        "SERVING",
        &format!(
            "serving {} agent(s); Ctrl+C or SIGTERM to stop",
            report.start.len()
        ),
        None,
    );
    reached(&mut signals, 1).await;
    out.cli(
        "info",
        "CLOSING",
        "closing: interrupting turns and stopping agents",
        None,
    );
    close(&orchestrator, &mut signals, out).await;
    drop(host);
    exit::OK
}
