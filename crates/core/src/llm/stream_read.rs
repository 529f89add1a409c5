//! Reading a streamed answer (the OpenAI-compatible wire with `stream: true`): the body chunk
//! by chunk through the SSE framing, each event folded by the adapter's stream assembler, the
//! text handed to the request's delta sink as it arrives, at most the template's
//! `maxResponseBytes` in all; the end is the body a whole answer would have had, for the one
//! decoder. A stream that breaks is `LLM_STREAM_INTERRUPTED` (not retried: its text was seen).

use serde_json::Value;

use super::DeltaSink;
use super::adapters::openai_chat_stream::{ChatStream, Delta};
use super::client::{Endpoint, Failed};
use super::error::LlmError;
use super::sse::SseParser;

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
    let (mut parser, mut stream, mut read) = (SseParser::default(), ChatStream::default(), 0u64);
    let fold = |stream: &mut ChatStream, data: &str| -> Result<(), Failed> {
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
