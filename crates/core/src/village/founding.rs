//! Founding a new village: a template for the chosen provider, a reception agent with its
//! construct and skill, an ordinance and a village id — all or nothing.
//!
//! When the workspace folder does not exist yet, everything is written into a staging folder
//! beside it and renamed into place in one step. When it exists (without `world.json`), files
//! already there are kept, and `world.json` is created last, create-only: a village exists only
//! once that file does.

use std::fs;
use std::path::{Path, PathBuf};

use super::agent::AgentSpec;
use super::error::VillageError;
use super::files::names as agent_names;
use super::founding_text as text;
use super::ids::{AgentId, TemplateId};
use super::language::{Language, LanguageTag};
use super::presets::ProviderPreset;
use super::store::{VillageStore, names, write_text};
use super::template::{Credential, ModelTemplate};
use super::world::{NEW_VILLAGE_TOKEN_BUDGET, World};

/// The id of the reception agent in a new village.
pub(crate) const RECEPTION_ID: &str = "reception";

/// What to found.
#[derive(Debug, Clone, Copy)]
pub struct FoundingPlan {
    /// Language of the model-facing text.
    pub language: Language,
    /// The provider of the first template.
    pub preset: &'static ProviderPreset,
}

/// What founding did.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundingReport {
    /// The village folder.
    pub workspace: PathBuf,
    /// The village id.
    pub village_id: String,
    /// The template written.
    pub template_id: TemplateId,
    /// Whether that template needs a key in the secret store.
    pub credential: Credential,
    /// The reception agent.
    pub reception: AgentId,
    /// Files written, relative to the workspace.
    pub created: Vec<PathBuf>,
    /// Files that were already there and were kept, relative to the workspace.
    pub kept: Vec<PathBuf>,
}

/// Founds a village in `store`'s workspace, its first template from the plan's preset.
/// Refuses with [`VillageError::AlreadyExists`] (touching nothing) when `world.json` exists.
pub fn found_village(
    store: &VillageStore,
    plan: &FoundingPlan,
) -> Result<FoundingReport, VillageError> {
    let preset = plan.preset;
    let template_id =
        TemplateId::new(preset.template_id).map_err(|e| invalid_constant(store, &e.to_string()))?;
    let mut template = ModelTemplate::new(template_id, preset.name, preset.base_url, preset.model);
    template.provider = Some(preset.provider);
    template.credential = preset.credential;
    found_village_with(store, plan.language, &template)
}

/// What a founding writes: the language of the text and the first template.
#[derive(Clone, Copy)]
struct Seed<'a> {
    language: Language,
    template: &'a ModelTemplate,
}

/// Founds a village whose first template is `template` (`init --base-url/--model`; the caller
/// has checked its endpoint). Otherwise as [`found_village`].
pub fn found_village_with(
    store: &VillageStore,
    language: Language,
    template: &ModelTemplate,
) -> Result<FoundingReport, VillageError> {
    let plan = &Seed { language, template };
    let world_file = store.path(names::WORLD);
    if world_file.exists() {
        return Err(VillageError::AlreadyExists {
            file: world_file,
            data_dir_is_workspace: false,
        });
    }
    let workspace = store.workspace();
    // `--data-dir` is itself a village's workspace: founding would nest a second village.
    if let Some(given) = workspace.parent().map(|d| d.join(names::WORLD))
        && given.is_file()
    {
        return Err(VillageError::AlreadyExists {
            file: given,
            data_dir_is_workspace: true,
        });
    }
    if workspace.exists() {
        return populate(store, plan);
    }
    found_by_staging(workspace, plan)
}

fn found_by_staging(workspace: &Path, plan: &Seed<'_>) -> Result<FoundingReport, VillageError> {
    let parent = match workspace.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(|e| VillageError::write_failed(&parent, e))?;
    let name = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let staging = parent.join(format!(
        ".{name}.founding-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let result = populate(&VillageStore::new(&staging), plan).and_then(|mut report| {
        fs::rename(&staging, workspace).map_err(|e| {
            if workspace.join(names::WORLD).exists() {
                VillageError::AlreadyExists {
                    file: workspace.join(names::WORLD),
                    data_dir_is_workspace: false,
                }
            } else {
                VillageError::write_failed(workspace, e)
            }
        })?;
        report.workspace = workspace.to_path_buf();
        Ok(report)
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

fn populate(store: &VillageStore, plan: &Seed<'_>) -> Result<FoundingReport, VillageError> {
    let language = plan.language;
    let reception =
        AgentId::new(RECEPTION_ID).map_err(|e| invalid_constant(store, &e.to_string()))?;
    let template_id = plan.template.id.clone();

    let mut report = FoundingReport {
        workspace: store.workspace().to_path_buf(),
        village_id: String::new(),
        template_id: template_id.clone(),
        credential: plan.template.credential,
        reception: reception.clone(),
        created: Vec::new(),
        kept: Vec::new(),
    };

    let had_id = store.read_village_id()?.is_some();
    report.village_id = store.village_id()?;
    note(&mut report, PathBuf::from(names::VILLAGE_ID), had_id);

    let agent = store.agent_files(&reception)?;
    let agent_dir = PathBuf::from(names::AGENTS_DIR).join(RECEPTION_ID);
    let texts = [
        (
            store.path(names::ORDINANCE),
            PathBuf::from(names::ORDINANCE),
            text::ordinance(language),
        ),
        (
            agent.path(agent_names::CONSTRUCT),
            agent_dir.join(agent_names::CONSTRUCT),
            text::reception_construct(language),
        ),
        (
            agent.path(agent_names::SKILL),
            agent_dir.join(agent_names::SKILL),
            text::reception_skill(language),
        ),
    ];
    for (file, relative, body) in texts {
        let existed = file.exists();
        if !existed {
            write_text(&file, body, store.write_mode())?;
        }
        note(&mut report, relative, existed);
    }

    let mut agent_spec = AgentSpec::new(
        reception.clone(),
        text::reception_name(language),
        template_id,
    );
    agent_spec.order = 0;
    let world = World {
        agents: vec![agent_spec],
        model_templates: vec![plan.template.clone()],
        token_budget: Some(NEW_VILLAGE_TOKEN_BUDGET),
        language: Some(LanguageTag::of(language)),
        reception: Some(reception),
        ..World::default()
    };
    store.create_world(&world)?;
    note(&mut report, PathBuf::from(names::WORLD), false);
    Ok(report)
}

fn note(report: &mut FoundingReport, relative: PathBuf, existed: bool) {
    if existed {
        report.kept.push(relative);
    } else {
        report.created.push(relative);
    }
}

fn invalid_constant(store: &VillageStore, reason: &str) -> VillageError {
    VillageError::write_failed(store.workspace(), std::io::Error::other(reason.to_owned()))
}
