//! `fuseforks-cli gui --data-dir D [--port N] [--open] [--secrets …]`: the village in the local
//! web GUI. A host like `serve` (the lock, the boot, the door and the schedules as the shelf
//! says, the kill switch's channels) in which **nothing starts on open**; the GUI on
//! `127.0.0.1` with a random token per launch, whose URL is stdout's first line; the browser
//! opened only with `--open`. Runs until SIGINT / SIGTERM, then closes GUI → door → schedules →
//! agents. A halt stops the agents but keeps the GUI open, so that a person can resume.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use fuseforks_host::gui::{Gui, GuiState, random_secret};
use fuseforks_host::{HostBootOptions, HostPaths, build_host};

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
pub async fn run(args: &GuiArgs, out: &Out, mut signals: SignalCount) -> u8 {
    let options = HostBootOptions {
        app_version: env!("FUSEFORKS_VERSION").to_owned(),
        secrets: match args.secrets {
            SecretsArg::Keyring => fuseforks_host::SecretSource::Keyring,
            SecretsArg::Env => fuseforks_host::SecretSource::Env,
        },
        open_door: true,
        door_port: None,
        log_echo: out.log_echo(),
        os_locale: os_locale(),
        mcp_child_output: out.child_output(),
        run_schedules: true,
    };
    let host = match build_host(&HostPaths::new(&args.data_dir), options) {
        Ok(host) => host,
        Err(e) => {
            out.error(&e);
            return exit::for_host_error(&e);
        }
    };
    let orchestrator = host.orchestrator.clone();
    forward_events(&orchestrator, *out);
    let channels = super::control::start_channels(&host);
    let door = match fuseforks_host::door::open_for_host(&host).await {
        Ok(door) => door,
        Err(e) => {
            out.error(&e);
            None
        }
    };
    let schedules = host.start_schedules();
    let state = GuiState::of(&host, door.as_ref().map(fuseforks_host::door::Door::url));
    let gui = match Gui::open(state, args.port, &random_secret()).await {
        Ok(gui) => gui,
        Err(e) => {
            out.error(&e);
            return exit::BOOT_FAILED;
        }
    };
    // The URL (with the launch token) is the result: stdout's first line.
    out.result(&format!("{}\n", gui.url()));
    let _ = std::io::stdout().flush();
    if args.open {
        open_browser(&gui.url(), out);
    }
    reached(&mut signals, 1).await;
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
