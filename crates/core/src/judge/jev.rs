//! The Jev backend: Cloudflare Workers AI model `typesafe/jev`, account id from `jev.json`,
//! token = secret `jev_api_token`. One `POST {base}/accounts/{accountId}/ai/run/typesafe/jev`
//! carries `state: {message}` and every question; answers come back per question (shape in
//! `docs/judges.md`). HTTPS only, except loopback (the test stub); no redirects; 30 s; the body
//! read up to 1 MiB. HTTP 400 naming `max_tokens_exceeded` → `too_large`.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::answers::{Answer, AnswerProblem, Answers};
use super::backend::{BackendAnswer, Undecided};
use crate::llm::{CancellationToken, LlmClient, Usage};
use crate::village::judge_rules::{JudgeRules, QuestionKind};
use crate::village::{JevSettings, endpoint_security};

/// Cloudflare's API root.
pub const JEV_DEFAULT_BASE: &str = "https://api.cloudflare.com/client/v4";
/// The model's path.
pub const JEV_MODEL: &str = "typesafe/jev";
/// The largest answer read.
pub(crate) const JEV_MAX_BODY: usize = 1024 * 1024;
/// The whole call's limit.
pub(crate) const JEV_TIMEOUT: Duration = Duration::from_secs(30);

/// Where a Jev call goes. `Debug` hides the token.
#[derive(Clone)]
pub struct JevEndpoint {
    /// The API root (`jev.json`'s optional `baseUrl`, for a gateway or a test; else
    /// Cloudflare's).
    pub base_url: String,
    /// Cloudflare account id.
    pub account_id: String,
    token: String,
}

impl std::fmt::Debug for JevEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JevEndpoint")
            .field("base_url", &self.base_url)
            .field("account_id", &self.account_id)
            .field("token", &"<hidden>")
            .finish()
    }
}

/// Why `jev.json` gives no endpoint (the judge is then not configured).
#[derive(Debug, thiserror::Error)]
pub enum JevSettingsError {
    /// `accountId` is empty.
    #[error("jev.json has no accountId")]
    NoAccount,
    /// `accountId` holds other characters than letters, digits, `-` and `_`.
    #[error("jev.json accountId holds characters an account id has not")]
    AccountChars,
    /// `baseUrl` is refused by the endpoint rule.
    #[error("jev.json baseUrl: {0:?}")]
    BaseUrl(#[source] crate::village::EndpointProblem),
}

impl crate::error::Coded for JevSettingsError {
    fn code(&self) -> &'static str {
        "INVALID_VALUE"
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some(match self {
            Self::NoAccount | Self::AccountChars => {
                "set accountId in jev.json (letters, digits, - and _)".into()
            }
            Self::BaseUrl(_) => {
                "set baseUrl in jev.json to an https URL (plain http only to this machine)".into()
            }
        })
    }
}

impl JevEndpoint {
    /// From `jev.json` and the token; refuses an empty account id and a base URL the endpoint
    /// rule refuses (plain http only to loopback).
    pub fn from_settings(settings: &JevSettings, token: String) -> Result<Self, JevSettingsError> {
        if settings.account_id.trim().is_empty() {
            return Err(JevSettingsError::NoAccount);
        }
        if !settings
            .account_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(JevSettingsError::AccountChars);
        }
        let base_url = settings
            .extra
            .get("baseUrl")
            .and_then(Value::as_str)
            .unwrap_or(JEV_DEFAULT_BASE)
            .trim_end_matches('/')
            .to_string();
        endpoint_security(&base_url, false).map_err(JevSettingsError::BaseUrl)?;
        Ok(Self {
            base_url,
            account_id: settings.account_id.clone(),
            token,
        })
    }

    fn url(&self) -> String {
        format!(
            "{}/accounts/{}/ai/run/{JEV_MODEL}",
            self.base_url, self.account_id
        )
    }
}

/// The request body: `state` (only `{message}`) and every question.
pub fn jev_request_body(rules: &JudgeRules, message: &str) -> Value {
    let mut questions = Map::new();
    for q in &rules.questions {
        let v = match &q.kind {
            QuestionKind::Choice { options } => {
                let criteria: Map<String, Value> =
                    options.iter().map(|(k, d)| (k.clone(), json!(d))).collect();
                json!({"type": "choice", "instructions": q.ask, "criteria": criteria})
            }
            QuestionKind::Score { levels } => {
                json!({"type": "score", "instructions": q.ask, "criteria": levels})
            }
            QuestionKind::Noul { true_if, false_if } => json!({
                "type": "noul", "instructions": q.ask,
                "criteria": {"true": true_if, "false": false_if}
            }),
        };
        questions.insert(q.name.clone(), v);
    }
    json!({"state": {"message": message}, "questions": questions})
}

fn probs_of(q: &str, v: &Value, keys: &[String]) -> Result<Vec<f64>, AnswerProblem> {
    let m = v
        .get("probabilities")
        .and_then(Value::as_object)
        .ok_or_else(|| AnswerProblem::malformed(q, "no probabilities"))?;
    if let Some(k) = m.keys().find(|k| !keys.contains(k)) {
        return Err(AnswerProblem::malformed(q, format!("unknown key {k:?}")));
    }
    keys.iter()
        .map(|k| match m.get(k) {
            None => Ok(0.0),
            Some(p) => p
                .as_f64()
                .ok_or_else(|| AnswerProblem::malformed(q, "a probability is not a number")),
        })
        .collect()
}

/// Jev's answer (the `result` of Cloudflare's envelope, or the bare answer) → answers and
/// usage.
pub fn answers_from_jev(rules: &JudgeRules, body: &Value) -> Result<Answers, AnswerProblem> {
    let result = body.get("result").unwrap_or(body);
    let Some(answers) = result.get("answers").and_then(Value::as_object) else {
        return Err(AnswerProblem::malformed("jev", "no answers in the reply"));
    };
    let mut given = Vec::new();
    for q in &rules.questions {
        let Some(a) = answers.get(&q.name) else {
            given.push(None);
            continue;
        };
        let answer = match &q.kind {
            QuestionKind::Choice { options } => {
                let keys: Vec<String> = options.iter().map(|(k, _)| k.clone()).collect();
                Answer::Choice(probs_of(&q.name, a, &keys)?)
            }
            QuestionKind::Score { levels } => {
                // Probabilities keyed by level index, 0-based as Jev's `score` is.
                let keys: Vec<String> = (0..levels.len()).map(|i| i.to_string()).collect();
                Answer::Score(probs_of(&q.name, a, &keys)?)
            }
            QuestionKind::Noul { .. } => Answer::Noul(
                a.get("noul")
                    .and_then(Value::as_f64)
                    .ok_or_else(|| AnswerProblem::malformed(&q.name, "no noul"))?,
            ),
        };
        given.push(Some(answer));
    }
    Answers::build(rules, given)
}

fn usage_of(body: &Value) -> Option<Usage> {
    let result = body.get("result").unwrap_or(body);
    let u = result.get("usage")?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        prompt: n("inputTokens"),
        completion: n("outputTokens"),
        ..Usage::default()
    })
}

fn undecided(reason: &'static str, detail: impl Into<String>) -> Undecided {
    Undecided {
        reason,
        detail: detail.into(),
    }
}

async fn post(endpoint: &JevEndpoint, body: &Value) -> Result<Value, Undecided> {
    let http = LlmClient::http_client().map_err(|e| undecided("jev_error", e.to_string()))?;
    let response = http
        .post(endpoint.url())
        .bearer_auth(&endpoint.token)
        .json(body)
        .timeout(JEV_TIMEOUT)
        .send()
        .await
        .map_err(|e| {
            if e.is_timeout() {
                undecided("timeout", "no answer within 30 s")
            } else {
                undecided("jev_error", "the request failed (network)")
            }
        })?;
    let status = response.status();
    let mut response = response;
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > JEV_MAX_BODY {
                    return Err(undecided("jev_error", "the reply is larger than 1 MiB"));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) if e.is_timeout() => return Err(undecided("timeout", "no answer within 30 s")),
            Err(_) => return Err(undecided("jev_error", "the reply was cut")),
        }
    }
    if status.as_u16() == 400 && String::from_utf8_lossy(&bytes).contains("max_tokens_exceeded") {
        return Err(undecided("too_large", "HTTP 400 max_tokens_exceeded"));
    }
    if !status.is_success() {
        return Err(undecided("jev_error", format!("HTTP {}", status.as_u16())));
    }
    serde_json::from_slice(&bytes).map_err(|_| undecided("jev_error", "the reply is not JSON"))
}

/// One Jev call for every question.
pub async fn ask_jev(
    endpoint: &JevEndpoint,
    rules: &JudgeRules,
    message: &str,
    cancel: CancellationToken,
) -> BackendAnswer {
    let body = jev_request_body(rules, message);
    let outcome = tokio::select! {
        r = post(endpoint, &body) => r,
        () = cancel.cancelled() => Err(undecided("jev_error", "cancelled")),
    };
    let (answers, usage) = match outcome {
        Ok(reply) => (
            answers_from_jev(rules, &reply).map_err(Undecided::from),
            usage_of(&reply),
        ),
        Err(u) => (Err(u), None),
    };
    BackendAnswer {
        answers,
        usage,
        usage_unknown: false,
        model: JEV_MODEL.into(),
        backend: "jev".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Coded;

    fn settings(account: &str, base: Option<&str>) -> JevSettings {
        let mut s: JevSettings = serde_json::from_str("{}").unwrap();
        s.account_id = account.into();
        if let Some(base) = base {
            s.extra.insert("baseUrl".into(), base.into());
        }
        s
    }

    #[test]
    fn settings_that_give_no_endpoint_say_which_field_and_never_the_token() {
        let none =
            JevEndpoint::from_settings(&settings(" ", None), "tok-secret".into()).unwrap_err();
        assert!(matches!(none, JevSettingsError::NoAccount));
        let odd =
            JevEndpoint::from_settings(&settings("a/b", None), "tok-secret".into()).unwrap_err();
        assert!(matches!(odd, JevSettingsError::AccountChars));
        let plain = settings("acct", Some("http://jev.example.com"));
        let clear = JevEndpoint::from_settings(&plain, "tok-secret".into()).unwrap_err();
        assert!(matches!(clear, JevSettingsError::BaseUrl(_)), "{clear:?}");
        assert!(
            std::error::Error::source(&clear).is_some(),
            "the endpoint rule's refusal kept"
        );
        for e in [&none, &odd, &clear] {
            assert_eq!(e.code(), "INVALID_VALUE");
            assert!(!format!("{e} {e:?}").contains("tok-secret"));
        }
    }
}
