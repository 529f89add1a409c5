//! What `check`, `ask` and `serve` share: their common flags, the preflight report, and the
//! options they open the host's lifecycle with (`fuseforks_host::lifecycle`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use std::sync::Arc;

use fuseforks_core::log::LogSink;
use fuseforks_core::preflight::{HeadlessMode, Level};
use fuseforks_core::tools::RunApproval;
use fuseforks_host::door::DoorAsked;
use fuseforks_host::lifecycle::{Headless, OpenOptions};
use fuseforks_host::preflight_view::{PreflightInputs, PreflightReport, StartSpec, run_preflight};
use fuseforks_host::{HostPaths, SecretSource};

use crate::exit;
use crate::output::Out;

/// `--secrets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SecretsArg {
    /// The OS keyring.
    Keyring,
    /// `FUSEFORKS_SECRET_*` variables.
    Env,
}

/// `--run-approval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ApprovalArg {
    /// Unknown commands wait for a human (default).
    Required,
    /// Unknown commands are allowed and recorded.
    AutoApprove,
    /// Unknown commands run; nothing is recorded.
    NoApproval,
}

/// `--events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum EventsArg {
    /// One JSON object per stderr line.
    Jsonl,
}

/// Flags every headless command takes.
#[derive(Debug, Args)]
pub(crate) struct Common {
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
    pub(crate) fn secret_source(&self) -> SecretSource {
        match self.secrets {
            SecretsArg::Keyring => SecretSource::Keyring,
            SecretsArg::Env => SecretSource::Env,
        }
    }

    pub(crate) fn approval(&self) -> RunApproval {
        match self.run_approval {
            ApprovalArg::Required => RunApproval::Required,
            ApprovalArg::AutoApprove => RunApproval::AutoApprove,
            ApprovalArg::NoApproval => RunApproval::NoApproval,
        }
    }

    /// The start set `--start` names for `mode` (`check`); `Err` is the exit code of a usage
    /// error (said).
    pub(crate) fn start_spec(&self, mode: HeadlessMode, out: &Out) -> Result<StartSpec, u8> {
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
        StartSpec::parse(start).map_err(|e| {
            out.error(&e);
            exit::USAGE
        })
    }

    /// The switches and start set of a headless run.
    pub(crate) fn headless(&self, dry_run: bool) -> Headless {
        Headless {
            start: self.start.clone(),
            bypass_plan_review: self.bypass_plan_review,
            run_approval: self.approval(),
            dry_run,
        }
    }

    /// Runs the preflight for `mode` (`check`); `Err` is the exit code when it could not run.
    pub(crate) fn preflight(
        &self,
        mode: HeadlessMode,
        door_port: Option<u16>,
        out: &Out,
    ) -> Result<PreflightReport, u8> {
        let start = self.start_spec(mode, out)?;
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
pub(crate) fn os_locale() -> Option<String> {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|n| std::env::var(n).ok())
        .find(|v| !v.trim().is_empty())
}

/// Writes findings on stderr (info only with `verbose`); returns whether any rejects.
pub(crate) fn report_findings(report: &PreflightReport, out: &Out, verbose: bool) -> bool {
    for f in &report.findings {
        let level = match f.level {
            Level::Reject => "reject",
            Level::Warn => "warn",
            Level::Info if verbose => "info",
            Level::Info => continue,
        };
        let fix = crate::remedy::finding_fix(f, report.language);
        out.cli(level, f.code, &f.message, Some(&fix));
    }
    !report.passes()
}

/// The options a command opens the host's lifecycle with: its data folder and secret store,
/// the door it asks for, where log lines are echoed, and `--events jsonl`.
pub(crate) fn open_options(
    data_dir: &Path,
    secrets: SecretSource,
    door: DoorAsked,
    log_echo: Option<Arc<dyn LogSink>>,
    out: &Out,
) -> OpenOptions {
    OpenOptions {
        data_dir: data_dir.to_path_buf(),
        app_version: env!("FUSEFORKS_VERSION").to_owned(),
        secrets,
        door,
        log_echo,
        os_locale: os_locale(),
        mcp_child_output: out.child_output(),
        forward_events: out.jsonl,
    }
}
