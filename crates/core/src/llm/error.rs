//! Errors of the LLM layer, each with a stable code, and the retry classes.

use std::time::Duration;

/// Why a call failed, in classes that decide whether to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetryClass {
    /// 429: retry after the hint.
    RateLimit,
    /// 529: retry with backoff.
    Overloaded,
    /// Other 5xx: retry with backoff.
    ServerError,
    /// The request timed out: retry.
    Timeout,
    /// The connection failed: retry.
    Network,
    /// 401/403, or a bad key reported as 400 (Gemini, xAI): stop.
    Auth,
    /// Out of credit (`insufficient_quota`, 402): stop.
    Billing,
    /// Any other 4xx, 408 included: stop.
    ClientError,
    /// The prompt does not fit the context window: stop.
    ContextLength,
}

impl RetryClass {
    /// True when another attempt may succeed.
    pub fn retries(self) -> bool {
        matches!(
            self,
            Self::RateLimit | Self::Overloaded | Self::ServerError | Self::Timeout | Self::Network
        )
    }

    /// The name used in `llm retry:` lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RateLimit => "rate_limit",
            Self::Overloaded => "overloaded",
            Self::ServerError => "server_error",
            Self::Timeout => "timeout",
            Self::Network => "network",
            Self::Auth => "auth",
            Self::Billing => "billing",
            Self::ClientError => "client_error",
            Self::ContextLength => "context_length",
        }
    }
}

/// What the provider said about a failed call (no request or response bodies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    /// HTTP status (0 when the failure came before or without one).
    pub status: u16,
    /// The class.
    pub class: RetryClass,
    /// The provider's error code or type (`rate_limit_error`, `RESOURCE_EXHAUSTED`, …).
    pub code: Option<String>,
    /// The provider's message, shortened, with the API key scrubbed.
    pub message: String,
    /// How long the provider asked us to wait.
    pub retry_after: Option<Duration>,
    /// Where that hint came from.
    pub hint_source: super::retry::HintSource,
}

/// What went wrong with a connection that brought no HTTP status: the class a user can act on
/// (a dead server, a wrong host name, a certificate, a slow server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NetworkKind {
    /// Nothing listens at the address.
    ConnectionRefused,
    /// The host name did not resolve.
    Dns,
    /// The TLS handshake failed (certificate, protocol).
    Tls,
    /// The request timed out.
    Timeout,
    /// The connection could not be made for another reason.
    Connect,
    /// The connection failed after it was made.
    Other,
}

impl NetworkKind {
    /// Every kind, for lookups by name.
    const ALL: [Self; 6] = [
        Self::ConnectionRefused,
        Self::Dns,
        Self::Tls,
        Self::Timeout,
        Self::Connect,
        Self::Other,
    ];

    /// The kind of a transport error, from its chain of causes.
    pub fn of(error: &reqwest::Error) -> Self {
        if error.is_timeout() {
            return Self::Timeout;
        }
        let mut causes = String::new();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            if cause.is::<rustls::Error>() {
                return Self::Tls;
            }
            if let Some(kind) = cause.downcast_ref::<std::io::Error>().and_then(Self::of_io) {
                return kind;
            }
            causes.push_str(&cause.to_string().to_ascii_lowercase());
            causes.push(' ');
            source = cause.source();
        }
        Self::from_causes(&causes, error.is_connect())
    }

    /// The kind an I/O error says, looking through the errors it wraps (an `io::Error`'s
    /// `source` skips the error it wraps; rustls's errors sit in there).
    fn of_io(io: &std::io::Error) -> Option<Self> {
        match io.kind() {
            std::io::ErrorKind::ConnectionRefused => return Some(Self::ConnectionRefused),
            std::io::ErrorKind::TimedOut => return Some(Self::Timeout),
            _ => {}
        }
        let inner = io.get_ref()?;
        if inner.is::<rustls::Error>() {
            return Some(Self::Tls);
        }
        inner.downcast_ref::<std::io::Error>().and_then(Self::of_io)
    }

    fn from_causes(causes: &str, connect: bool) -> Self {
        let any = |words: &[&str]| words.iter().any(|w| causes.contains(w));
        if any(&["connection refused"]) {
            Self::ConnectionRefused
        } else if any(&[
            "dns error",
            "failed to lookup",
            "name or service not known",
            "no such host",
        ]) {
            Self::Dns
        } else if any(&["tls", "certificate", "handshake", "rustls"]) {
            Self::Tls
        } else if connect {
            Self::Connect
        } else {
            Self::Other
        }
    }

    /// The name in logs, events and `ProviderError::code` (`connection_refused`, `dns`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ConnectionRefused => "connection_refused",
            Self::Dns => "dns",
            Self::Tls => "tls",
            Self::Timeout => "timeout",
            Self::Connect => "connect",
            Self::Other => "network",
        }
    }

    /// The kind in words.
    pub fn describe(self) -> &'static str {
        match self {
            Self::ConnectionRefused => "connection refused",
            Self::Dns => "DNS lookup failed",
            Self::Tls => "TLS handshake failed",
            Self::Timeout => "timed out",
            Self::Connect => "could not connect",
            Self::Other => "the connection failed",
        }
    }

    /// The kind named by [`Self::as_str`].
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// A failed call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// The request asks for something the wire or model cannot do. Nothing was sent.
    #[error("{wire} cannot {what}")]
    CapabilityUnsupported {
        /// The wire.
        wire: &'static str,
        /// What was asked.
        what: String,
        /// How to fix it.
        fix: String,
    },
    /// The provider answered with an error (after any retries).
    #[error("status {} ({}){}: {}", .0.status, .0.class.as_str(), .0.code.as_ref().map(|c| format!(" {c}")).unwrap_or_default(), .0.message)]
    Provider(Box<ProviderError>),
    /// The provider's answer could not be understood.
    #[error("{0}")]
    Decode(String),
    /// The request could not be built (bad canonical input).
    #[error("{0}")]
    InvalidRequest(String),
    /// The template needs an API key and none was given.
    #[error("no API key for template {0}")]
    KeyMissing(String),
    /// The answer body is over the template's cap. Never retried; nothing of the body is kept.
    #[error(
        "the model's answer is over {limit} bytes (template {template}); it was not read further and nothing of it was kept"
    )]
    ResponseTooLarge {
        /// The template.
        template: String,
        /// The cap, bytes.
        limit: u64,
    },
    /// A streamed answer stopped before its end (the connection broke on every attempt, a
    /// chunk was not JSON, the provider ended it with an error).
    #[error("the streamed answer stopped before its end (template {template}): {reason}")]
    StreamInterrupted {
        /// The template.
        template: String,
        /// What happened (a transport class or the chunk's problem; never the body).
        reason: String,
        /// The usage the broken streams reported before they stopped (paid for).
        usage: Option<crate::llm::Usage>,
    },
    /// The answer would parse into more JSON values than a turn may hold. Never retried.
    #[error(
        "the model's answer holds more than {limit} JSON values (template {template}); it was not parsed"
    )]
    ResponseTooComplex {
        /// The template.
        template: String,
        /// The most values.
        limit: usize,
    },
    /// The template's `baseUrl` breaks the endpoint rule. Nothing was sent.
    #[error("{problem} (template {template})")]
    Endpoint {
        /// The template.
        template: String,
        /// What is wrong.
        problem: crate::endpoint_rule::EndpointProblem,
    },
}

impl crate::error::Coded for LlmError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        match self {
            Self::CapabilityUnsupported { fix, .. } => Some(fix.clone().into()),
            Self::KeyMissing(template) => Some(crate::error::Fix::remedy(
                crate::error::Remedy::StoreSecret {
                    name: template.clone(),
                    env: true,
                },
                "",
            )),
            Self::ResponseTooLarge { .. } => {
                Some("raise maxResponseBytes of the template, or ask for a shorter answer".into())
            }
            Self::ResponseTooComplex { .. } => {
                Some("ask for a shorter answer or smaller tool arguments".into())
            }
            Self::StreamInterrupted { .. } => Some(
                "send the request again; if it recurs, set \"streaming\": false on the template"
                    .into(),
            ),
            Self::Endpoint {
                problem: problem @ crate::endpoint_rule::EndpointProblem::Demo { .. },
                ..
            } => Some(crate::error::Fix::remedy(
                crate::error::Remedy::RunDemo,
                format!("or {}", problem_fix(problem)),
            )),
            Self::Endpoint { problem, .. } => Some(problem_fix(problem).into()),
            Self::Provider(_) | Self::Decode(_) | Self::InvalidRequest(_) => None,
        }
    }
}

fn problem_fix(problem: &crate::endpoint_rule::EndpointProblem) -> &'static str {
    match problem {
        crate::endpoint_rule::EndpointProblem::Invalid { .. } => {
            "write an absolute URL such as https://api.openai.com/v1 in the template's baseUrl"
        }
        crate::endpoint_rule::EndpointProblem::Demo { .. } => {
            "write http://127.0.0.1:<port>/v1 (a free port, 1-65535) in the demo template's baseUrl"
        }
        crate::endpoint_rule::EndpointProblem::Insecure { .. } => {
            "use https, or set \"allowInsecureHttp\": true on the template for a model server on your own network"
        }
    }
}

impl LlmError {
    /// Whether the provider may have charged for the call although no usage came back: the
    /// request was sent and then something went wrong with the answer (too large, not
    /// decodable, a 2xx that is not JSON, a timeout while waiting).
    pub fn maybe_billed(&self) -> bool {
        match self {
            Self::ResponseTooLarge { .. }
            | Self::ResponseTooComplex { .. }
            | Self::StreamInterrupted { .. }
            | Self::Decode(_) => true,
            Self::Provider(failure) => {
                (200..300).contains(&failure.status) || failure.class == RetryClass::Timeout
            }
            _ => false,
        }
    }
    /// The usage reported before the failure (a stream that broke), to be counted.
    pub fn usage_so_far(&self) -> Option<&crate::llm::Usage> {
        match self {
            Self::StreamInterrupted { usage, .. } => usage.as_ref(),
            _ => None,
        }
    }

    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::CapabilityUnsupported { .. } => "CAPABILITY_UNSUPPORTED",
            Self::Provider(_) => "LLM_HTTP",
            Self::Decode(_) => "LLM_DECODE",
            Self::InvalidRequest(_) => "LLM_REQUEST_INVALID",
            Self::KeyMissing(_) => "LLM_KEY_MISSING",
            Self::ResponseTooLarge { .. } | Self::ResponseTooComplex { .. } => {
                "LLM_RESPONSE_TOO_LARGE"
            }
            Self::StreamInterrupted { .. } => "LLM_STREAM_INTERRUPTED",
            Self::Endpoint { problem, .. } => problem.code(),
        }
    }

    /// The HTTP status of the provider's answer; `None` when there was none (a transport
    /// failure, or nothing was sent).
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Provider(p) if p.status != 0 => Some(p.status),
            _ => None,
        }
    }

    /// What kind of transport failure brought no status (`None` for any other error).
    pub fn network_kind(&self) -> Option<NetworkKind> {
        match self {
            Self::Provider(p) if p.status == 0 => Some(
                p.code
                    .as_deref()
                    .and_then(NetworkKind::from_name)
                    .unwrap_or(if p.class == RetryClass::Timeout {
                        NetworkKind::Timeout
                    } else {
                        NetworkKind::Other
                    }),
            ),
            _ => None,
        }
    }

    /// The failure's class as a user reads it: the network kind of a transport failure
    /// (`connection_refused`, `dns`, `tls`, `timeout`, …), else the retry class of an HTTP
    /// failure (`auth`, `rate_limit`, …); `None` for errors that are not the provider's.
    pub fn failure_class(&self) -> Option<&'static str> {
        match self {
            Self::Provider(p) => Some(
                self.network_kind()
                    .map_or_else(|| p.class.as_str(), NetworkKind::as_str),
            ),
            _ => None,
        }
    }

    /// The retry class, for provider errors.
    pub fn class(&self) -> Option<RetryClass> {
        match self {
            Self::Provider(p) => Some(p.class),
            _ => None,
        }
    }

    pub(crate) fn unsupported(
        wire: super::Wire,
        what: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self::CapabilityUnsupported {
            wire: wire.as_str(),
            what: what.into(),
            fix: fix.into(),
        }
    }
}

/// Classifies a provider error from its status, code/type and message.
pub fn classify(status: u16, code: Option<&str>, message: &str) -> RetryClass {
    let code_l = code.unwrap_or("").to_ascii_lowercase();
    let msg_l = message.to_ascii_lowercase();
    if code_l.contains("insufficient_quota") || status == 402 || code_l.contains("billing") {
        return RetryClass::Billing;
    }
    match status {
        429 => RetryClass::RateLimit,
        529 => RetryClass::Overloaded,
        500..=599 => RetryClass::ServerError,
        401 | 403 => RetryClass::Auth,
        400 | 413 if is_context_length(&code_l, &msg_l) => RetryClass::ContextLength,
        400 if is_bad_key(&code_l, &msg_l) => RetryClass::Auth,
        _ => RetryClass::ClientError,
    }
}

fn is_context_length(code: &str, msg: &str) -> bool {
    code.contains("context_length_exceeded")
        || msg.contains("prompt is too long")
        || msg.contains("maximum context length")
        || msg.contains("exceeds the maximum number of tokens")
        || msg.contains("context length")
        || msg.contains("context window")
}

fn is_bad_key(code: &str, msg: &str) -> bool {
    code.contains("api_key_invalid")
        || code.contains("invalid_api_key")
        || msg.contains("api key not valid")
        || msg.contains("incorrect api key")
        || msg.contains("invalid api key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_the_reference() {
        assert_eq!(
            classify(429, Some("rate_limit_exceeded"), ""),
            RetryClass::RateLimit
        );
        assert_eq!(
            classify(429, Some("insufficient_quota"), ""),
            RetryClass::Billing
        );
        assert_eq!(
            classify(529, Some("overloaded_error"), ""),
            RetryClass::Overloaded
        );
        assert_eq!(
            classify(503, Some("UNAVAILABLE"), ""),
            RetryClass::ServerError
        );
        assert_eq!(classify(401, None, ""), RetryClass::Auth);
        assert_eq!(classify(408, None, ""), RetryClass::ClientError);
        assert_eq!(
            classify(
                400,
                Some("INVALID_ARGUMENT"),
                "API key not valid. Please pass a valid API key."
            ),
            RetryClass::Auth
        );
        assert_eq!(
            classify(400, None, "Incorrect API key provided: ba***na."),
            RetryClass::Auth
        );
        assert_eq!(
            classify(
                400,
                Some("invalid_request_error"),
                "prompt is too long: 208656 tokens > 200000 maximum"
            ),
            RetryClass::ContextLength
        );
        assert_eq!(
            classify(400, Some("context_length_exceeded"), ""),
            RetryClass::ContextLength
        );
        assert_eq!(
            classify(400, Some("invalid_request_error"), "Invalid 'temperature'"),
            RetryClass::ClientError
        );
        assert!(RetryClass::Network.retries() && !RetryClass::ContextLength.retries());
    }

    #[test]
    fn network_kinds_from_their_causes() {
        let kind = |causes: &str| NetworkKind::from_causes(causes, true);
        assert_eq!(
            kind("tcp connect error connection refused (os error 111)"),
            NetworkKind::ConnectionRefused
        );
        assert_eq!(
            kind("dns error failed to lookup address information"),
            NetworkKind::Dns
        );
        assert_eq!(
            kind("invalid peer certificate: unknownissuer"),
            NetworkKind::Tls
        );
        assert_eq!(kind("something else"), NetworkKind::Connect);
        assert_eq!(NetworkKind::from_causes("reset", false), NetworkKind::Other);
        for k in NetworkKind::ALL {
            assert_eq!(NetworkKind::from_name(k.as_str()), Some(k));
        }
    }

    #[test]
    fn display_has_no_code_prefix() {
        let e = LlmError::KeyMissing("t".into());
        assert!(!e.to_string().starts_with('['), "{e}");
        assert_eq!(e.code(), "LLM_KEY_MISSING");
    }
}
