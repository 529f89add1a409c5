//! `fuseforks-cli pause|resume|abort|halt --data-dir D`: the kill switch from the command
//! line. Sends the command over the running process's socket (`DATA_DIR/control/
//! fuseforks.sock`) and prints the state after the change; when nothing answers, falls back to
//! the shelf: `halt` writes the `halt` marker, `resume` removes it (and any control file not
//! yet consumed), and each leaves its control file `control/<command>` (read by a process whose
//! socket could not open, or by the next one: `pause` starts it paused). Also the kill
//! switch's findings of `check`. The channels of a running `ask`/`serve` (SIGUSR1/SIGUSR2
//! included) and the halted check of a start are the host's lifecycle.

use std::path::{Path, PathBuf};

use clap::Args;
use fuseforks_core::safety::{
    Channel, SwitchCommand, SwitchState, clear_halt_marker, read_halt_marker, write_halt_marker,
};
use fuseforks_host::control::{SendError, control_dir, send};

use fuseforks_core::preflight::{Finding, Level};

use crate::exit;
use crate::output::Out;

/// Arguments of `pause`, `resume`, `abort` and `halt`.
#[derive(Debug, Args)]
pub(crate) struct ControlArgs {
    /// The data folder of the village.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
}

/// Runs one kill-switch command; prints the state after it on stdout.
pub(crate) fn run(command: SwitchCommand, args: &ControlArgs, out: &Out) -> u8 {
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

/// The kill switch's findings for `check`: halted (a rejection: `ask`/`serve` exit 14) or a
/// pause waiting on the shelf (a warning).
pub(crate) fn switch_findings(
    data_dir: &Path,
    lang: fuseforks_core::village::Language,
) -> Vec<Finding> {
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
            remedy: None,
        });
    } else if fuseforks_host::control::pause_waiting(data_dir) {
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
            remedy: None,
        });
    }
    found
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
