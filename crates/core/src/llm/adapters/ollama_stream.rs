//! A streamed answer of Ollama's own API (`/api/chat` with `stream: true`): one JSON object per
//! line (NDJSON), each with the next piece of `message.content` (and `thinking`), tool calls
//! whole in the chunk that has them, and a last object with `done: true`, the stop reason and
//! the token counts. Joined into the reply a whole answer has, for the one decoder of
//! [`super::ollama::decode`].

use serde_json::{Map, Value, json};

use super::openai_chat_stream::Delta;
use crate::llm::error::LlmError;

/// The lines of one answer so far.
#[derive(Debug, Default)]
pub(crate) struct OllamaStream {
    content: String,
    thinking: String,
    tool_calls: Vec<Value>,
    last: Map<String, Value>,
    lines: usize,
    done: bool,
}

impl OllamaStream {
    /// The usage reported so far: only the done line carries the counts.
    pub(crate) fn usage_so_far(&self) -> Option<crate::llm::Usage> {
        if !self.done {
            return None;
        }
        super::ollama::usage(&Value::Object(self.last.clone()))
    }

    /// Folds one line in.
    pub(crate) fn push(&mut self, line: &str) -> Result<Vec<Delta>, LlmError> {
        let Some(chunk) = super::stream_event::parse(line, &mut self.lines, "line")? else {
            return Ok(Vec::new());
        };
        if let Some(error) = chunk.get("error").and_then(Value::as_str) {
            return Err(super::stream_event::ended_with(Some(error)));
        }
        let mut deltas = Vec::new();
        if let Some(message) = chunk.get("message") {
            let text = |k: &str| {
                message
                    .get(k)
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
            };
            if let Some(t) = text("content") {
                self.content.push_str(t);
                deltas.push(Delta::Text(t.to_owned()));
            }
            if let Some(t) = text("thinking") {
                self.thinking.push_str(t);
                deltas.push(Delta::Reasoning(t.to_owned()));
            }
            if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
                self.tool_calls.extend(calls.iter().cloned());
            }
        }
        if let Some(object) = chunk.as_object() {
            self.done |= object.get("done").and_then(Value::as_bool).unwrap_or(false);
            self.last = object.clone();
        }
        Ok(deltas)
    }

    /// The reply a whole answer would have had; `Err` when the last line never came.
    pub(crate) fn finish(self) -> Result<Value, LlmError> {
        if !self.done {
            return Err(LlmError::Decode(
                "the stream ended before its done line".into(),
            ));
        }
        let mut body = self.last;
        let mut message = json!({"role": "assistant", "content": self.content});
        if !self.thinking.is_empty() {
            message["thinking"] = json!(self.thinking);
        }
        if !self.tool_calls.is_empty() {
            message["tool_calls"] = Value::Array(self.tool_calls);
        }
        body.insert("message".into(), message);
        Ok(Value::Object(body))
    }
}
