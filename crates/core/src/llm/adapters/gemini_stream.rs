//! A streamed Gemini answer (`:streamGenerateContent?alt=sse`): every event is a
//! `GenerateContentResponse` holding the next parts. They are joined into the one response a
//! whole answer has — text parts of the same kind (answer or `thought`) that follow each other
//! become one, keeping the last `thoughtSignature` seen on them (Gemini signs the end of a
//! part); `functionCall` parts stay whole —, with the last `finishReason`, `usageMetadata`,
//! grounding and model version, for the one decoder of [`super::gemini::decode`].

use serde_json::{Map, Value, json};

use super::openai_chat_stream::Delta;
use crate::llm::error::LlmError;

/// The events of one answer so far.
#[derive(Debug, Default)]
pub(crate) struct GeminiStream {
    parts: Vec<Map<String, Value>>,
    candidate: Map<String, Value>,
    body: Map<String, Value>,
    events: usize,
}

fn is_text(part: &Map<String, Value>) -> bool {
    part.get("text").is_some_and(Value::is_string) && part.len() <= 3
}

fn thought(part: &Map<String, Value>) -> bool {
    part.get("thought")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

impl GeminiStream {
    /// The usage reported so far (every event repeats `usageMetadata`).
    pub(crate) fn usage_so_far(&self) -> Option<crate::llm::Usage> {
        self.body.get("usageMetadata").map(super::gemini::usage)
    }

    /// Folds one event's `data` in.
    pub(crate) fn push(&mut self, data: &str) -> Result<Vec<Delta>, LlmError> {
        let Some(event) = super::stream_event::parse(data, &mut self.events, "event")? else {
            return Ok(Vec::new());
        };
        if let Some(error) = event.get("error") {
            return Err(super::stream_event::ended_with(
                error.get("message").and_then(Value::as_str),
            ));
        }
        for key in [
            "usageMetadata",
            "modelVersion",
            "promptFeedback",
            "responseId",
        ] {
            if let Some(v) = event.get(key) {
                self.body.insert(key.into(), v.clone());
            }
        }
        let Some(candidate) = event.pointer("/candidates/0").and_then(Value::as_object) else {
            return Ok(Vec::new());
        };
        for (k, v) in candidate {
            if k != "content" {
                self.candidate.insert(k.clone(), v.clone());
            }
        }
        let parts = candidate
            .get("content")
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array);
        let mut deltas = Vec::new();
        for part in parts.into_iter().flatten().filter_map(Value::as_object) {
            deltas.extend(self.add(part));
        }
        Ok(deltas)
    }

    fn add(&mut self, part: &Map<String, Value>) -> Option<Delta> {
        let text = part.get("text").and_then(Value::as_str).map(str::to_owned);
        let joins = self
            .parts
            .last()
            .is_some_and(|last| is_text(last) && is_text(part) && thought(last) == thought(part));
        if joins && let (Some(last), Some(piece)) = (self.parts.last_mut(), &text) {
            let now = last
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
                + piece;
            last.insert("text".into(), json!(now));
            if let Some(sig) = part.get("thoughtSignature") {
                last.insert("thoughtSignature".into(), sig.clone());
            }
        } else {
            self.parts.push(part.clone());
        }
        let piece = text.filter(|t| !t.is_empty())?;
        Some(if thought(part) {
            Delta::Reasoning(piece)
        } else {
            Delta::Text(piece)
        })
    }

    /// The body a whole answer would have had; `Err` when no event came.
    pub(crate) fn finish(self) -> Result<Value, LlmError> {
        if self.events == 0 {
            return Err(LlmError::Decode(
                "the stream ended before its first event".into(),
            ));
        }
        let mut candidate = self.candidate;
        candidate.insert(
            "content".into(),
            json!({"role": "model", "parts": self.parts}),
        );
        let mut body = self.body;
        body.insert("candidates".into(), json!([candidate]));
        Ok(Value::Object(body))
    }
}
