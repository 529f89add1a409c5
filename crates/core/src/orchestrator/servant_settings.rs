//! What a person may change of a servant besides its name (the GUI's settings form, the CLI's
//! `servants set` and `servants add`): its name, template, work folder, tools, tool rounds, group
//! and switches, and whether it is the reception, each checked here, in the one edit that
//! writes them.

use super::Orchestrator;
use super::cast::{checked_name, refused, servant};
use crate::CoreError;
use crate::village::{TemplateId, World};

/// What `set_servant` changes (`None`: left as it is; `Some(None)`: cleared). In JSON a field
/// left out is left as it is, and a field given as `null` is cleared.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServantSettings {
    /// Its name (1 to 60 characters, unique among servants and judges).
    #[serde(default)]
    pub name: Option<String>,
    /// The model template it thinks with (one of the village's templates).
    #[serde(default)]
    pub model_template_id: Option<String>,
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
    /// Its plan waves wait for a person's review.
    #[serde(default)]
    pub plan_review: Option<bool>,
    /// Started by batch start.
    #[serde(default)]
    pub batch_start: Option<bool>,
    /// Hears the public square.
    #[serde(default)]
    pub hears_room_log: Option<bool>,
    /// Offered `transfer_to_<id>` tools.
    #[serde(default)]
    pub allow_handoff: Option<bool>,
    /// Uses the blackboard.
    #[serde(default)]
    pub uses_blackboard: Option<bool>,
    /// `true`: it becomes the village's reception (the servant `ask` and the door talk to);
    /// `false` leaves the reception as it is (another servant made the reception moves it).
    #[serde(default)]
    pub reception: bool,
}

/// A field that is present: `null` is `Some(None)` (clear it), a value `Some(Some(v))`.
fn given<'de, T, D>(de: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(de).map(Some)
}

impl Orchestrator {
    /// Checks `settings` against `world` and applies them to servant `id` (inside an
    /// `update_world`: a refusal leaves the world as it was).
    pub(super) fn apply_settings(
        &self,
        w: &mut World,
        id: &str,
        settings: &ServantSettings,
    ) -> Result<(), CoreError> {
        let template = self.checked_settings(w, settings)?;
        let name = settings.name.as_deref().map(checked_name).transpose()?;
        let a = servant(w, id)?;
        if let Some(name) = name {
            a.name = name;
        }
        if let Some(t) = template {
            a.model_template_id = t;
        }
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
        let switches = [
            (settings.plan_review, &mut a.plan_review),
            (settings.batch_start, &mut a.batch_start),
            (settings.hears_room_log, &mut a.hears_room_log),
            (settings.allow_handoff, &mut a.allow_handoff),
            (settings.uses_blackboard, &mut a.uses_blackboard),
        ];
        for (given, field) in switches {
            if let Some(v) = given {
                *field = v;
            }
        }
        let reception = settings.reception.then(|| a.id.clone());
        if reception.is_some() {
            w.reception = reception;
        }
        Ok(())
    }

    /// The refusals of `settings` (each names its field); the template's id when one is given.
    fn checked_settings(
        &self,
        w: &World,
        settings: &ServantSettings,
    ) -> Result<Option<TemplateId>, CoreError> {
        if let Some(Some(g)) = &settings.group_id
            && !w.groups.iter().any(|x| &x.id == g)
        {
            let names: Vec<&str> = w.groups.iter().map(|x| x.id.as_str()).collect();
            return Err(refused(
                format!("groupId: no group {g}"),
                match names.is_empty() {
                    true => "add the group to world.json `groups` first".to_owned(),
                    false => format!(
                        "use a group id of world.json `groups`: {}",
                        names.join(", ")
                    ),
                },
            ));
        }
        if let Some(Some(tools)) = &settings.enabled_tools
            && let Some(t) = tools
                .iter()
                .find(|t| !crate::tools::BUNDLED_TOOL_NAMES.contains(&t.as_str()))
        {
            return Err(refused(
                format!("enabledTools: no bundled tool {t}"),
                format!(
                    "choose from the bundled tools: {}",
                    crate::tools::BUNDLED_TOOL_NAMES.join(", ")
                ),
            ));
        }
        if let Some(Some(dir)) = &settings.work_dir {
            self.check_work_dir(dir)?;
        }
        if settings.max_tool_iterations == Some(Some(0)) {
            return Err(refused(
                "maxToolIterations: 1 to 255",
                "give 1 to 255 tool rounds, or leave it out for the default",
            ));
        }
        let Some(t) = &settings.model_template_id else {
            return Ok(None);
        };
        match w.model_templates.iter().find(|m| m.id.as_str() == t) {
            Some(m) => Ok(Some(m.id.clone())),
            None => Err(refused(
                format!("modelTemplateId: no model template {t} in the village"),
                format!(
                    "use a template id of world.json `modelTemplates`: {}",
                    w.model_templates
                        .iter()
                        .map(|m| m.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
}
