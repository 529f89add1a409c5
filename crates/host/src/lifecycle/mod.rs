//! The one lifecycle of a running village, as a command uses it: open with typed options (the
//! data folder, the secret store, the door, the switches) → run a request ([`ask`]) or serve
//! ([`serve`], [`gui`]) → close. The kill switch's channels (the control folder, the socket,
//! SIGUSR1/SIGUSR2) and the door live inside it; the caller passes its stop requests (the
//! count of SIGINT/SIGTERM, [`StopRequests`]) and a [`Watcher`] that renders what the host says
//! ([`Notice`]) and every core event, and maps the returned ending to its exit code.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | options, the watcher, notices and failures, open and close |
//! | `ask.rs` | one request to the reception (or a goal loop), answered before the close |
//! | `serve.rs` | `serve` (the start set until a stop or a halt) and `gui` (nothing starts) |

mod ask;
mod serve;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use fuseforks_core::events::CoreEvent;
use fuseforks_core::goal::AttemptReport;
use fuseforks_core::log::LogSink;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::preflight::HeadlessMode;
use fuseforks_core::safety::{Channel, read_halt_marker};
use fuseforks_core::tools::RunApproval;
use fuseforks_core::{Coded, CoreError};
use tokio::sync::watch;

pub use ask::{
    AskAnswer, AskRequest, Asked, ConversationChoice, Ended, RequestEvent, RunFacts, Spent, ask,
    demo,
};
pub use serve::{GuiOpening, ServeRequest, Served, gui, serve};

use crate::audit_key::Unkeyed;
use crate::boot::{Host, HostBootOptions, HostError, build_host};
use crate::control::Channels;
use crate::door::{DoorAsked, DoorError};
use crate::gui::GuiError;
use crate::paths::HostPaths;
use crate::preflight_view::{
    PreflightError, PreflightInputs, PreflightReport, StartError, StartSpec, notice_log_line,
    run_preflight,
};
use crate::secrets::SecretSource;

/// The grace a close waits for turns to record themselves, counted from the stop request; what
/// still runs then is cut, and the close ends within the orchestrator's `CUT_GRACE` (1 s) more.
pub const CLOSE_GRACE: Duration = Duration::from_secs(30);

/// Stop requests received so far (the caller's SIGINT/SIGTERM count): the first closes with
/// [`CLOSE_GRACE`], a second ends the wait at once.
pub type StopRequests = watch::Receiver<u32>;

/// Waits until at least `n` stop requests have arrived.
pub async fn reached(stop: &mut StopRequests, n: u32) {
    while *stop.borrow() < n {
        if stop.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// How a command opens the village.
#[derive(Clone)]
pub struct OpenOptions {
    /// The data folder; the village is `data_dir/workspace`.
    pub data_dir: PathBuf,
    /// Version written on the `version:` line.
    pub app_version: String,
    /// Where secrets come from.
    pub secrets: SecretSource,
    /// Which door opens (before any agent starts).
    pub door: DoorAsked,
    /// Where log lines are echoed besides the file (the caller's stderr).
    pub log_echo: Option<Arc<dyn LogSink>>,
    /// The OS locale (for an undetermined village language).
    pub os_locale: Option<String>,
    /// Where MCP children's stderr goes; inherited when `None`.
    pub mcp_child_output: Option<Arc<dyn fuseforks_core::mcp::ChildOutput>>,
    /// Hand every core event to [`Watcher::event`] (`--events jsonl`).
    pub forward_events: bool,
}

/// The switches of a headless run (`ask`, `serve`) and its start set.
#[derive(Debug, Clone)]
pub struct Headless {
    /// Which agents start, as `--start` says it (read after the halt and pause checks; `ask`
    /// without it starts the reception, `serve` needs it).
    pub start: Option<String>,
    /// Let plan waves run without a human's review.
    pub bypass_plan_review: bool,
    /// What `run` does with commands run.json does not allow.
    pub run_approval: RunApproval,
    /// Side-effecting tools stop at their side effect.
    pub dry_run: bool,
}

/// What the host says while it runs, in order; the watcher puts it into words.
#[derive(Debug)]
pub enum Notice<'a> {
    /// A pause left on the shelf: the run starts paused.
    Paused,
    /// The preflight's report (its findings are said before anything starts).
    Findings(&'a PreflightReport),
    /// A stop request came before anything was sent (`ask`).
    Interrupted(Interruption),
    /// The chain is keyed and this run cannot go on marking it.
    AuditUnkeyed(&'a Unkeyed),
    /// The run cannot go on (the ending carries it too).
    Failed(&'a Failure),
    /// A goal loop's attempt ended.
    GoalAttempt(&'a AttemptReport),
    /// A door's or a delegated turn failed (`serve`): the code, the error and the fix.
    TurnFailed {
        /// The failure's code.
        code: &'a str,
        /// What failed (never a key or a body).
        error: &'a str,
        /// What to change.
        fix: Option<&'a str>,
    },
    /// The door is open at `url` (`serve`).
    DoorOpen(&'a str),
    /// The GUI is open: `url` (`gui`, with the launch token) or `address` (`serve --gui-port`).
    GuiOpen(GuiOpened<'a>),
    /// `serve` runs `agents` agents until a stop request.
    Serving {
        /// The start set's size.
        agents: usize,
    },
    /// The close began.
    Closing(Closing),
    /// Some turns did not end within the grace: they were cut.
    CloseGraceExceeded,
    /// A second stop request ended the wait for the close.
    CloseAborted(Closing),
    /// The village was halted while it ran (the ending says so too).
    Halted,
}

/// Where the GUI opened.
#[derive(Debug, Clone, Copy)]
pub enum GuiOpened<'a> {
    /// `gui`, `demo --gui`: the link with the launch token.
    Url(&'a str),
    /// `serve --gui-port`: the address (its token is the secret `gui_token`).
    Address(std::net::SocketAddr),
}

/// When a stop request interrupted a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// Before the boot.
    BeforeBoot,
    /// After the boot, before the request was sent.
    StartUp,
}

/// Which close: a request's (the first stop request while it runs) or a serving village's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closing {
    /// A request was running: its turn may finish within the grace.
    Request,
    /// A serving village closes.
    Serving,
    /// The plain close after the end (nothing is said as it begins).
    Quiet,
}

/// Why a run ended before its work: said through [`Notice::Failed`] as it happens.
#[derive(Debug)]
pub enum Failure {
    /// The kill switch's halt marker is on the shelf.
    Halted,
    /// `serve` without `--start`.
    StartMissing,
    /// `--start` names nothing that can start.
    StartSpec(StartError),
    /// The preflight could not run.
    Preflight(PreflightError),
    /// The preflight rejected the run (its findings were said).
    Rejected,
    /// The host could not be built.
    Boot(HostError),
    /// The door could not open (`serve`).
    Door(DoorError),
    /// The GUI could not open.
    Gui(GuiError),
    /// An agent of the start set did not start.
    Start(CoreError),
    /// `--resume` names no stored conversation.
    UnknownConversation(CoreError),
    /// `--answer` to a conversation that waits for no answer.
    NotPending(CoreError),
    /// The conversation's open question could not be read.
    Question(CoreError),
}

impl Failure {
    /// The coded error said on stderr, if any (a halt and a rejection are said otherwise).
    pub fn coded(&self) -> Option<&dyn Coded> {
        match self {
            Self::Halted | Self::Rejected | Self::StartMissing => None,
            Self::StartSpec(e) => Some(e),
            Self::Preflight(e) => Some(e),
            Self::Boot(e) => Some(e),
            Self::Door(e) => Some(e),
            Self::Gui(e) => Some(e),
            Self::Start(e) | Self::UnknownConversation(e) | Self::NotPending(e) => Some(e),
            Self::Question(e) => Some(e),
        }
    }
}

/// Renders what the host says, and every core event when asked; called from the host's tasks.
pub trait Watcher: Send + Sync {
    /// A notice, in the order it happens.
    fn notice(&self, notice: Notice<'_>);
    /// A core event (only with [`OpenOptions::forward_events`]).
    fn event(&self, _event: &CoreEvent) {}
    /// What a streamed request does as it runs ([`AskRequest::stream`]).
    fn request(&self, _event: &RequestEvent) {}
}

/// A watcher shared with the host's tasks.
pub type SharedWatcher = Arc<dyn Watcher>;

/// An open village: the host, its kill switch's channels and its door.
struct Opened {
    host: Host,
    channels: Option<Channels>,
    door: Option<crate::door::Door>,
    watcher: SharedWatcher,
    forward: bool,
}

/// The refusals before a headless boot: the halt marker, the pause notice, the preflight and
/// its findings. Gives the report of a run that may start.
fn preflight(
    options: &OpenOptions,
    headless: &Headless,
    mode: HeadlessMode,
    watcher: &SharedWatcher,
) -> Result<PreflightReport, Failure> {
    if read_halt_marker(&options.data_dir).is_some() {
        return Err(failed(watcher, Failure::Halted));
    }
    if crate::control::pause_waiting(&options.data_dir) {
        watcher.notice(Notice::Paused);
    }
    let start = match (headless.start.as_deref(), mode) {
        (Some(start), _) => start,
        (None, HeadlessMode::Ask) => "reception",
        (None, HeadlessMode::Serve) => return Err(failed(watcher, Failure::StartMissing)),
    };
    let start = StartSpec::parse(start).map_err(|e| failed(watcher, Failure::StartSpec(e)))?;
    let inputs = PreflightInputs {
        mode,
        start,
        secrets: options.secrets,
        bypass_plan_review: headless.bypass_plan_review,
        run_approval: headless.run_approval,
        door_port: options.door.port,
        os_locale: options.os_locale.clone(),
    };
    let report = run_preflight(&HostPaths::new(&options.data_dir), &inputs)
        .map_err(|e| failed(watcher, Failure::Preflight(e)))?;
    watcher.notice(Notice::Findings(&report));
    if !report.passes() {
        return Err(Failure::Rejected);
    }
    Ok(report)
}

/// Says a failure and gives it back (for `?`).
fn failed(watcher: &SharedWatcher, failure: Failure) -> Failure {
    watcher.notice(Notice::Failed(&failure));
    failure
}

/// What differs between the commands' boots.
#[derive(Debug, Clone, Copy)]
struct Boot {
    /// Run the schedules (`serve`, `gui`).
    run_schedules: bool,
    /// A door that cannot open ends the run (`serve`); else it is said and the run goes on
    /// without one (`gui`).
    door_stops: bool,
    /// Say a keyed chain this run cannot mark (`ask`, `serve`).
    warn_unkeyed: bool,
}

/// Builds the host (the door opens inside, before anything starts).
async fn open(
    options: &OpenOptions,
    boot: Boot,
    watcher: &SharedWatcher,
) -> Result<Opened, Failure> {
    let Boot {
        run_schedules,
        door_stops,
        warn_unkeyed,
    } = boot;
    let host_options = HostBootOptions {
        app_version: options.app_version.clone(),
        secrets: options.secrets,
        open_door: options.door.open,
        door_port: options.door.port,
        log_echo: options.log_echo.clone(),
        os_locale: options.os_locale.clone(),
        mcp_child_output: options.mcp_child_output.clone(),
        run_schedules,
    };
    let mut host = build_host(&HostPaths::new(&options.data_dir), host_options)
        .await
        .map_err(|e| failed(watcher, Failure::Boot(e)))?;
    // A keyed chain that this run cannot go on marking is said where the person sees it: the
    // log line alone would be found only when `audit verify` fails.
    if let (true, Some(why @ Unkeyed::KeyedChain)) = (warn_unkeyed, &host.audit_unkeyed) {
        watcher.notice(Notice::AuditUnkeyed(why));
    }
    let door = match host.take_door() {
        Ok(door) => door,
        Err(e) if door_stops => return Err(failed(watcher, Failure::Door(e))),
        Err(e) => {
            watcher.notice(Notice::Failed(&Failure::Door(e)));
            None
        }
    };
    Ok(Opened {
        host,
        channels: None,
        door,
        watcher: Arc::clone(watcher),
        forward: options.forward_events,
    })
}

impl Opened {
    fn orchestrator(&self) -> &Orchestrator {
        &self.host.orchestrator
    }

    /// Writes the preflight's adjusted reads to the village log, applies the headless
    /// switches, and forwards events (before the channels open, as the run's first listener).
    fn configure(&self, report: Option<&PreflightReport>, headless: Option<&Headless>) {
        for notice in report.map(|r| r.notices.as_slice()).unwrap_or_default() {
            self.host
                .log
                .line(&notice_log_line(notice, self.host.paths.data_dir()));
        }
        let orchestrator = self.orchestrator();
        if self.forward {
            forward_events(orchestrator, Arc::clone(&self.watcher));
        }
        if let Some(headless) = headless {
            orchestrator.set_run_approval(headless.run_approval, Channel::Cli);
            if headless.bypass_plan_review {
                orchestrator.set_plan_review_bypass(true, Channel::Cli);
            }
            orchestrator.set_dry_run(headless.dry_run);
        }
    }

    /// Starts the kill switch's channels: the control folder, the socket and SIGUSR1/SIGUSR2.
    fn start_channels(&mut self) {
        let log: Arc<dyn LogSink> = self.host.log.clone();
        self.channels = Some(crate::control::start(
            &self.host.orchestrator,
            self.host.paths.data_dir(),
            log,
        ));
    }

    /// Starts the start set.
    fn start_agents(&self, ids: &[String]) -> Result<(), Failure> {
        for id in ids {
            if let Err(e) = self.orchestrator().start_agent(id) {
                return Err(failed(&self.watcher, Failure::Start(e)));
            }
        }
        Ok(())
    }
}

/// Hands every core event to the watcher until the village ends.
fn forward_events(orchestrator: &Orchestrator, watcher: SharedWatcher) {
    let mut events = orchestrator.events();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(event) => watcher.event(&event),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
    });
}

/// The close, with one deadline for all of it: every agent stops at once and its turn is
/// interrupted; what still runs at `cut_at` is cut, and the close ends within the
/// orchestrator's `CUT_GRACE` after that. A further stop request ends the wait at once.
async fn close(
    orchestrator: &Orchestrator,
    stop: &mut StopRequests,
    watcher: &SharedWatcher,
    cut_at: tokio::time::Instant,
) {
    let closing = orchestrator.close(cut_at.saturating_duration_since(tokio::time::Instant::now()));
    tokio::pin!(closing);
    finish_close(closing, stop, watcher).await;
}

/// Waits for a close already under way (see [`close`]).
async fn finish_close(
    closing: std::pin::Pin<&mut impl std::future::Future<Output = bool>>,
    stop: &mut StopRequests,
    watcher: &SharedWatcher,
) {
    let seen = *stop.borrow();
    tokio::select! {
        all = closing => report_close(all, watcher),
        () = reached(stop, seen + 1) => watcher.notice(Notice::CloseAborted(Closing::Quiet)),
    }
}

/// Says when the grace ran out (`all`: every agent ended within it).
fn report_close(all: bool, watcher: &SharedWatcher) {
    if !all {
        watcher.notice(Notice::CloseGraceExceeded);
    }
}
