//! The rules of `world.json`: what a read adjusts (with notices), what makes a file unusable,
//! and what a write refuses.

use std::collections::HashSet;
use std::path::Path;

use super::error::{RuleCode, VillageError};
use super::ids::is_plain_key;
use super::names::{is_valid_agent_name, normalize_user_name};
use super::notice::{Notes, NoticeCode};
use super::template::Provider;
use super::world::{ASK_TIMEOUT_RANGE, DEFAULT_ASK_TIMEOUT_SECS, World};

pub(crate) fn normalize(world: &mut World, notes: &mut Notes<'_>) {
    if world.token_budget == Some(0) {
        world.token_budget = None;
        notes.add(
            NoticeCode::ValueDefaulted,
            "tokenBudget",
            "0 means no budget; read as none",
        );
    }
    if let Some(secs) = world.ask_timeout_secs
        && !ASK_TIMEOUT_RANGE.contains(&secs)
    {
        world.ask_timeout_secs = None;
        notes.add(
            NoticeCode::ValueDefaulted,
            "askTimeoutSecs",
            format!("{secs} is outside 30..=3600; using the default {DEFAULT_ASK_TIMEOUT_SECS}"),
        );
    }
    if let Some(tag) = &world.language
        && tag.language().is_none()
    {
        notes.add(
            NoticeCode::LanguageUndetermined,
            "language",
            format!(
                "{:?} is not ja or en; the language is taken from the OS",
                tag.as_str()
            ),
        );
    }
    normalize_name(&mut world.user_name, "userName", notes);
    normalize_name(&mut world.external_name, "externalName", notes);
    for template in &mut world.model_templates {
        if template.provider.is_none() {
            template.provider = Some(Provider::detect_from_base_url(&template.base_url));
        }
    }
    let known: HashSet<&str> = world
        .agents
        .iter()
        .map(|a| a.id.as_str())
        .chain(world.judges.iter().map(|j| j.id.as_str()))
        .collect();
    let templates: HashSet<&str> = world
        .model_templates
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    for (i, agent) in world.agents.iter().enumerate() {
        if !templates.contains(agent.model_template_id.as_str()) {
            notes.add(
                NoticeCode::ModelTemplateMissing,
                format!("agents[{i}].modelTemplateId"),
                format!(
                    "agent {:?} uses template {:?}, which is not in modelTemplates; its turns fail until it points at one",
                    agent.id.as_str(),
                    agent.model_template_id.as_str()
                ),
            );
        }
        for (j, to) in agent.connected_agents.iter().enumerate() {
            if !known.contains(to.as_str()) {
                notes.add(
                    NoticeCode::EdgeTargetMissing,
                    format!("agents[{i}].connectedAgents[{j}]"),
                    format!("{to:?} is neither an agent nor a judge; the edge is ignored"),
                );
            }
        }
    }
}

fn normalize_name(name: &mut Option<String>, field: &str, notes: &mut Notes<'_>) {
    if let Some(raw) = name.as_deref() {
        match normalize_user_name(raw) {
            Some(clean) => *name = Some(clean),
            None => {
                *name = None;
                notes.add(
                    NoticeCode::NameDropped,
                    field,
                    "empty, too long (over 64 characters) or holds control characters; read as unset",
                );
            }
        }
    }
}

const SAFE_ID_FIX: &str = "use 1-64 characters from A-Z a-z 0-9 _ - (ids double as folder names)";

pub(crate) fn validate(world: &World, file: &Path) -> Result<(), VillageError> {
    validate_templates(world, file)?;
    // Agents and judges share one id namespace and one name namespace.
    let mut agent_ids = HashSet::new();
    let mut names = HashSet::new();
    validate_agents(world, file, &mut agent_ids, &mut names)?;
    validate_judges(world, file, &mut agent_ids, &mut names)?;
    validate_roles_and_groups(world, file)?;
    validate_references(world, file)
}

fn validate_templates(world: &World, file: &Path) -> Result<(), VillageError> {
    let rule = |code, field: String, reason: String, fix: &str| {
        Err(VillageError::rule(code, file, field, reason, fix))
    };

    let mut template_ids = HashSet::new();
    for (i, t) in world.model_templates.iter().enumerate() {
        if !is_plain_key(t.id.as_str()) {
            return rule(
                RuleCode::InvalidId,
                format!("modelTemplates[{i}].id"),
                format!(
                    "template id {:?} is empty, over 128 characters or holds control characters",
                    t.id.as_str()
                ),
                "give the template a short id such as `openai_main`",
            );
        }
        if !template_ids.insert(t.id.as_str()) {
            return rule(
                RuleCode::DuplicateId,
                format!("modelTemplates[{i}].id"),
                format!("template id {:?} is used twice", t.id.as_str()),
                "give each template its own id (and point agents at the one they should use)",
            );
        }
    }
    Ok(())
}

fn validate_agents<'w>(
    world: &'w World,
    file: &Path,
    agent_ids: &mut HashSet<&'w str>,
    names: &mut HashSet<&'w str>,
) -> Result<(), VillageError> {
    let rule = |code, field: String, reason: String, fix: &str| {
        Err(VillageError::rule(code, file, field, reason, fix))
    };
    for (i, a) in world.agents.iter().enumerate() {
        if !a.id.is_safe() {
            return rule(
                RuleCode::InvalidId,
                format!("agents[{i}].id"),
                format!("agent id {:?} is not a safe identifier", a.id.as_str()),
                SAFE_ID_FIX,
            );
        }
        if !agent_ids.insert(a.id.as_str()) {
            return rule(
                RuleCode::DuplicateAgent,
                format!("agents[{i}].id"),
                format!("agent id {:?} is used twice", a.id.as_str()),
                "give each agent its own id; ids also name the folders under agents/",
            );
        }
        if !is_valid_agent_name(&a.name) {
            return rule(
                RuleCode::InvalidName,
                format!("agents[{i}].name"),
                "the agent name is empty or holds control characters".into(),
                "give the agent a visible name",
            );
        }
        if !names.insert(a.name.as_str()) {
            return rule(
                RuleCode::DuplicateAgentName,
                format!("agents[{i}].name"),
                format!("the name {:?} is used by another agent", a.name),
                "give each agent and judge its own name",
            );
        }
        for (j, to) in a.connected_agents.iter().enumerate() {
            if !to.is_safe() {
                return rule(
                    RuleCode::InvalidId,
                    format!("agents[{i}].connectedAgents[{j}]"),
                    format!("edge target {:?} is not a safe identifier", to.as_str()),
                    SAFE_ID_FIX,
                );
            }
        }
    }
    Ok(())
}

fn validate_judges<'w>(
    world: &'w World,
    file: &Path,
    agent_ids: &mut HashSet<&'w str>,
    names: &mut HashSet<&'w str>,
) -> Result<(), VillageError> {
    let rule = |code, field: String, reason: String, fix: &str| {
        Err(VillageError::rule(code, file, field, reason, fix))
    };
    for (i, j) in world.judges.iter().enumerate() {
        if !j.id.is_safe() {
            return rule(
                RuleCode::InvalidId,
                format!("judges[{i}].id"),
                format!("judge id {:?} is not a safe identifier", j.id.as_str()),
                SAFE_ID_FIX,
            );
        }
        if !agent_ids.insert(j.id.as_str()) {
            return rule(
                RuleCode::DuplicateAgent,
                format!("judges[{i}].id"),
                format!(
                    "judge id {:?} is already used by an agent or another judge",
                    j.id.as_str()
                ),
                "judges share the agents' id namespace: give the judge its own id",
            );
        }
        if !is_valid_agent_name(&j.name) {
            return rule(
                RuleCode::InvalidName,
                format!("judges[{i}].name"),
                "the judge name is empty or holds control characters".into(),
                "give the judge a visible name",
            );
        }
        if !names.insert(j.name.as_str()) {
            return rule(
                RuleCode::DuplicateAgentName,
                format!("judges[{i}].name"),
                format!("the name {:?} is used by an agent or another judge", j.name),
                "give each agent and judge its own name",
            );
        }
    }
    Ok(())
}

fn validate_roles_and_groups(world: &World, file: &Path) -> Result<(), VillageError> {
    let rule = |code, field: String, reason: String, fix: &str| {
        Err(VillageError::rule(code, file, field, reason, fix))
    };
    let mut role_ids = HashSet::new();
    for (i, r) in world.roles.iter().enumerate() {
        if !is_plain_key(&r.id) || !role_ids.insert(r.id.as_str()) {
            return rule(
                RuleCode::DuplicateId,
                format!("roles[{i}].id"),
                format!("role id {:?} is empty or used twice", r.id),
                "give each role its own non-empty id",
            );
        }
    }
    let mut group_ids = HashSet::new();
    for (i, g) in world.groups.iter().enumerate() {
        if !is_plain_key(&g.id) || !group_ids.insert(g.id.as_str()) {
            return rule(
                RuleCode::DuplicateId,
                format!("groups[{i}].id"),
                format!("group id {:?} is empty or used twice", g.id),
                "give each group its own non-empty id (a new UUID)",
            );
        }
    }
    Ok(())
}

/// The ids named at the top of `world.json` (`reception`, `defaultVerifier`).
fn validate_references(world: &World, file: &Path) -> Result<(), VillageError> {
    let rule = |code, field: String, reason: String, fix: &str| {
        Err(VillageError::rule(code, file, field, reason, fix))
    };
    for (field, id) in [
        ("reception", &world.reception),
        ("defaultVerifier", &world.default_verifier),
    ] {
        if let Some(id) = id
            && !id.is_safe()
        {
            return rule(
                RuleCode::InvalidId,
                field.to_owned(),
                format!("{:?} is not a safe identifier", id.as_str()),
                SAFE_ID_FIX,
            );
        }
    }
    Ok(())
}

/// An agent pointing at a template that does not exist. A read keeps the village open (with a
/// notice) so that the preflight can name it (`MODEL_TEMPLATE_MISSING`, exit 3) and the file
/// can be fixed; such an agent's turns fail with the same code. A write refuses it.
fn missing_template(world: &World) -> Option<(usize, &super::AgentSpec)> {
    let ids: HashSet<&str> = world
        .model_templates
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    world
        .agents
        .iter()
        .enumerate()
        .find(|(_, a)| !ids.contains(a.model_template_id.as_str()))
}

/// Values a read would silently reset are refused on write, so that what is saved is what is
/// used.
pub(crate) fn validate_for_write(world: &World, file: &Path) -> Result<(), VillageError> {
    if let Some((i, a)) = missing_template(world) {
        return Err(VillageError::rule(
            RuleCode::ModelTemplateMissing,
            file,
            format!("agents[{i}].modelTemplateId"),
            format!(
                "agent {:?} uses template {:?}, which is not in modelTemplates",
                a.id.as_str(),
                a.model_template_id.as_str()
            ),
            "point modelTemplateId at one of the ids in modelTemplates, or add that template",
        ));
    }
    if world.token_budget == Some(0) {
        return Err(VillageError::rule(
            RuleCode::InvalidTokenBudget,
            file,
            "tokenBudget",
            "0 is not a budget",
            "leave tokenBudget out for no budget, or give a positive number of tokens",
        ));
    }
    if let Some(secs) = world.ask_timeout_secs
        && !ASK_TIMEOUT_RANGE.contains(&secs)
    {
        return Err(VillageError::rule(
            RuleCode::InvalidAskTimeout,
            file,
            "askTimeoutSecs",
            format!("{secs} is outside 30..=3600"),
            "choose a wait between 30 and 3600 seconds, or leave it out for 600",
        ));
    }
    for (field, name) in [
        ("userName", &world.user_name),
        ("externalName", &world.external_name),
    ] {
        if let Some(name) = name
            && normalize_user_name(name).as_deref() != Some(name.as_str())
        {
            return Err(VillageError::rule(
                RuleCode::InvalidName,
                file,
                field,
                "the name is empty, padded, over 64 characters or holds control characters",
                "use a trimmed name of 1-64 visible characters",
            ));
        }
    }
    Ok(())
}
