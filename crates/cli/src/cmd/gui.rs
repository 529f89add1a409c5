//! `fuseforks-cli gui --data-dir D [--port N] [--open] [--secrets …]`: the village in the local
//! web GUI. A host like `serve` (the lock, the boot, the door and the schedules as the shelf
//! says, the kill switch's channels) in which **nothing starts on open**; the GUI on
//! `127.0.0.1` with a random token per launch, whose URL is stdout's first line; the browser
//! opened only with `--open`. Runs until SIGINT / SIGTERM, then closes GUI → door → schedules →
//! agents. A halt stops the agents but keeps the GUI open, so that a person can resume.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use fuseforks_host::gui::{Gui, GuiState, random_secret};
use fuseforks_host::{HostBootOptions, HostPaths, SecretSource, build_host};

use super::headless::{CLOSE_GRACE, SecretsArg, close, forward_events, os_locale};
use crate::exit;
use crate::output::Out;
use crate::signals::{SignalCount, reached};

/// Arguments of `gui`.
#[derive(Debug, Args)]
pub struct GuiArgs {
    /// The data folder; the village is DATA_DIR/workspace.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
    /// The port on 127.0.0.1 (default: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Where API keys come from (the GUI writes keys into the OS keyring).
    #[arg(long, value_enum, default_value = "keyring")]
    pub secrets: SecretsArg,
}

/// Runs `gui`.
pub async fn run(args: &GuiArgs, out: &Out, signals: SignalCount) -> u8 {
    let secrets = match args.secrets {
        SecretsArg::Keyring => SecretSource::Keyring,
        SecretsArg::Env => SecretSource::Env,
    };
    let opening = Opening {
        port: args.port,
        open: args.open,
        url_on_stdout: true,
    };
    serve_gui(&args.data_dir, secrets, opening, out, signals).await
}

/// How the GUI is opened.
pub struct Opening {
    /// The port (0: a free one).
    pub port: u16,
    /// Open the desktop's browser.
    pub open: bool,
    /// The URL as stdout's line (`gui`); else an info line on stderr (`demo --gui --json`).
    pub url_on_stdout: bool,
}

/// The village at `data_dir` in the GUI until the next signal (`gui`, `demo --gui`).
pub async fn serve_gui(
    data_dir: &Path,
    secrets: SecretSource,
    opening: Opening,
    out: &Out,
    mut signals: SignalCount,
) -> u8 {
    // Counted from here: a signal while the GUI opens still closes it.
    let seen = *signals.borrow();
    let options = HostBootOptions {
        app_version: env!("FUSEFORKS_VERSION").to_owned(),
        secrets,
        open_door: true,
        door_port: None,
        log_echo: out.log_echo(),
        os_locale: os_locale(),
        mcp_child_output: out.child_output(),
        run_schedules: true,
    };
    let mut host = match build_host(&HostPaths::new(data_dir), options).await {
        Ok(host) => host,
        Err(e) => {
            out.error(&e);
            return exit::for_host_error(&e);
        }
    };
    let orchestrator = host.orchestrator.clone();
    forward_events(&orchestrator, *out);
    let channels = super::control::start_channels(&host);
    // The GUI goes on without a door that cannot open; the error says why.
    let door = match host.take_door() {
        Ok(door) => door,
        Err(e) => {
            out.error(&e);
            None
        }
    };
    let schedules = host.start_schedules();
    let state = GuiState::of(&host, door.as_ref().map(fuseforks_host::door::Door::url));
    let gui = match Gui::open(state, opening.port, &random_secret(), true).await {
        Ok(gui) => gui,
        Err(e) => {
            out.error(&e);
            return exit::BOOT_FAILED;
        }
    };
    if opening.url_on_stdout {
        // The URL (with the launch token) is the result: stdout's line.
        out.result(&format!("{}\n", gui.url()));
        let _ = std::io::stdout().flush();
    } else {
        out.cli(
            "info",
            "GUI_OPEN",
            &format!("gui open at {}", gui.url()),
            None,
        );
    }
    if opening.open {
        open_browser(&gui.url(), out);
    }
    reached(&mut signals, seen + 1).await;
    let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
    gui.close().await;
    if let Some(door) = door {
        door.close().await;
    }
    if let Some(schedules) = schedules {
        schedules.stop().await;
    }
    channels.close().await;
    close(&orchestrator, &mut signals, out, cut_at).await;
    exit::OK
}

/// Opens `url` in the desktop's browser (a failure is said, never fatal).
fn open_browser(url: &str, out: &Out) {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    let spawned = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        out.cli(
            "warn",
            "BROWSER_NOT_OPENED",
            &format!("{program} could not start: {}", e.kind()),
            Some("open the URL on the first line of the output yourself"),
        );
    }
}
