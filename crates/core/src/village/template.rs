//! Model templates (`world.json` `modelTemplates[]`): which wire, endpoint and model an agent
//! talks to, its limits, provider-skill flags and prices, and the endpoint rule as a template
//! keeps it (`endpoint_rule.rs` at the crate root: an absolute http(s) `baseUrl`, plain http only
//! to loopback unless `allowInsecureHttp`; a `demo` template at its one loopback address).

use serde::{Deserialize, Serialize};

use super::Extra;
use super::ids::TemplateId;
use crate::effort::Effort;
use crate::endpoint_rule::{EndpointProblem, EndpointSecurity, demo_port, endpoint_security};

/// The wire protocol a template speaks. Spellings are those of the original's `world.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// OpenAI-compatible chat completions (also Ollama `/v1`, LM Studio, vLLM, Gemini's
    /// OpenAI endpoint). The default for unknown hosts.
    OpenAiCompat,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini native `generateContent`.
    Gemini,
    /// xAI Responses.
    XaiResponses,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Meta Responses.
    MetaResponses,
    /// Perplexity Responses.
    PerplexityResponses,
    /// Ollama's native `/api/chat`. Not a value the original knows: a village using it cannot
    /// be opened by the original (see docs/decisions/0004-llm-layer.md).
    Ollama,
    /// The embedded demo model of `fuseforks-cli demo`: a scripted OpenAI-compatible server
    /// inside our own process, on loopback only (never an AI). Only `demo` writes it; the
    /// original does not know the value.
    Demo,
}

impl Provider {
    /// Every provider, in the reference's order.
    pub const ALL: [Provider; 9] = [
        Self::OpenAiCompat,
        Self::Anthropic,
        Self::Gemini,
        Self::XaiResponses,
        Self::OpenAiResponses,
        Self::MetaResponses,
        Self::PerplexityResponses,
        Self::Ollama,
        Self::Demo,
    ];

    /// The spelling in `world.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiCompat => "open_ai_compat",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::XaiResponses => "xai_responses",
            Self::OpenAiResponses => "open_ai_responses",
            Self::MetaResponses => "meta_responses",
            Self::PerplexityResponses => "perplexity_responses",
            Self::Ollama => "ollama",
            Self::Demo => "demo",
        }
    }

    /// The provider the original assumes when `provider` is absent: `api.anthropic.com` means
    /// Anthropic, every other host the OpenAI-compatible wire.
    pub fn detect_from_base_url(base_url: &str) -> Self {
        if host_of(base_url).eq_ignore_ascii_case("api.anthropic.com") {
            Self::Anthropic
        } else {
            Self::OpenAiCompat
        }
    }
}

fn host_of(url: &str) -> &str {
    let rest = url
        .trim()
        .split_once("://")
        .map_or(url.trim(), |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if let Some(bracketed) = host_port.strip_prefix('[') {
        return bracketed.split(']').next().unwrap_or("");
    }
    host_port.split(':').next().unwrap_or("")
}

/// Where the template's API key comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Credential {
    /// No key has been set yet. The original's older spelling `"none"` reads as this.
    #[default]
    #[serde(alias = "none")]
    Unset,
    /// The endpoint needs no key (a local model).
    NotRequired,
    /// The key lives in the secret store under the template id.
    Keyring,
}

/// The default context window of a template, in tokens.
pub(crate) const DEFAULT_CONTEXT_LENGTH: u64 = 128_000;
/// The default output cap of a template, in tokens.
pub(crate) const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8_192;
/// The default request timeout of a template, in seconds.
pub(crate) const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 120;
/// The default number of attempts (first try included).
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 3;
/// The default cap on a model's answer body, in bytes (16 MiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;
/// The highest cap a template may set (32 MiB): larger values are read as this. A decoded
/// answer takes several times its size in memory (measured: a 100 MB answer under a 256 MiB
/// cap reached 944 MB RSS), so the cap is what bounds the process.
pub const MAX_RESPONSE_BYTES_LIMIT: u64 = 32 * 1024 * 1024;

/// One model template. Optional values are written as `null`, as the original writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelTemplate {
    /// Template id; also the secret-store key of its API key.
    pub id: TemplateId,
    /// Display name.
    pub name: String,
    /// Base URL of the API (`https://api.openai.com/v1`).
    pub base_url: String,
    /// Model name sent to the API.
    pub model: String,
    /// Context window in tokens.
    #[serde(default = "default_context_length")]
    pub context_length: u64,
    /// Sampling temperature; not sent when absent.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Output cap in tokens.
    #[serde(default = "default_max_output_tokens")]
    pub max_output_tokens: u32,
    /// Where the API key comes from.
    #[serde(default)]
    pub credential: Credential,
    /// The wire. Absent in old files: the store fills it from `baseUrl` on read.
    #[serde(default)]
    pub provider: Option<Provider>,
    /// False = the schema-in-prompt fallback instead of native tool calling.
    #[serde(default = "yes")]
    pub use_tools: bool,
    /// Reasoning effort.
    #[serde(default)]
    pub effort: Option<Effort>,
    /// Gemini: Google Search grounding.
    #[serde(default)]
    pub google_search: bool,
    /// xAI: web search.
    #[serde(default)]
    pub xai_web_search: bool,
    /// xAI: X search.
    #[serde(default)]
    pub xai_x_search: bool,
    /// OpenAI Responses: web search.
    #[serde(default)]
    pub openai_web_search: bool,
    /// OpenAI Responses: reasoning "pro" mode.
    #[serde(default)]
    pub openai_reasoning_pro: bool,
    /// Meta: web search.
    #[serde(default)]
    pub meta_web_search: bool,
    /// Perplexity: web search.
    #[serde(default)]
    pub perplexity_web_search: bool,
    /// Perplexity: finance search.
    #[serde(default)]
    pub perplexity_finance_search: bool,
    /// Perplexity: people search.
    #[serde(default)]
    pub perplexity_people_search: bool,
    /// Perplexity: fetch URL.
    #[serde(default)]
    pub perplexity_fetch_url: bool,
    /// Gemini: URL context.
    #[serde(default)]
    pub gemini_url_context: bool,
    /// Seconds before a request times out.
    #[serde(default = "default_request_timeout_secs")]
    pub request_timeout_secs: u64,
    /// Total attempts per call (first try included).
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Price per million input tokens.
    #[serde(default)]
    pub input_per_mtok: Option<f64>,
    /// Price per million output tokens.
    #[serde(default)]
    pub output_per_mtok: Option<f64>,
    /// Price per million cache-read tokens.
    #[serde(default)]
    pub cache_read_per_mtok: Option<f64>,
    /// Price per million cache-write tokens (5 minutes).
    #[serde(default)]
    pub cache_write_per_mtok: Option<f64>,
    /// Price per million cache-write tokens (1 hour).
    #[serde(default, rename = "cacheWrite1hPerMtok")]
    pub cache_write_1h_per_mtok: Option<f64>,
    /// When the prices were taken (free text, usually a date).
    #[serde(default)]
    pub pricing_as_of: Option<String>,
    /// The largest answer body read from the model, in bytes (absent:
    /// [`DEFAULT_MAX_RESPONSE_BYTES`]). Not a field of the original: omitted when unset, so the
    /// original's files are written back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// Allows plain `http://` to a host that is not loopback (a model server on the LAN); the
    /// key then travels in clear text, and `check` warns. Not a field of the original: omitted
    /// when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub allow_insecure_http: bool,
    /// Answers are streamed (Server-Sent Events; Ollama's own API: JSON lines), so that their
    /// text is seen as it is written (`messageDelta` events); on by default, as every wire
    /// streams. `false`: whole answers (for a server that refuses `stream` or
    /// `stream_options`). Not a field of the original: omitted when true (the original's
    /// files, which lack it, read as on and are written back unchanged).
    #[serde(default = "on", skip_serializing_if = "is_true")]
    pub streaming: bool,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl ModelTemplate {
    /// A template with every default, for the given endpoint.
    pub fn new(
        id: TemplateId,
        name: impl Into<String>,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        Self {
            id,
            name: name.into(),
            base_url: base_url.into(),
            model: model.into(),
            context_length: DEFAULT_CONTEXT_LENGTH,
            temperature: None,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            credential: Credential::Unset,
            provider: None,
            use_tools: true,
            effort: None,
            google_search: false,
            xai_web_search: false,
            xai_x_search: false,
            openai_web_search: false,
            openai_reasoning_pro: false,
            meta_web_search: false,
            perplexity_web_search: false,
            perplexity_finance_search: false,
            perplexity_people_search: false,
            perplexity_fetch_url: false,
            gemini_url_context: false,
            request_timeout_secs: DEFAULT_REQUEST_TIMEOUT_SECS,
            max_retries: DEFAULT_MAX_RETRIES,
            input_per_mtok: None,
            output_per_mtok: None,
            cache_read_per_mtok: None,
            cache_write_per_mtok: None,
            cache_write_1h_per_mtok: None,
            pricing_as_of: None,
            max_response_bytes: None,
            allow_insecure_http: false,
            streaming: true,
            extra: Extra::new(),
        }
    }

    /// The wire this template speaks (written, or detected from `baseUrl`).
    pub fn provider(&self) -> Provider {
        self.provider
            .unwrap_or_else(|| Provider::detect_from_base_url(&self.base_url))
    }

    /// True when both the input and the output price are known.
    pub fn is_priced(&self) -> bool {
        self.input_per_mtok.is_some() && self.output_per_mtok.is_some()
    }

    /// The cap on an answer body, in bytes (1 ..= [`MAX_RESPONSE_BYTES_LIMIT`]).
    pub fn response_cap(&self) -> u64 {
        self.max_response_bytes
            .unwrap_or(DEFAULT_MAX_RESPONSE_BYTES)
            .clamp(1, MAX_RESPONSE_BYTES_LIMIT)
    }

    /// Checks `baseUrl` against the endpoint rule: an absolute `http(s)` URL with a host, and
    /// plain `http` only to loopback (`127.0.0.0/8`, `::1`, `localhost`) unless
    /// `allowInsecureHttp`. A village with a bad endpoint still opens (so that it can be fixed);
    /// `check`/`ask`/`serve` and the LLM client refuse to use the template.
    /// A `demo` template must be plain `http` to loopback (`allowInsecureHttp` ignored): the
    /// demo model never leaves this machine.
    pub fn endpoint_security(&self) -> Result<EndpointSecurity, EndpointProblem> {
        if self.provider() == Provider::Demo {
            return demo_port(&self.base_url).map(|_| EndpointSecurity::Loopback);
        }
        endpoint_security(&self.base_url, self.allow_insecure_http)
    }
}

fn default_context_length() -> u64 {
    DEFAULT_CONTEXT_LENGTH
}
fn default_max_output_tokens() -> u32 {
    DEFAULT_MAX_OUTPUT_TOKENS
}
fn default_request_timeout_secs() -> u64 {
    DEFAULT_REQUEST_TIMEOUT_SECS
}
fn default_max_retries() -> u32 {
    DEFAULT_MAX_RETRIES
}
fn yes() -> bool {
    true
}
fn on() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_detection() {
        let detect = Provider::detect_from_base_url;
        assert_eq!(detect("https://api.anthropic.com/v1"), Provider::Anthropic);
        assert_eq!(
            detect("https://API.Anthropic.com:443/v1"),
            Provider::Anthropic
        );
        assert_eq!(
            detect("https://api.anthropic.com.evil.example/v1"),
            Provider::OpenAiCompat
        );
        assert_eq!(
            detect("https://user@api.anthropic.com/v1"),
            Provider::Anthropic
        );
        assert_eq!(detect("http://127.0.0.1:11434/v1"), Provider::OpenAiCompat);
        assert_eq!(detect("http://[::1]:8080/v1"), Provider::OpenAiCompat);
        assert_eq!(detect(""), Provider::OpenAiCompat);
    }

    #[test]
    fn new_fields_are_omitted_when_unset_and_kept_when_set() {
        let t = ModelTemplate::new(TemplateId::new("t").unwrap(), "t", "https://x", "m");
        let v = serde_json::to_value(&t).unwrap();
        assert!(v.get("maxResponseBytes").is_none() && v.get("allowInsecureHttp").is_none());
        assert_eq!(t.response_cap(), DEFAULT_MAX_RESPONSE_BYTES);
        let mut v = v;
        v["maxResponseBytes"] = 4096.into();
        v["allowInsecureHttp"] = true.into();
        v["somethingNew"] = "kept".into();
        let back: ModelTemplate = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back.response_cap(), 4096);
        let mut huge = back.clone();
        huge.max_response_bytes = Some(u64::MAX);
        assert_eq!(
            huge.response_cap(),
            MAX_RESPONSE_BYTES_LIMIT,
            "never unbounded"
        );
        assert!(back.allow_insecure_http);
        assert_eq!(serde_json::to_value(&back).unwrap(), v);
    }

    #[test]
    fn a_demo_template_never_leaves_loopback() {
        let id = TemplateId::new("demo").unwrap();
        let mut t = ModelTemplate::new(id, "Demo", "http://127.0.0.1:4100/v1", "demo");
        t.provider = Some(Provider::Demo);
        assert_eq!(t.endpoint_security(), Ok(EndpointSecurity::Loopback));
        t.allow_insecure_http = true;
        for url in [
            "http://192.168.1.5:4100/v1",
            "https://api.openai.com/v1",
            "https://127.0.0.1:4100/v1",
            // Loopback, but not where the demo model listens (or not as the host reads it).
            "http://[::1]:4100/v1",
            "http://127.0.0.2:4100/v1",
            "http://127.1:4100/v1",
            "http://2130706433:4100/v1",
            "HTTP://127.0.0.1:4100/v1",
            "http://localhost:4100/v1",
            "http://127.0.0.1/v1",
            "http://127.0.0.1:0/v1",
            "http://127.0.0.1:04100/v1",
            "http://127.0.0.1:+4100/v1",
            "http://127.0.0.1:65536/v1",
            "http://127.0.0.1:4100/v2",
            "http://127.0.0.1:4100/v1/",
            "http://127.0.0.1:4100",
            "http://127.0.0.1:4100/v1?x=1",
            "http://127.0.0.1:4100/v1#f",
            " http://127.0.0.1:4100/v1",
            "http://user@127.0.0.1:4100/v1",
        ] {
            t.base_url = url.into();
            let problem = t.endpoint_security().unwrap_err();
            assert_eq!(problem.code(), "ENDPOINT_INVALID", "{url}");
            assert!(problem.to_string().contains("demo"), "{problem}");
            assert_eq!(demo_port(url), Err(problem), "{url}: one rule");
        }
        assert_eq!(demo_port("http://127.0.0.1:65535/v1"), Ok(65535));
        assert_eq!(demo_port("http://127.0.0.1:1/v1"), Ok(1));
        t.provider = Some(Provider::OpenAiCompat);
        t.base_url = "http://192.168.1.5:4100/v1".into();
        assert_eq!(t.endpoint_security(), Ok(EndpointSecurity::InsecureAllowed));
    }

    #[test]
    fn spellings_match_serde() {
        for p in Provider::ALL {
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_str());
        }
        let old: Credential = serde_json::from_str("\"none\"").unwrap();
        assert_eq!(old, Credential::Unset);
        assert_eq!(serde_json::to_value(Credential::Unset).unwrap(), "unset");
    }
}
