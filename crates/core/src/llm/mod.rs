//! The LLM layer: one canonical interface (a superset with capability flags, seed 002 §2), thin
//! adapters per wire, one HTTP client with Spec 52 retries and mandatory cancellation.
//!
//! Nothing outside `adapters/` reads a provider's raw JSON (`ChatResponse::raw` is for logs).

pub mod adapters;
pub mod canonical;
pub mod capability;
pub mod client;
pub mod error;
pub(crate) mod json_budget;
pub mod probe;
pub mod retry;
pub mod usage;
pub mod wire;

pub use canonical::{
    Attachment, AttachmentKind, ChatMessage, ChatRequest, ChatResponse, ContentBlock, Grounding,
    GroundingSource, InFlight, ProviderSkills, ResponseFormat, Role, StopReason, ToolCall,
    ToolChoice, ToolResult, ToolSpec,
};
pub use capability::Capabilities;
pub use client::{ApiKey, Endpoint, LlmClient};
pub use error::{LlmError, NetworkKind, ProviderError, RetryClass};
pub use tokio_util::sync::CancellationToken;
pub use usage::Usage;
pub use wire::Wire;
