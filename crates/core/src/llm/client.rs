//! The one HTTP client of the LLM layer: checks the endpoint rule and capabilities, encodes
//! through the wire's adapter, sends with the wire's auth, reads answers incrementally up to a
//! cap (the template's `maxResponseBytes`; error bodies up to 64 KiB), classifies failures,
//! retries with backoff and honours cancellation. Logs carry counts and
//! codes only, never bodies or keys.

use std::sync::{Arc, Once};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::json_budget::{MAX_JSON_VALUES, over_value_budget};

use super::adapters::{self, CacheTtl, EncodeContext, anthropic};
use super::canonical::{ChatRequest, ChatResponse, InFlight};
use super::capability::Capabilities;
use super::error::{LlmError, ProviderError, RetryClass, classify};
use super::retry::{self, HintSource, MAX_HINT};
use super::stream_read::StreamState;
use super::usage::Usage;
use super::wire::Wire;
use crate::endpoint_rule::endpoint_security;
use crate::log::{LogSink, TracingSink};

/// The most read of an error answer (4xx/5xx): enough for any provider's error envelope.
pub(crate) const ERROR_BODY_CAP: u64 = 64 * 1024;

/// An API key. Its `Debug` never shows the value.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The value: only for building a request (an auth header); never log or display it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<hidden>)")
    }
}

/// Where and how to call one model: plain settings, so that the LLM layer names nothing of the
/// village (`model_endpoint::endpoint_of` builds one from a model template).
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The template it was made from (named in errors).
    pub template_id: String,
    /// The wire.
    pub wire: Wire,
    /// Base URL (the adapter's path is appended).
    pub base_url: String,
    /// The key, when the endpoint needs one.
    pub api_key: Option<ApiKey>,
    /// Per-attempt timeout.
    pub request_timeout: Duration,
    /// Total attempts, the first included (at least 1).
    pub max_attempts: u32,
    /// Anthropic cache lifetime.
    pub cache_ttl: CacheTtl,
    /// Context window, tokens.
    pub context_limit: u64,
    /// Output cap, tokens.
    pub output_limit: u32,
    /// The largest answer body read, in bytes (the template's `maxResponseBytes`, default
    /// 16 MiB).
    pub max_response_bytes: u64,
    /// Plain `http` to a host that is not loopback is allowed (the template's
    /// `allowInsecureHttp`).
    pub allow_insecure_http: bool,
    /// Answers are streamed (the template's `streaming`, where the wire streams).
    pub stream: bool,
}

impl Endpoint {
    /// The capabilities of this endpoint for a request's model and thinking.
    pub fn capabilities(&self, request: &ChatRequest) -> Capabilities {
        Capabilities::of(
            self.wire,
            &self.base_url,
            &request.model,
            request.effort.is_some(),
            self.context_limit,
            self.output_limit,
        )
    }

    /// The endpoint rule again, on the URL about to be used: whatever built this endpoint, a
    /// key never leaves over plain http to a host that is not loopback unless the template
    /// allows it.
    fn check_transport(&self) -> Result<(), LlmError> {
        endpoint_security(&self.base_url, self.allow_insecure_http)
            .map(|_| ())
            .map_err(|problem| LlmError::Endpoint {
                template: self.template_id.clone(),
                problem,
            })
    }

    /// The size in bytes of `request`'s body as this endpoint would send it (system prompt,
    /// history, tool specs, options): what the budget reserves for its input. `None` when the
    /// request cannot be encoded (then `chat` refuses it before sending anything).
    pub fn request_bytes(&self, request: &ChatRequest) -> Option<usize> {
        let ctx = EncodeContext {
            wire: self.wire,
            base_url: &self.base_url,
            cache_ttl: self.cache_ttl,
        };
        let mut body = adapters::encode(request, &ctx).ok()?;
        if self.stream {
            super::stream_read::ask_to_stream(self.wire, &mut body);
        }
        serde_json::to_vec(&body).ok().map(|bytes| bytes.len())
    }

    fn url(&self, model: &str) -> String {
        format!(
            "{}{}",
            self.base_url.trim_end_matches('/'),
            adapters::path(self.wire, model)
        )
    }
}

/// Sends canonical requests over HTTP. Cheap to clone (shares one connection pool).
#[derive(Debug, Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    log: Arc<dyn LogSink>,
}

static CRYPTO: Once = Once::new();

impl LlmClient {
    /// Installs rustls' ring provider for the process (once): every HTTP client of the
    /// process is built after it (this one's, and the trace exporter's).
    pub fn install_crypto() {
        CRYPTO.call_once(|| {
            // Another part of the process may have installed one first; either is fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
    }

    /// An HTTP client with rustls (ring), shared by the model wires and remote MCP servers.
    pub fn http_client() -> Result<reqwest::Client, LlmError> {
        Self::install_crypto();
        // No redirects: a model API does not redirect, and a redirect would carry the key
        // headers (`x-api-key`, `x-goog-api-key`, MCP `${secret:}` headers) and the whole
        // conversation to another host, perhaps over plain http.
        // The environment's proxy, never for a loopback host (`proxy.rs`).
        let builder = reqwest::Client::builder()
            .user_agent(crate::version::user_agent())
            .redirect(reqwest::redirect::Policy::none());
        super::proxy::configure(builder)
            .build()
            .map_err(|e| LlmError::InvalidRequest(format!("cannot build the HTTP client: {e}")))
    }

    /// A client with rustls (ring), no redirects, and no proxy for loopback hosts.
    pub fn new() -> Result<Self, LlmError> {
        let http = Self::http_client()?;
        Ok(Self {
            http,
            log: Arc::new(TracingSink),
        })
    }

    /// Sends `llm retry:` lines to `log` (the village log) instead of `tracing`.
    pub fn with_log(mut self, log: Arc<dyn LogSink>) -> Self {
        self.log = log;
        self
    }

    /// Sends one request, retrying as docs/decisions/0004-llm-layer.md says (a stream whose
    /// connection broke as a network failure). A cancelled call returns
    /// [`StopReason::Aborted`](super::StopReason::Aborted) with the usage its streams reported
    /// so far (`None` when none did).
    pub async fn chat(
        &self,
        endpoint: &Endpoint,
        request: &ChatRequest,
    ) -> Result<ChatResponse, LlmError> {
        let wire = endpoint.wire;
        endpoint.check_transport()?;
        endpoint.capabilities(request).check(wire, request)?;
        let ctx = EncodeContext {
            wire,
            base_url: &endpoint.base_url,
            cache_ttl: endpoint.cache_ttl,
        };
        let mut body = adapters::encode(request, &ctx)?;
        if endpoint.stream {
            super::stream_read::ask_to_stream(wire, &mut body);
        }
        let url = match endpoint.stream {
            true => super::stream_read::stream_url(wire, endpoint.url(&request.model)),
            false => endpoint.url(&request.model),
        };
        let attempts = endpoint.max_attempts.max(1);
        // What broken streams reported before they broke: paid for, so counted.
        let mut paid: Option<Usage> = None;
        for attempt in 0..attempts {
            if request.cancel.is_cancelled() || request.abort.is_cancelled() {
                return Ok(ChatResponse::aborted_with(paid));
            }
            let state = StreamState::default();
            let send = self.send(endpoint, &url, &body, request.on_delta.as_ref(), &state);
            let outcome = match request.in_flight {
                InFlight::Abort => tokio::select! {
                    outcome = send => Some(outcome),
                    () = request.cancel.cancelled() => None,
                    () = request.abort.cancelled() => None,
                },
                InFlight::Finish => tokio::select! {
                    outcome = send => Some(outcome),
                    () = request.abort.cancelled() => None,
                    () = state.cancelled_mid_stream(&request.stream_cut), if endpoint.stream => None,
                },
            };
            let Some(outcome) = outcome else {
                return Ok(ChatResponse::aborted_with(state.cut(paid)));
            };
            let failure = match outcome {
                Ok(value) => {
                    let mut response = adapters::decode(wire, value)?;
                    if let Some(before) = paid {
                        response.usage = sum(Some(before), response.usage);
                    }
                    return Ok(response);
                }
                Err(Failed::Fatal(e)) => {
                    return Err(with_usage(e, sum(paid, state.usage_so_far())));
                }
                Err(Failed::Provider(failure)) => failure,
                Err(Failed::Broken(reason)) => {
                    paid = sum(paid, state.usage_so_far());
                    if attempt + 1 == attempts {
                        return Err(LlmError::StreamInterrupted {
                            template: endpoint.template_id.clone(),
                            reason,
                            usage: paid,
                        });
                    }
                    if let Some(sink) = &request.on_delta {
                        (sink.0)(super::Piece::Restart);
                    }
                    broken_stream(reason)
                }
            };
            let last = attempt + 1 == attempts;
            if !failure.class.retries() || last {
                return Err(LlmError::Provider(Box::new(failure)));
            }
            if let Some(hint) = failure.retry_after.filter(|h| *h > MAX_HINT) {
                return Err(self.hint_too_long(request, attempt, attempts, failure, hint));
            }
            let wait = retry::backoff(attempt, failure.retry_after, retry::jitter(attempt, &url));
            self.retry_line(request, attempt, attempts, &failure, wait);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = request.cancel.cancelled() => return Ok(ChatResponse::aborted_with(paid)),
                () = request.abort.cancelled() => return Ok(ChatResponse::aborted_with(paid)),
            }
        }
        Ok(ChatResponse::aborted_with(paid))
    }

    /// The `llm retry stop:` line of a hint over the limit, and the error it ends with.
    fn hint_too_long(
        &self,
        request: &ChatRequest,
        attempt: u32,
        attempts: u32,
        mut failure: ProviderError,
        hint: Duration,
    ) -> LlmError {
        self.log.line(&format!(
            "llm retry stop: model={} attempt={}/{} status={} class={} code={} hint={}s reason=hint_too_long",
            request.model,
            attempt + 1,
            attempts,
            failure.status,
            failure.class.as_str(),
            failure.code.as_deref().unwrap_or("-"),
            hint.as_secs()
        ));
        failure.message = format!(
            "{} (the provider asked to wait {} s, over the 60 s limit)",
            failure.message,
            hint.as_secs()
        );
        LlmError::Provider(Box::new(failure))
    }

    /// The `llm retry:` line before a wait.
    fn retry_line(
        &self,
        request: &ChatRequest,
        attempt: u32,
        attempts: u32,
        failure: &ProviderError,
        wait: Duration,
    ) {
        self.log.line(&format!(
            "llm retry: model={} attempt={}/{} status={} class={} code={} hint={} src={} wait={}ms",
            request.model,
            attempt + 1,
            attempts,
            failure.status,
            failure.class.as_str(),
            failure.code.as_deref().unwrap_or("-"),
            failure
                .retry_after
                .map_or_else(|| "-".to_owned(), |h| format!("{}ms", h.as_millis())),
            failure.hint_source.as_str(),
            wait.as_millis()
        ));
    }

    /// One attempt: the answer's JSON, or why there is none.
    async fn send(
        &self,
        endpoint: &Endpoint,
        url: &str,
        body: &Value,
        on_delta: Option<&super::DeltaSink>,
        state: &StreamState,
    ) -> Result<Value, Failed> {
        let mut builder = self
            .http
            .post(url)
            .timeout(endpoint.request_timeout)
            .json(body);
        builder = with_auth(builder, endpoint);
        let response = builder
            .send()
            .await
            .map_err(|e| Failed::Provider(transport_failure(&e, endpoint)))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let ok = (200..300).contains(&status);
        let streamed = headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| super::stream_read::is_stream(endpoint.wire, v));
        if ok && endpoint.stream && streamed {
            return super::stream_read::read_stream(response, endpoint, on_delta, state).await;
        }
        let cap = if ok {
            endpoint.max_response_bytes
        } else {
            ERROR_BODY_CAP
        };
        let (bytes, complete) = read_capped(response, cap)
            .await
            .map_err(|e| Failed::Provider(transport_failure(&e, endpoint)))?;
        if ok {
            if !complete {
                return Err(Failed::Fatal(LlmError::ResponseTooLarge {
                    template: endpoint.template_id.clone(),
                    limit: cap,
                }));
            }
            if over_value_budget(&bytes, MAX_JSON_VALUES) {
                return Err(Failed::Fatal(LlmError::ResponseTooComplex {
                    template: endpoint.template_id.clone(),
                    limit: MAX_JSON_VALUES,
                }));
            }
            // A 2xx that is not JSON is a web page or a proxy, not a busy model server:
            // retrying it only pays the wait again.
            return serde_json::from_slice::<Value>(&bytes).map_err(|_| {
                Failed::Fatal(LlmError::Decode(format!(
                    "the answer (HTTP {status}, {} bytes) is not JSON: the template's baseUrl may point at a web page instead of the API (an OpenAI-compatible one usually ends in /v1)",
                    bytes.len()
                )))
            });
        }
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Err(Failed::Provider(provider_error(
            status, &headers, &value, endpoint,
        )))
    }
}

/// Why an attempt brought no answer.
pub(super) enum Failed {
    /// The provider failed (retried per its class).
    Provider(ProviderError),
    /// A failure another attempt cannot fix (an answer over the cap).
    Fatal(LlmError),
    /// A stream's connection broke (retried as a network failure is).
    Broken(String),
}

/// Two usages added up (`None` only when both are).
fn sum(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a.add(&b);
            Some(a)
        }
        (a, b) => a.or(b),
    }
}

/// A stream error with the usage seen before it.
fn with_usage(error: LlmError, seen: Option<Usage>) -> LlmError {
    match error {
        LlmError::StreamInterrupted {
            template, reason, ..
        } => LlmError::StreamInterrupted {
            template,
            reason,
            usage: seen,
        },
        other => other,
    }
}

/// A broken stream as the failure the retry policy reads (a network failure, no status).
fn broken_stream(reason: String) -> ProviderError {
    ProviderError {
        status: 0,
        class: RetryClass::Network,
        code: Some("stream_interrupted".into()),
        message: reason,
        retry_after: None,
        hint_source: HintSource::None,
    }
}

/// Reads a body chunk by chunk, at most `cap` bytes; `false` = there was more (reading stopped
/// there, or at once when the declared length is over the cap). The body is never read whole
/// before the check.
pub(super) async fn read_capped(
    mut response: reqwest::Response,
    cap: u64,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    if response.content_length().is_some_and(|len| len > cap) {
        return Ok((Vec::new(), false));
    }
    let hint = response.content_length().unwrap_or(0).min(cap);
    let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0));
    while let Some(chunk) = response.chunk().await? {
        if (bytes.len() + chunk.len()) as u64 > cap {
            return Ok((bytes, false));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok((bytes, true))
}

/// The provider error of an HTTP error answer: its code and message (scrubbed, shortened), its
/// class and its retry hint (headers and body).
fn provider_error(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    value: &Value,
    endpoint: &Endpoint,
) -> ProviderError {
    let (code, message) = adapters::error_fields(value);
    let message = scrub(&message, endpoint);
    let header_hint = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(retry::parse_retry_after_ms)
        .or_else(|| {
            headers
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| retry::parse_retry_after(v, SystemTime::now()))
        });
    let body_hint = retry::gemini_retry_delay(value);
    let retry_after = match (header_hint, body_hint) {
        (Some(h), Some(b)) => Some(h.max(b)),
        (h, b) => h.or(b),
    };
    let hint_source = match (header_hint.is_some(), body_hint.is_some()) {
        (true, true) => HintSource::Both,
        (true, false) => HintSource::Header,
        (false, true) => HintSource::Body,
        (false, false) => HintSource::None,
    };
    ProviderError {
        status,
        class: classify(status, code.as_deref(), &message),
        code,
        message,
        retry_after,
        hint_source,
    }
}

pub(super) fn with_auth(
    builder: reqwest::RequestBuilder,
    endpoint: &Endpoint,
) -> reqwest::RequestBuilder {
    let key = endpoint.api_key.as_ref().map(ApiKey::expose);
    match endpoint.wire {
        Wire::Anthropic => {
            let mut b = builder.header("anthropic-version", anthropic::API_VERSION);
            if endpoint.cache_ttl == CacheTtl::OneHour {
                b = b.header("anthropic-beta", anthropic::EXTENDED_TTL_BETA);
            }
            match key {
                Some(k) => b.header("x-api-key", k),
                None => b,
            }
        }
        Wire::Gemini => match key {
            Some(k) => builder.header("x-goog-api-key", k),
            None => builder,
        },
        _ => match key {
            Some(k) => builder.bearer_auth(k),
            None => builder,
        },
    }
}

fn transport_failure(error: &reqwest::Error, endpoint: &Endpoint) -> ProviderError {
    let class = if error.is_timeout() {
        RetryClass::Timeout
    } else {
        RetryClass::Network
    };
    let kind = super::error::NetworkKind::of(error);
    ProviderError {
        status: 0,
        class,
        code: Some(kind.as_str().to_owned()),
        message: scrub(kind.describe(), endpoint),
        retry_after: None,
        hint_source: HintSource::None,
    }
}

/// Shortens a provider message and removes the API key from it, should the provider echo it.
fn scrub(message: &str, endpoint: &Endpoint) -> String {
    let mut text: String = message.chars().take(500).collect();
    if let Some(key) = endpoint
        .api_key
        .as_ref()
        .map(ApiKey::expose)
        .filter(|k| k.len() >= 4)
    {
        text = text.replace(key, "<api key>");
    }
    text
}
