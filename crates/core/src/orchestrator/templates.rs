//! A person's edits of the village's model templates (the CLI's `templates add|set|remove`; the
//! GUI edits them in `world.json`'s form): each is one `update_world`, checked here (a plain
//! id not taken, a name, a model, the endpoint rule, limits above 0) and by the world's rules
//! on write. A template a servant or a judge thinks with is never removed. Keys are not
//! fields of a template: they live in the secret store under its id.

use super::Orchestrator;
use super::cast::refused;
use crate::CoreError;
use crate::village::{
    Credential, Effort, EndpointProblem, ModelTemplate, Provider, TemplateId, World,
};

/// What `set_template` changes (`None`: left as it is; for the optional values `Some(None)`
/// clears them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TemplateSettings {
    /// Display name.
    pub name: Option<String>,
    /// The wire.
    pub provider: Option<Provider>,
    /// Base URL of the API.
    pub base_url: Option<String>,
    /// Model name sent to the API.
    pub model: Option<String>,
    /// Where the key comes from.
    pub credential: Option<Credential>,
    /// Context window in tokens.
    pub context_length: Option<u64>,
    /// Output cap in tokens.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature (0 to 2), or not sent.
    pub temperature: Option<Option<f64>>,
    /// Reasoning effort, or none.
    pub effort: Option<Option<Effort>>,
    /// Seconds before a request times out.
    pub request_timeout_secs: Option<u64>,
    /// Total attempts per call.
    pub max_retries: Option<u32>,
    /// Native tool calling (false: the schema-in-prompt fallback).
    pub use_tools: Option<bool>,
    /// Streamed answers.
    pub streaming: Option<bool>,
    /// Plain `http://` to a host that is not loopback.
    pub allow_insecure_http: Option<bool>,
    /// Price per million input tokens, or unknown.
    pub input_per_mtok: Option<Option<f64>>,
    /// Price per million output tokens, or unknown.
    pub output_per_mtok: Option<Option<f64>>,
}

impl TemplateSettings {
    /// Applies these settings to `t` (unchecked: the edit checks the result).
    pub fn apply(&self, t: &mut ModelTemplate) {
        let text = [
            (&self.name, &mut t.name),
            (&self.base_url, &mut t.base_url),
            (&self.model, &mut t.model),
        ];
        for (given, field) in text {
            if let Some(v) = given {
                v.trim().clone_into(field);
            }
        }
        if let Some(v) = self.provider {
            t.provider = Some(v);
        }
        if let Some(v) = self.credential {
            t.credential = v;
        }
        t.context_length = self.context_length.unwrap_or(t.context_length);
        t.max_output_tokens = self.max_output_tokens.unwrap_or(t.max_output_tokens);
        t.temperature = self.temperature.unwrap_or(t.temperature);
        t.effort = self.effort.unwrap_or(t.effort);
        t.request_timeout_secs = self.request_timeout_secs.unwrap_or(t.request_timeout_secs);
        t.max_retries = self.max_retries.unwrap_or(t.max_retries);
        t.use_tools = self.use_tools.unwrap_or(t.use_tools);
        t.streaming = self.streaming.unwrap_or(t.streaming);
        t.allow_insecure_http = self.allow_insecure_http.unwrap_or(t.allow_insecure_http);
        t.input_per_mtok = self.input_per_mtok.unwrap_or(t.input_per_mtok);
        t.output_per_mtok = self.output_per_mtok.unwrap_or(t.output_per_mtok);
    }
}

/// The refusals of a template as it would be written (each names its field).
fn check_template(t: &ModelTemplate) -> Result<(), CoreError> {
    let name = t.name.trim();
    if name.is_empty() || name.chars().count() > 60 || name.chars().any(char::is_control) {
        return Err(refused(
            "name: 1 to 60 characters, no control characters",
            "give a name of 1 to 60 characters on one line",
        ));
    }
    if t.model.trim().is_empty() || t.model.chars().any(char::is_control) {
        return Err(refused(
            "model: a model name, no control characters",
            "give the model name the server knows (e.g. gpt-5.1, qwen3)",
        ));
    }
    let counts = [
        ("contextLength", t.context_length, "tokens, e.g. 128000"),
        (
            "maxOutputTokens",
            u64::from(t.max_output_tokens),
            "tokens, e.g. 8192",
        ),
        (
            "requestTimeoutSecs",
            t.request_timeout_secs,
            "seconds, e.g. 120",
        ),
        (
            "maxRetries",
            u64::from(t.max_retries),
            "attempts, the first included, e.g. 3",
        ),
    ];
    if let Some((field, _, example)) = counts.into_iter().find(|(_, n, _)| *n == 0) {
        return Err(refused(
            format!("{field}: above 0"),
            format!("give {field} 1 or more ({example})"),
        ));
    }
    if let Some(x) = t.temperature
        && !(0.0..=2.0).contains(&x)
    {
        return Err(refused(
            "temperature: 0 to 2",
            "give a temperature from 0 to 2, or leave it out",
        ));
    }
    for (field, price) in [
        ("inputPerMtok", t.input_per_mtok),
        ("outputPerMtok", t.output_per_mtok),
    ] {
        if price.is_some_and(|p| !(p.is_finite() && p >= 0.0)) {
            return Err(refused(
                format!("{field}: a price of 0 or more"),
                "give the price in dollars per million tokens (e.g. 1.25), or leave it out",
            ));
        }
    }
    t.endpoint_security().map(drop).map_err(|e| {
        let fix = match e {
            EndpointProblem::Insecure { .. } => {
                "use https://, or allow plain http to a model server on your own network (the key then travels in clear text): `allowInsecureHttp` true, `--allow-insecure-http true` in the CLI"
            }
            EndpointProblem::Invalid { .. } | EndpointProblem::Demo { .. } => {
                "give an absolute URL such as https://api.example.com/v1 or http://127.0.0.1:11434/v1"
            }
        };
        refused(format!("{e} ({})", e.code()), fix)
    })
}

/// A refused template id, with its rule ([`TemplateId`]: it is also its key's name in the
/// secret store).
pub fn template_id_refused(e: &crate::village::InvalidIdError) -> CoreError {
    refused(
        format!("id: {e}: a template id is 1 to 128 characters on one line, not blank"),
        "pick an id such as openai or local-qwen",
    )
}

/// The servants and judges that think with template `id`, by id.
pub fn template_users(world: &World, id: &str) -> Vec<String> {
    let servants = world
        .agents
        .iter()
        .filter(|a| a.model_template_id.as_str() == id)
        .map(|a| a.id.as_str().to_owned());
    let judges = world
        .judges
        .iter()
        .filter(|j| {
            j.model_template_id
                .as_ref()
                .is_some_and(|t| t.as_str() == id)
        })
        .map(|j| j.id.as_str().to_owned());
    servants.chain(judges).collect()
}

impl Orchestrator {
    /// Adds `template` (its id not taken; checked as it would be written).
    pub fn add_template(&self, template: ModelTemplate) -> Result<(), CoreError> {
        let id = template.id.as_str().to_owned();
        TemplateId::new(id.as_str()).map_err(|e| template_id_refused(&e))?;
        check_template(&template)?;
        self.update_world(|w| {
            if w.model_templates.iter().any(|t| t.id.as_str() == id) {
                return Err(CoreError::IdTaken(id.clone()));
            }
            w.model_templates.push(template);
            Ok(())
        })
        .map(|_| ())
    }

    /// Changes template `id`'s settings.
    pub fn set_template(&self, id: &str, settings: &TemplateSettings) -> Result<(), CoreError> {
        self.update_world(|w| {
            let t = w
                .model_templates
                .iter_mut()
                .find(|t| t.id.as_str() == id)
                .ok_or_else(|| CoreError::TemplateNotFound(id.to_owned()))?;
            settings.apply(t);
            check_template(t)
        })
        .map(|_| ())
    }

    /// Removes template `id`, unless a servant or a judge thinks with it.
    pub fn remove_template(&self, id: &str) -> Result<(), CoreError> {
        self.update_world(|w| {
            if !w.model_templates.iter().any(|t| t.id.as_str() == id) {
                return Err(CoreError::TemplateNotFound(id.to_owned()));
            }
            let users = template_users(w, id);
            if !users.is_empty() {
                return Err(CoreError::TemplateInUse {
                    id: id.to_owned(),
                    users,
                });
            }
            w.model_templates.retain(|t| t.id.as_str() != id);
            Ok(())
        })
        .map(|_| ())
    }
}
