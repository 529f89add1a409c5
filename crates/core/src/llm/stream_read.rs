//! Reading a streamed answer (template `streaming`; every wire): the body chunk by chunk
//! through the SSE framing (one JSON per line for Ollama's own API), each event folded by the
//! wire's assembler, the
//! text handed to the request's delta sink as it arrives, at most the template's
//! `maxResponseBytes` in all; the end is the body a whole answer would have had, for the one
//! decoder. A stream that breaks is `LLM_STREAM_INTERRUPTED` (not retried: its text was seen).

use serde_json::Value;

use super::DeltaSink;
use super::Wire;
use super::adapters::anthropic_stream::MessagesStream;
use super::adapters::gemini_stream::GeminiStream;
use super::adapters::ollama_stream::OllamaStream;
use super::adapters::openai_chat_stream::{ChatStream, Delta};
use super::adapters::responses_stream::ResponsesStream;
use super::client::{Endpoint, Failed};
use super::error::LlmError;
use super::sse::SseParser;

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

fn interrupted(endpoint: &Endpoint, reason: impl Into<String>) -> Failed {
    Failed::Fatal(LlmError::StreamInterrupted {
        template: endpoint.template_id.clone(),
        reason: reason.into(),
    })
}

/// Reads the stream to its end.
pub(super) async fn read_stream(
    mut response: reqwest::Response,
    endpoint: &Endpoint,
    on_delta: Option<&DeltaSink>,
) -> Result<Value, Failed> {
    let mut stream = match endpoint.wire {
        Wire::Anthropic => Fold::Messages(MessagesStream::default()),
        Wire::Gemini => Fold::Gemini(GeminiStream::default()),
        Wire::OllamaNative => Fold::Ollama(OllamaStream::default()),
        Wire::OpenAiResponses
        | Wire::XaiResponses
        | Wire::MetaResponses
        | Wire::PerplexityResponses => Fold::Responses(ResponsesStream::default()),
        _ => Fold::Chat(Box::default()),
    };
    let mut parser = match endpoint.wire {
        Wire::OllamaNative => Framing::Lines(Vec::new()),
        _ => Framing::Sse(SseParser::default()),
    };
    let mut read = 0u64;
    let fold = |stream: &mut Fold, data: &str| -> Result<(), Failed> {
        let deltas = stream
            .push(data)
            .map_err(|e| interrupted(endpoint, e.to_string()))?;
        if let Some(sink) = on_delta {
            for delta in deltas {
                if let Delta::Text(text) = delta {
                    (sink.0)(&text);
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
                return Err(interrupted(
                    endpoint,
                    format!("the connection broke ({class})"),
                ));
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
            fold(&mut stream, &data)?;
        }
    }
    let last = parser
        .finish()
        .map_err(|_| interrupted(endpoint, "an event over 4 MiB"))?;
    if let Some(data) = last {
        fold(&mut stream, &data)?;
    }
    stream
        .finish()
        .map_err(|e| interrupted(endpoint, e.to_string()))
}
