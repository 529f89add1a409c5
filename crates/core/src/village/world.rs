//! `world.json`: the village registry (agents, templates, roles, groups, judges, map positions
//! and the village-wide settings), with the original's read rules.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Extra;
use super::agent::AgentSpec;
use super::doc::JsonDoc;
use super::error::VillageError;
use super::group::AgentGroup;
use super::ids::AgentId;
use super::judge::JudgeSpec;
use super::language::{Language, LanguageTag};
use super::notice::Notes;
use super::role::AgentRole;
use super::template::ModelTemplate;
use super::world_rules;

/// The token budget a new village gets.
pub(crate) const NEW_VILLAGE_TOKEN_BUDGET: u64 = 1_000_000;
/// The wait for an `ask` when the village sets none, in seconds.
pub(crate) const DEFAULT_ASK_TIMEOUT_SECS: u64 = 600;
/// The allowed range of `askTimeoutSecs`.
pub(crate) const ASK_TIMEOUT_RANGE: std::ops::RangeInclusive<u64> = 30..=3600;

/// The village registry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct World {
    /// Agents, in stored order.
    #[serde(default)]
    pub agents: Vec<AgentSpec>,
    /// Model templates.
    #[serde(default)]
    pub model_templates: Vec<ModelTemplate>,
    /// Map positions of agents and judges.
    #[serde(default)]
    pub topology_positions: BTreeMap<String, Position>,
    /// Token ceiling per causal root; `None` = no budget (`0` reads as none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// Wait for `ask` / `plan`, 30..=3600 s; `None` = 600.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask_timeout_secs: Option<u64>,
    /// Language of model-facing text, as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<LanguageTag>,
    /// The user's display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_name: Option<String>,
    /// Roles.
    #[serde(default)]
    pub roles: Vec<AgentRole>,
    /// Groups, in heading order.
    #[serde(default)]
    pub groups: Vec<AgentGroup>,
    /// Judges.
    #[serde(default)]
    pub judges: Vec<JudgeSpec>,
    /// The reception agent (kept even when that agent is gone; preflight names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reception: Option<AgentId>,
    /// Name shown for external clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_name: Option<String>,
    /// Agent that verifies plan bundles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_verifier: Option<AgentId>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A map position.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Position {
    /// Horizontal.
    pub x: f64,
    /// Vertical.
    pub y: f64,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl World {
    /// The agent with this id.
    pub fn agent(&self, id: &AgentId) -> Option<&AgentSpec> {
        self.agents.iter().find(|a| &a.id == id)
    }

    /// The template with this id.
    pub fn template(&self, id: &super::ids::TemplateId) -> Option<&ModelTemplate> {
        self.model_templates.iter().find(|t| &t.id == id)
    }

    /// The agents batch start covers: `batchStart && (no group || group.batchStart)`, ordered by
    /// `order` (a group id that resolves to nothing counts as no group).
    pub fn batch_start_ids(&self) -> Vec<String> {
        let mut agents: Vec<&AgentSpec> = self
            .agents
            .iter()
            .filter(|a| a.batch_start)
            .filter(|a| match &a.group_id {
                Some(g) => self
                    .groups
                    .iter()
                    .find(|x| &x.id == g)
                    .is_none_or(|x| x.batch_start),
                None => true,
            })
            .collect();
        agents.sort_by_key(|a| a.order);
        agents.into_iter().map(|a| a.id.to_string()).collect()
    }

    /// The wait for `ask` / `plan` in effect, in seconds.
    pub fn ask_timeout_secs(&self) -> u64 {
        self.ask_timeout_secs.unwrap_or(DEFAULT_ASK_TIMEOUT_SECS)
    }

    /// The language as written, when this version knows it.
    pub fn language(&self) -> Option<Language> {
        self.language.as_ref().and_then(LanguageTag::language)
    }

    /// The language in effect: as written, or detected from the OS locale when undetermined.
    pub fn effective_language(&self, os_locale: Option<&str>) -> Language {
        self.language()
            .unwrap_or_else(|| Language::from_locale(os_locale))
    }
}

impl JsonDoc for World {
    fn normalize(&mut self, notes: &mut Notes<'_>) {
        world_rules::normalize(self, notes);
    }

    fn validate(&self, file: &Path) -> Result<(), VillageError> {
        world_rules::validate(self, file)
    }

    fn validate_for_write(&self, file: &Path) -> Result<(), VillageError> {
        world_rules::validate_for_write(self, file)?;
        world_rules::validate(self, file)
    }
}
