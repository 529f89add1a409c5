//! The two backends behind one call (`ask_backend`): Jev (absent `modelTemplateId`, as in the
//! original) or a model template of the village. Either gives answers or an undecided reason,
//! and the usage it reported.

use super::answers::{AnswerProblem, Answers};
use super::jev::{JevEndpoint, ask_jev};
use super::model_backend::{ask_model, judge_request};
use crate::llm::{ApiKey, CancellationToken, LlmClient, Usage};
use crate::village::judge_rules::JudgeRules;
use crate::village::{JevSettings, JudgeSpec, Language, World};

/// Why a judge is undecided: a fixed reason word for the log and the caller, and a detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecided {
    /// `jev_error`, `backend_error`, `timeout`, `too_large`, `unanswered`, `malformed`,
    /// `not_configured`.
    pub reason: &'static str,
    /// Codes and names only (no text of the request or the answer).
    pub detail: String,
}

impl From<AnswerProblem> for Undecided {
    fn from(p: AnswerProblem) -> Self {
        Self {
            reason: p.reason,
            detail: p.detail,
        }
    }
}

/// What one backend call gave.
#[derive(Debug, Clone)]
pub struct BackendAnswer {
    /// The answers, or why there are none.
    pub answers: Result<Answers, Undecided>,
    /// Tokens as reported (none when the call failed before an answer).
    pub usage: Option<Usage>,
    /// The call may have been billed without a usage report.
    pub usage_unknown: bool,
    /// The model asked (`typesafe/jev` for Jev).
    pub model: String,
    /// The wire (`jev` for Jev).
    pub backend: String,
}

impl BackendAnswer {
    /// No call was made.
    pub fn not_made(reason: &'static str, detail: impl Into<String>, backend: &str) -> Self {
        Self {
            answers: Err(Undecided {
                reason,
                detail: detail.into(),
            }),
            usage: None,
            usage_unknown: false,
            model: String::new(),
            backend: backend.into(),
        }
    }
}

/// Where a judge's backend gets what it needs.
pub struct BackendSetup<'a> {
    /// The village (templates).
    pub world: &'a World,
    /// `jev.json`.
    pub jev: &'a JevSettings,
    /// A secret by name (`jev_api_token`, a template id).
    pub secret: &'a (dyn Fn(&str) -> Option<String> + Send + Sync),
    /// The model client.
    pub client: &'a LlmClient,
    /// The village language.
    pub language: Language,
}

/// True when the judge uses Jev.
pub fn uses_jev(spec: &JudgeSpec) -> bool {
    spec.model_template_id.is_none()
}

/// One backend call answering every question of `rules` about `message`.
pub async fn ask_backend(
    setup: &BackendSetup<'_>,
    spec: &JudgeSpec,
    rules: &JudgeRules,
    message: &str,
    cancel: CancellationToken,
) -> BackendAnswer {
    let Some(template_id) = &spec.model_template_id else {
        let Some(token) = (setup.secret)("jev_api_token") else {
            return BackendAnswer::not_made("not_configured", "jev_api_token is missing", "jev");
        };
        let endpoint = match JevEndpoint::from_settings(setup.jev, token) {
            Ok(e) => e,
            Err(why) => {
                return BackendAnswer::not_made("not_configured", why.to_string(), "jev");
            }
        };
        return ask_jev(&endpoint, rules, message, cancel).await;
    };
    let Some(template) = setup.world.template(template_id) else {
        return BackendAnswer::not_made(
            "not_configured",
            format!("model template {:?} does not exist", template_id.as_str()),
            "-",
        );
    };
    let key = (setup.secret)(template.id.as_str()).map(ApiKey::new);
    let endpoint = match crate::model_endpoint::endpoint_of(template, key) {
        Ok(e) => e,
        Err(e) => {
            return BackendAnswer::not_made(
                "not_configured",
                crate::Coded::code(&e),
                crate::model_endpoint::wire_of(template).as_str(),
            );
        }
    };
    let (request, _forced) =
        judge_request(rules, template, &endpoint, message, setup.language, cancel);
    ask_model(setup.client, &endpoint, &request, rules).await
}
