//! `fuseforks-cli serve …`: starts the start set, opens the door (`--door-port`, or
//! `mcp_server.json`) and runs until SIGINT / SIGTERM, then closes: door → stop agents and
//! interrupt their turns (30 s grace from the signal, then the cut) → drop the host. The
//! scheduler (`Host::start_schedules`) starts once the start set runs and stops with the door.

use clap::Args;
use fuseforks_core::events::CoreEvent;
use fuseforks_core::preflight::HeadlessMode;

use super::headless::{
    CLOSE_GRACE, Common, boot_with, close, configure, log_notices, report_findings, start_agents,
};
use crate::exit;
use crate::output::Out;
use crate::signals::{SignalCount, reached};

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
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

/// Runs `serve`.
pub async fn run(args: &ServeArgs, out: &Out, mut signals: SignalCount) -> u8 {
    if let Err(code) = super::control::refuse_if_halted(&args.common.data_dir, out) {
        return code;
    }
    super::control::warn_if_paused(&args.common.data_dir, out);
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
    let mut host = match boot_with(&args.common, out, true, args.door_port, true).await {
        Ok(h) => h,
        Err(code) => return code,
    };
    // The door opened inside the boot, before any agent started: one that could not open
    // stops `serve` with nothing started.
    let door = match host.take_door() {
        Ok(door) => door,
        Err(e) => {
            out.error(&e);
            return exit::BOOT_FAILED;
        }
    };
    log_notices(&host, &report);
    let orchestrator = host.orchestrator.clone();
    configure(&orchestrator, &args.common, *out);
    orchestrator.set_dry_run(args.dry_run);
    let channels = super::control::start_channels(&host);
    report_failed_turns(&orchestrator, *out);
    if let Err(code) = start_agents(&orchestrator, &report, out) {
        if let Some(door) = door {
            door.close().await;
        }
        return code;
    }
    if let Some(door) = &door {
        out.cli(
            "info",
            "DOOR_OPEN",
            &format!("door open at {}", door.url()),
            None,
        );
    }
    let gui = match open_gui(&host, args.gui_port, door.as_ref(), out).await {
        Ok(gui) => gui,
        Err(code) => {
            if let Some(door) = door {
                door.close().await;
            }
            let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
            close(&orchestrator, &mut signals, out, cut_at).await;
            return code;
        }
    };
    // After the start set runs: a target not running at its due is consumed as stopped.
    let schedules = host.start_schedules();
    out.cli(
        "info",
        "SERVING",
        &format!(
            "serving {} agent(s); Ctrl+C or SIGTERM to stop",
            report.start.len()
        ),
        None,
    );
    // A signal closes; a halt (any channel) closes too and exits 14.
    let mut switch = orchestrator.watch_switch();
    let halted = tokio::select! {
        () = reached(&mut signals, 1) => false,
        _ = switch.wait_for(|s| *s == fuseforks_core::safety::SwitchState::Halted) => true,
    };
    channels.close().await;
    // One deadline for the whole close, counted from the signal (the door's close included).
    let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
    out.cli(
        "info",
        "CLOSING",
        "closing: interrupting turns and stopping agents",
        None,
    );
    if let Some(gui) = gui {
        gui.close().await;
    }
    if let Some(door) = door {
        door.close().await;
    }
    if let Some(schedules) = schedules {
        schedules.stop().await;
    }
    close(&orchestrator, &mut signals, out, cut_at).await;
    drop(host);
    if halted {
        return super::control::report_halted(&args.common.data_dir, out);
    }
    exit::OK
}

/// `--gui-port N`: the GUI beside the headless agents, its token the secret `gui_token` (the
/// link is said without it: the token is a secret).
async fn open_gui(
    host: &fuseforks_host::Host,
    port: Option<u16>,
    door: Option<&fuseforks_host::door::Door>,
    out: &Out,
) -> Result<Option<fuseforks_host::gui::Gui>, u8> {
    use fuseforks_host::gui::{GUI_TOKEN_KEY, Gui, GuiError, GuiState};
    let Some(port) = port else {
        return Ok(None);
    };
    let token = host.secrets.get(GUI_TOKEN_KEY).ok().flatten();
    let Some(token) = token else {
        out.error(&GuiError::TokenMissing);
        return Err(exit::BOOT_FAILED);
    };
    let state = GuiState::of(host, door.map(fuseforks_host::door::Door::url));
    match Gui::open(state, port, &token, false).await {
        Ok(gui) => {
            let message = format!(
                "gui open at http://{}/ (open it with ?token=<the secret gui_token>)",
                gui.address()
            );
            out.cli("info", "GUI_OPEN", &message, None);
            Ok(Some(gui))
        }
        Err(e) => {
            out.error(&e);
            Err(exit::BOOT_FAILED)
        }
    }
}

/// Says on stderr why each failed turn failed (a door's request, a delegated one): one
/// `error` line (`{"type":"cli",…}` under `--events jsonl`, beside the `agentFailed` event)
/// with the code, the HTTP status or network class, the template and the host.
fn report_failed_turns(orchestrator: &fuseforks_core::orchestrator::Orchestrator, out: Out) {
    let mut events = orchestrator.events();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(CoreEvent::AgentFailed {
                    error,
                    code: Some(code),
                    fix,
                    ..
                }) => out.cli("error", &code, &error, fix.as_deref()),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
    });
}
