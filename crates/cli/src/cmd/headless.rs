//! What `check`, `ask` and `serve` share: their common flags, the preflight report, booting the
//! host, starting the start set, forwarding events, and the close sequence.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use fuseforks_core::log::LogSink;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::preflight::{HeadlessMode, Level};
use fuseforks_core::tools::RunApproval;
use fuseforks_host::preflight_view::{
    PreflightInputs, PreflightReport, StartSpec, notice_log_line, run_preflight,
};
use fuseforks_host::{Host, HostBootOptions, HostPaths, SecretSource, build_host};

use crate::exit;
use crate::output::Out;
use crate::signals::{SignalCount, reached};

/// The grace a close waits for turns to record themselves, counted from the signal; what still
/// runs then is cut, and the close ends within the orchestrator's `CUT_GRACE` (1 s) more.
pub const CLOSE_GRACE: Duration = Duration::from_secs(30);

/// `--secrets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SecretsArg {
    /// The OS keyring.
    Keyring,
    /// `FUSEFORKS_SECRET_*` variables.
    Env,
}

/// `--run-approval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApprovalArg {
    /// Unknown commands wait for a human (default).
    Required,
    /// Unknown commands are allowed and recorded.
    AutoApprove,
    /// Unknown commands run; nothing is recorded.
    NoApproval,
}

/// `--events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventsArg {
    /// One JSON object per stderr line.
    Jsonl,
}

/// Flags every headless command takes.
#[derive(Debug, Args)]
pub struct Common {
    /// The data folder; the village is DATA_DIR/workspace. Required: there is no default.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
    /// Which agents start: batch | reception (ask only) | id,id,… (each id once). An agent
    /// whose id is `reception` or `batch` is that agent; the keyword wins only when no agent
    /// has that id. Required for `serve`; `ask` (and `check --for ask`) default to
    /// `reception`, which `ask` always starts anyway.
    #[arg(long, value_name = "SET")]
    pub start: Option<String>,
    /// Where API keys come from.
    #[arg(long, value_enum, default_value = "keyring")]
    pub secrets: SecretsArg,
    /// Let plan waves run without a human's review.
    #[arg(long)]
    pub bypass_plan_review: bool,
    /// What `run` does with commands run.json does not allow.
    #[arg(long, value_enum, default_value = "required")]
    pub run_approval: ApprovalArg,
}

impl Common {
    pub fn secret_source(&self) -> SecretSource {
        match self.secrets {
            SecretsArg::Keyring => SecretSource::Keyring,
            SecretsArg::Env => SecretSource::Env,
        }
    }

    pub fn approval(&self) -> RunApproval {
        match self.run_approval {
            ApprovalArg::Required => RunApproval::Required,
            ApprovalArg::AutoApprove => RunApproval::AutoApprove,
            ApprovalArg::NoApproval => RunApproval::NoApproval,
        }
    }

    /// Runs the preflight for `mode`; `Err` is the exit code when it could not run.
    pub fn preflight(
        &self,
        mode: HeadlessMode,
        door_port: Option<u16>,
        out: &Out,
    ) -> Result<PreflightReport, u8> {
        let start = match (self.start.as_deref(), mode) {
            (Some(start), _) => start,
            (None, HeadlessMode::Ask) => "reception",
            (None, HeadlessMode::Serve) => {
                out.cli(
                    "error",
                    "USAGE",
                    "serve needs --start: which agents run until it is stopped",
                    Some("add --start batch (the batch-start agents) or --start ID,ID"),
                );
                return Err(exit::USAGE);
            }
        };
        let start = StartSpec::parse(start).map_err(|e| {
            out.error(&e);
            exit::USAGE
        })?;
        let inputs = PreflightInputs {
            mode,
            start,
            secrets: self.secret_source(),
            bypass_plan_review: self.bypass_plan_review,
            run_approval: self.approval(),
            door_port,
            os_locale: os_locale(),
        };
        run_preflight(&HostPaths::new(&self.data_dir), &inputs).map_err(|e| {
            out.error(&e);
            exit::for_preflight_error(&e)
        })
    }
}

/// The OS locale (`LC_ALL`, `LC_MESSAGES`, `LANG`).
pub fn os_locale() -> Option<String> {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|n| std::env::var(n).ok())
        .find(|v| !v.trim().is_empty())
}

/// Writes findings on stderr (info only with `verbose`); returns whether any rejects.
pub fn report_findings(report: &PreflightReport, out: &Out, verbose: bool) -> bool {
    for f in &report.findings {
        let level = match f.level {
            Level::Reject => "reject",
            Level::Warn => "warn",
            Level::Info if verbose => "info",
            Level::Info => continue,
        };
        out.cli(level, f.code, &f.message, Some(&f.fix));
    }
    !report.passes()
}

/// Writes what the reads of the preflight adjusted to the village log, once per run (stderr
/// said each as a warning already, through [`report_findings`]).
pub fn log_notices(host: &Host, report: &PreflightReport) {
    for notice in &report.notices {
        host.log
            .line(&notice_log_line(notice, host.paths.data_dir()));
    }
}

/// Boots the host, unless a signal arrives first (then `Err(code_on_signal)`).
pub async fn boot(
    common: &Common,
    out: &Out,
    open_door: bool,
    door_port: Option<u16>,
) -> Result<Host, u8> {
    boot_with(common, out, open_door, door_port, false).await
}

/// [`boot`], running the schedules when `run_schedules` (`serve` only).
pub async fn boot_with(
    common: &Common,
    out: &Out,
    open_door: bool,
    door_port: Option<u16>,
    run_schedules: bool,
) -> Result<Host, u8> {
    let options = HostBootOptions {
        app_version: env!("FUSEFORKS_VERSION").to_owned(),
        secrets: common.secret_source(),
        open_door,
        door_port,
        log_echo: match run_schedules {
            true => Some(out.serve_echo()),
            false => out.log_echo(),
        },
        os_locale: os_locale(),
        mcp_child_output: out.child_output(),
        run_schedules,
    };
    let host = build_host(&HostPaths::new(&common.data_dir), options)
        .await
        .map_err(|e| {
            out.error(&e);
            exit::for_host_error(&e)
        })?;
    // A keyed chain that this run cannot go on marking is said where the person sees it: the
    // log line alone would be found only when `audit verify` fails.
    if let Some(why @ fuseforks_host::audit_key::Unkeyed::KeyedChain) = &host.audit_unkeyed {
        use fuseforks_core::Coded as _;
        out.cli("warn", why.code(), &why.to_string(), why.fix().as_deref());
    }
    Ok(host)
}

/// Starts the start set; returns the ids started.
pub fn start_agents(
    orchestrator: &Orchestrator,
    report: &PreflightReport,
    out: &Out,
) -> Result<Vec<String>, u8> {
    let mut started = Vec::new();
    for id in &report.start {
        if let Err(e) = orchestrator.start_agent(id) {
            out.error(&e);
            return Err(exit::CORE_ERROR);
        }
        started.push(id.clone());
    }
    Ok(started)
}

/// Applies the command's switches to a booted village and starts forwarding its events.
pub fn configure(orchestrator: &Orchestrator, common: &Common, out: Out) {
    forward_events(orchestrator, out);
    orchestrator.set_run_approval(common.approval(), fuseforks_core::safety::Channel::Cli);
    if common.bypass_plan_review {
        orchestrator.set_plan_review_bypass(true, fuseforks_core::safety::Channel::Cli);
    }
}

/// Forwards core events to stderr under `--events jsonl`.
pub fn forward_events(orchestrator: &Orchestrator, out: Out) {
    if !out.jsonl {
        return;
    }
    let mut events = orchestrator.events();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(event) => out.event(&event),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
    });
}

/// The close sequence, with one deadline for all of it: every agent stops at once and its turn
/// is interrupted; what still runs at `cut_at` (the signal + [`CLOSE_GRACE`]) is cut, and the
/// close ends within the orchestrator's `CUT_GRACE` after that. A further signal ends the wait
/// at once (and says a payment record may be missing).
pub async fn close(
    orchestrator: &Orchestrator,
    signals: &mut SignalCount,
    out: &Out,
    cut_at: tokio::time::Instant,
) {
    let closing = orchestrator.close(cut_at.saturating_duration_since(tokio::time::Instant::now()));
    tokio::pin!(closing);
    finish_close(closing, signals, out).await;
}

/// Waits for a close already under way (`Orchestrator::close`'s future, see [`close`]).
pub async fn finish_close(
    closing: std::pin::Pin<&mut impl std::future::Future<Output = bool>>,
    signals: &mut SignalCount,
    out: &Out,
) {
    let seen = *signals.borrow();
    tokio::select! {
        all = closing => report_close(all, out),
        () = reached(signals, seen + 1) => {
            out.cli("warn", "CLOSE_ABORTED", "closed without waiting for running turns: a turn's payment record may be missing from the log and the conversation", None);
        }
    }
}

/// Says when the grace ran out (`all`: every agent ended within it).
pub fn report_close(all: bool, out: &Out) {
    if !all {
        out.cli("warn", "CLOSE_GRACE_EXCEEDED", "some turns did not end within 30 s: their model calls and tools were cut, and the usage of a cut call is recorded as unknown", None);
    }
}
