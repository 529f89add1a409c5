//! Provider presets for a new village: the endpoint, wire and a starting model for each
//! provider `init` offers. The model name is only a starting point; users edit `world.json`.

use super::template::{Credential, Provider};

/// One provider `init` can set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderPreset {
    /// The `--provider` value.
    pub key: &'static str,
    /// The template id written (also the secret-store key of its API key).
    pub template_id: &'static str,
    /// Template display name.
    pub name: &'static str,
    /// Base URL.
    pub base_url: &'static str,
    /// Starting model.
    pub model: &'static str,
    /// Wire.
    pub provider: Provider,
    /// `keyring` for hosted APIs, `not_required` for local servers.
    pub credential: Credential,
}

/// Every preset, in the order `--help` lists them.
pub const PRESETS: &[ProviderPreset] = &[
    ProviderPreset {
        key: "openai",
        template_id: "openai",
        name: "OpenAI",
        base_url: "https://api.openai.com/v1",
        model: "gpt-5-mini",
        provider: Provider::OpenAiCompat,
        credential: Credential::Keyring,
    },
    ProviderPreset {
        key: "openai-responses",
        template_id: "openai_responses",
        name: "OpenAI (Responses)",
        base_url: "https://api.openai.com/v1",
        model: "gpt-5-mini",
        provider: Provider::OpenAiResponses,
        credential: Credential::Keyring,
    },
    ProviderPreset {
        key: "anthropic",
        template_id: "anthropic",
        name: "Anthropic",
        base_url: "https://api.anthropic.com/v1",
        model: "claude-sonnet-4-5",
        provider: Provider::Anthropic,
        credential: Credential::Keyring,
    },
    ProviderPreset {
        key: "gemini",
        template_id: "gemini",
        name: "Gemini",
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        model: "gemini-2.5-flash",
        provider: Provider::Gemini,
        credential: Credential::Keyring,
    },
    ProviderPreset {
        key: "xai",
        template_id: "xai",
        name: "xAI",
        base_url: "https://api.x.ai/v1",
        model: "grok-4",
        provider: Provider::XaiResponses,
        credential: Credential::Keyring,
    },
    ProviderPreset {
        key: "meta",
        template_id: "meta",
        name: "Meta Llama API",
        base_url: "https://api.llama.com/v1",
        model: "Llama-4-Maverick-17B-128E-Instruct-FP8",
        provider: Provider::MetaResponses,
        credential: Credential::Keyring,
    },
    ProviderPreset {
        key: "perplexity",
        template_id: "perplexity",
        name: "Perplexity",
        base_url: "https://api.perplexity.ai/v1",
        model: "sonar",
        provider: Provider::PerplexityResponses,
        credential: Credential::Keyring,
    },
    ProviderPreset {
        key: "ollama",
        template_id: "ollama",
        name: "Ollama (local)",
        base_url: "http://127.0.0.1:11434/v1",
        model: "llama3.2",
        provider: Provider::OpenAiCompat,
        credential: Credential::NotRequired,
    },
    ProviderPreset {
        key: "lmstudio",
        template_id: "lmstudio",
        name: "LM Studio (local)",
        base_url: "http://127.0.0.1:1234/v1",
        model: "local-model",
        provider: Provider::OpenAiCompat,
        credential: Credential::NotRequired,
    },
];

/// The preset for a `--provider` value.
pub fn preset(key: &str) -> Option<&'static ProviderPreset> {
    PRESETS.iter().find(|p| p.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::village::ids::is_safe_identifier;

    #[test]
    fn presets_are_well_formed() {
        for p in PRESETS {
            assert!(is_safe_identifier(p.template_id), "{}", p.key);
            assert_eq!(preset(p.key), Some(p));
            let local = p.base_url.starts_with("http://127.0.0.1");
            assert_eq!(local, p.credential == Credential::NotRequired, "{}", p.key);
            assert!(local || p.base_url.starts_with("https://"), "{}", p.key);
        }
    }
}
