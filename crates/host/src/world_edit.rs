//! The one path of a person's edits of the cast and of the model templates, shared by the GUI
//! (its `cast` command) and the CLI (`servants`, `templates`): the core's edit (one
//! `update_world`: checked, written atomically, then in effect), then its audit line
//! (`file_save world.json`, marked with the surface). [`open_for_edit`] opens a village that no
//! process runs, under its lock, for the CLI's edits (a village open in the GUI or `serve` is
//! refused with `VILLAGE_LOCKED`, as a second GUI would be).

use std::sync::Arc;

use fuseforks_core::CoreError;
use fuseforks_core::llm::LlmClient;
use fuseforks_core::log::{LogSink, VillageLog};
use fuseforks_core::orchestrator::{
    Orchestrator, OrchestratorConfig, ServantReferences, ServantSettings, TemplateSettings,
};
use fuseforks_core::safety::{AuditEvent, AuditSetup, Channel};
use fuseforks_core::tools::TrashTarget;
use fuseforks_core::village::ModelTemplate;

use crate::lock::VillageLock;
use crate::{HostError, HostPaths, SecretSource, audit_key};

/// One edit of the cast (on the GUI's wire the variant is the object's `op`: the GUI's
/// `decode.rs` moves it out, so that a refused field is named by its path).
#[derive(Debug, serde::Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum CastEdit {
    /// A new servant (of a role when given), its settings applied in the same edit.
    Create {
        /// Its id.
        agent_id: String,
        /// Its name.
        name: String,
        /// Its role.
        role_id: Option<String>,
        /// Settings given at once (template, work folder, tools, …).
        #[serde(default)]
        settings: ServantSettings,
    },
    /// A new name.
    Rename {
        /// The servant.
        agent_id: String,
        /// Its new name.
        name: String,
    },
    /// A servant deleted (stopped first; its folder to the trash).
    Delete {
        /// The servant.
        agent_id: String,
    },
    /// The edge `from` → `to` drawn or removed.
    Connect {
        /// Who may ask.
        from: String,
        /// Whom.
        to: String,
        /// Drawn (`true`) or removed.
        connected: bool,
    },
    /// A servant's settings.
    Settings {
        /// The servant.
        agent_id: String,
        /// What changes.
        settings: ServantSettings,
    },
    /// A judge switched on or off.
    JudgeEnabled {
        /// The judge.
        judge_id: String,
        /// On or off.
        enabled: bool,
    },
}

/// One edit of the model templates (keys are never part of it: they go to the secret store).
#[derive(Debug)]
pub enum TemplateEdit {
    /// A new template.
    Add(Box<ModelTemplate>),
    /// A template's settings.
    Set {
        /// The template.
        id: String,
        /// What changes.
        settings: TemplateSettings,
    },
    /// A template no servant or judge uses, removed.
    Remove {
        /// The template.
        id: String,
    },
}

/// What an edit did, beyond "written".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditDone {
    /// A servant was created.
    Created {
        /// Its id.
        agent_id: String,
    },
    /// A servant was deleted.
    Deleted {
        /// Its folder went to the trash (it had one).
        trashed: bool,
        /// What still names it outside `world.json` (schedules, judge routes).
        named_by: ServantReferences,
        /// It was the reception: the village has none now (the caller says so).
        was_reception: bool,
    },
    /// Anything else: written and in effect.
    Changed,
}

/// Applies one cast edit, then writes its audit line marked with `channel`.
pub async fn apply_cast(
    orch: &Orchestrator,
    edit: CastEdit,
    channel: Channel,
) -> Result<EditDone, CoreError> {
    let done = match edit {
        CastEdit::Create {
            agent_id,
            name,
            role_id,
            settings,
        } => {
            orch.create_servant_with(&agent_id, &name, role_id.as_deref(), &settings)?;
            EditDone::Created { agent_id }
        }
        CastEdit::Rename { agent_id, name } => {
            orch.rename_servant(&agent_id, &name)?;
            EditDone::Changed
        }
        CastEdit::Delete { agent_id } => {
            let deleted = orch.delete_servant(&agent_id)?;
            EditDone::Deleted {
                trashed: deleted.trashed.is_some(),
                named_by: orch.servant_references(&agent_id),
                was_reception: deleted.was_reception,
            }
        }
        CastEdit::Connect {
            from,
            to,
            connected,
        } => {
            orch.connect_servants(&from, &to, connected)?;
            EditDone::Changed
        }
        CastEdit::Settings { agent_id, settings } => {
            orch.set_servant(&agent_id, &settings)?;
            EditDone::Changed
        }
        CastEdit::JudgeEnabled { judge_id, enabled } => {
            orch.set_judge_enabled(&judge_id, enabled)?;
            EditDone::Changed
        }
    };
    audit_saved(orch, "world.json", channel).await;
    Ok(done)
}

/// Applies one template edit, then writes its audit line marked with `channel`.
pub async fn apply_template(
    orch: &Orchestrator,
    edit: TemplateEdit,
    channel: Channel,
) -> Result<EditDone, CoreError> {
    match edit {
        TemplateEdit::Add(template) => orch.add_template(*template)?,
        TemplateEdit::Set { id, settings } => orch.set_template(&id, &settings)?,
        TemplateEdit::Remove { id } => orch.remove_template(&id)?,
    }
    audit_saved(orch, "world.json", channel).await;
    Ok(EditDone::Changed)
}

/// The audit line of a village file a surface saved (`file_save`, the surface as outcome).
pub async fn audit_saved(orch: &Orchestrator, file: &str, channel: Channel) {
    let event = AuditEvent::new("-", "-", "file_save", file, file.as_bytes())
        .with_outcome(channel.as_str())
        .approved_by(fuseforks_core::safety::ApprovedBy::Person(channel));
    orch.audit(event).await;
}

/// A village opened for one edit from the command line: its orchestrator (nobody started),
/// its lock held until dropped.
pub struct EditHost {
    /// The orchestrator.
    pub orchestrator: Orchestrator,
    /// The village log (the orchestrator's own).
    pub log: Arc<dyn LogSink>,
    _lock: VillageLock,
}

/// Opens the village at `paths` for an edit: present, then its lock (`VILLAGE_LOCKED` while
/// the GUI, `serve` or another command holds it), the village log, the audit key from
/// `secrets` (when there is none the lines go unmarked, said on the log, as at a boot), and
/// the orchestrator. No key, model or tool is used.
pub fn open_for_edit(
    paths: &HostPaths,
    secrets: SecretSource,
    log_echo: Option<Arc<dyn LogSink>>,
) -> Result<EditHost, HostError> {
    if let Some(missing) = paths.village_missing() {
        return Err(missing.into());
    }
    let workspace = paths.workspace();
    let lock = VillageLock::acquire(&workspace)?;
    let path = workspace.join("fuseforks.log");
    let mut log = VillageLog::open(&path).map_err(|source| HostError::Log { path, source })?;
    if let Some(echo) = log_echo {
        log = log.with_echo(echo);
    }
    let log: Arc<dyn LogSink> = Arc::new(log);
    let key = crate::secrets::secret_store(secrets)
        .map_err(audit_key::Unkeyed::Store)
        .and_then(|s| audit_key::writer_key(secrets, &*s, paths.data_dir()));
    let key = key
        .map_err(|why| log.line(&audit_key::unkeyed_line(&why)))
        .ok();
    let orchestrator = Orchestrator::bootstrap(OrchestratorConfig {
        workspace: workspace.clone(),
        secrets: Arc::new(|_: &str| None),
        log: Arc::clone(&log),
        llm: LlmClient::new().map_err(HostError::LlmClient)?,
        os_locale: None,
        trash: TrashTarget::Os {
            fallback: workspace.join(".trash"),
        },
        mcp_child_output: None,
        tracer: None,
        audit: AuditSetup {
            key,
            shelf: Some(paths.data_dir().to_path_buf()),
        },
    })
    .map_err(|e| match e {
        CoreError::Sessions(s @ fuseforks_core::sessions::SessionError::Locked(_)) => {
            HostError::SessionStoreLocked(s)
        }
        CoreError::Village(v) => HostError::Village(v),
        other => HostError::Core(other),
    })?;
    Ok(EditHost {
        orchestrator,
        log,
        _lock: lock,
    })
}
