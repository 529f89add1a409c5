//! A streamed Responses answer (OpenAI, xAI, Meta, Perplexity; `stream: true`): the
//! `response.output_text.delta` and `response.reasoning_summary_text.delta` events are the
//! pieces to show, and `response.completed` (or `response.incomplete`) carries the whole
//! response object — the body a whole answer has, read by the one decoder of
//! [`super::responses::decode`]. `response.failed` and `error` end it with their message.

use serde_json::Value;

use super::openai_chat_stream::Delta;
use crate::llm::error::LlmError;

/// The events of one answer so far.
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream {
    whole: Option<Value>,
    events: usize,
}

impl ResponsesStream {
    /// The usage reported so far: only `response.completed` carries it.
    pub(crate) fn usage_so_far(&self) -> Option<crate::llm::Usage> {
        let usage = self.whole.as_ref()?.get("usage").filter(|u| !u.is_null())?;
        Some(super::responses::usage(usage))
    }

    /// Folds one event's `data` in.
    pub(crate) fn push(&mut self, data: &str) -> Result<Vec<Delta>, LlmError> {
        let Some(event) = super::stream_event::parse(data, &mut self.events, "event")? else {
            return Ok(Vec::new());
        };
        let text = || {
            event
                .get("delta")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        match event.get("type").and_then(Value::as_str).unwrap_or("") {
            "response.output_text.delta" => return Ok(vec![Delta::Text(text())]),
            "response.reasoning_summary_text.delta" => return Ok(vec![Delta::Reasoning(text())]),
            "response.completed" | "response.incomplete" => {
                self.whole = event.get("response").cloned();
            }
            "response.failed" | "error" => {
                let message = event
                    .pointer("/response/error/message")
                    .or_else(|| event.get("message"))
                    .or_else(|| event.pointer("/error/message"))
                    .and_then(Value::as_str);
                return Err(super::stream_event::ended_with(message));
            }
            _ => {}
        }
        Ok(Vec::new())
    }

    /// The whole response; `Err` when it never completed.
    pub(crate) fn finish(self) -> Result<Value, LlmError> {
        self.whole
            .ok_or_else(|| LlmError::Decode("the stream ended before response.completed".into()))
    }
}
