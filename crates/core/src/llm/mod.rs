//! The LLM layer: one canonical interface (a superset with capability flags;
//! docs/decisions/0004-llm-layer.md), thin adapters per wire, one HTTP client with retries
//! and mandatory cancellation.
//!
//! Nothing outside `adapters/` reads a provider's raw JSON (`ChatResponse::raw` is for logs).

pub(crate) mod adapters;
pub(crate) mod canonical;
pub(crate) mod capability;
pub(crate) mod client;
pub(crate) mod error;
pub(crate) mod json_budget;
pub(crate) mod probe;
pub(crate) mod proxy;
pub(crate) mod retry;
pub(crate) mod sse;
pub(crate) mod stream_read;
pub(crate) mod usage;
pub(crate) mod wire;

pub use adapters::CacheTtl;
pub use canonical::{
    Attachment, AttachmentKind, ChatMessage, ChatRequest, ChatResponse, ContentBlock, DeltaSink,
    Grounding, GroundingSource, InFlight, Piece, ProviderSkills, ResponseFormat, Role, StopReason,
    ToolCall, ToolChoice, ToolResult, ToolSpec,
};
pub use capability::Capabilities;
pub use client::{ApiKey, Endpoint, LlmClient};
pub use error::{LlmError, NetworkKind, ProviderError, RetryClass, classify};
pub use probe::{ProbeOutcome, ProbeReport, probe};
pub use retry::{HintSource, gemini_retry_delay};
pub(crate) use tokio_util::sync::CancellationToken;
pub use usage::Usage;
pub use wire::Wire;
