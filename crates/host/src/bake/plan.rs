//! The first of `bake`'s two stages: read the source, rewrite the three path fields, check the
//! headers, merge the mixed files, and list what to write and what to remove — all before a
//! single byte is written, so that every refusal (2, 3, 5, 10, 11) leaves the disk as it was.

use std::path::{Path, PathBuf};

use fuseforks_core::probe::{ApprovalState, approval_state};
use fuseforks_core::village::{
    AgentId, BakeRecord, CommandPolicy, JevSettings, McpConfig, PricingSource, ScheduleProbe,
    Schedules, World,
};

use super::error::BakeError;
use super::map::{Map, Rewrite, rewrite};
use super::source::{plain_file, read_bytes};
use super::table::{self, Rule, Scope};
use super::{Warning, merge, scan};
use crate::HostPaths;

/// What one planned file holds; written through the core's stores (JSON models) or its atomic
/// writer (bytes).
#[derive(Debug, Clone)]
pub(crate) enum Content {
    Bytes(Vec<u8>),
    World(Box<World>),
    SharedMcp(McpConfig),
    AgentMcp(AgentId, McpConfig),
    Schedules(Schedules),
    Run(AgentId, CommandPolicy),
    Jev(JevSettings),
    Pricing(PricingSource),
    /// The re-keyed probes of the village id, approved one by one through the core's writer.
    Approvals(String, Vec<ScheduleProbe>),
    Record(BakeRecord),
}

/// One file to write, relative to the copy's `data_dir`.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub rel: PathBuf,
    pub content: Content,
}

/// Everything a bake will do.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub writes: Vec<Planned>,
    pub removes: Vec<PathBuf>,
    pub warnings: Vec<Warning>,
    pub rewritten_fields: usize,
    pub approvals_carried: usize,
    /// Credential-like plaintext headers found (`file: server / header`).
    plaintext: Vec<String>,
}

/// The two folders and the context, for planning one file.
struct Env<'a> {
    src: &'a HostPaths,
    out: &'a HostPaths,
    ctx: &'a Context<'a>,
    source: &'a Source,
}

/// What the plan needs besides the two folders.
pub(crate) struct Context<'a> {
    pub maps: &'a [Map],
    pub update: bool,
    pub allow_plaintext_headers: bool,
    pub record: BakeRecord,
}

/// The source files, read and rewritten.
struct Source {
    world: World,
    schedules: Schedules,
    schedules_exist: bool,
    village_id: Option<String>,
    carried: Vec<ScheduleProbe>,
}

/// Plans a bake of `src` into `out`.
pub(crate) fn plan(src: &HostPaths, out: &HostPaths, ctx: &Context<'_>) -> Result<Plan, BakeError> {
    let mut plan = Plan::default();
    let source = read_source(src, ctx.maps, &mut plan)?;
    loopback_endpoints(&source.world, &mut plan);
    let env = Env {
        src,
        out,
        ctx,
        source: &source,
    };
    for row in table::copied() {
        for (rel, id) in expand(row.scope, row.name, &source.world) {
            plan_file(&env, row.rule, &rel, id, &mut plan)?;
        }
    }
    let plaintext = std::mem::take(&mut plan.plaintext);
    if !plaintext.is_empty() {
        if !ctx.allow_plaintext_headers {
            return Err(BakeError::PlaintextHeaders(plaintext));
        }
        for place in plaintext {
            plan.warnings.push(Warning::new(
                "PLAINTEXT_HEADER_COPIED",
                format!("{place}: a credential-like header was copied in plaintext (--allow-plaintext-headers)"),
            ));
        }
    }
    plan.writes.push(Planned {
        rel: "bake.json".into(),
        content: Content::Record(ctx.record.clone()),
    });
    Ok(plan)
}

/// Reads `world.json`, `schedules.json`, `village_id` and the approvals; rewrites the path
/// fields; stops with every unmapped field named.
fn read_source(src: &HostPaths, maps: &[Map], plan: &mut Plan) -> Result<Source, BakeError> {
    let village = src.village();
    plain_file(&village.path("world.json"))?;
    let mut world = village.load_world().map_err(BakeError::Source)?.value;
    let schedules_exist = plain_file(&village.path("schedules.json"))?;
    let mut schedules = village.load_schedules().map_err(BakeError::Source)?.value;
    plain_file(&village.path("village_id"))?;
    let village_id = village.read_village_id().map_err(BakeError::Source)?;
    let shelf = src.shelf();
    plain_file(&shelf.path("probe_approvals.json"))?;
    shelf.load_probe_approvals().map_err(BakeError::Source)?;
    let mut unmapped = Vec::new();
    let mut field = |name: String, value: &mut String, plan: &mut Plan| match rewrite(maps, value) {
        Rewrite::Relative => {}
        Rewrite::Mapped(new) => {
            plan.rewritten_fields += 1;
            *value = new;
        }
        Rewrite::Unmapped => unmapped.push((name, value.clone())),
    };
    for agent in &mut world.agents {
        let id = agent.id.as_str().to_owned();
        if let Some(dir) = agent.work_dir.as_mut().filter(|d| !d.is_empty()) {
            field(format!("world.json agents[{id}].workDir"), dir, plan);
        }
        for (i, rag) in agent.rag_sources.iter_mut().enumerate() {
            field(
                format!("world.json agents[{id}].ragSources[{i}]"),
                rag,
                plan,
            );
        }
    }
    let mut carried = Vec::new();
    for task in &mut schedules.0 {
        let probes = [
            ("probe", task.probe.as_mut()),
            ("acceptance", task.acceptance.as_mut().map(|a| &mut a.probe)),
        ];
        for (kind, probe) in probes {
            let Some(probe) = probe else { continue };
            let before = probe.clone();
            if let Some(cwd) = probe.cwd.as_mut().filter(|c| !c.is_empty()) {
                field(
                    format!("schedules.json [{}].{kind}.cwd", task.id),
                    cwd,
                    plan,
                );
            }
            let approved = village_id
                .as_deref()
                .is_some_and(|vid| approval_state(&shelf, &before, vid) == ApprovalState::Approved);
            if approved {
                carried.push(probe.clone());
            }
        }
    }
    if !unmapped.is_empty() {
        return Err(BakeError::Unmapped(unmapped));
    }
    plan.approvals_carried = carried.len();
    Ok(Source {
        world,
        schedules,
        schedules_exist,
        village_id,
        carried,
    })
}

/// The relative paths (from `data_dir`) a row names, with the agent of per-agent rows.
fn expand(scope: Scope, name: &str, world: &World) -> Vec<(PathBuf, Option<AgentId>)> {
    let ws = Path::new("workspace");
    match scope {
        Scope::Workspace => vec![(ws.join(name), None)],
        Scope::Shelf => vec![(PathBuf::from(name), None)],
        Scope::Agent => world
            .agents
            .iter()
            .filter(|a| a.id.is_safe())
            .map(|a| {
                (
                    ws.join("agents").join(a.id.as_str()).join(name),
                    Some(a.id.clone()),
                )
            })
            .collect(),
        Scope::Judge => world
            .judges
            .iter()
            .filter(|j| j.id.is_safe())
            .map(|j| (ws.join("judges").join(j.id.as_str()).join(name), None))
            .collect(),
    }
}

/// Plans one file of the table.
fn plan_file(
    env: &Env<'_>,
    rule: Rule,
    rel: &Path,
    agent: Option<AgentId>,
    plan: &mut Plan,
) -> Result<(), BakeError> {
    let from = env.src.data_dir().join(rel);
    let to = env.out.data_dir().join(rel);
    let label = rel
        .strip_prefix("workspace")
        .unwrap_or(rel)
        .display()
        .to_string();
    let in_copy = env.ctx.update && to.exists();
    let content = match rule {
        Rule::Bytes | Rule::SeedOnce => {
            let Some(bytes) = read_bytes(&from)? else {
                if in_copy && rule == Rule::Bytes {
                    plan.removes.push(rel.to_owned());
                }
                return Ok(());
            };
            if rule == Rule::SeedOnce && in_copy {
                return Ok(());
            }
            if label.ends_with(".md") && scan::has_windows_path(&String::from_utf8_lossy(&bytes)) {
                plan.warnings.push(free_text(&label));
            }
            Some(Content::Bytes(bytes))
        }
        Rule::World => Some(Content::World(Box::new(env.source.world.clone()))),
        Rule::Mcp => mcp(env, &from, &label, agent, plan)?,
        Rule::Schedules => {
            if !env.source.schedules_exist && !in_copy {
                return Ok(());
            }
            let copy = if in_copy {
                Some(copy_state(env.out.village().load_schedules(), &to)?)
            } else {
                None
            };
            schedule_free_text(&env.source.schedules, plan);
            let merged = merge::schedules(&env.source.schedules, copy.as_ref(), &mut plan.warnings);
            Some(Content::Schedules(merged))
        }
        Rule::RunPolicy => run_policy(env, &from, &to, &label, agent, in_copy, plan)?,
        Rule::Approvals => match (&env.source.village_id, env.source.carried.is_empty()) {
            (Some(vid), false) => Some(Content::Approvals(vid.clone(), env.source.carried.clone())),
            _ => None,
        },
        Rule::ShelfJson => {
            if plain_file(&from)? {
                let shelf = env.src.shelf();
                Some(if label == "jev.json" {
                    Content::Jev(shelf.load_jev().map_err(BakeError::Source)?.value)
                } else {
                    Content::Pricing(
                        shelf
                            .load_pricing_source()
                            .map_err(BakeError::Source)?
                            .value,
                    )
                })
            } else {
                None
            }
        }
        Rule::Record | Rule::Never => return Ok(()),
    };
    match content {
        Some(content) => plan.writes.push(Planned {
            rel: rel.to_owned(),
            content,
        }),
        // Mirrored: a design or shelf file the source no longer has leaves the copy too.
        None if in_copy => plan.removes.push(rel.to_owned()),
        None => {}
    }
    Ok(())
}

/// An `mcp.json` (shared or an agent's): read through the core, headers checked.
fn mcp(
    env: &Env<'_>,
    from: &Path,
    label: &str,
    agent: Option<AgentId>,
    plan: &mut Plan,
) -> Result<Option<Content>, BakeError> {
    if !plain_file(from)? {
        return Ok(None);
    }
    let village = env.src.village();
    let config = match &agent {
        None => village.load_shared_mcp(),
        Some(id) => village.agent_files(id).and_then(|f| f.load_mcp()),
    }
    .map_err(BakeError::Source)?
    .value;
    plan.plaintext
        .extend(scan::plaintext_headers(label, &config));
    for place in scan::mcp_free_text(label, &config) {
        plan.warnings.push(free_text(&place));
    }
    Ok(Some(match agent {
        None => Content::SharedMcp(config),
        Some(id) => Content::AgentMcp(id, config),
    }))
}

/// An agent's `run.json`: the source's rules merged with the copy's pending lines.
fn run_policy(
    env: &Env<'_>,
    from: &Path,
    to: &Path,
    label: &str,
    agent: Option<AgentId>,
    in_copy: bool,
    plan: &mut Plan,
) -> Result<Option<Content>, BakeError> {
    let Some(id) = agent else { return Ok(None) };
    if !plain_file(from)? && !in_copy {
        return Ok(None);
    }
    let files = env
        .src
        .village()
        .agent_files(&id)
        .map_err(BakeError::Source)?;
    let policy = files.load_run_policy().map_err(BakeError::Source)?.value;
    let copy = if in_copy {
        let files = env
            .out
            .village()
            .agent_files(&id)
            .map_err(BakeError::Source)?;
        Some(copy_state(files.load_run_policy(), to)?)
    } else {
        None
    };
    if policy
        .allow
        .iter()
        .chain(&policy.deny)
        .any(|l| scan::has_windows_path(l))
    {
        plan.warnings
            .push(free_text(&format!("{label} allow/deny")));
    }
    let merged = merge::run_policy(id.as_str(), &policy, copy.as_ref(), &mut plan.warnings);
    Ok(Some(Content::Run(id, merged)))
}

/// A file of the copy that must read for a merge; one that does not is a state mismatch (11),
/// never written over.
fn copy_state<T>(
    loaded: Result<fuseforks_core::village::Loaded<T>, fuseforks_core::village::VillageError>,
    file: &Path,
) -> Result<T, BakeError> {
    loaded.map(|l| l.value).map_err(|e| BakeError::OutState {
        code: "BAKE_OUT_UNREADABLE",
        message: format!(
            "{}: the copy's file does not read ({e}); its container state cannot be merged",
            file.display()
        ),
        fix: "repair or remove that file in the copy, then run bake --update again".into(),
    })
}

fn schedule_free_text(schedules: &Schedules, plan: &mut Plan) {
    for task in &schedules.0 {
        let mut texts = vec![task.message.as_str()];
        for probe in [
            task.probe.as_ref(),
            task.acceptance.as_ref().map(|a| &a.probe),
        ]
        .into_iter()
        .flatten()
        {
            texts.push(&probe.command);
            texts.extend(probe.args.iter().map(String::as_str));
        }
        if texts.iter().any(|t| scan::has_windows_path(t)) {
            plan.warnings.push(free_text(&format!(
                "schedules.json [{}] message/probe command",
                task.id
            )));
        }
    }
}

/// A model template on this machine's loopback is copied as it is, but inside a container the
/// address is the container's own: said once per template.
fn loopback_endpoints(world: &World, plan: &mut Plan) {
    // The demo model runs inside the same process, wherever that is: its loopback is right.
    let models = world
        .model_templates
        .iter()
        .filter(|t| t.provider() != fuseforks_core::village::Provider::Demo);
    for t in models {
        if let Some(origin) = fuseforks_core::village::loopback_origin(&t.base_url) {
            plan.warnings.push(Warning::new(
                "BAKE_LOOPBACK_ENDPOINT",
                format!(
                    "world.json modelTemplates[{}].baseUrl {origin}: a loopback address; inside a container it is the container itself, not this machine (change the copy's baseUrl to an address the container can reach, e.g. http://host.docker.internal:PORT/v1 or a compose service; plain http to another host also needs \"allowInsecureHttp\": true on the template)",
                    t.id
                ),
            ));
        }
    }
}

fn free_text(place: &str) -> Warning {
    Warning::new(
        "FREE_TEXT_WINDOWS_PATH",
        format!("{place}: free text holds a Windows path; bake does not rewrite free text"),
    )
}
