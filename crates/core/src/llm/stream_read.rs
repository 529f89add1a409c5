//! Reading a streamed answer (template `streaming`; every wire but Ollama's own):
//! the body chunk by chunk through the SSE framing, each event folded by the wire's assembler, the
//! text handed to the request's delta sink as it arrives, at most the template's
//! `maxResponseBytes` in all; the end is the body a whole answer would have had, for the one
//! decoder. A stream that breaks is `LLM_STREAM_INTERRUPTED` (not retried: its text was seen).

use serde_json::Value;

use super::DeltaSink;
use super::Wire;
use super::adapters::anthropic_stream::MessagesStream;
use super::adapters::gemini_stream::GeminiStream;
use super::adapters::openai_chat_stream::{ChatStream, Delta};
use super::adapters::responses_stream::ResponsesStream;
use super::client::{Endpoint, Failed};
use super::error::LlmError;
use super::sse::SseParser;

/// Whether answers of `wire` can stream here.
pub(super) fn streams(wire: Wire) -> bool {
    wire != Wire::OllamaNative
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
    body["stream"] = serde_json::json!(true);
    if wire == Wire::OpenAiCompat {
        body["stream_options"] = serde_json::json!({"include_usage": true});
    }
}

/// The wire's assembler.
enum Fold {
    Chat(Box<ChatStream>),
    Messages(MessagesStream),
    Responses(ResponsesStream),
    Gemini(GeminiStream),
}

impl Fold {
    fn push(&mut self, data: &str) -> Result<Vec<Delta>, LlmError> {
        match self {
            Self::Chat(s) => s.push(data),
            Self::Messages(s) => s.push(data),
            Self::Responses(s) => s.push(data),
            Self::Gemini(s) => s.push(data),
        }
    }

    fn finish(self) -> Result<Value, LlmError> {
        match self {
            Self::Chat(s) => (*s).finish(),
            Self::Messages(s) => s.finish(),
            Self::Responses(s) => s.finish(),
            Self::Gemini(s) => s.finish(),
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
        Wire::OpenAiResponses
        | Wire::XaiResponses
        | Wire::MetaResponses
        | Wire::PerplexityResponses => Fold::Responses(ResponsesStream::default()),
        _ => Fold::Chat(Box::default()),
    };
    let (mut parser, mut read) = (SseParser::default(), 0u64);
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
        for event in events {
            fold(&mut stream, &event.data)?;
        }
    }
    let last = parser
        .finish()
        .map_err(|_| interrupted(endpoint, "an event over 4 MiB"))?;
    if let Some(event) = last {
        fold(&mut stream, &event.data)?;
    }
    stream
        .finish()
        .map_err(|e| interrupted(endpoint, e.to_string()))
}
