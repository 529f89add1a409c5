//! The endpoint probe of `check --probe-endpoints`: one cheap authenticated request per
//! template — the wire's models list where it has one (`GET …/models`, Ollama's
//! `GET /api/tags`), else a 1-token call (Perplexity's Agent API has no documented list) —
//! sent with the model call's client settings (rustls, no redirects), auth headers and
//! timeout (capped at [`PROBE_TIMEOUT_CAP`]), timed, and classified: ok, auth failed, another
//! status, or unreachable with its network class. No body and no key leave this module; an
//! error body is read (capped) only to tell a bad key reported as 400 (Gemini, xAI).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::adapters::{self, EncodeContext};
use super::canonical::{ChatMessage, ChatRequest, Role};
use super::client::{ERROR_BODY_CAP, Endpoint, read_capped, with_auth};
use super::error::{LlmError, NetworkKind, RetryClass, classify};
use super::wire::Wire;
use crate::endpoint_rule::endpoint_security;

/// The longest a probe waits (a template's own timeout, when shorter, wins).
pub(crate) const PROBE_TIMEOUT_CAP: Duration = Duration::from_secs(30);

/// What a probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// A 2xx answer: the server is there and took the key.
    Ok {
        /// HTTP status.
        status: u16,
    },
    /// 401/403, or a bad key reported as 400.
    AuthFailed {
        /// HTTP status.
        status: u16,
    },
    /// Any other status (a wrong `baseUrl` path gives 404, a broken server 5xx).
    Status {
        /// HTTP status.
        status: u16,
    },
    /// No answer at all.
    Unreachable {
        /// Why.
        class: NetworkKind,
    },
}

impl ProbeOutcome {
    /// The stable code: `ENDPOINT_OK`, `ENDPOINT_AUTH_FAILED`, `ENDPOINT_STATUS`,
    /// `ENDPOINT_UNREACHABLE`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Ok { .. } => "ENDPOINT_OK",
            Self::AuthFailed { .. } => "ENDPOINT_AUTH_FAILED",
            Self::Status { .. } => "ENDPOINT_STATUS",
            Self::Unreachable { .. } => "ENDPOINT_UNREACHABLE",
        }
    }

    /// True for a 2xx answer.
    pub fn is_ok(self) -> bool {
        matches!(self, Self::Ok { .. })
    }
}

/// One probe's result (no body, no key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeReport {
    /// What it found.
    pub outcome: ProbeOutcome,
    /// From sending to the answer's status line (or the failure).
    pub latency: Duration,
    /// The request, as `GET /v1/models` (the path only; no query).
    pub request: String,
    /// `host[:port]` of the endpoint.
    pub host: String,
    /// The models list tried first when the server has none (`GET /v1/models → 404`): the
    /// probe was then a 1-token call, `request`.
    pub instead_of: Option<String>,
}

/// The statuses of a server that has no models list (many local OpenAI-compatible servers):
/// the probe falls back to a 1-token call.
const NO_LIST: [u16; 3] = [404, 405, 501];

/// Probes one endpoint with `http` (built by [`LlmClient::http_client`](super::LlmClient::http_client),
/// so that redirects are never followed). Refuses, sending nothing, a `baseUrl` the endpoint
/// rule refuses.
pub async fn probe(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    model: &str,
) -> Result<ProbeReport, LlmError> {
    endpoint_security(&endpoint.base_url, endpoint.allow_insecure_http).map_err(|problem| {
        LlmError::Endpoint {
            template: endpoint.template_id.clone(),
            problem,
        }
    })?;
    let (url, body) = request_of(endpoint, model)?;
    let listed = send(http, endpoint, &url, body.as_ref()).await?;
    let no_list =
        matches!(listed.outcome, ProbeOutcome::Status { status } if NO_LIST.contains(&status));
    if body.is_some() || !no_list {
        return Ok(listed);
    }
    let (url, body) = one_token_call(endpoint, model)?;
    let mut called = send(http, endpoint, &url, Some(&body)).await?;
    if let ProbeOutcome::Status { status } = listed.outcome {
        called.instead_of = Some(format!("{} → {status}", listed.request));
    }
    Ok(called)
}

/// Sends one probe request and classifies its answer.
async fn send(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    url: &str,
    body: Option<&Value>,
) -> Result<ProbeReport, LlmError> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|_| LlmError::InvalidRequest("the probe URL does not parse".into()))?;
    let builder = match body {
        Some(body) => http.post(parsed.clone()).json(body),
        None => http.get(parsed.clone()),
    };
    let builder =
        with_auth(builder, endpoint).timeout(endpoint.request_timeout.min(PROBE_TIMEOUT_CAP));
    let started = Instant::now();
    let sent = builder.send().await;
    let latency = started.elapsed();
    let outcome = match sent {
        Err(e) => ProbeOutcome::Unreachable {
            class: NetworkKind::of(&e),
        },
        Ok(response) => outcome_of(response).await,
    };
    Ok(ProbeReport {
        outcome,
        latency,
        request: format!(
            "{} {}",
            if body.is_some() { "POST" } else { "GET" },
            parsed.path()
        ),
        host: host_port(&parsed),
        instead_of: None,
    })
}

/// The URL and body of a 1-token model call ("ping", one output token): the probe of a wire
/// without a models list, or of a server that has none.
fn one_token_call(endpoint: &Endpoint, model: &str) -> Result<(String, Value), LlmError> {
    let base = endpoint.base_url.trim_end_matches('/');
    let mut request = ChatRequest::new(
        model,
        vec![ChatMessage::text(Role::User, "ping")],
        tokio_util::sync::CancellationToken::new(),
    );
    request.max_output_tokens = 1;
    let ctx = EncodeContext {
        wire: endpoint.wire,
        base_url: &endpoint.base_url,
        cache_ttl: endpoint.cache_ttl,
    };
    let body = adapters::encode(&request, &ctx)?;
    Ok((
        format!("{base}{}", adapters::path(endpoint.wire, model)),
        body,
    ))
}

/// The URL and, for a 1-token call, the body of a wire's probe.
fn request_of(endpoint: &Endpoint, model: &str) -> Result<(String, Option<Value>), LlmError> {
    let base = endpoint.base_url.trim_end_matches('/');
    let list = |path: &str| Ok((format!("{base}{path}"), None));
    match endpoint.wire {
        Wire::OpenAiCompat | Wire::OpenAiResponses | Wire::XaiResponses | Wire::MetaResponses => {
            list("/models")
        }
        Wire::Anthropic => list("/models?limit=1"),
        Wire::Gemini => list("/models?pageSize=1"),
        Wire::OllamaNative => list("/api/tags"),
        Wire::PerplexityResponses => {
            let (url, body) = one_token_call(endpoint, model)?;
            Ok((url, Some(body)))
        }
    }
}

/// Classifies an answer by its status; an error body is read (capped) only to tell a bad key
/// reported as 400, then dropped.
async fn outcome_of(response: reqwest::Response) -> ProbeOutcome {
    let status = response.status().as_u16();
    match status {
        200..=299 => ProbeOutcome::Ok { status },
        401 | 403 => ProbeOutcome::AuthFailed { status },
        _ => {
            let class = match read_capped(response, ERROR_BODY_CAP).await {
                Ok((bytes, _)) => {
                    let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    let (code, message) = adapters::error_fields(&value);
                    classify(status, code.as_deref(), &message)
                }
                Err(_) => classify(status, None, ""),
            };
            if class == RetryClass::Auth {
                ProbeOutcome::AuthFailed { status }
            } else {
                ProbeOutcome::Status { status }
            }
        }
    }
}

fn host_port(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}
