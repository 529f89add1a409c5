//! The canonical conversation: messages of content blocks, tool calls and results, tool specs,
//! the request and the response. Every wire adapter translates to and from these types only.
//!
//! Provider data that must go back verbatim (Gemini thought signatures, Responses reasoning
//! items, Anthropic thinking blocks) rides in the `extra` of the block it precedes or belongs
//! to, keyed by wire family, so another wire simply ignores it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::usage::Usage;
use crate::effort::Effort;

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions (the composed system prompt).
    System,
    /// The user (or whoever sends the request).
    User,
    /// The model.
    Assistant,
    /// Results of tool calls.
    Tool,
}

/// One message: a role and its content blocks, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said, in order.
    pub content: Vec<ContentBlock>,
}

impl ChatMessage {
    /// A message holding one text block.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: vec![ContentBlock::text(text)],
        }
    }

    /// The text blocks joined with newlines.
    pub fn joined_text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// A piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Provider data tied to this text (see the module doc).
        #[serde(default, skip_serializing_if = "Value::is_null")]
        extra: Value,
    },
    /// An image, audio, video or PDF.
    Attachment(Attachment),
    /// A call the model asks for.
    ToolUse(ToolCall),
    /// The result of a call, sent back to the model.
    ToolResult(ToolResult),
}

impl ContentBlock {
    /// A text block without provider data.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text {
            text: text.into(),
            extra: Value::Null,
        }
    }

    /// The kind of block, for comparing shapes across wires.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Attachment(_) => "attachment",
            Self::ToolUse(_) => "tool_use",
            Self::ToolResult(_) => "tool_result",
        }
    }
}

/// Kinds of attachment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttachmentKind {
    /// An image.
    Image,
    /// Audio.
    Audio,
    /// Video.
    Video,
    /// A PDF document.
    Pdf,
}

/// A file sent to the model with a message.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    /// What it is.
    pub kind: AttachmentKind,
    /// MIME type (`image/webp`, `audio/wav`, `application/pdf`, …).
    pub media_type: String,
    /// The bytes, base64-encoded (standard alphabet, no data-URL prefix).
    pub data: String,
    /// The file name shown to the user.
    #[serde(default)]
    pub file_name: String,
}

impl std::fmt::Debug for Attachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attachment")
            .field("kind", &self.kind)
            .field("media_type", &self.media_type)
            .field("data_chars", &self.data.len())
            .field("file_name", &self.file_name)
            .finish()
    }
}

impl Attachment {
    /// `data:<media type>;base64,<data>`.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }

    /// The format word some wires want for audio (`wav`, `mp3`).
    pub fn audio_format(&self) -> &str {
        self.media_type
            .rsplit('/')
            .next()
            .map(|s| if s == "mpeg" { "mp3" } else { s })
            .unwrap_or("wav")
    }
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id (synthesised when the wire gives none).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments (a JSON object).
    pub args: Value,
    /// Provider data to send back verbatim with this call (see the module doc).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub extra: Value,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name (some wires key results by name).
    pub name: String,
    /// The result text.
    pub content: String,
    /// True when the tool failed.
    #[serde(default)]
    pub is_error: bool,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Name (≤ 64 characters, `[A-Za-z0-9_-]`).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
}

/// How the model must use tools.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "mode", content = "name", rename_all = "snake_case")]
pub enum ToolChoice {
    /// No tool calls.
    None,
    /// The model decides.
    #[default]
    Auto,
    /// At least one tool call.
    Required,
    /// This tool must be called.
    Specific(String),
}

/// A JSON Schema the answer must follow (structured output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseFormat {
    /// Schema name.
    pub name: String,
    /// The JSON Schema.
    pub schema: Value,
}

/// Provider skills switched on in the template (`model_endpoint::skills_of`); each is effective
/// only on its own wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProviderSkills {
    /// Gemini: Google Search grounding.
    pub google_search: bool,
    /// Gemini: URL context.
    pub gemini_url_context: bool,
    /// xAI: web search.
    pub xai_web_search: bool,
    /// xAI: X search.
    pub xai_x_search: bool,
    /// OpenAI Responses: web search.
    pub openai_web_search: bool,
    /// OpenAI Responses: reasoning "pro".
    pub openai_reasoning_pro: bool,
    /// Meta: web search.
    pub meta_web_search: bool,
    /// Perplexity: web search.
    pub perplexity_web_search: bool,
    /// Perplexity: finance search.
    pub perplexity_finance_search: bool,
    /// Perplexity: people search.
    pub perplexity_people_search: bool,
    /// Perplexity: fetch URL.
    pub perplexity_fetch_url: bool,
}

/// What to do with a request in flight when the token is cancelled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InFlight {
    /// Let it finish so that its usage is recorded; only waits between retries are cut short.
    /// An answer that is streaming is cut instead (its text is being watched, and what its
    /// stream reported of its usage so far is kept).
    #[default]
    Finish,
    /// Drop the connection at once (its usage is then unknown).
    Abort,
}

/// What a streamed answer hands out as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    /// The next piece of the answer's text.
    Text(&'a str),
    /// The stream broke and the call is sent again: the pieces so far are void.
    Restart,
}

/// Where a streamed answer's text goes as it arrives (the orchestrator's `messageDelta`).
#[derive(Clone)]
pub struct DeltaSink(pub std::sync::Arc<dyn Fn(Piece<'_>) + Send + Sync>);

impl std::fmt::Debug for DeltaSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeltaSink")
    }
}

/// One call to a model.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// Model name.
    pub model: String,
    /// The conversation; system messages first.
    pub messages: Vec<ChatMessage>,
    /// Tools offered.
    pub tools: Vec<ToolSpec>,
    /// How tools must be used.
    pub tool_choice: ToolChoice,
    /// Allow several calls in one answer (`None` = the provider's default).
    pub parallel_tool_calls: Option<bool>,
    /// Sampling temperature (not sent when absent).
    pub temperature: Option<f64>,
    /// Output cap in tokens.
    pub max_output_tokens: u32,
    /// Reasoning effort.
    pub effort: Option<Effort>,
    /// Characters of the system text that stay identical from call to call (the cache
    /// breakpoint goes right after them).
    pub cacheable_prefix_len: usize,
    /// Structured output.
    pub response_format: Option<ResponseFormat>,
    /// Provider skills of the template.
    pub skills: ProviderSkills,
    /// Cancels the call (not optional: every call can be stopped).
    pub cancel: CancellationToken,
    /// What cancellation does to a request in flight.
    pub in_flight: InFlight,
    /// Under [`InFlight::Finish`], cuts a streamed answer that has begun: a person's interrupt
    /// stops paying for a long answer, while a close's interrupt (Ctrl+C of `ask`) lets the
    /// answer in flight finish as an unstreamed one would. Defaults to `cancel`.
    pub stream_cut: CancellationToken,
    /// The hard stop (the close grace ran out): cuts the call at once even when `in_flight`
    /// says finish; its usage is then unknown.
    pub abort: CancellationToken,
    /// Receives the answer's text as it arrives when the endpoint streams.
    pub on_delta: Option<DeltaSink>,
}

impl ChatRequest {
    /// A request with defaults for everything but the model, messages and cancel token.
    pub fn new(
        model: impl Into<String>,
        messages: Vec<ChatMessage>,
        cancel: CancellationToken,
    ) -> Self {
        Self {
            model: model.into(),
            messages,
            tools: Vec::new(),
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: None,
            temperature: None,
            max_output_tokens: 8192,
            effort: None,
            cacheable_prefix_len: 0,
            response_format: None,
            skills: ProviderSkills::default(),
            stream_cut: cancel.clone(),
            cancel,
            in_flight: InFlight::Finish,
            abort: CancellationToken::new(),
            on_delta: None,
        }
    }

    /// The system text: every system message's text, joined with blank lines.
    pub fn system_text(&self) -> String {
        let parts: Vec<String> = self
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(ChatMessage::joined_text)
            .collect();
        parts.join("\n\n")
    }

    /// The messages after the system messages.
    pub fn turns(&self) -> impl Iterator<Item = &ChatMessage> {
        self.messages.iter().filter(|m| m.role != Role::System)
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A finished answer.
    End,
    /// It wants tool results.
    ToolUse,
    /// It hit the output cap (or the context window).
    MaxTokens,
    /// The call was cancelled.
    Aborted,
    /// It refused (content filter, safety).
    Refusal,
}

impl StopReason {
    /// The GenAI spelling (`gen_ai.response.finish_reasons`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::End => "stop",
            Self::ToolUse => "tool_calls",
            Self::MaxTokens => "length",
            Self::Aborted => "cancelled",
            Self::Refusal => "content_filter",
        }
    }
}

/// A source the answer was grounded on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroundingSource {
    /// URL.
    pub uri: String,
    /// Title.
    #[serde(default)]
    pub title: String,
}

/// Search provenance of an answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grounding {
    /// Search queries the provider ran.
    pub queries: Vec<String>,
    /// Sources cited.
    pub sources: Vec<GroundingSource>,
    /// Which engine (`google`, `xai`, `open_ai`, `meta`, `perplexity`).
    pub engine: String,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// Text and tool calls, in the order the model gave them.
    pub content: Vec<ContentBlock>,
    /// Why it stopped.
    pub stop: StopReason,
    /// Tokens, as the provider reported them; `None` when it reported none (an aborted call
    /// never invents figures).
    pub usage: Option<Usage>,
    /// Search provenance.
    pub grounding: Option<Grounding>,
    /// Reasoning summaries (display only; never part of history).
    pub reasoning_summary: Vec<String>,
    /// The model that answered, when the provider says.
    pub model: Option<String>,
    /// The provider's body, for logs only: nothing outside the adapters reads it.
    pub raw: Value,
}

impl ChatResponse {
    /// An aborted call: no content, no usage.
    pub fn aborted() -> Self {
        Self::aborted_with(None)
    }

    /// An aborted call with the usage its stream reported before the cut (`Some`, maybe zero,
    /// only for a call cut while its answer streamed or after a paid broken stream: its usage
    /// is then unknown beyond that).
    pub fn aborted_with(usage: Option<Usage>) -> Self {
        Self {
            content: Vec::new(),
            stop: StopReason::Aborted,
            usage,
            grounding: None,
            reasoning_summary: Vec::new(),
            model: None,
            raw: Value::Null,
        }
    }

    /// The text blocks joined with newlines (`None` when there is no text).
    pub fn text(&self) -> Option<String> {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text, .. } if !text.is_empty() => Some(text.as_str()),
                _ => None,
            })
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n"))
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> Vec<&ToolCall> {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse(call) => Some(call),
                _ => None,
            })
            .collect()
    }

    /// The answer as an assistant message for the history (provider data kept).
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage {
            role: Role::Assistant,
            content: self.content.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_round_trip_through_json_without_loss() {
        let messages = vec![
            ChatMessage::text(Role::System, "rules"),
            ChatMessage {
                role: Role::User,
                content: vec![
                    ContentBlock::text("look"),
                    ContentBlock::Attachment(Attachment {
                        kind: AttachmentKind::Pdf,
                        media_type: "application/pdf".into(),
                        data: "JVBERi0=".into(),
                        file_name: "a.pdf".into(),
                    }),
                ],
            },
            ChatMessage {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::Text {
                        text: "calling".into(),
                        extra: json!({"gemini": {"thoughtSignature": "c2ln"}}),
                    },
                    ContentBlock::ToolUse(ToolCall {
                        id: "c1".into(),
                        name: "grep".into(),
                        args: json!({"pattern": "x", "n": [1, 2.5, null]}),
                        extra: json!({"responses": {"before": [{"type": "reasoning", "encrypted_content": "e"}]}}),
                    }),
                ],
            },
            ChatMessage {
                role: Role::Tool,
                content: vec![ContentBlock::ToolResult(ToolResult {
                    call_id: "c1".into(),
                    name: "grep".into(),
                    content: "3 hits".into(),
                    is_error: true,
                })],
            },
        ];
        let text = serde_json::to_string(&messages).unwrap();
        let back: Vec<ChatMessage> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, messages);
        let choice: ToolChoice = serde_json::from_str(
            &serde_json::to_string(&ToolChoice::Specific("x".into())).unwrap(),
        )
        .unwrap();
        assert_eq!(choice, ToolChoice::Specific("x".into()));
    }

    #[test]
    fn attachments_do_not_print_their_bytes() {
        let a = Attachment {
            kind: AttachmentKind::Image,
            media_type: "image/png".into(),
            data: "SECRETBYTES".into(),
            file_name: String::new(),
        };
        assert!(!format!("{a:?}").contains("SECRETBYTES"));
        assert_eq!(a.data_url(), "data:image/png;base64,SECRETBYTES");
    }
}
