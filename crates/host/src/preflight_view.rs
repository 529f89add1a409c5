//! The host's side of the headless preflight: resolve `--start`, read the files the checks need
//! (without taking the lock or writing anything), ask the chosen secret store which keys exist,
//! and run the core's pure `headless_preflight`.

use std::collections::BTreeSet;
use std::path::Path;

use fuseforks_core::Coded;
use fuseforks_core::preflight::{
    Finding, HeadlessMode, HostView, Level, headless_preflight, notice_finding, probe_key,
};
use fuseforks_core::schedule::{ProcessZone, ZoneError, resolve_process_zone};
use fuseforks_core::tools::RunApproval;
use fuseforks_core::village::{AgentId, Language, VillageError, World};
use fuseforks_core::village::{Loaded, Notice, NoticeCode};

use crate::bake_required::{BakeRequirement, not_a_bake_copy};
use crate::paths::HostPaths;
pub use crate::secret_names::mcp_secret_keys;
use crate::secrets::{SecretError, SecretSource, secret_store};

const START_FIX: &str = "give batch alone, reception alone (ask only), or agent ids from world.json separated by commas";

/// What `--start` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartSpec {
    /// The batch-start set.
    Batch,
    /// The reception only (`ask` only).
    Reception,
    /// Named agents.
    Ids(Vec<String>),
}

impl StartSpec {
    /// Parses `batch` | `reception` | `id,id,…`. An id named twice is refused (never folded):
    /// `reception,reception` and `a,b,a` are usage errors. Whether `batch` or `reception` is
    /// the keyword or an agent's id is decided against the village ([`resolve_start`]).
    pub fn parse(text: &str) -> Result<Self, StartError> {
        match text.trim() {
            "" => Err(StartError::new("--start is empty", START_FIX)),
            "batch" => Ok(Self::Batch),
            "reception" => Ok(Self::Reception),
            list => {
                let mut ids: Vec<String> = Vec::new();
                for id in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    if ids.iter().any(|seen| seen == id) {
                        return Err(StartError::new(
                            format!("--start names {id:?} twice"),
                            "name each agent once",
                        ));
                    }
                    ids.push(id.to_owned());
                }
                if ids.is_empty() {
                    return Err(StartError::new("--start names no agent", START_FIX));
                }
                Ok(Self::Ids(ids))
            }
        }
    }

    /// The spec as the village reads it: a keyword (`batch`, `reception`) that is also an
    /// agent's id means that agent; the keyword wins only when no agent has that id.
    pub fn against(self, world: &World) -> Self {
        let word = match &self {
            Self::Batch => "batch",
            Self::Reception => "reception",
            Self::Ids(_) => return self,
        };
        let is_agent = AgentId::new(word)
            .ok()
            .is_some_and(|id| world.agent(&id).is_some());
        if is_agent {
            Self::Ids(vec![word.to_owned()])
        } else {
            self
        }
    }
}

/// `--start` that names nothing the command can start (`USAGE`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct StartError {
    /// What is wrong.
    pub message: String,
    /// What to give instead.
    pub fix: String,
}

impl StartError {
    fn new(message: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            fix: fix.into(),
        }
    }
}

impl Coded for StartError {
    fn code(&self) -> &'static str {
        "USAGE"
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(self.fix.clone().into())
    }
}

/// Why the preflight could not run.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// No village.
    #[error(transparent)]
    VillageMissing(#[from] crate::paths::VillageMissing),
    /// A village file is broken.
    #[error(transparent)]
    Village(#[from] VillageError),
    /// The secret store cannot be used.
    #[error(transparent)]
    Secrets(#[from] SecretError),
    /// `--start` names something that is not an agent, or `reception` outside `ask`.
    #[error(transparent)]
    Usage(StartError),
    /// `FUSEFORKS_REQUIRE_BAKE` holds a value other than `1`, `0` or nothing.
    #[error(transparent)]
    RequireBake(#[from] crate::bake_required::RequireBakeInvalid),
    /// Under `--secrets env`, two keys map to one variable: the boot would refuse (exit 5),
    /// so `check` refuses the same way.
    #[error(transparent)]
    Collision(#[from] crate::secrets::SecretNameCollision),
}

impl PreflightError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::VillageMissing(e) => e.code(),
            Self::Village(e) => e.code(),
            Self::Secrets(e) => e.code(),
            Self::Usage(_) => "USAGE",
            Self::RequireBake(e) => e.code(),
            Self::Collision(e) => e.code(),
        }
    }
}

impl Coded for PreflightError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        match self {
            Self::VillageMissing(e) => e.fix(),
            Self::Village(e) => e.fix(),
            Self::Secrets(e) => e.fix(),
            Self::Usage(e) => e.fix(),
            Self::RequireBake(e) => e.fix(),
            Self::Collision(e) => e.fix(),
        }
    }
}

/// The inputs of a preflight besides the files.
#[derive(Debug, Clone)]
pub struct PreflightInputs {
    /// The command checked.
    pub mode: HeadlessMode,
    /// `--start`.
    pub start: StartSpec,
    /// `--secrets`.
    pub secrets: SecretSource,
    /// `--bypass-plan-review`.
    pub bypass_plan_review: bool,
    /// `--run-approval`.
    pub run_approval: RunApproval,
    /// `--door-port`.
    pub door_port: Option<u16>,
    /// The OS locale.
    pub os_locale: Option<String>,
}

/// The result: the findings, the resolved start set, and the village language.
#[derive(Debug, Clone)]
pub struct PreflightReport {
    /// Findings, heaviest first.
    pub findings: Vec<Finding>,
    /// The agents that will start.
    pub start: BTreeSet<String>,
    /// The village language.
    pub language: Language,
    /// What the reads of the files adjusted (each is also a warning among the findings);
    /// `ask` and `serve` write them to the village log once booted ([`notice_log_line`]).
    pub notices: Vec<Notice>,
}

impl PreflightReport {
    /// True when nothing rejects.
    pub fn passes(&self) -> bool {
        !self
            .findings
            .iter()
            .any(|f| f.level == fuseforks_core::preflight::Level::Reject)
    }
}

/// Resolves `--start` against the village (`ask` always adds the reception).
pub fn resolve_start(
    world: &World,
    spec: &StartSpec,
    mode: HeadlessMode,
) -> Result<BTreeSet<String>, PreflightError> {
    let spec = spec.clone().against(world);
    let mut start: BTreeSet<String> = match &spec {
        StartSpec::Batch => world.batch_start_ids().into_iter().collect(),
        StartSpec::Reception if mode == HeadlessMode::Ask => BTreeSet::new(),
        StartSpec::Reception => {
            return Err(PreflightError::Usage(StartError::new(
                "--start reception (the keyword: no agent has the id `reception`) is for ask only",
                "name agents by id, or use batch",
            )));
        }
        StartSpec::Ids(ids) => {
            for id in ids {
                let known = AgentId::new(id.as_str())
                    .ok()
                    .and_then(|a| world.agent(&a).map(|_| ()))
                    .is_some();
                if !known {
                    let message = if ids.len() > 1 && matches!(id.as_str(), "batch" | "reception") {
                        format!(
                            "--start names {id:?} beside other ids: a keyword stands alone (and no agent has the id {id:?})"
                        )
                    } else {
                        format!("--start names {id:?}, which is not an agent of this village")
                    };
                    return Err(PreflightError::Usage(StartError::new(message, START_FIX)));
                }
            }
            ids.iter().cloned().collect()
        }
    };
    if mode == HeadlessMode::Ask
        && let Some(r) = world
            .reception
            .as_ref()
            .filter(|r| world.agent(r).is_some())
    {
        start.insert(r.to_string());
    }
    Ok(start)
}

/// Runs the preflight: reads files only; takes no lock; writes nothing. Where only a bake copy
/// may run and this is none, the report is that one refusal, before the village is read.
pub fn run_preflight(
    paths: &HostPaths,
    inputs: &PreflightInputs,
) -> Result<PreflightReport, PreflightError> {
    let os_locale = inputs.os_locale.as_deref();
    if let Some(refused) = bake_copy_refused(paths, os_locale)? {
        return Ok(refused);
    }
    let village = paths.village();
    if let Some(missing) = paths.village_missing() {
        return Err(missing.into());
    }
    // `check` writes nothing, so a read-only folder is a warning here (a village mounted
    // read-only may be checked); `ask` and `serve` refuse it at the boot (exit 5).
    let unwritable = crate::writable::check(paths).err();
    // Every file read here hands over what its read adjusted; each becomes a warning.
    let mut notices = Vec::new();
    let world = keep(&mut notices, village.load_world()?);
    let schedules = keep(&mut notices, village.load_schedules()?).0;
    let language = world.effective_language(os_locale);
    let start = resolve_start(&world, &inputs.start, inputs.mode)?;
    let secrets = secret_store(inputs.secrets)?;
    let shelf = paths.shelf();
    let approvals = keep(&mut notices, shelf.load_probe_approvals()?).hashes;
    let village_id = village.read_village_id()?.unwrap_or_default();
    // Read for its notices (a threshold reset); its pruning switch is not used here.
    keep(&mut notices, shelf.load_jev()?);
    let baked = match shelf.load_bake_record()? {
        Some(record) => keep(&mut notices, record).source_time_zone,
        None => None,
    };
    let mut mcp = vec![(
        String::new(),
        keep(&mut notices, village.load_shared_mcp()?),
    )];
    let (mut run_allow, mut run_network_denied) = (Vec::new(), Vec::new());
    for agent in &world.agents {
        let files = village.agent_files(&agent.id)?;
        mcp.push((agent.id.to_string(), keep(&mut notices, files.load_mcp()?)));
        // SKILL.md's front matter: what it could not take as written (an unreadable file is
        // an empty skill at the turn, as before).
        if let Ok(skill) = files.load_skill() {
            notices.extend(skill.notices);
        }
        if start.contains(agent.id.as_str()) {
            let policy = keep(&mut notices, files.load_run_policy()?);
            if policy.network == Some(false) {
                run_network_denied.push(agent.id.to_string());
            }
            run_allow.push((agent.id.to_string(), policy.allow));
        }
    }
    let judge_invalid = judge_invalid(&village, &world);
    let secret_present = |key: &str| secrets.get(key).ok().flatten().is_some();
    let probe_approved =
        |p: &fuseforks_core::village::ScheduleProbe| approvals.contains(&probe_key(p, &village_id));
    let view = HostView {
        mode: inputs.mode,
        start: &start,
        secret_present: &secret_present,
        probe_approved: &probe_approved,
        command_found: &command_found,
        dir_exists: &|d: &str| Path::new(d).is_dir(),
        dir_holds_village: &|d: &str| holds(Path::new(d), paths.data_dir()),
        mcp: &mcp,
        run_allow: &run_allow,
        run_network_denied: &run_network_denied,
        judge_invalid: &judge_invalid,
        bypass_plan_review: inputs.bypass_plan_review,
        run_approval: inputs.run_approval,
        door_port: inputs.door_port,
        time_zone: process_zone(),
        baked_time_zone: baked,
        language,
    };
    let mut findings = headless_preflight(&world, &schedules, &view);
    let notices: Vec<Notice> = notices
        .into_iter()
        .filter(|n| !rejected_already(n, &world, &start))
        .collect();
    findings.extend(
        notices
            .iter()
            .map(|n| notice_finding(n, &shown(&n.file, paths.data_dir()), language)),
    );
    findings.extend(unwritable.as_ref().map(unwritable_finding));
    findings.sort_by_key(|f| f.level); // stable: the checks' findings first within a level
    if let Some(notice) = secrets.notice() {
        findings.push(store_notice(notice));
    }
    let keys = crate::secrets::village_keys(&world, paths);
    if inputs.secrets == SecretSource::Env {
        // The boot refuses two keys that map to one variable (exit 5); `check` says it first.
        crate::secrets::check_secret_names(keys.iter().map(String::as_str))?;
    }
    findings.extend(invalid_values(&keys, &*secrets));
    Ok(PreflightReport {
        findings,
        start,
        language,
        notices,
    })
}

/// The report of a data folder that is not a bake copy where `FUSEFORKS_REQUIRE_BAKE` asks for
/// one: that refusal alone, in the language of the village if one can be read.
fn bake_copy_refused(
    paths: &HostPaths,
    os_locale: Option<&str>,
) -> Result<Option<PreflightReport>, PreflightError> {
    if !BakeRequirement::from_env()?.refuses(paths) {
        return Ok(None);
    }
    let language = crate::startup::peek_language(&paths.workspace(), os_locale);
    Ok(Some(PreflightReport {
        findings: vec![not_a_bake_copy(paths.data_dir(), language)],
        start: BTreeSet::new(),
        language,
        notices: Vec::new(),
    }))
}

/// The warning of a data folder this process may not write: the boot's refusal, said ahead.
fn unwritable_finding(e: &crate::writable::DataDirUnwritable) -> Finding {
    let fix = e.fix();
    Finding {
        level: Level::Warn,
        code: e.code(),
        message: format!("{e}; ask and serve refuse to start"),
        fix: fix.as_ref().map(|f| f.change.clone()).unwrap_or_default(),
        remedy: fix.and_then(|f| f.remedy),
        file: None,
        field: None,
    }
}

/// The value of a read, its notices added to `notices`.
fn keep<T>(notices: &mut Vec<Notice>, loaded: Loaded<T>) -> T {
    notices.extend(loaded.notices);
    loaded.value
}

/// A file as findings and log lines show it: relative to the data folder when inside it.
pub fn shown(file: &Path, data_dir: &Path) -> String {
    file.strip_prefix(data_dir)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// A `MODEL_TEMPLATE_MISSING` notice of an agent that starts: the check of the same code
/// rejects it already, so the notice would say it twice.
fn rejected_already(notice: &Notice, world: &World, start: &BTreeSet<String>) -> bool {
    notice.code == NoticeCode::ModelTemplateMissing
        && notice
            .field
            .strip_prefix("agents[")
            .and_then(|rest| rest.split_once(']'))
            .and_then(|(i, _)| i.parse::<usize>().ok())
            .and_then(|i| world.agents.get(i))
            .is_some_and(|a| start.contains(a.id.as_str()))
}

/// The village log's line for one read notice: code, file and field, never the value
/// (`docs/formats/log-lines.md`).
pub fn notice_log_line(notice: &Notice, data_dir: &Path) -> String {
    format!(
        "read notice: code={} file={} field={}",
        notice.code.as_str(),
        shown(&notice.file, data_dir),
        notice.field
    )
}

/// The secret store's own word on itself (keys that do not survive a reboot), as an info
/// finding: `check` shows it, `ask`/`serve` with `--verbose`.
fn store_notice(notice: &str) -> Finding {
    Finding {
        level: fuseforks_core::preflight::Level::Info,
        code: "SECRET_STORE_NOT_PERSISTENT",
        message: notice.to_owned(),
        fix: "`fuseforks-cli secrets list --data-dir D` names the store that holds the keys".into(),
        file: None,
        field: None,
        remedy: None,
    }
}

/// A value in the store that cannot be a secret (a pasted line break), as a warning beside the
/// `SECRET_MISSING` it causes; never the value.
fn invalid_values(keys: &[String], secrets: &dyn crate::secrets::SecretStore) -> Vec<Finding> {
    keys.iter()
        .filter_map(|key| secrets.get(key).err())
        .filter(|e| matches!(e, SecretError::Invalid { .. }))
        .map(|e| Finding {
            level: fuseforks_core::preflight::Level::Warn,
            code: e.code(),
            message: e.to_string(),
            fix: fuseforks_core::Coded::fix(&e)
                .map(|f| f.change)
                .unwrap_or_default(),
            file: None,
            field: None,
            remedy: None,
        })
        .collect()
}

/// The zone the schedules will fire in: `TZ` as set (an empty `TZ` is UTC; a value that is not
/// UTF-8 cannot name a zone and is reported as such), else the system's — the one resolution
/// the scheduler uses.
pub fn process_zone() -> Result<ProcessZone, ZoneError> {
    let tz = std::env::var_os("TZ").map(|v| v.to_string_lossy().into_owned());
    resolve_process_zone(tz.as_deref())
}

/// Whether a program can be run: an absolute or relative path that exists, or a name on PATH.
pub fn command_found(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

/// Whether `folder` and `data_dir` overlap (compared as real paths): the folder is the data
/// folder, holds it, or lies inside it (the village's files, an agent's own `run.json`).
fn holds(folder: &Path, data_dir: &Path) -> bool {
    match (folder.canonicalize(), data_dir.canonicalize()) {
        (Ok(folder), Ok(data)) => data.starts_with(&folder) || folder.starts_with(&data),
        _ => false,
    }
}

/// Enabled judges with an invalid `judge.toml`: file and the first finding's place.
fn judge_invalid(
    store: &fuseforks_core::village::VillageStore,
    world: &fuseforks_core::village::World,
) -> Vec<(String, usize, usize, String)> {
    fuseforks_core::judge::judge_states(store, world)
        .into_iter()
        .filter(|s| s.spec.enabled)
        .filter_map(|s| {
            let first = s.rules.err()?.into_iter().next()?;
            Some((
                s.path.display().to_string(),
                first.line,
                first.col,
                first.message,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collision_check_counts_enabled_http_servers_only() {
        let dir = tempfile::tempdir().unwrap();
        let paths = HostPaths::new(dir.path());
        paths.village().save_world(&World::default()).unwrap();
        std::fs::write(
            paths.workspace().join("mcp.json"),
            r#"{"mcpServers":{
                "on":{"type":"http","url":"https://x/mcp","headers":{"A":"${secret:ON}"}},
                "off":{"type":"http","url":"https://y/mcp","headers":{"A":"${secret:OFF}"},"enabled":false}
            }}"#,
        )
        .unwrap();
        assert_eq!(mcp_secret_keys(&paths), ["mcp:ON"]);
    }

    #[test]
    fn start_keywords_yield_to_agents_of_that_id_and_ids_are_named_once() {
        assert_eq!(
            StartSpec::parse("reception,reception"),
            Err(StartError::new(
                "--start names \"reception\" twice",
                "name each agent once"
            ))
        );
        assert_eq!(StartSpec::parse("reception"), Ok(StartSpec::Reception));
        let mut world = World::default();
        assert_eq!(StartSpec::Reception.against(&world), StartSpec::Reception);
        world.agents.push(fuseforks_core::village::AgentSpec::new(
            AgentId::new("reception").unwrap(),
            "Front",
            fuseforks_core::village::TemplateId::new("t").unwrap(),
        ));
        assert_eq!(
            StartSpec::Reception.against(&world),
            StartSpec::Ids(vec!["reception".into()])
        );
        assert_eq!(StartSpec::Batch.against(&world), StartSpec::Batch);
    }

    #[test]
    fn a_keyword_beside_ids_is_told_to_stand_alone() {
        let mut world = World::default();
        world.agents.push(fuseforks_core::village::AgentSpec::new(
            AgentId::new("front").unwrap(),
            "Front",
            fuseforks_core::village::TemplateId::new("t").unwrap(),
        ));
        let spec = StartSpec::parse("batch,front").unwrap();
        let err = resolve_start(&world, &spec, HeadlessMode::Ask).unwrap_err();
        assert!(err.to_string().contains("a keyword stands alone"), "{err}");
        let spec = StartSpec::parse("nobody").unwrap();
        let err = resolve_start(&world, &spec, HeadlessMode::Ask).unwrap_err();
        assert!(err.to_string().contains("not an agent"), "{err}");
    }
}
