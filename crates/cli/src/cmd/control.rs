//! `fuseforks-cli pause|resume|abort|halt --data-dir D`: the kill switch from the command
//! line. Sends the command over the running process's socket (`DATA_DIR/control/
//! fuseforks.sock`) and prints the state after the change; when nothing answers, falls back to
//! the shelf: `halt` writes the `halt` marker, `resume` removes it (and any control file not
//! yet consumed), and each leaves its control file `control/<command>` (read by a process whose
//! socket could not open, or by the next one: `pause` starts it paused). Also the signals of a running `ask`/`serve`: SIGUSR1 toggles pause/resume,
//! SIGUSR2 aborts (SIGINT/SIGTERM stay the graceful close), and the halted check of a start.

use std::path::{Path, PathBuf};

use clap::Args;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::safety::{
    Channel, SwitchCommand, SwitchState, clear_halt_marker, read_halt_marker, write_halt_marker,
};
use fuseforks_host::control::{SendError, control_dir, send};

use fuseforks_core::preflight::{Finding, Level};

use crate::exit;
use crate::output::Out;

/// Arguments of `pause`, `resume`, `abort` and `halt`.
#[derive(Debug, Args)]
pub struct ControlArgs {
    /// The data folder of the village.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
}

/// Runs one kill-switch command; prints the state after it on stdout.
pub fn run(command: SwitchCommand, args: &ControlArgs, out: &Out) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            out.cli("error", "RUNTIME_FAILED", &e.to_string(), None);
            return exit::CORE_ERROR;
        }
    };
    match runtime.block_on(send(&args.data_dir, command.as_str())) {
        Ok(state) => {
            out.result(&format!("{}\n", state.as_str()));
            exit::OK
        }
        Err(SendError::NotRunning) => offline(command, &args.data_dir, out),
        Err(SendError::Failed(why)) => {
            out.cli(
                "error",
                "CONTROL_FAILED",
                &format!("the running process did not answer: {why}"),
                Some("try again, or create the file DATA_DIR/control/<command>"),
            );
            exit::CORE_ERROR
        }
    }
}

/// No process runs the village: the shelf carries the command to the next one.
fn offline(command: SwitchCommand, data_dir: &Path, out: &Out) -> u8 {
    if !data_dir.join("workspace").is_dir() {
        out.cli(
            "error",
            "VILLAGE_MISSING",
            &format!("no village at {}", data_dir.display()),
            Some("pass the data folder that holds `workspace/`"),
        );
        return exit::BOOT_FAILED;
    }
    // The control file too: a process whose socket could not open still reads it.
    let dir = control_dir(data_dir);
    let leave = |name: &str| {
        std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join(name), b""))
    };
    let done = match command {
        SwitchCommand::Halt => write_halt_marker(data_dir, Channel::Cli, now_ms())
            .and_then(|()| leave("halt"))
            .map(|()| {
                (
                    SwitchState::Halted,
                    "halted (no process answered; ask and serve refuse until resume)",
                )
            }),
        SwitchCommand::Resume => clear_halt_marker(data_dir).and_then(|_| {
            for name in ["pause", "abort", "halt"] {
                let _ = std::fs::remove_file(dir.join(name));
            }
            leave("resume").map(|()| (SwitchState::Running, "running (no process answered)"))
        }),
        SwitchCommand::Pause => leave("pause").map(|()| {
            (
                SwitchState::Paused,
                "paused (no process answered; the next one starts paused)",
            )
        }),
        SwitchCommand::Abort => leave("abort").map(|()| {
            (
                SwitchState::Running,
                "running (no process answered; nothing to abort)",
            )
        }),
    };
    match done {
        Ok((state, note)) => {
            out.result(&format!("{}\n", state.as_str()));
            out.cli("info", "CONTROL_OFFLINE", note, None);
            exit::OK
        }
        Err(e) => {
            out.cli(
                "error",
                "CONTROL_FAILED",
                &format!("cannot change the shelf: {}", e.kind()),
                Some("check the data folder's permissions"),
            );
            exit::CORE_ERROR
        }
    }
}

/// Refuses to start a halted village (exit 14), naming the way out.
pub fn refuse_if_halted(data_dir: &Path, out: &Out) -> Result<(), u8> {
    if read_halt_marker(data_dir).is_none() {
        return Ok(());
    }
    out.cli(
        "error",
        "VILLAGE_HALTED",
        "village halted: the kill switch's halt marker is on the shelf",
        Some(&format!(
            "fuseforks-cli resume --data-dir {}",
            fuseforks_host::paths::shell_word(&data_dir.display().to_string())
        )),
    );
    Err(exit::HALTED)
}

/// A pause left on the shelf for the next process (`pause` with nothing running): the next
/// `ask` or `serve` starts paused and sends nothing until `resume`.
pub fn pause_waiting(data_dir: &Path) -> bool {
    control_dir(data_dir).join("pause").is_file()
}

/// Says, before anything starts, that this run will begin paused (an `ask` would otherwise
/// wait silently until its timeout).
pub fn warn_if_paused(data_dir: &Path, out: &Out) {
    if pause_waiting(data_dir) {
        out.cli(
            "warn",
            "VILLAGE_PAUSED",
            "the village is paused (a pause left by `pause` while nothing ran): no model or tool call starts until resume",
            Some(&format!(
                "fuseforks-cli resume --data-dir {}",
                fuseforks_host::paths::shell_word(&data_dir.display().to_string())
            )),
        );
    }
}

/// The kill switch's findings for `check`: halted (a rejection: `ask`/`serve` exit 14) or a
/// pause waiting on the shelf (a warning).
pub fn switch_findings(data_dir: &Path, lang: fuseforks_core::village::Language) -> Vec<Finding> {
    let resume = format!(
        "fuseforks-cli resume --data-dir {}",
        fuseforks_host::paths::shell_word(&data_dir.display().to_string())
    );
    let mut found = Vec::new();
    if read_halt_marker(data_dir).is_some() {
        found.push(Finding {
            level: Level::Reject,
            code: "VILLAGE_HALTED",
            message: lang.pick(
                String::from(
                    "村は緊急停止（halt）中です。ask と serve は終了コード 14 で止まります。",
                ),
                String::from(
                    "The village is halted by the kill switch: ask and serve stop with exit 14.",
                ),
            ),
            fix: lang.pick(
                format!("再開するには: {resume}"),
                format!("To go on: {resume}"),
            ),
            file: None,
            field: None,
        });
    } else if pause_waiting(data_dir) {
        found.push(Finding {
            level: Level::Warn,
            code: "VILLAGE_PAUSED",
            message: lang.pick(
                String::from("村は一時停止中です。次の ask / serve は一時停止で始まり、resume まで何も送りません。"),
                String::from("The village is paused: the next ask or serve starts paused and sends nothing until resume."),
            ),
            fix: lang.pick(format!("再開するには: {resume}"), format!("To go on: {resume}")),
            file: None,
            field: None,
        });
    }
    found
}

/// Says the village was halted while running (exit 14).
pub fn report_halted(data_dir: &Path, out: &Out) -> u8 {
    out.cli(
        "error",
        "VILLAGE_HALTED",
        "village halted by the kill switch",
        Some(&format!(
            "fuseforks-cli resume --data-dir {}",
            fuseforks_host::paths::shell_word(&data_dir.display().to_string())
        )),
    );
    exit::HALTED
}

/// Starts the kill switch's channels of a running `ask`/`serve`: the control folder, the
/// socket and the signals. Dropping the result ends the folder watcher and the socket.
pub fn start_channels(host: &fuseforks_host::Host) -> fuseforks_host::control::Channels {
    let log: std::sync::Arc<dyn fuseforks_core::log::LogSink> = host.log.clone();
    let data_dir = host.paths.data_dir();
    spawn_signals(&host.orchestrator, data_dir, std::sync::Arc::clone(&log));
    fuseforks_host::control::start(&host.orchestrator, data_dir, log)
}

/// SIGUSR1 toggles pause/resume, SIGUSR2 aborts (Unix).
pub fn spawn_signals(
    orchestrator: &Orchestrator,
    data_dir: &Path,
    log: std::sync::Arc<dyn fuseforks_core::log::LogSink>,
) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut usr1), Ok(mut usr2)) = (
            signal(SignalKind::user_defined1()),
            signal(SignalKind::user_defined2()),
        ) else {
            return;
        };
        let (orchestrator, data_dir) = (orchestrator.clone(), data_dir.to_path_buf());
        tokio::spawn(async move {
            loop {
                let command = tokio::select! {
                    _ = usr1.recv() => match orchestrator.switch_state() {
                        SwitchState::Paused => SwitchCommand::Resume,
                        _ => SwitchCommand::Pause,
                    },
                    _ = usr2.recv() => SwitchCommand::Abort,
                };
                // An abort waits for its sections; the next signal is read meanwhile.
                let (o, d, l) = (orchestrator.clone(), data_dir.clone(), log.clone());
                let applied = async move {
                    fuseforks_host::control::apply(&o, &d, command, Channel::Signal, &*l).await
                };
                if command == SwitchCommand::Abort {
                    tokio::spawn(applied);
                } else {
                    applied.await;
                }
            }
        });
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
