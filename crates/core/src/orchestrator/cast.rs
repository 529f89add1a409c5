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
use crate::CoreError;
use crate::events::AgentStatus;
use crate::village::role::RoleDefaults;
use crate::village::{AgentId, AgentSpec, World};

use super::servant_settings::ServantSettings;

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

/// What deleting a servant did beyond taking it out of `world.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServantDeleted {
    /// Where its folder went in the trash (`None`: it had none).
    pub trashed: Option<PathBuf>,
    /// It was the reception: the village now has none (`ask` and the door refuse until a
    /// servant is made the reception).
    pub was_reception: bool,
}

/// A refused change: its field and why, and what to give instead.
pub(super) fn refused(what: impl Into<String>, fix: impl Into<crate::error::Fix>) -> CoreError {
    CoreError::CastRefused {
        what: what.into(),
        fix: fix.into(),
    }
}

/// The rule of a servant's id ([`AgentId`]: it is also its folder's name).
pub(super) const ID_RULE: &str =
    "1 to 64 characters from A-Z a-z 0-9 _ - (no spaces, dots or slashes)";

/// A refused servant id, with its rule.
pub(super) fn bad_id(e: &crate::village::InvalidIdError) -> CoreError {
    refused(
        format!("id: {e}: an id is {ID_RULE}"),
        "pick an id of letters, digits, `_` and `-`, at most 64 characters (e.g. writer_2)",
    )
}

pub(super) fn servant<'a>(world: &'a mut World, id: &str) -> Result<&'a mut AgentSpec, CoreError> {
    world
        .agents
        .iter_mut()
        .find(|a| a.id.as_str() == id)
        .ok_or_else(|| CoreError::AgentNotFound(id.to_owned()))
}

pub(super) fn checked_name(name: &str) -> Result<String, CoreError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 60 || name.chars().any(char::is_control) {
        return Err(refused(
            "name: 1 to 60 characters, no control characters",
            "give a name of 1 to 60 characters on one line",
        ));
    }
    Ok(name.to_owned())
}

/// An id an agent or a judge holds (they share one namespace).
fn id_taken(world: &World, id: &AgentId) -> bool {
    world.agents.iter().any(|a| &a.id == id) || world.judges.iter().any(|j| &j.id == id)
}

/// The defaults of `role_id` (none: the plain defaults); a role that is missing, or that names
/// a template the village lacks, is refused.
fn role_defaults(world: &World, role_id: Option<&str>) -> Result<RoleDefaults, CoreError> {
    let defaults = match role_id {
        None => RoleDefaults::default(),
        Some(r) => match world.roles.iter().find(|x| x.id == r) {
            Some(role) => role.defaults.clone(),
            None => {
                return Err(refused(
                    format!("roleId: no role {r}"),
                    "use a role id of world.json `roles`, or leave the role out",
                ));
            }
        },
    };
    if let Some(t) = &defaults.model_template_id
        && !world.model_templates.iter().any(|m| &m.id == t)
    {
        return Err(refused(
            format!("roleId: its model template {t} is not in the village"),
            crate::error::Fix::remedy(
                crate::error::Remedy::AddTemplate {
                    id: Some(t.to_string()),
                },
                "or pick another role",
            ),
        ));
    }
    Ok(defaults)
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
        self.create_servant_with(id, name, role_id, &ServantSettings::default())
    }

    /// [`Self::create_servant`] with `settings` applied in the same edit (a refused setting
    /// writes nothing, the servant included).
    pub fn create_servant_with(
        &self,
        id: &str,
        name: &str,
        role_id: Option<&str>,
        settings: &ServantSettings,
    ) -> Result<(), CoreError> {
        let agent_id = AgentId::new(id).map_err(|e| bad_id(&e))?;
        let name = checked_name(name)?;
        if id_taken(&self.world(), &agent_id) {
            return Err(CoreError::IdTaken(id.to_owned()));
        }
        // A folder left by an earlier servant of that id would hand over its run.json rules,
        // mcp.json and memory: refused.
        if self.inner.store().agent_files(&agent_id)?.dir().exists() {
            return Err(refused(
                format!("id: a folder agents/{id} is left from before"),
                format!("move agents/{id} out of the village's folder, or pick another id"),
            ));
        }
        let mut construct = String::new();
        self.update_world(|w| {
            if id_taken(w, &agent_id) {
                return Err(CoreError::IdTaken(id.to_owned()));
            }
            let defaults = role_defaults(w, role_id)?;
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
                .ok_or_else(|| {
                    refused(
                        "modelTemplateId: the village has no model template",
                        crate::error::Fix::remedy(
                            crate::error::Remedy::AddTemplate { id: None },
                            "first",
                        ),
                    )
                })?;
            let mut spec = AgentSpec::new(agent_id.clone(), name, template);
            spec.order = w.agents.iter().map(|a| a.order + 1).max().unwrap_or(0);
            spec.role_id = role_id.map(str::to_owned);
            // A role's defaults are copied in once, at creation.
            spec.enabled_tools = defaults.enabled_tools.clone();
            spec.max_tool_iterations = defaults.max_tool_iterations;
            construct = defaults.construct;
            w.agents.push(spec);
            self.apply_settings(w, id, settings)
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

    /// Deletes a stopped servant: its folder to the trash first, then out of `world.json` with
    /// every reference to it (the reception cleared when it was the reception: the village then
    /// has none until a servant is made the reception), both under the one-at-a-time edit
    /// lock, the servant stopped at that moment.
    pub fn delete_servant(&self, id: &str) -> Result<ServantDeleted, CoreError> {
        let agent_id = AgentId::new(id).map_err(|_| CoreError::AgentNotFound(id.to_owned()))?;
        let mut trashed = None;
        let mut was_reception = false;
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
                was_reception = true;
            }
            if w.default_verifier.as_ref() == Some(&agent_id) {
                w.default_verifier = None;
            }
            w.topology_positions.remove(id);
            Ok(())
        })?;
        Ok(ServantDeleted {
            trashed,
            was_reception,
        })
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
            .map_err(|e| {
                refused(
                    format!("the agents folder: {e}"),
                    "check that the village's agents folder can be read",
                )
            })?
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
                refused(
                    format!("the folder of {agent_id} could not go to the trash: {e}"),
                    format!("move agents/{agent_id} out of the village's folder by hand, then remove it again"),
                )
            })
    }

    /// Draws (`connected`) or removes the edge `from` → `to` (`to` may then be asked by `from`).
    pub fn connect_servants(&self, from: &str, to: &str, connected: bool) -> Result<(), CoreError> {
        if from == to {
            return Err(refused(
                "an agent is not connected to itself",
                "connect two different servants (FROM -> TO)",
            ));
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

    /// Changes a servant's settings (its template, work folder, tools, tool rounds, group and
    /// switches; see [`ServantSettings`]).
    pub fn set_servant(&self, id: &str, settings: &ServantSettings) -> Result<(), CoreError> {
        self.update_world(|w| self.apply_settings(w, id, settings))
            .map(|_| ())
    }

    /// A work folder a person may give a servant: absolute, and apart from the village's own
    /// folder (neither inside it nor holding it, `/` included): there the servant's file tools
    /// could rewrite `world.json`, its own `run.json` approvals and the judges.
    pub(super) fn check_work_dir(&self, dir: &str) -> Result<(), CoreError> {
        let dir = std::path::Path::new(dir);
        if !dir.is_absolute() {
            return Err(refused(
                format!("workDir: {} is not an absolute path", dir.display()),
                "give an absolute path, e.g. /home/me/texts (C:\\Users\\me\\texts on Windows)",
            ));
        }
        let (dir, village) = (resolved(dir), resolved(self.inner.store().workspace()));
        if dir.starts_with(&village) || village.starts_with(&dir) {
            return Err(refused(
                format!(
                    "workDir: {} is {} the village's folder {}",
                    dir.display(),
                    if dir.starts_with(&village) {
                        "inside"
                    } else {
                        "above"
                    },
                    village.display()
                ),
                "pick a folder apart from the village's, so that the servant's file tools cannot rewrite the village",
            ));
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
