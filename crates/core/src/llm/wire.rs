//! The wires (HTTP protocols) the LLM layer speaks (a template selects one through
//! `model_endpoint::wire_of`).

use serde::{Deserialize, Serialize};

/// A wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wire {
    /// OpenAI chat completions and compatible servers.
    OpenAiCompat,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini native `generateContent`.
    Gemini,
    /// OpenAI Responses.
    OpenAiResponses,
    /// xAI Responses.
    XaiResponses,
    /// Meta Responses.
    MetaResponses,
    /// Perplexity Agent (Responses-style).
    PerplexityResponses,
    /// Ollama native `/api/chat`.
    OllamaNative,
}

impl Wire {
    /// Every wire.
    pub const ALL: [Wire; 8] = [
        Self::OpenAiCompat,
        Self::Anthropic,
        Self::Gemini,
        Self::OpenAiResponses,
        Self::XaiResponses,
        Self::MetaResponses,
        Self::PerplexityResponses,
        Self::OllamaNative,
    ];

    /// The name used in logs and errors.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiCompat => "open_ai_compat",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::OpenAiResponses => "open_ai_responses",
            Self::XaiResponses => "xai_responses",
            Self::MetaResponses => "meta_responses",
            Self::PerplexityResponses => "perplexity_responses",
            Self::OllamaNative => "ollama",
        }
    }

    /// True for the Responses-style wires.
    pub fn is_responses(self) -> bool {
        matches!(
            self,
            Self::OpenAiResponses
                | Self::XaiResponses
                | Self::MetaResponses
                | Self::PerplexityResponses
        )
    }

    /// The key under which this wire keeps its data in a block's `extra`.
    pub fn extra_key(self) -> &'static str {
        match self {
            Self::OpenAiCompat => "open_ai_compat",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::OllamaNative => "ollama",
            // One Responses family: items replay across the four flavours' own calls only,
            // but the shape is shared.
            Self::OpenAiResponses
            | Self::XaiResponses
            | Self::MetaResponses
            | Self::PerplexityResponses => "responses",
        }
    }
}

/// Which OpenAI-compatible server a base URL points at; they differ in what they honour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompatFlavour {
    /// OpenAI itself or an unknown server.
    OpenAi,
    /// Ollama's `/v1` (ignores `tool_choice`).
    Ollama,
    /// Gemini's OpenAI endpoint (thought signatures in `extra_content`).
    Gemini,
}

impl CompatFlavour {
    /// Detects the flavour from the base URL.
    pub(crate) fn detect(base_url: &str) -> Self {
        let lower = base_url.to_ascii_lowercase();
        if lower.contains("generativelanguage.googleapis.com") {
            Self::Gemini
        } else if lower.contains(":11434") || lower.contains("ollama") {
            Self::Ollama
        } else {
            Self::OpenAi
        }
    }
}
