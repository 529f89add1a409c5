//! `build_host`: the one boot wiring of a running village (the CLI's `ask`, `serve`, `gui`,
//! `demo`, `assist`), in this order: village present → data folder writable → lock → log (`started`, `version:`) →
//! secret store → the audit key (generated into a writable store when absent) → bootstrap
//! (`session:`) → secret-name collision check (env only) → `attachment gc:` → demo models →
//! the door (`mcp server:`) → `jev:`. Probe approvals and the pricing source are read where
//! they are used. The block's lines are in `docs/formats/log-lines.md`.

use std::sync::Arc;

use fuseforks_core::llm::{ApiKey, LlmClient, LlmError};
use fuseforks_core::log::{LogSink, VillageLog};
use fuseforks_core::orchestrator::{Orchestrator, OrchestratorConfig};
use fuseforks_core::safety::AuditSetup;
use fuseforks_core::schedule::{RunnerConfig, ScheduleRunner, SystemClock};
use fuseforks_core::sessions::SessionError;
use fuseforks_core::tools::TrashTarget;
use fuseforks_core::village::{AttachmentSurvey, VillageError};
use fuseforks_core::{Coded, CoreError};
use tokio_util::sync::CancellationToken;

use crate::lock::{LockError, VillageLock};
use crate::paths::HostPaths;
use crate::secrets::{
    SecretError, SecretNameCollision, SecretStore, check_secret_names, village_keys,
};
pub use crate::secrets::{SecretSource, secret_store};
use crate::startup;

/// What differs between the GUI, `ask` and `serve`.
#[derive(Clone)]
pub struct HostBootOptions {
    /// Version written on the `version:` line.
    pub app_version: String,
    /// Where secrets come from.
    pub secrets: SecretSource,
    /// Open the door per `mcp_server.json` (GUI, serve).
    pub open_door: bool,
    /// `serve --door-port`: open the door here with the secret `door_token`.
    pub door_port: Option<u16>,
    /// Where log lines are echoed besides the file (the CLI's stderr).
    pub log_echo: Option<Arc<dyn LogSink>>,
    /// The OS locale (for an undetermined village language).
    pub os_locale: Option<String>,
    /// Where MCP children's stderr goes (`--events jsonl`); inherited when `None`.
    pub mcp_child_output: Option<Arc<dyn fuseforks_core::mcp::ChildOutput>>,
    /// Run the schedules of `schedules.json` ([`Host::start_schedules`]): `serve` (and the GUI
    /// later); never `ask` or `check`, which never touch `lastConsumedDueMs`.
    pub run_schedules: bool,
}

/// Why the host could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// There is no village at `data_dir/workspace`.
    #[error(transparent)]
    VillageMissing(#[from] crate::paths::VillageMissing),
    /// The data folder cannot be written (a read-only mount, another user's folder).
    #[error(transparent)]
    Unwritable(#[from] crate::writable::DataDirUnwritable),
    /// The lock is held or cannot be taken.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// A village file is broken.
    #[error(transparent)]
    Village(#[from] VillageError),
    /// `sessions.redb` is open in another process.
    #[error(transparent)]
    SessionStoreLocked(SessionError),
    /// The secret store cannot be used.
    #[error(transparent)]
    Secrets(#[from] SecretError),
    /// Two secret keys map to one variable.
    #[error(transparent)]
    SecretNameCollision(#[from] SecretNameCollision),
    /// The core refused to boot.
    #[error(transparent)]
    Core(CoreError),
    /// The log could not be opened.
    #[error("cannot open the village log {}: {source}", path.display())]
    Log {
        /// The log file.
        path: std::path::PathBuf,
        /// Why the system refused.
        #[source]
        source: std::io::Error,
    },
    /// The LLM client (its HTTP stack) could not be built.
    #[error("cannot build the LLM client: {0}")]
    LlmClient(#[source] LlmError),
    /// The embedded demo model of a `demo` template could not start.
    #[error(transparent)]
    DemoModel(#[from] crate::demo::DemoModelError),
}

impl HostError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::VillageMissing(_) => "VILLAGE_MISSING",
            Self::Unwritable(e) => e.code(),
            Self::Lock(e) => e.code(),
            Self::Village(e) => e.code(),
            Self::SessionStoreLocked(e) => e.code(),
            Self::Secrets(e) => e.code(),
            Self::SecretNameCollision(e) => e.code(),
            Self::Core(e) => e.code(),
            Self::Log { .. } => "LOG_UNAVAILABLE",
            Self::LlmClient(_) => "LLM_CLIENT_FAILED",
            Self::DemoModel(e) => e.code(),
        }
    }
}

impl Coded for HostError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        match self {
            Self::VillageMissing(e) => e.fix(),
            Self::Unwritable(e) => e.fix(),
            Self::Lock(e) => e.fix(),
            Self::Village(e) => e.fix(),
            Self::SessionStoreLocked(e) => e.fix(),
            Self::Secrets(e) => e.fix(),
            Self::SecretNameCollision(e) => e.fix(),
            Self::Core(e) => e.fix(),
            Self::DemoModel(e) => e.fix(),
            Self::Log { .. } | Self::LlmClient(_) => None,
        }
    }
}

/// A running village: the orchestrator, its secret store, its log and its lock.
pub struct Host {
    /// The orchestrator.
    pub orchestrator: Orchestrator,
    /// The secret store in use.
    pub secrets: Arc<dyn SecretStore>,
    /// The village log.
    pub log: Arc<VillageLog>,
    /// The paths.
    pub paths: HostPaths,
    /// The boot options.
    pub options: HostBootOptions,
    /// The embedded demo models of the village's `demo` templates (stopped on drop).
    pub demo_models: Vec<crate::demo::DemoModel>,
    /// Why the audit chain is written without a key in this run, if it is.
    pub audit_unkeyed: Option<crate::audit_key::Unkeyed>,
    /// The door opened at boot, or why it could not open ([`Host::take_door`]).
    door: Result<Option<crate::door::Door>, crate::door::DoorError>,
    lock: VillageLock,
}

/// The running scheduler of a host; [`ScheduleLoop::stop`] ends it (firings in flight are
/// aborted; their consume is on disk already, so they are lost, never doubled).
pub struct ScheduleLoop {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl ScheduleLoop {
    /// Stops the loop and waits for it.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

impl Host {
    /// Starts the scheduler when the options ask for it (`run_schedules`), on the system clock
    /// in the process time zone; call it after the start set is running (a target not running
    /// at its due is consumed as stopped). `None` when not asked for, or when the zone is
    /// unknown (logged with its code: no schedule is computed in a guessed zone).
    pub fn start_schedules(&self) -> Option<ScheduleLoop> {
        if !self.options.run_schedules {
            return None;
        }
        let zone = match crate::preflight_view::process_zone() {
            Ok(zone) => zone.zone().clone(),
            Err(e) => {
                self.log.line(&format!(
                    "schedule runner: not started code={}",
                    Coded::code(&e)
                ));
                return None;
            }
        };
        let village_id = self
            .paths
            .village()
            .read_village_id()
            .ok()
            .flatten()
            .unwrap_or_default();
        let runner = ScheduleRunner::new(RunnerConfig {
            orchestrator: self.orchestrator.clone(),
            workspace: self.paths.workspace(),
            village_id,
            shelf: self.paths.shelf(),
            zone,
            clock: Arc::new(SystemClock),
            log: self.log.clone(),
        });
        self.log.line("schedule runner: started tick_ms=1000");
        let stop = CancellationToken::new();
        let task = runner.spawn(stop.clone());
        Some(ScheduleLoop { stop, task })
    }

    /// Makes every demo model wait `pace` before each answer (`demo --pace-ms`).
    pub fn set_demo_pace(&self, pace: std::time::Duration) {
        for model in &self.demo_models {
            model.set_pace(pace);
        }
    }

    /// The lock file held.
    pub fn lock_path(&self) -> &std::path::Path {
        self.lock.path()
    }

    /// The door the boot opened (`None`: not asked for, or switched off in `mcp_server.json`),
    /// or why it could not open; the caller decides whether that stops it (`serve` stops, the
    /// GUI goes on without a door). Close the door before the agents stop. A second call
    /// gives `Ok(None)`.
    pub fn take_door(&mut self) -> Result<Option<crate::door::Door>, crate::door::DoorError> {
        std::mem::replace(&mut self.door, Ok(None))
    }
}

/// Builds the host. Nothing is created when the village is missing or its data folder cannot be
/// written (`writable.rs`); the lock is the first
/// thing taken, before the log is opened, so a refused lock leaves no line.
pub async fn build_host(paths: &HostPaths, options: HostBootOptions) -> Result<Host, HostError> {
    let workspace = paths.workspace();
    if let Some(missing) = paths.village_missing() {
        return Err(missing.into());
    }
    crate::writable::check(paths)?;
    let lock = VillageLock::acquire(&workspace)?;
    let language = startup::peek_language(&workspace, options.os_locale.as_deref());
    let log = open_log(&workspace, &options)?;
    startup::opening_lines(&log, language, &options.app_version);
    let secrets = secret_store(options.secrets)?;
    let (audit_key, audit_unkeyed) =
        match crate::audit_key::writer_key(options.secrets, &*secrets, paths.data_dir()) {
            Ok(key) => (Some(key), None),
            Err(why) => (None, Some(why)),
        };
    let orchestrator = bootstrap(paths, &options, &log, &secrets, audit_key)?;
    if options.secrets == SecretSource::Env {
        let keys = village_keys(&orchestrator.world(), paths);
        check_secret_names(keys.iter().map(String::as_str))?;
    }
    log.line(&AttachmentSurvey::of(&workspace).line());
    let demo_sink: Arc<dyn LogSink> = log.clone();
    let demo_models = crate::demo::model::start_for_world(
        &orchestrator.world(),
        orchestrator.language(),
        &demo_sink,
    )?;
    let asked_door = crate::door::DoorAsked {
        open: options.open_door,
        port: options.door_port,
    };
    let door = crate::door::open_at_boot(paths, asked_door, &*secrets, &orchestrator, &log).await;
    startup::jev_line(&log, paths.data_dir(), &*secrets);
    // Said after the block, which stays whole: the key was settled before the bootstrap.
    if let Some(why) = &audit_unkeyed {
        log.line(&crate::audit_key::unkeyed_line(why));
    }
    Ok(Host {
        orchestrator,
        secrets,
        log,
        paths: paths.clone(),
        options,
        demo_models,
        audit_unkeyed,
        door,
        lock,
    })
}

/// Opens the village log, echoing where the options say.
fn open_log(
    workspace: &std::path::Path,
    options: &HostBootOptions,
) -> Result<Arc<VillageLog>, HostError> {
    let path = workspace.join("fuseforks.log");
    let mut log = VillageLog::open(&path).map_err(|source| HostError::Log { path, source })?;
    if let Some(echo) = &options.log_echo {
        log = log.with_echo(Arc::clone(echo));
    }
    Ok(Arc::new(log))
}

/// The orchestrator over the village, its client and keys (writes the `session:` line).
fn bootstrap(
    paths: &HostPaths,
    options: &HostBootOptions,
    log: &Arc<VillageLog>,
    secrets: &Arc<dyn SecretStore>,
    audit_key: Option<fuseforks_core::safety::AuditKey>,
) -> Result<Orchestrator, HostError> {
    let workspace = paths.workspace();
    let lookup_store = Arc::clone(secrets);
    let lookup = Arc::new(move |id: &str| lookup_store.get(id).ok().flatten().map(ApiKey::new));
    let sink: Arc<dyn LogSink> = log.clone();
    let llm = LlmClient::new()
        .map_err(HostError::LlmClient)?
        .with_log(Arc::clone(&sink));
    Orchestrator::bootstrap(OrchestratorConfig {
        workspace: workspace.clone(),
        secrets: lookup,
        log: sink,
        llm,
        os_locale: options.os_locale.clone(),
        trash: TrashTarget::Os {
            fallback: workspace.join(".trash"),
        },
        mcp_child_output: options.mcp_child_output.clone(),
        tracer: crate::telemetry::tracer(),
        audit: AuditSetup {
            key: audit_key,
            shelf: Some(paths.data_dir().to_path_buf()),
        },
    })
    .map_err(|e| match e {
        CoreError::Sessions(s @ SessionError::Locked(_)) => HostError::SessionStoreLocked(s),
        CoreError::Village(v) => HostError::Village(v),
        other => HostError::Core(other),
    })
}
