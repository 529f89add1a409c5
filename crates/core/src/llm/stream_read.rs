//! Reading a streamed answer (template `streaming`; every wire): the body chunk by chunk
//! through the SSE framing (one JSON per line for Ollama's own API), each event folded by the
//! wire's assembler, the
//! text handed to the request's delta sink as it arrives, at most the template's
//! `maxResponseBytes` in all; the end is the body a whole answer would have had, for the one
//! decoder. A stream whose connection breaks is retried as a network failure is (the sink is
//! told to start again); one that ends otherwise is `LLM_STREAM_INTERRUPTED`. What the stream
//! said of its usage so far stays readable through [`StreamState`] when the call is cut.

use std::sync::Mutex;

use serde_json::Value;

use super::Wire;
use super::adapters::anthropic_stream::MessagesStream;
use super::adapters::gemini_stream::GeminiStream;
use super::adapters::ollama_stream::OllamaStream;
use super::adapters::openai_chat_stream::{ChatStream, Delta};
use super::adapters::responses_stream::ResponsesStream;
use super::canonical::{DeltaSink, Piece};
use super::client::{Endpoint, Failed};
use super::error::LlmError;
use super::sse::SseParser;
use super::usage::Usage;
use crate::sync::LockOrRecover;

/// Whether an answer's content type is a stream this wire sends: SSE, or NDJSON (Ollama's own).
pub(super) fn is_stream(wire: Wire, content_type: &str) -> bool {
    content_type.starts_with("text/event-stream")
        || (wire == Wire::OllamaNative && content_type.starts_with("application/x-ndjson"))
}

/// The URL of a streamed call: Gemini streams at another method, as SSE.
pub(super) fn stream_url(wire: Wire, url: String) -> String {
    if wire == Wire::Gemini {
        return format!(
            "{}?alt=sse",
            url.replacen(":generateContent", ":streamGenerateContent", 1)
        );
    }
    url
}

/// Asks a request body of `wire` for a streamed answer (with the usage at its end).
pub(super) fn ask_to_stream(wire: Wire, body: &mut Value) {
    if wire == Wire::Gemini {
        return; // the method says it
    }
    // Ollama's own API streams unless told not to; its encoder says `false`.
    body["stream"] = serde_json::json!(true);
    if wire == Wire::OpenAiCompat {
        body["stream_options"] = serde_json::json!({"include_usage": true});
    }
}

/// How a stream's body is cut into events: SSE, or one JSON per line (Ollama's own).
enum Framing {
    Sse(SseParser),
    Lines(Vec<u8>),
}

impl Framing {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<String>, ()> {
        match self {
            Self::Sse(parser) => parser
                .push(bytes)
                .map(|events| events.into_iter().map(|e| e.data).collect())
                .map_err(|_| ()),
            Self::Lines(pending) => {
                let mut out = Vec::new();
                for &b in bytes {
                    if b == b'\n' {
                        out.push(String::from_utf8_lossy(&std::mem::take(pending)).into_owned());
                    } else if pending.len() >= super::sse::MAX_EVENT_BYTES {
                        return Err(());
                    } else {
                        pending.push(b);
                    }
                }
                Ok(out)
            }
        }
    }

    fn finish(self) -> Result<Option<String>, ()> {
        match self {
            Self::Sse(parser) => parser.finish().map(|e| e.map(|e| e.data)).map_err(|_| ()),
            Self::Lines(pending) => {
                Ok((!pending.is_empty()).then(|| String::from_utf8_lossy(&pending).into_owned()))
            }
        }
    }
}

/// The wire's assembler.
enum Fold {
    Chat(Box<ChatStream>),
    Messages(MessagesStream),
    Responses(ResponsesStream),
    Gemini(GeminiStream),
    Ollama(OllamaStream),
}

impl Fold {
    fn of(wire: Wire) -> Self {
        match wire {
            Wire::Anthropic => Self::Messages(MessagesStream::default()),
            Wire::Gemini => Self::Gemini(GeminiStream::default()),
            Wire::OllamaNative => Self::Ollama(OllamaStream::default()),
            Wire::OpenAiResponses
            | Wire::XaiResponses
            | Wire::MetaResponses
            | Wire::PerplexityResponses => Self::Responses(ResponsesStream::default()),
            _ => Self::Chat(Box::default()),
        }
    }

    fn usage_so_far(&self) -> Option<Usage> {
        match self {
            Self::Chat(s) => s.usage_so_far(),
            Self::Messages(s) => s.usage_so_far(),
            Self::Responses(s) => s.usage_so_far(),
            Self::Gemini(s) => s.usage_so_far(),
            Self::Ollama(s) => s.usage_so_far(),
        }
    }

    fn push(&mut self, data: &str) -> Result<Vec<Delta>, LlmError> {
        match self {
            Self::Chat(s) => s.push(data),
            Self::Messages(s) => s.push(data),
            Self::Responses(s) => s.push(data),
            Self::Gemini(s) => s.push(data),
            Self::Ollama(s) => s.push(data),
        }
    }

    fn finish(self) -> Result<Value, LlmError> {
        match self {
            Self::Chat(s) => (*s).finish(),
            Self::Messages(s) => s.finish(),
            Self::Responses(s) => s.finish(),
            Self::Gemini(s) => s.finish(),
            Self::Ollama(s) => s.finish(),
        }
    }
}

/// The stream of one attempt as far as it came, outside the read (which a cancellation drops):
/// whether the answer is streaming, and the usage it reported so far.
#[derive(Default)]
pub(super) struct StreamState {
    fold: Mutex<Option<Fold>>,
    started: std::sync::atomic::AtomicBool,
    began: tokio::sync::Notify,
}

impl StreamState {
    /// The usage the stream reported so far (`None`: none yet, or no stream).
    pub(super) fn usage_so_far(&self) -> Option<Usage> {
        self.fold.lock_or_recover().as_ref()?.usage_so_far()
    }

    /// The usage of a call cut now, `paid` (broken attempts') included: `None` when no answer
    /// was streaming and nothing was paid; else what was reported, zero when nothing yet (a
    /// cut stream's usage is a lower bound).
    pub(super) fn cut(&self, paid: Option<Usage>) -> Option<Usage> {
        let seen = self.usage_so_far();
        let streaming = self.started.load(std::sync::atomic::Ordering::SeqCst);
        match (paid, seen) {
            (None, None) if !streaming => None,
            (Some(mut a), Some(b)) => {
                a.add(&b);
                Some(a)
            }
            (a, b) => Some(a.or(b).unwrap_or_default()),
        }
    }

    fn start(&self, wire: Wire) {
        *self.fold.lock_or_recover() = Some(Fold::of(wire));
        self.started
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.began.notify_waiters();
    }

    /// Returns once `cancel` is cancelled while the answer streams (an answer sent whole, or
    /// not begun, is let finish: its usage is then known).
    pub(super) async fn cancelled_mid_stream(&self, cancel: &tokio_util::sync::CancellationToken) {
        cancel.cancelled().await;
        loop {
            let began = self.began.notified();
            if self.started.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            began.await;
        }
    }
}

fn interrupted(endpoint: &Endpoint, reason: impl Into<String>) -> Failed {
    Failed::Fatal(LlmError::StreamInterrupted {
        template: endpoint.template_id.clone(),
        reason: reason.into(),
        usage: None,
    })
}

/// Reads the stream to its end, keeping its fold in `state`.
pub(super) async fn read_stream(
    mut response: reqwest::Response,
    endpoint: &Endpoint,
    on_delta: Option<&DeltaSink>,
    state: &StreamState,
) -> Result<Value, Failed> {
    state.start(endpoint.wire);
    let mut parser = match endpoint.wire {
        Wire::OllamaNative => Framing::Lines(Vec::new()),
        _ => Framing::Sse(SseParser::default()),
    };
    let mut read = 0u64;
    let fold = |data: &str| -> Result<(), Failed> {
        let deltas = match state.fold.lock_or_recover().as_mut() {
            Some(stream) => stream
                .push(data)
                .map_err(|e| interrupted(endpoint, e.to_string()))?,
            None => Vec::new(),
        };
        if let Some(sink) = on_delta {
            for delta in deltas {
                if let Delta::Text(text) = delta {
                    (sink.0)(Piece::Text(&text));
                }
            }
        }
        Ok(())
    };
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => {
                let class = super::error::NetworkKind::of(&e).as_str();
                return Err(Failed::Broken(format!("the connection broke ({class})")));
            }
        };
        read += chunk.len() as u64;
        if read > endpoint.max_response_bytes {
            return Err(Failed::Fatal(LlmError::ResponseTooLarge {
                template: endpoint.template_id.clone(),
                limit: endpoint.max_response_bytes,
            }));
        }
        let events = parser
            .push(&chunk)
            .map_err(|_| interrupted(endpoint, "an event over 4 MiB"))?;
        for data in events {
            fold(&data)?;
        }
    }
    let last = parser
        .finish()
        .map_err(|_| interrupted(endpoint, "an event over 4 MiB"))?;
    if let Some(data) = last {
        fold(&data)?;
    }
    let Some(stream) = state.fold.lock_or_recover().take() else {
        return Err(interrupted(endpoint, "the stream's state was lost"));
    };
    stream
        .finish()
        .map_err(|e| interrupted(endpoint, e.to_string()))
}
