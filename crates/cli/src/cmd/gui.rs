//! `fuseforks-cli gui --data-dir D [--port N] [--open] [--secrets …]`: the village in the local
//! web GUI. A host like `serve` (the lock, the boot, the door and the schedules as the shelf
//! says, the kill switch's channels) in which **nothing starts on open**; the GUI on
//! `127.0.0.1` with a random token per launch, whose URL is stdout's first line; the browser
//! opened only with `--open`. Runs until SIGINT / SIGTERM, then closes GUI → door → schedules →
//! agents. A halt stops the agents but keeps the GUI open, so that a person can resume. All of
//! it is the host's `lifecycle::gui`; this module parses and says.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use fuseforks_host::SecretSource;
use fuseforks_host::door::DoorAsked;
use fuseforks_host::lifecycle::{self, GuiOpening};

use super::headless::{SecretsArg, open_options};
use super::render::Renderer;
use crate::exit;
use crate::output::Out;
use crate::signals::SignalCount;

/// Arguments of `gui`.
#[derive(Debug, Args)]
pub(crate) struct GuiArgs {
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
pub(crate) async fn run(args: &GuiArgs, out: &Out, signals: SignalCount) -> u8 {
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
pub(crate) struct Opening {
    /// The port (0: a free one).
    pub port: u16,
    /// Open the desktop's browser.
    pub open: bool,
    /// The URL as stdout's line (`gui`); else an info line on stderr (`demo --gui --json`).
    pub url_on_stdout: bool,
}

/// The village at `data_dir` in the GUI until the next signal (`gui`, `demo --gui`): one call
/// into the host's lifecycle.
pub(crate) async fn serve_gui(
    data_dir: &Path,
    secrets: SecretSource,
    opening: Opening,
    out: &Out,
    signals: SignalCount,
) -> u8 {
    let renderer = Renderer::new(*out, data_dir).gui(opening.url_on_stdout, opening.open);
    let door = DoorAsked {
        open: true,
        port: None,
    };
    let options = open_options(data_dir, secrets, door, out.log_echo(), out);
    let gui_opening = GuiOpening { port: opening.port };
    match lifecycle::gui(options, gui_opening, Arc::new(renderer), signals).await {
        Ok(()) => exit::OK,
        Err(failure) => super::render::exit_code(&failure),
    }
}

/// Opens `url` in the desktop's browser (a failure is said, never fatal).
pub(crate) fn open_browser(url: &str, out: &Out) {
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
