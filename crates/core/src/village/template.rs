//! Model templates (`world.json` `modelTemplates[]`): which wire, endpoint and model an agent
//! talks to, its limits, provider-skill flags and prices.

use serde::{Deserialize, Serialize};

use super::Extra;
use super::ids::TemplateId;

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
}

impl Provider {
    /// Every provider, in the reference's order.
    pub const ALL: [Provider; 8] = [
        Self::OpenAiCompat,
        Self::Anthropic,
        Self::Gemini,
        Self::XaiResponses,
        Self::OpenAiResponses,
        Self::MetaResponses,
        Self::PerplexityResponses,
        Self::Ollama,
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

/// Reasoning effort asked of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Extra high.
    Xhigh,
    /// Maximum.
    Max,
}

/// The default context window of a template, in tokens.
pub const DEFAULT_CONTEXT_LENGTH: u64 = 128_000;
/// The default output cap of a template, in tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 8_192;
/// The default request timeout of a template, in seconds.
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 120;
/// The default number of attempts (first try included).
pub const DEFAULT_MAX_RETRIES: u32 = 3;

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
    fn spellings_match_serde() {
        for p in Provider::ALL {
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_str());
        }
        let old: Credential = serde_json::from_str("\"none\"").unwrap();
        assert_eq!(old, Credential::Unset);
        assert_eq!(serde_json::to_value(Credential::Unset).unwrap(), "unset");
    }
}
