//! What the host's lifecycle says (`fuseforks_host::lifecycle::Notice`), in the command line's
//! words: stderr lines (`{"type":"cli",…}` under `--events jsonl`), the GUI's link, the events,
//! the streamed pieces of a request; and the exit code of each way a run cannot go on.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use fuseforks_core::events::CoreEvent;
use fuseforks_host::lifecycle::{
    Closing, Failure, GuiOpened, Interruption, Notice, RequestEvent, Watcher,
};

use super::ask_stream::Mode;
use crate::exit;
use crate::output::Out;

/// The command line's watcher of a running village.
pub(crate) struct Renderer {
    out: Out,
    data_dir: PathBuf,
    /// Info findings too (`--verbose`).
    verbose: bool,
    /// A streamed request's pieces, and whether some of the reception's answer was printed.
    stream: Option<(Mode, Arc<AtomicBool>)>,
    /// The GUI's link as stdout's line (`gui`); else an info line on stderr.
    url_on_stdout: bool,
    /// Open the GUI in the desktop's browser.
    open_browser: bool,
}

impl Renderer {
    /// A renderer for the village at `data_dir`.
    pub(crate) fn new(out: Out, data_dir: &Path) -> Self {
        Self {
            out,
            data_dir: data_dir.to_path_buf(),
            verbose: false,
            stream: None,
            url_on_stdout: false,
            open_browser: false,
        }
    }

    /// Says info findings too.
    pub(crate) fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Prints a request's pieces as they come (`mode`); gives the flag set once some of the
    /// reception's answer is printed.
    pub(crate) fn streaming(mut self, mode: Option<Mode>) -> (Self, Option<Arc<AtomicBool>>) {
        let printed = mode.map(|m| (m, Arc::new(AtomicBool::new(false))));
        let flag = printed.as_ref().map(|(_, p)| Arc::clone(p));
        self.stream = printed;
        (self, flag)
    }

    /// Where the GUI's link goes, and whether the browser opens.
    pub(crate) fn gui(mut self, url_on_stdout: bool, open_browser: bool) -> Self {
        self.url_on_stdout = url_on_stdout;
        self.open_browser = open_browser;
        self
    }

    /// `fuseforks-cli resume --data-dir D`, the way out of a halt.
    fn resume(&self) -> String {
        resume_command(&self.data_dir)
    }

    fn failed(&self, failure: &Failure) {
        let out = &self.out;
        match failure {
            Failure::Halted => out.cli(
                "error",
                "VILLAGE_HALTED",
                "village halted: the kill switch's halt marker is on the shelf",
                Some(&self.resume()),
            ),
            Failure::Rejected => {}
            Failure::StartMissing => out.cli(
                "error",
                "USAGE",
                "serve needs --start: which agents run until it is stopped",
                Some("add --start batch (the batch-start agents) or --start ID,ID"),
            ),
            other => {
                if let Some(coded) = other.coded() {
                    out.error(coded);
                }
            }
        }
    }

    fn gui_open(&self, opened: GuiOpened<'_>) {
        match opened {
            GuiOpened::Address(address) => {
                let message = format!(
                    "gui open at http://{address}/ (open it with ?token=<the secret gui_token>)"
                );
                self.out.cli("info", "GUI_OPEN", &message, None);
            }
            GuiOpened::Url(url) => {
                if self.url_on_stdout {
                    // The URL (with the launch token) is the result: stdout's line.
                    self.out.result(&format!("{url}\n"));
                    let _ = std::io::stdout().flush();
                } else {
                    let message = format!("gui open at {url}");
                    self.out.cli("info", "GUI_OPEN", &message, None);
                }
                if self.open_browser {
                    super::gui::open_browser(url, &self.out);
                }
            }
        }
    }

    fn closing(&self, notice: &Notice<'_>) {
        let out = &self.out;
        match notice {
            Notice::Closing(Closing::Request) => out.cli("info", "CLOSING", "closing: a model call in flight may finish within 30 s (its answer is kept); a second Ctrl+C exits at once", None),
            Notice::Closing(Closing::Serving) => out.cli("info", "CLOSING", "closing: interrupting turns and stopping agents", None),
            Notice::CloseGraceExceeded => out.cli("warn", "CLOSE_GRACE_EXCEEDED", "some turns did not end within 30 s: their model calls and tools were cut, and the usage of a cut call is recorded as unknown", None),
            Notice::CloseAborted(Closing::Request) => out.cli("warn", "CLOSE_ABORTED", "exited without waiting: the turn's payment record may be missing", None),
            Notice::CloseAborted(_) => out.cli("warn", "CLOSE_ABORTED", "closed without waiting for running turns: a turn's payment record may be missing from the log and the conversation", None),
            _ => {}
        }
    }
}

impl Watcher for Renderer {
    fn notice(&self, notice: Notice<'_>) {
        let out = &self.out;
        match notice {
            Notice::Paused => out.cli(
                "warn",
                "VILLAGE_PAUSED",
                "the village is paused (a pause left by `pause` while nothing ran): no model or tool call starts until resume",
                Some(&self.resume()),
            ),
            Notice::Findings(report) => {
                super::headless::report_findings(report, out, self.verbose);
            }
            Notice::Interrupted(when) => {
                let message = match when {
                    Interruption::BeforeBoot => "interrupted before anything was sent",
                    Interruption::StartUp => "interrupted during start-up; nothing was sent",
                };
                out.cli("info", "INTERRUPTED", message, None);
            }
            Notice::AuditUnkeyed(why) => {
                use fuseforks_core::Coded as _;
                out.cli("warn", why.code(), &why.to_string(), crate::remedy::of(why).as_deref());
            }
            Notice::Failed(failure) => self.failed(failure),
            Notice::GoalAttempt(a) => out.cli(
                "info",
                "GOAL_ATTEMPT",
                &format!(
                    "goal id={} attempt={}/{} outcome={} ({})",
                    a.goal_id, a.attempt, a.max_attempts, a.outcome, a.reason
                ),
                None,
            ),
            Notice::TurnFailed { code, error, fix } => out.cli("error", code, error, fix),
            Notice::DoorOpen(url) => {
                out.cli("info", "DOOR_OPEN", &format!("door open at {url}"), None);
            }
            Notice::GuiOpen(opened) => self.gui_open(opened),
            Notice::Serving { agents } => out.cli(
                "info",
                "SERVING",
                &format!("serving {agents} agent(s); Ctrl+C or SIGTERM to stop"),
                None,
            ),
            Notice::Halted => out.cli(
                "error",
                "VILLAGE_HALTED",
                "village halted by the kill switch",
                Some(&self.resume()),
            ),
            closing => self.closing(&closing),
        }
    }

    fn event(&self, event: &CoreEvent) {
        self.out.event(event);
    }

    fn request(&self, event: &RequestEvent) {
        if let Some((mode, printed)) = &self.stream {
            super::ask_stream::say(event, *mode, printed);
        }
    }
}

/// `fuseforks-cli resume --data-dir D`.
pub(crate) fn resume_command(data_dir: &Path) -> String {
    format!(
        "fuseforks-cli resume --data-dir {}",
        fuseforks_host::paths::shell_word(&data_dir.display().to_string())
    )
}

/// The exit code of a run that could not go on.
pub(crate) fn exit_code(failure: &Failure) -> u8 {
    match failure {
        Failure::Halted => exit::HALTED,
        Failure::Preflight(e) => exit::for_preflight_error(e),
        Failure::Rejected => exit::REJECTED,
        Failure::Boot(e) => exit::for_host_error(e),
        Failure::Door(_) | Failure::Gui(_) => exit::BOOT_FAILED,
        Failure::StartMissing | Failure::StartSpec(_) => exit::USAGE,
        Failure::UnknownConversation(_) | Failure::NotPending(_) => exit::USAGE,
        Failure::Start(_) | Failure::Question(_) => exit::CORE_ERROR,
    }
}
