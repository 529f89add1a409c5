//! A person's edits of the village's cast (the GUI's servant and judge controls): create a
//! servant (optionally of a role), rename it, delete it (stopped first; its folder to the trash;
//! the edges to it, the reception and the default verifier that named it cleared), connect or
//! disconnect two servants (only a person draws an edge), set its work folder (absolute, apart
//! from the village's own folder), tools, tool rounds and group, and switch a judge on or off.
//! Each is one `update_world` (one at a time, validated by the world's rules, written
//! atomically); the caller audits it. What still names a servant outside `world.json`
//! (schedule tasks, judge routes) is told, never rewritten.

use std::path::PathBuf;

use super::Orchestrator;
use crate::error::CoreError;
use crate::events::AgentStatus;
use crate::village::role::RoleDefaults;
use crate::village::{AgentId, AgentSpec, World};

/// What names a servant outside `world.json`, and so stops working when it is deleted: the
/// schedule tasks sent to it (then skipped as `target_stopped`) and the judges whose rules
/// route to it (their `judge.toml` then fails its check, and the judge offers no tool).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServantReferences {
    /// The ids of the schedule tasks whose `to` is the servant, in file order.
    pub schedules: Vec<String>,
    /// The ids of the judges that route to the servant, in list order.
    pub judges: Vec<String>,
}

impl ServantReferences {
    /// Nothing outside `world.json` names the servant.
    pub fn is_empty(&self) -> bool {
        self.schedules.is_empty() && self.judges.is_empty()
    }
}

/// What `set_servant` changes (`None`: left as it is; `Some(None)`: cleared). In JSON a field
/// left out is left as it is, and a field given as `null` is cleared.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServantSettings {
    /// The work folder (an absolute path), or none.
    #[serde(default, deserialize_with = "given")]
    pub work_dir: Option<Option<String>>,
    /// The bundled tools offered, or the defaults.
    #[serde(default, deserialize_with = "given")]
    pub enabled_tools: Option<Option<Vec<String>>>,
    /// Tool rounds per turn (1–255), or the default.
    #[serde(default, deserialize_with = "given")]
    pub max_tool_iterations: Option<Option<u8>>,
    /// The group, or none.
    #[serde(default, deserialize_with = "given")]
    pub group_id: Option<Option<String>>,
}

/// A field that is present: `null` is `Some(None)` (clear it), a value `Some(Some(v))`.
fn given<'de, T, D>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(de).map(Some)
}

fn refused(text: impl Into<String>) -> CoreError {
    CoreError::CastRefused(text.into())
}

fn servant<'a>(world: &'a mut World, id: &str) -> Result<&'a mut AgentSpec, CoreError> {
    world
        .agents
        .iter_mut()
        .find(|a| a.id.as_str() == id)
        .ok_or_else(|| CoreError::AgentNotFound(id.to_owned()))
}

fn checked_name(name: &str) -> Result<String, CoreError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 60 || name.chars().any(char::is_control) {
        return Err(refused("name: 1 to 60 characters, no control characters"));
    }
    Ok(name.to_owned())
}

impl Orchestrator {
    /// A new servant `id` named `name`, of `role_id` when given: the role's defaults copied in
    /// (its Construct text, template, tools and tool rounds); else on the reception's template
    /// (else the first) with empty files.
    pub fn create_servant(
        &self,
        id: &str,
        name: &str,
        role_id: Option<&str>,
    ) -> Result<(), CoreError> {
        let agent_id = AgentId::new(id).map_err(|e| refused(format!("id: {e}")))?;
        let name = checked_name(name)?;
        // A folder left by an earlier servant of that id would hand over its run.json rules,
        // mcp.json and memory: refused.
        if self.inner.store().agent_files(&agent_id)?.dir().exists() {
            return Err(refused(format!(
                "id: a folder agents/{id} is left from before; move it away or pick another id"
            )));
        }
        let mut construct = String::new();
        self.update_world(|w| {
            if w.agents.iter().any(|a| a.id == agent_id)
                || w.judges.iter().any(|j| j.id == agent_id)
            {
                return Err(refused(format!("id: {id} is taken")));
            }
            let defaults = match role_id {
                None => RoleDefaults::default(),
                Some(r) => match w.roles.iter().find(|x| x.id == r) {
                    Some(role) => role.defaults.clone(),
                    None => return Err(refused(format!("roleId: no role {r}"))),
                },
            };
            if let Some(t) = &defaults.model_template_id
                && !w.model_templates.iter().any(|m| &m.id == t)
            {
                return Err(refused(format!(
                    "roleId: its model template {t} is not in the village"
                )));
            }
            let template = defaults
                .model_template_id
                .clone()
                .or_else(|| {
                    w.reception
                        .as_ref()
                        .and_then(|r| w.agent(r))
                        .map(|a| a.model_template_id.clone())
                })
                .or_else(|| w.model_templates.first().map(|t| t.id.clone()))
                .ok_or_else(|| refused("the village has no model template"))?;
            let mut spec = AgentSpec::new(agent_id.clone(), name, template);
            spec.order = w.agents.iter().map(|a| a.order + 1).max().unwrap_or(0);
            spec.role_id = role_id.map(str::to_owned);
            // A role's defaults are copied in once, at creation.
            spec.enabled_tools = defaults.enabled_tools.clone();
            spec.max_tool_iterations = defaults.max_tool_iterations;
            construct = defaults.construct;
            w.agents.push(spec);
            Ok(())
        })?;
        let files = self.inner.store().agent_files(&agent_id)?;
        files.write_construct(&construct)?;
        files.write_skill("")?;
        Ok(())
    }

    /// Renames a servant.
    pub fn rename_servant(&self, id: &str, name: &str) -> Result<(), CoreError> {
        let name = checked_name(name)?;
        self.update_world(|w| {
            servant(w, id)?.name = name;
            Ok(())
        })
        .map(|_| ())
    }

    /// Deletes a stopped servant: its folder to the trash first (where it went is returned;
    /// `None` when it had none), then out of `world.json` with every reference to it, both
    /// under the one-at-a-time edit lock, the servant stopped at that moment.
    pub fn delete_servant(&self, id: &str) -> Result<Option<PathBuf>, CoreError> {
        let agent_id = AgentId::new(id).map_err(|_| CoreError::AgentNotFound(id.to_owned()))?;
        let mut trashed = None;
        self.update_world(|w| {
            if !w.agents.iter().any(|a| a.id == agent_id) {
                return Err(CoreError::AgentNotFound(id.to_owned()));
            }
            if !matches!(self.status(id), AgentStatus::Idle | AgentStatus::Failed) {
                return Err(CoreError::StillRunning(id.to_owned()));
            }
            trashed = self.trash_folder(&agent_id)?;
            w.agents.retain(|a| a.id != agent_id);
            for a in &mut w.agents {
                a.connected_agents.retain(|c| *c != agent_id);
            }
            if w.reception.as_ref() == Some(&agent_id) {
                w.reception = None;
            }
            if w.default_verifier.as_ref() == Some(&agent_id) {
                w.default_verifier = None;
            }
            w.topology_positions.remove(id);
            Ok(())
        })?;
        Ok(trashed)
    }

    /// What names servant `id` outside `world.json`, whether or not it still exists.
    pub fn servant_references(&self, id: &str) -> ServantReferences {
        self.all_servant_references().remove(id).unwrap_or_default()
    }

    /// What names each servant outside `world.json`, by servant id (only those named; an id
    /// may be of a servant already gone). One read of `schedules.json` and of each judge file;
    /// an unreadable one names nobody here (`check` reports it).
    pub fn all_servant_references(&self) -> std::collections::BTreeMap<String, ServantReferences> {
        let store = self.inner.store();
        let mut out: std::collections::BTreeMap<String, ServantReferences> = Default::default();
        for task in store
            .load_schedules()
            .map(|l| l.value.0)
            .unwrap_or_default()
        {
            let refs = out.entry(task.to.as_str().to_owned()).or_default();
            refs.schedules.push(task.id);
        }
        for judge in &self.world().judges {
            // Parsed without the roster: a route to a servant already gone still names it.
            let Ok(file) = store.judge_file(&judge.id) else {
                continue;
            };
            let Ok(Some(text)) = crate::judge::read_bounded(file.path()) else {
                continue;
            };
            let Ok(rules) = crate::judge::parse_judge(&text) else {
                continue;
            };
            for target in rules.targets() {
                let refs = out.entry(target.to_owned()).or_default();
                refs.judges.push(judge.id.as_str().to_owned());
            }
        }
        out
    }

    /// Moves `agents/<id>` to the trash (taken by its parent's handle and its name).
    fn trash_folder(&self, agent_id: &AgentId) -> Result<Option<PathBuf>, CoreError> {
        let folder = self
            .inner
            .store()
            .agent_files(agent_id)?
            .dir()
            .to_path_buf();
        if !folder.exists() {
            return Ok(None);
        }
        let parent = folder
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        let dir: std::os::fd::OwnedFd = std::fs::File::open(&parent)
            .map_err(|e| refused(format!("the agents folder: {e}")))?
            .into();
        let name = std::ffi::OsString::from(agent_id.as_str());
        let source = crate::tools::TrashSource {
            dir: &dir,
            name: &name,
            shown: &folder,
        };
        crate::tools::move_to_trash(&source, self.inner.trash())
            .map(Some)
            .map_err(|e| {
                refused(format!(
                    "the folder of {agent_id} could not go to the trash: {e}"
                ))
            })
    }

    /// Draws (`connected`) or removes the edge `from` → `to` (`to` may then be asked by `from`).
    pub fn connect_servants(&self, from: &str, to: &str, connected: bool) -> Result<(), CoreError> {
        if from == to {
            return Err(refused("an agent is not connected to itself"));
        }
        self.update_world(|w| {
            let target = w
                .agents
                .iter()
                .find(|a| a.id.as_str() == to)
                .map(|a| a.id.clone())
                .or_else(|| {
                    w.judges
                        .iter()
                        .find(|j| j.id.as_str() == to)
                        .map(|j| j.id.clone())
                })
                .ok_or_else(|| CoreError::AgentNotFound(to.to_owned()))?;
            let edges = &mut servant(w, from)?.connected_agents;
            edges.retain(|c| *c != target);
            if connected {
                edges.push(target);
            }
            Ok(())
        })
        .map(|_| ())
    }

    /// Changes a servant's work folder, tools, tool rounds or group.
    pub fn set_servant(&self, id: &str, settings: &ServantSettings) -> Result<(), CoreError> {
        self.update_world(|w| {
            if let Some(Some(g)) = &settings.group_id
                && !w.groups.iter().any(|x| &x.id == g)
            {
                return Err(refused(format!("groupId: no group {g}")));
            }
            if let Some(Some(tools)) = &settings.enabled_tools
                && let Some(t) = tools
                    .iter()
                    .find(|t| !crate::tools::BUNDLED_TOOL_NAMES.contains(&t.as_str()))
            {
                return Err(refused(format!("enabledTools: no bundled tool {t}")));
            }
            if let Some(Some(dir)) = &settings.work_dir {
                self.check_work_dir(dir)?;
            }
            if settings.max_tool_iterations == Some(Some(0)) {
                return Err(refused("maxToolIterations: 1 to 255"));
            }
            let a = servant(w, id)?;
            if let Some(v) = &settings.work_dir {
                a.work_dir = v.clone();
            }
            if let Some(v) = &settings.enabled_tools {
                a.enabled_tools = v.clone();
            }
            if let Some(v) = settings.max_tool_iterations {
                a.max_tool_iterations = v;
            }
            if let Some(v) = &settings.group_id {
                a.group_id = v.clone();
            }
            Ok(())
        })
        .map(|_| ())
    }

    /// A work folder a person may give a servant: absolute, and apart from the village's own
    /// folder (neither inside it nor holding it, `/` included): there the servant's file tools
    /// could rewrite `world.json`, its own `run.json` approvals and the judges.
    fn check_work_dir(&self, dir: &str) -> Result<(), CoreError> {
        let dir = std::path::Path::new(dir);
        if !dir.is_absolute() {
            return Err(refused("workDir: an absolute path"));
        }
        let (dir, village) = (resolved(dir), resolved(self.inner.store().workspace()));
        if dir.starts_with(&village) || village.starts_with(&dir) {
            return Err(refused(format!(
                "workDir: {} is {} the village's folder {}; pick a folder apart from it, so that the servant's file tools cannot rewrite the village",
                dir.display(),
                if dir.starts_with(&village) {
                    "inside"
                } else {
                    "above"
                },
                village.display()
            )));
        }
        Ok(())
    }

    /// Switches a judge on or off.
    pub fn set_judge_enabled(&self, id: &str, enabled: bool) -> Result<(), CoreError> {
        self.update_world(|w| {
            let judge = w
                .judges
                .iter_mut()
                .find(|j| j.id.as_str() == id)
                .ok_or_else(|| CoreError::AgentNotFound(id.to_owned()))?;
            judge.enabled = enabled;
            Ok(())
        })
        .map(|_| ())
    }
}

/// Where `path` leads: its longest existing ancestor with its links resolved, and the rest of
/// it by its words (a folder not made yet, under a link into the village, is still inside it).
fn resolved(path: &std::path::Path) -> PathBuf {
    let path = lexical(path);
    let mut base = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = base.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                base = parent;
            }
            _ => return path,
        }
    }
}

/// `path` with `.` and `..` taken out by its words alone.
fn lexical(path: &std::path::Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
