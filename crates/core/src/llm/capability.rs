//! Capability flags per wire and model, and the check that turns a request asking for a missing
//! capability into `CAPABILITY_UNSUPPORTED` before anything is sent. No silent fallback: the
//! only emulations are listed on [`Capabilities`] and documented in
//! docs/decisions/0004-llm-layer.md.

use super::canonical::{AttachmentKind, ChatRequest, ContentBlock, ToolChoice};
use super::error::LlmError;
use super::wire::{CompatFlavour, Wire};

/// What a wire (and model) can do.
///
/// Documented emulations (same meaning, different encoding): `ToolChoice::None` on a wire
/// without a `none` value is sent as "no tools offered"; `ToolChoice::Auto` on a wire without a
/// `tool_choice` field is the wire's default and is not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Native tool calling.
    pub tool_calling: bool,
    /// Several tool calls in one answer.
    pub parallel_tool_calls: bool,
    /// `ToolChoice::Required` / `Specific` can be enforced.
    pub force_supported: bool,
    /// Images carried.
    pub image: bool,
    /// Audio carried.
    pub audio: bool,
    /// Video carried.
    pub video: bool,
    /// PDFs carried.
    pub pdf: bool,
    /// Structured output (a JSON Schema for the answer).
    pub structured_output: bool,
    /// The wire streams (a template's `streaming` asks for it).
    pub streaming: bool,
    /// Context window, tokens.
    pub context_limit: u64,
    /// Output cap, tokens.
    pub output_limit: u32,
}

impl Capabilities {
    /// The capabilities of a wire for a model, with the limits of its template.
    pub fn of(
        wire: Wire,
        base_url: &str,
        model: &str,
        thinking: bool,
        context_limit: u64,
        output_limit: u32,
    ) -> Self {
        let mut caps = Self {
            tool_calling: true,
            parallel_tool_calls: true,
            force_supported: true,
            image: true,
            audio: false,
            video: false,
            pdf: true,
            structured_output: true,
            streaming: true,
            context_limit,
            output_limit,
        };
        match wire {
            // Reference "carries" table: compat [y,y,n,y].
            Wire::OpenAiCompat => {
                caps.audio = true;
                if CompatFlavour::detect(base_url) == CompatFlavour::Ollama {
                    // Ollama's /v1 ignores tool_choice: forcing would silently not happen.
                    caps.force_supported = false;
                    caps.audio = false;
                    caps.pdf = false;
                }
            }
            // [y,n,n,y]; thinking forbids any/tool choices (400).
            Wire::Anthropic => caps.force_supported = !thinking,
            // [y,y,y,y]; no parallel switch, but parallel calls happen.
            Wire::Gemini => {
                caps.audio = true;
                caps.video = true;
            }
            // [y,n,n,y].
            Wire::OpenAiResponses | Wire::XaiResponses => {}
            // [y,y,y,y]; auto only.
            Wire::MetaResponses => {
                caps.audio = true;
                caps.video = true;
                caps.force_supported = false;
                caps.structured_output = false;
            }
            // Carries not recorded: images only, conservatively.
            Wire::PerplexityResponses => {
                caps.pdf = false;
            }
            // Images in `message.images`; no tool_choice field.
            Wire::OllamaNative => {
                caps.pdf = false;
                caps.force_supported = false;
            }
        }
        let _ = model;
        caps
    }

    /// Whether an attachment kind is carried.
    pub fn carries(&self, kind: AttachmentKind) -> bool {
        match kind {
            AttachmentKind::Image => self.image,
            AttachmentKind::Audio => self.audio,
            AttachmentKind::Video => self.video,
            AttachmentKind::Pdf => self.pdf,
        }
    }

    /// Refuses a request that asks for something this wire cannot do.
    pub fn check(&self, wire: Wire, request: &ChatRequest) -> Result<(), LlmError> {
        if !request.tools.is_empty() && !self.tool_calling {
            return Err(LlmError::unsupported(
                wire,
                "call tools",
                "use a template whose provider supports tool calling",
            ));
        }
        let forced = matches!(
            request.tool_choice,
            ToolChoice::Required | ToolChoice::Specific(_)
        );
        if forced && !self.force_supported {
            return Err(LlmError::unsupported(
                wire,
                "force a tool call (tool_choice required/specific)",
                "ask with ToolChoice::Auto and say in the prompt which tool to call",
            ));
        }
        if let ToolChoice::Specific(name) = &request.tool_choice
            && !request.tools.iter().any(|t| &t.name == name)
        {
            return Err(LlmError::InvalidRequest(format!(
                "tool_choice names {name:?}, which is not among the tools offered"
            )));
        }
        if request.parallel_tool_calls == Some(true) && !self.parallel_tool_calls {
            return Err(LlmError::unsupported(
                wire,
                "make parallel tool calls",
                "leave parallel_tool_calls unset",
            ));
        }
        if request.max_output_tokens > self.output_limit {
            return Err(LlmError::unsupported(
                wire,
                format!(
                    "produce {} output tokens (the template allows {})",
                    request.max_output_tokens, self.output_limit
                ),
                "lower max_output_tokens, or raise maxOutputTokens in the template",
            ));
        }
        if request.response_format.is_some() && !self.structured_output {
            return Err(LlmError::unsupported(
                wire,
                "follow a JSON Schema (structured output)",
                "describe the format in the prompt instead",
            ));
        }
        for message in &request.messages {
            for block in &message.content {
                if let ContentBlock::Attachment(a) = block
                    && !self.carries(a.kind)
                {
                    return Err(LlmError::unsupported(
                        wire,
                        format!("carry a {:?} attachment ({})", a.kind, a.media_type)
                            .to_lowercase(),
                        "send it to a template whose provider carries this kind, or leave it out",
                    ));
                }
            }
        }
        Ok(())
    }
}
