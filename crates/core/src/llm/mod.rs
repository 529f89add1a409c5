//! The LLM layer: one canonical interface (a superset with capability flags;
//! docs/decisions/0004-llm-layer.md), thin adapters per wire, one HTTP client with retries
//! and mandatory cancellation.
//!
//! Nothing outside `adapters/` reads a provider's raw JSON (`ChatResponse::raw` is for logs).
//!
//! # Parts
//!
//! `llm/` — one canonical interface to every model wire (decision 0004):
//!
//! | module | owns |
//! |---|---|
//! | `canonical.rs` | messages, content blocks, tool calls/specs/choice, request (mandatory cancel token), response (normalised stop reason, `raw` for logs only) |
//! | `usage.rs` | `Usage` and its relations (cache ⊆ prompt, reasoning ⊆ completion) |
//! | `wire.rs` | `Wire` (eight wires) and the OpenAI-compatible server flavours |
//! | `capability.rs` | capability flags per wire/model and the pre-send check (`CAPABILITY_UNSUPPORTED`) |
//! | `adapters/` | pure canonical ⇄ wire JSON: `openai_chat`, `anthropic`, `gemini`, `responses` (OpenAI, xAI, Meta, Perplexity), `ollama`; error envelopes |
//! | `client.rs` | the one HTTP client (reqwest + rustls/ring): the endpoint rule again before sending, auth per wire, bodies read chunk by chunk up to a cap (`maxResponseBytes`, default 16 MiB, else `LLM_RESPONSE_TOO_LARGE`, never retried; error bodies 64 KiB), retries, cancellation, no redirects (a redirect would carry the key headers elsewhere) |
//! | `probe.rs` | `check --probe-endpoints`' request: one cheap authenticated request per template (`GET …/models`, Ollama `GET /api/tags`, a 1-token call on the Perplexity wire) with the client's settings and auth (`with_auth`), timeout capped at 30 s; outcome ok / auth failed / other status / unreachable with its `NetworkClass` (connection refused, DNS, TLS, timeout, network, read from the error chain); no body or key leaves it |
//! | `sse.rs` | Server-Sent Events framing: bytes in, events out, any chunking, an event over 4 MiB refused, no input panics (proptest) |
//! | `stream_read.rs` | a streamed answer read (template `streaming`; every wire): the body framed by `sse.rs` (or one JSON per line for Ollama's own API) and folded by the wire's assembler (`adapters/openai_chat_stream`, `adapters/anthropic_stream`, `adapters/responses_stream`, `adapters/gemini_stream` — Gemini at `:streamGenerateContent?alt=sse` —, `adapters/ollama_stream`, sharing `adapters/stream_event` for the JSON of an event and the error it ends with: chunks folded back into the body a whole answer has, for the one decoder), text handed to the request's `DeltaSink` (the orchestrator's `messageDelta` events), the response cap kept; `StreamState` keeps the fold outside the read, so that a call cut mid-stream (an interrupt cuts a streaming answer; a whole one is let finish) keeps the usage reported so far; a broken connection is retried as a network failure (the sink told `Piece::Restart`, the broken attempts' usage added to the answer's); a stream that keeps breaking or ends badly is `LLM_STREAM_INTERRUPTED` with that usage. Template `streaming` is on by default (written only as `false`) |
//! | `proxy.rs` | the environment's proxies (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`), read once when the client is built, **never for a loopback host** (reqwest's own lookup has no such exemption: the demo model, a local server or Ollama were sent to the proxy) |
//! | `json_budget.rs` | how many JSON values a body or the tool-argument strings of one answer would become, counted before parsing (at most 100,000; each wire's `decode` pays an answer's argument strings from its own `ArgsBudget`) |
//! | `retry.rs`, `error.rs` | backoff and hints; `LlmError` codes and retry classes |
//!
//! Invariants of `llm/`:
//! - nothing here names the village (tidy's `CORE_APART`): an [`Endpoint`] is plain settings,
//!   which `model_endpoint` builds from a model template;
//! - nothing outside `adapters/` reads provider JSON; `ChatResponse::raw` is for logs only;
//! - every request is checked against the capabilities before it is sent; no silent fallback;
//! - logs carry counts and codes, never bodies or keys; errors never carry the API key;
//! - no body is read whole before its cap is checked; no key leaves over plain http to a host that
//!   is not loopback unless the template says `allowInsecureHttp`.

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
