//! A streamed OpenAI chat completion (`stream: true`, `stream_options.include_usage`) put back
//! together: each `chat.completion.chunk` is folded into the body a whole answer would have had
//! (content and reasoning joined, tool calls assembled by `index` — id and name first, then
//! argument fragments —, `finish_reason`, the last chunk's `usage`, `model`, citations), so
//! that the one decoder of [`super::openai_chat::decode`] reads both and their canonical
//! responses are equal. The text and reasoning deltas are handed out as they arrive.

use serde_json::{Map, Value, json};

use crate::llm::error::LlmError;

/// What a chunk added that a person can watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Delta {
    /// Answer text.
    Text(String),
    /// Reasoning text (where the server sends it).
    Reasoning(String),
}

/// One tool call being assembled.
#[derive(Debug, Default)]
struct CallParts {
    id: Option<String>,
    name: String,
    arguments: String,
    extra: Option<Value>,
}

/// The chunks of one answer so far.
#[derive(Debug, Default)]
pub(crate) struct ChatStream {
    content: String,
    reasoning: String,
    refusal: String,
    calls: Vec<CallParts>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
    model: Option<Value>,
    citations: Option<Value>,
    chunks: usize,
}

impl ChatStream {
    /// The usage reported so far (the `include_usage` chunk comes last).
    pub(crate) fn usage_so_far(&self) -> Option<crate::llm::Usage> {
        self.usage.as_ref().map(super::openai_chat::usage)
    }

    /// Folds one event's `data` in; `[DONE]` and blank data add nothing.
    pub(crate) fn push(&mut self, data: &str) -> Result<Vec<Delta>, LlmError> {
        let Some(chunk) = super::stream_event::parse(data, &mut self.chunks, "chunk")? else {
            return Ok(Vec::new());
        };
        if let Some(error) = chunk.get("error") {
            return Err(super::stream_event::ended_with(
                error.get("message").and_then(Value::as_str),
            ));
        }
        for (key, slot) in [
            ("model", &mut self.model),
            ("citations", &mut self.citations),
        ] {
            if let Some(v) = chunk.get(key).filter(|v| !v.is_null()) {
                *slot = Some(v.clone());
            }
        }
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(u.clone());
        }
        let mut deltas = Vec::new();
        let choices = chunk.get("choices").and_then(Value::as_array);
        for choice in choices.into_iter().flatten() {
            if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
                self.finish_reason = Some(f.clone());
            }
            if let Some(delta) = choice.get("delta") {
                self.fold_delta(delta, &mut deltas);
            }
        }
        Ok(deltas)
    }

    fn fold_delta(&mut self, delta: &Value, out: &mut Vec<Delta>) {
        let text = |k: &str| {
            delta
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        if let Some(t) = text("content") {
            self.content.push_str(t);
            out.push(Delta::Text(t.to_owned()));
        }
        if let Some(t) = text("reasoning_content").or_else(|| text("reasoning")) {
            self.reasoning.push_str(t);
            out.push(Delta::Reasoning(t.to_owned()));
        }
        if let Some(t) = text("refusal") {
            self.refusal.push_str(t);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(self.calls.len());
            // A server that numbers calls wildly cannot make us allocate without bound.
            let index = index.min(self.calls.len());
            if index == self.calls.len() {
                self.calls.push(CallParts::default());
            }
            let parts = &mut self.calls[index];
            if let Some(id) = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                parts.id = Some(id.to_owned());
            }
            if let Some(extra) = call.get("extra_content") {
                parts.extra = Some(extra.clone());
            }
            let function = call.get("function");
            if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) {
                parts.name.push_str(name);
            }
            if let Some(a) = function
                .and_then(|f| f.get("arguments"))
                .and_then(Value::as_str)
            {
                parts.arguments.push_str(a);
            }
        }
    }

    /// The body a whole answer would have had; `Err` when no chunk came.
    pub(crate) fn finish(self) -> Result<Value, LlmError> {
        if self.chunks == 0 {
            return Err(LlmError::Decode(
                "the stream ended before its first chunk".into(),
            ));
        }
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert("content".into(), json!(self.content));
        if !self.reasoning.is_empty() {
            message.insert("reasoning_content".into(), json!(self.reasoning));
        }
        if !self.refusal.is_empty() {
            message.insert("refusal".into(), json!(self.refusal));
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self
                .calls
                .into_iter()
                .map(|c| {
                    let mut call = json!({"id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments}});
                    if let Some(extra) = c.extra {
                        call["extra_content"] = extra;
                    }
                    call
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        let mut body = json!({
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        });
        for (key, value) in [
            ("model", self.model),
            ("usage", self.usage),
            ("citations", self.citations),
        ] {
            if let Some(v) = value {
                body[key] = v;
            }
        }
        Ok(body)
    }
}
