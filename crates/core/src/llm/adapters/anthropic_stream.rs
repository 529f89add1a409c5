//! A streamed Anthropic Messages answer (`stream: true`) put back together: `message_start`
//! gives the message (id, model, the input usage), `content_block_start` opens each block
//! (`text`, `tool_use`, `thinking`, server tools), `content_block_delta` grows it (`text_delta`,
//! `input_json_delta` fragments, `thinking_delta`, `signature_delta`, `citations_delta`),
//! `message_delta` brings the stop reason and the final usage (its fields over the start's);
//! `ping` adds nothing and an `error` event ends it. The result is the body a whole answer
//! has, read by the one decoder of [`super::anthropic::decode`].

use serde_json::{Map, Value, json};

use super::openai_chat_stream::Delta;
use crate::llm::error::LlmError;

/// The events of one answer so far.
#[derive(Debug, Default)]
pub(crate) struct MessagesStream {
    message: Option<Map<String, Value>>,
    blocks: Vec<Map<String, Value>>,
    /// The `input_json_delta` fragments of each block, joined at the end.
    json_parts: Vec<String>,
    events: usize,
}

fn get_str<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

impl MessagesStream {
    /// The usage reported so far: `message_start`'s input usage, then `message_delta`'s.
    pub(crate) fn usage_so_far(&self) -> Option<crate::llm::Usage> {
        let usage = self.message.as_ref()?.get("usage")?;
        Some(super::anthropic::usage(usage))
    }

    /// Folds one event's `data` in.
    pub(crate) fn push(&mut self, data: &str) -> Result<Vec<Delta>, LlmError> {
        let Some(event) = super::stream_event::parse(data, &mut self.events, "event")? else {
            return Ok(Vec::new());
        };
        let index = event
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok());
        match get_str(&event, "type") {
            "message_start" => {
                self.message = event.get("message").and_then(Value::as_object).cloned();
            }
            "content_block_start" => {
                let block = event
                    .get("content_block")
                    .and_then(Value::as_object)
                    .cloned();
                let at = index.unwrap_or(self.blocks.len()).min(self.blocks.len());
                if at == self.blocks.len() {
                    self.blocks.push(block.unwrap_or_default());
                    self.json_parts.push(String::new());
                }
            }
            "content_block_delta" => return Ok(self.delta(index, event.get("delta"))),
            "message_delta" => self.message_delta(&event),
            "error" => {
                let message = event.pointer("/error/message").and_then(Value::as_str);
                return Err(super::stream_event::ended_with(message));
            }
            _ => {}
        }
        Ok(Vec::new())
    }

    fn delta(&mut self, index: Option<usize>, delta: Option<&Value>) -> Vec<Delta> {
        let (Some(at), Some(delta)) = (index, delta) else {
            return Vec::new();
        };
        let (Some(block), Some(json_part)) = (self.blocks.get_mut(at), self.json_parts.get_mut(at))
        else {
            return Vec::new();
        };
        let mut grow = |key: &str, piece: &str| {
            let now = block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
                + piece;
            block.insert(key.into(), json!(now));
        };
        match get_str(delta, "type") {
            "text_delta" => {
                let text = get_str(delta, "text");
                grow("text", text);
                return vec![Delta::Text(text.to_owned())];
            }
            "thinking_delta" => {
                let text = get_str(delta, "thinking");
                grow("thinking", text);
                return vec![Delta::Reasoning(text.to_owned())];
            }
            "signature_delta" => grow("signature", get_str(delta, "signature")),
            "input_json_delta" => json_part.push_str(get_str(delta, "partial_json")),
            "citations_delta" => {
                if let Some(c) = delta.get("citation") {
                    let list = block.entry("citations").or_insert_with(|| json!([]));
                    if let Some(list) = list.as_array_mut() {
                        list.push(c.clone());
                    }
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn message_delta(&mut self, event: &Value) {
        let message = self.message.get_or_insert_with(Map::new);
        if let Some(d) = event.get("delta").and_then(Value::as_object) {
            for (k, v) in d {
                message.insert(k.clone(), v.clone());
            }
        }
        if let Some(u) = event.get("usage").and_then(Value::as_object) {
            let usage = message.entry("usage").or_insert_with(|| json!({}));
            if let Some(usage) = usage.as_object_mut() {
                for (k, v) in u {
                    if !v.is_null() {
                        usage.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }

    /// The body a whole answer would have had; `Err` when the message never started.
    pub(crate) fn finish(self) -> Result<Value, LlmError> {
        let Some(mut message) = self.message else {
            return Err(LlmError::Decode(
                "the stream ended before message_start".into(),
            ));
        };
        let blocks: Vec<Value> = self
            .blocks
            .into_iter()
            .zip(self.json_parts)
            .map(|(mut block, json_part)| {
                if !json_part.is_empty() {
                    let input =
                        serde_json::from_str(&json_part).unwrap_or(Value::String(json_part));
                    block.insert("input".into(), input);
                }
                Value::Object(block)
            })
            .collect();
        message.insert("content".into(), Value::Array(blocks));
        message.entry("type").or_insert_with(|| json!("message"));
        Ok(Value::Object(message))
    }
}
