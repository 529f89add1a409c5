//! Headless preflight: a pure function from the
//! village files and a view of the host (which secrets exist, which commands are on PATH, …)
//! to findings — reject / warn / info, each with a code, a message and a fix in the village
//! language, sorted heaviest first, then in the table's order. It calls no model, connects no
//! MCP server, writes nothing and takes no lock.
//!
//! # Parts
//!
//! The pure headless preflight and probe-approval keys:
//!
//! - `mod.rs`: `HostView`, `Finding`, and `CHECKS`, the table of small check functions, each row
//!   naming the codes it may give, in the order findings are listed within a level
//! - `model.rs`: keys, missing templates, endpoints, a budget below one call
//! - `village.rs`: plan review, reception, door token, Jev token
//! - `folders.rs`: work folders, RAG sources
//! - `schedules.rs`
//! - `commands.rs`: MCP and `run` commands, Landlock
//! - `notices.rs` (the read notices of the files the preflight loads, as warnings naming file and
//!   field). Findings about a folder or a command come once per folder or command with the agents
//!   listed.

mod commands;
mod folders;
mod model;
mod notices;
mod schedules;
mod village;

use std::collections::BTreeSet;

use indexmap::IndexMap;

use crate::error::Remedy;
pub use crate::probe::approval::probe_key;
use crate::schedule::{ProcessZone, ZoneError};
use crate::tools::RunApproval;
use crate::village::mcp_config::McpConfig;
use crate::village::schedule::{ScheduleProbe, ScheduledTask};
use crate::village::{AgentSpec, Language, World};

pub use commands::{run_network_unconfined, run_unconfined};
pub use notices::notice_finding;

/// Which command the preflight is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadlessMode {
    /// `ask`: one request to the reception.
    Ask,
    /// `serve`: agents, schedules and the door until a signal.
    Serve,
}

/// How heavy a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The command refuses to run.
    Reject,
    /// It runs, but something will not work.
    Warn,
    /// Worth knowing.
    Info,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Level.
    pub level: Level,
    /// Stable code.
    pub code: &'static str,
    /// What is wrong (names agents, keys and variables; never secret values).
    pub message: String,
    /// How to fix it: with a remedy, the words that complete the edge's words for it (may be
    /// empty); without, the whole fix.
    pub fix: String,
    /// The person's action, which the edge words (the CLI as a command); not serialized: an
    /// edge words it into `fix` before showing the finding.
    #[serde(skip)]
    pub remedy: Option<Remedy>,
    /// The file the finding is about, shown relative to the data folder, where it is one
    /// file's (a read notice).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The JSON path of the field in that file, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// What the preflight may know about the host. Every fact is a plain value or a lookup, so the
/// preflight itself stays pure.
pub struct HostView<'a> {
    /// The command.
    pub mode: HeadlessMode,
    /// The agents that will start (for `ask`, the reception is already in).
    pub start: &'a BTreeSet<String>,
    /// Whether the chosen secret store holds a key (values are never seen).
    pub secret_present: &'a dyn Fn(&str) -> bool,
    /// Whether a probe is approved on this shelf.
    pub probe_approved: &'a dyn Fn(&ScheduleProbe) -> bool,
    /// Whether a program can be found (absolute path exists, or a name on PATH).
    pub command_found: &'a dyn Fn(&str) -> bool,
    /// Whether a folder exists.
    pub dir_exists: &'a dyn Fn(&str) -> bool,
    /// Whether a folder overlaps this village's data folder (is it, holds it, or lies in it).
    pub dir_holds_village: &'a dyn Fn(&str) -> bool,
    /// The shared `mcp.json` and each agent's (`(agent id or "", config)`).
    pub mcp: &'a [(String, McpConfig)],
    /// Each start agent's `run.json` allow lines.
    pub run_allow: &'a [(String, Vec<String>)],
    /// The start agents whose `run.json` says `"network": false`.
    pub run_network_denied: &'a [String],
    /// Enabled judges whose `judge.toml` is invalid: `(file, line, col, message)` of the
    /// first finding of each (`crate::judge::judge_states`).
    pub judge_invalid: &'a [(String, usize, usize, String)],
    /// `--bypass-plan-review`.
    pub bypass_plan_review: bool,
    /// `--run-approval`.
    pub run_approval: RunApproval,
    /// `--door-port` (serve).
    pub door_port: Option<u16>,
    /// The time zone the schedules will fire in (`TZ`, else the system's), resolved by
    /// [`crate::schedule::resolve_process_zone`]; an error when `TZ` names no zone.
    pub time_zone: Result<ProcessZone, ZoneError>,
    /// `bake.json`'s source time zone, in a bake copy.
    pub baked_time_zone: Option<String>,
    /// Language of the findings.
    pub language: Language,
}

/// One check: reads the input, adds its findings.
type Check = fn(&Input<'_>, &mut Findings);

/// The checks, with the codes each may give, in the order their findings are listed within a
/// level. Adding a check = one function and one row.
const CHECKS: &[(&[&str], Check)] = &[
    (&["PLAN_REVIEW_WAITS"], village::plan_review_waits),
    (&["SECRET_MISSING"], model::template_key_missing),
    (&["SECRET_MISSING"], model::mcp_secret_missing),
    (&["MODEL_TEMPLATE_MISSING"], model::template_missing),
    (
        &[
            "ENDPOINT_INSECURE_ALLOWED",
            "ENDPOINT_INVALID",
            "ENDPOINT_INSECURE",
        ],
        model::endpoints,
    ),
    (
        &["RECEPTION_UNSET", "RECEPTION_MISSING"],
        village::reception,
    ),
    (&["DOOR_TOKEN_MISSING"], village::door_token_missing),
    (&["WORK_DIR_MISSING"], folders::work_dir_missing),
    (
        &["WORK_DIR_CONTAINS_VILLAGE"],
        folders::work_dir_contains_village,
    ),
    (&["SCHEDULE_TARGET_OUTSIDE"], schedules::target_outside),
    (&["RUN_APPROVAL_REQUIRED"], commands::run_approval_required),
    (&["PROBE_UNAPPROVED"], schedules::probe_unapproved),
    (&["JEV_TOKEN_MISSING"], village::jev_token_missing),
    (&["JUDGE_INVALID"], village::judge_invalid),
    (&["RAG_SOURCE_MISSING"], folders::rag_source_missing),
    (&["MCP_COMMAND_NOT_FOUND"], commands::mcp_command_not_found),
    (&["RUN_COMMAND_NOT_FOUND"], commands::run_command_not_found),
    (&["RUN_UNCONFINED"], commands::run_unconfined_check),
    (
        &["RUN_NETWORK_UNCONFINED"],
        commands::run_network_unconfined_check,
    ),
    (&["TIMEZONE_MISMATCH"], schedules::timezone_mismatch),
    (
        &["RECEPTION_TARGETS_OUTSIDE"],
        village::reception_targets_outside,
    ),
    (&["DEMO_MODEL"], model::demo_model),
    (&["BUDGET_BELOW_ONE_CALL"], model::budget_below_one_call),
];

/// Runs every check.
pub fn headless_preflight(
    world: &World,
    schedules: &[ScheduledTask],
    view: &HostView<'_>,
) -> Vec<Finding> {
    let input = Input {
        world,
        schedules,
        view,
        started: world
            .agents
            .iter()
            .filter(|a| view.start.contains(a.id.as_str()))
            .collect(),
    };
    let mut out = Findings {
        language: view.language,
        list: Vec::new(),
    };
    for (codes, check) in CHECKS {
        let before = out.list.len();
        check(&input, &mut out);
        debug_assert!(
            out.list[before..].iter().all(|f| codes.contains(&f.code)),
            "a check gave a code its row does not name"
        );
    }
    let mut list = out.list;
    list.sort_by_key(|f| f.level); // stable: table order within a level
    list
}

/// What every check reads: the village, the schedules, the host's view and the start agents.
struct Input<'a> {
    world: &'a World,
    schedules: &'a [ScheduledTask],
    view: &'a HostView<'a>,
    started: Vec<&'a AgentSpec>,
}

impl Input<'_> {
    /// Whether the preflight is for `serve`.
    fn serve(&self) -> bool {
        self.view.mode == HeadlessMode::Serve
    }

    /// Whether the preflight is for `ask`.
    fn ask(&self) -> bool {
        self.view.mode == HeadlessMode::Ask
    }
}

/// The findings so far, and the language they are written in.
struct Findings {
    language: Language,
    list: Vec<Finding>,
}

impl Findings {
    /// Adds one finding, its message and fix in the village language.
    fn add(
        &mut self,
        level: Level,
        code: &'static str,
        ja_message: String,
        en_message: String,
        ja_fix: &str,
        en_fix: &str,
    ) {
        self.list.push(Finding {
            level,
            code,
            message: self.language.pick(ja_message, en_message),
            fix: self.language.pick(ja_fix, en_fix),
            file: None,
            field: None,
            remedy: None,
        });
    }

    /// Gives the finding added last the person's action (its `fix` then completes the words an
    /// edge has for it).
    fn with_remedy(&mut self, remedy: Remedy) {
        if let Some(last) = self.list.last_mut() {
            last.remedy = Some(remedy);
        }
    }
}

/// Pairs `(key, agent)` grouped by key, keys and agents in first-seen order, each agent once.
fn grouped<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> IndexMap<&'a str, Vec<&'a str>> {
    let mut groups: IndexMap<&str, Vec<&str>> = IndexMap::new();
    for (key, agent) in pairs {
        let agents = groups.entry(key).or_default();
        if !agents.contains(&agent) {
            agents.push(agent);
        }
    }
    groups
}

/// Whether the agent is offered the `run` tool.
fn has_run(agent: &AgentSpec) -> bool {
    agent
        .enabled_tools
        .as_ref()
        .is_some_and(|t| t.iter().any(|n| n == "run"))
}

/// `FUSEFORKS_SECRET_` + the key upper-cased, non-alphanumerics turned into `_`.
pub fn env_var_name(key: &str) -> String {
    let mut name = String::from("FUSEFORKS_SECRET_");
    name.extend(key.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        }
    }));
    name
}
