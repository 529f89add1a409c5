//! How a model template of the village becomes what the LLM layer calls: its [`Endpoint`]
//! (refused before anything is sent when the endpoint rule or the key says no), the [`Wire`] its
//! provider speaks, and the [`ProviderSkills`] a request to it carries. It sits above `village`
//! and `llm` (floor 4, ARCHITECTURE.md "Core's floors") so that `llm` takes plain settings and
//! names nothing of the village, and below `judge`, whose backends call models too.

use std::time::Duration;

use crate::llm::{ApiKey, CacheTtl, Endpoint, LlmError, ProviderSkills, Wire};
use crate::village::{Credential, ModelTemplate, Provider};

/// The endpoint of a template. A `baseUrl` the endpoint rule refuses (`ENDPOINT_INVALID`,
/// `ENDPOINT_INSECURE`; a `demo` template anywhere but its one loopback address), and a template
/// that needs a key (`keyring`, or `unset`: no key chosen yet) and has none, are refused here,
/// before anything is sent.
pub fn endpoint_of(
    template: &ModelTemplate,
    api_key: Option<ApiKey>,
) -> Result<Endpoint, LlmError> {
    template
        .endpoint_security()
        .map_err(|problem| LlmError::Endpoint {
            template: template.id.to_string(),
            problem,
        })?;
    let needs_key = template.credential != Credential::NotRequired;
    if needs_key && api_key.is_none() {
        return Err(LlmError::KeyMissing(template.id.to_string()));
    }
    Ok(Endpoint {
        template_id: template.id.to_string(),
        wire: wire_of(template),
        base_url: template.base_url.clone(),
        api_key: if needs_key { api_key } else { None },
        request_timeout: Duration::from_secs(template.request_timeout_secs.max(1)),
        max_attempts: template.max_retries.max(1),
        cache_ttl: CacheTtl::OneHour,
        context_limit: template.context_length,
        output_limit: template.max_output_tokens,
        max_response_bytes: template.response_cap(),
        allow_insecure_http: template.allow_insecure_http,
        stream: template.streaming,
    })
}

/// The wire a template speaks (its `provider`, written or detected from `baseUrl`).
pub fn wire_of(template: &ModelTemplate) -> Wire {
    match template.provider() {
        Provider::OpenAiCompat => Wire::OpenAiCompat,
        Provider::Anthropic => Wire::Anthropic,
        Provider::Gemini => Wire::Gemini,
        Provider::XaiResponses => Wire::XaiResponses,
        Provider::OpenAiResponses => Wire::OpenAiResponses,
        Provider::MetaResponses => Wire::MetaResponses,
        Provider::PerplexityResponses => Wire::PerplexityResponses,
        Provider::Ollama => Wire::OllamaNative,
        // The embedded demo model speaks OpenAI-compatible chat completions.
        Provider::Demo => Wire::OpenAiCompat,
    }
}

/// The provider skills switched on in a template (each effective only on its own wire).
pub fn skills_of(template: &ModelTemplate) -> ProviderSkills {
    ProviderSkills {
        google_search: template.google_search,
        gemini_url_context: template.gemini_url_context,
        xai_web_search: template.xai_web_search,
        xai_x_search: template.xai_x_search,
        openai_web_search: template.openai_web_search,
        openai_reasoning_pro: template.openai_reasoning_pro,
        meta_web_search: template.meta_web_search,
        perplexity_web_search: template.perplexity_web_search,
        perplexity_finance_search: template.perplexity_finance_search,
        perplexity_people_search: template.perplexity_people_search,
        perplexity_fetch_url: template.perplexity_fetch_url,
    }
}
