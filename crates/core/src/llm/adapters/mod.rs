//! Wire adapters: pure translations between the canonical request/response and each wire's
//! JSON. No HTTP here; the client (`llm/client.rs`) sends what these build.

pub(crate) mod anthropic;
pub(crate) mod anthropic_stream;
pub(crate) mod gemini;
pub(crate) mod gemini_stream;
pub(crate) mod ollama;
pub(crate) mod ollama_stream;
pub(crate) mod openai_chat;
pub(crate) mod openai_chat_stream;
pub(crate) mod responses;
pub(crate) mod responses_stream;
mod stream_event;

use serde_json::{Map, Value};

use super::canonical::{ChatRequest, ChatResponse};
use super::error::LlmError;
use super::wire::Wire;
use crate::effort::Effort;

/// How long Anthropic keeps cache entries written by a breakpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheTtl {
    /// Five minutes (the provider's default).
    FiveMinutes,
    /// One hour (the original's choice: turns of one agent are often minutes apart).
    #[default]
    OneHour,
}

/// What an adapter needs besides the request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EncodeContext<'a> {
    /// The wire.
    pub wire: Wire,
    /// The template's base URL (some choices depend on the server).
    pub base_url: &'a str,
    /// Anthropic cache lifetime.
    pub cache_ttl: CacheTtl,
}

/// The path (after the base URL) a request goes to.
pub(crate) fn path(wire: Wire, model: &str) -> String {
    match wire {
        Wire::OpenAiCompat => "/chat/completions".to_owned(),
        Wire::Anthropic => "/messages".to_owned(),
        Wire::Gemini => format!("/models/{model}:generateContent"),
        Wire::OpenAiResponses
        | Wire::XaiResponses
        | Wire::MetaResponses
        | Wire::PerplexityResponses => "/responses".to_owned(),
        Wire::OllamaNative => "/api/chat".to_owned(),
    }
}

/// Builds the wire body of a request.
pub(crate) fn encode(request: &ChatRequest, ctx: &EncodeContext<'_>) -> Result<Value, LlmError> {
    match ctx.wire {
        Wire::OpenAiCompat => openai_chat::encode(request, ctx),
        Wire::Anthropic => anthropic::encode(request, ctx),
        Wire::Gemini => gemini::encode(request),
        Wire::OpenAiResponses
        | Wire::XaiResponses
        | Wire::MetaResponses
        | Wire::PerplexityResponses => responses::encode(request, ctx.wire),
        Wire::OllamaNative => ollama::encode(request),
    }
}

/// Reads a successful wire body.
pub(crate) fn decode(wire: Wire, body: Value) -> Result<ChatResponse, LlmError> {
    match wire {
        Wire::OpenAiCompat => openai_chat::decode(body),
        Wire::Anthropic => anthropic::decode(body),
        Wire::Gemini => gemini::decode(body),
        Wire::OpenAiResponses
        | Wire::XaiResponses
        | Wire::MetaResponses
        | Wire::PerplexityResponses => responses::decode(body, wire),
        Wire::OllamaNative => ollama::decode(body),
    }
}

/// The provider's error code/type and message from an error body, whatever its envelope:
/// `{"error":{"type"|"code"|"status","message"}}`, `{"type":"error","error":{…}}`,
/// `{"code","error":"…"}` (xAI), `{"error":"…"}` (Ollama), `{"title","detail"}` (Meta).
pub(crate) fn error_fields(body: &Value) -> (Option<String>, String) {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
    let code_of = |v: &Value| -> Option<String> {
        ["code", "type", "status"]
            .iter()
            .find_map(|k| match v.get(*k) {
                Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                _ => None,
            })
    };
    match body.get("error") {
        Some(Value::Object(e)) => {
            let e = Value::Object(e.clone());
            let message = text(e.get("message")).unwrap_or_default();
            // Gemini: a bad key is INVALID_ARGUMENT with details[].reason API_KEY_INVALID.
            let reason = e
                .get("details")
                .and_then(Value::as_array)
                .and_then(|d| d.iter().find_map(|x| text(x.get("reason"))));
            (reason.or_else(|| code_of(&e)), message)
        }
        Some(Value::String(message)) => (text(body.get("code")), message.clone()),
        _ => {
            let message = text(body.get("detail"))
                .or_else(|| text(body.get("message")))
                .unwrap_or_default();
            (text(body.get("title")).or_else(|| code_of(body)), message)
        }
    }
}

/// Tools in the chat-completions shape (`{"type":"function","function":{…}}`), shared by the
/// OpenAI-compatible and Ollama wires.
pub(crate) fn function_tools(tools: &[super::canonical::ToolSpec]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            serde_json::json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}})
        })
        .collect();
    Value::Array(tools)
}

/// The spelling of an effort on the wires that take it as a word.
pub(crate) fn effort_word(effort: Effort) -> &'static str {
    match effort {
        Effort::Low => "low",
        Effort::Medium => "medium",
        Effort::High => "high",
        Effort::Xhigh => "xhigh",
        Effort::Max => "max",
    }
}

/// Reads a non-negative integer at a path of keys; 0 when absent.
pub(crate) fn count(value: &Value, path: &[&str]) -> u64 {
    let mut v = value;
    for key in path {
        match v.get(*key) {
            Some(next) => v = next,
            None => return 0,
        }
    }
    v.as_u64().unwrap_or(0)
}

/// This wire's entry in a block's `extra` (`extra[wire key]`).
pub(crate) fn extra_for(extra: &Value, wire: Wire) -> Option<&Value> {
    extra.get(wire.extra_key())
}

/// Wraps wire data as a block's `extra`: `{ "<wire key>": data }`.
pub(crate) fn extra_of(wire: Wire, data: Map<String, Value>) -> Value {
    if data.is_empty() {
        return Value::Null;
    }
    let mut outer = Map::new();
    outer.insert(wire.extra_key().to_owned(), Value::Object(data));
    Value::Object(outer)
}

/// The JSON values the argument strings of one answer may still hold: each wire's `decode`
/// makes one for the answer it reads and hands it to every argument string of that answer.
#[derive(Debug)]
pub(crate) struct ArgsBudget {
    left: usize,
}

impl Default for ArgsBudget {
    /// The whole budget of one answer.
    fn default() -> Self {
        Self {
            left: super::json_budget::MAX_JSON_VALUES,
        }
    }
}

impl ArgsBudget {
    /// Parses tool arguments sent as a JSON string, paid from this budget; keeps the text when
    /// it is not JSON, so that the tool can report the mistake to the model.
    pub(crate) fn parse_args(&mut self, text: &str) -> Value {
        if text.trim().is_empty() {
            return Value::Object(Map::new());
        }
        let used = super::json_budget::values_within(text.as_bytes(), self.left);
        self.left = self.left.saturating_sub(used.unwrap_or(self.left));
        if used.is_none() {
            // Not parsed (it would expand in memory); the tool answers that it is not an object.
            return Value::String(format!(
                "(arguments of {} bytes not read: the answer's tool arguments hold more than {} JSON values)",
                text.len(),
                super::json_budget::MAX_JSON_VALUES
            ));
        }
        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
    }
}

/// Tool arguments as the JSON string some wires want.
pub(crate) fn args_string(args: &Value) -> String {
    match args {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A tool result as the JSON object some wires want (`{"result": text}` unless the text is an
/// object already).
pub(crate) fn result_object(content: &str, is_error: bool) -> Value {
    let key = if is_error { "error" } else { "result" };
    match serde_json::from_str::<Value>(content) {
        Ok(Value::Object(o)) if !is_error => Value::Object(o),
        _ => serde_json::json!({ key: content }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // The adapters' own tests from inside the crate (the adapters are not public), in
    // `tests/`: per-wire encoding, the wire fixtures decoded, streams framed and folded at any
    // cut, the optional cross-checks against outside recordings. What goes through `LlmClient`
    // over HTTP stays in `crates/core/tests/it/`, on the public API alone.
    mod encoding;
    mod fixtures;
    mod shared;
    mod stream;
    mod support;
    // Also included by `tests/it/llm_fixtures.rs`: it names its types through this `llm`.
    mod wire_cases;
    use crate::llm;

    fn call_args(response: &ChatResponse) -> Vec<Value> {
        let calls = response.content.iter().filter_map(|b| match b {
            crate::llm::ContentBlock::ToolUse(call) => Some(call.args.clone()),
            _ => None,
        });
        calls.collect()
    }

    fn chat_answer(arguments: &[&str]) -> Value {
        let calls: Vec<Value> = arguments
            .iter()
            .enumerate()
            .map(|(i, a)| json!({"id": format!("c{i}"), "function": {"name": "f", "arguments": a}}))
            .collect();
        json!({"choices": [{"message": {"tool_calls": calls}}]})
    }

    /// One budget per answer: its calls' arguments share it, and the next answer — even one a
    /// wire's own `decode` reads on the same thread — starts with all of it.
    #[test]
    fn each_answer_pays_its_arguments_from_its_own_budget() {
        let max = super::super::json_budget::MAX_JSON_VALUES;
        let all = format!("[{}]", vec!["0"; max - 1].join(","));
        let spent = decode(Wire::OpenAiCompat, chat_answer(&[&all, r#"{"a":1}"#])).unwrap();
        let args = call_args(&spent);
        assert!(args[0].is_array(), "the first call spends the whole budget");
        assert!(args[1].is_string(), "nothing is left for the second");
        let next = openai_chat::decode(chat_answer(&[r#"{"a":1}"#])).unwrap();
        assert_eq!(
            call_args(&next),
            [json!({"a": 1})],
            "the next answer starts whole"
        );
    }

    #[test]
    fn error_envelopes() {
        let openai = json!({"error": {"message": "m", "type": "invalid_request_error", "code": "unsupported_parameter"}});
        assert_eq!(
            error_fields(&openai),
            (Some("unsupported_parameter".into()), "m".into())
        );
        let anthropic = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(
            error_fields(&anthropic),
            (Some("overloaded_error".into()), "Overloaded".into())
        );
        let gemini = json!({"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT",
            "details": [{"reason": "API_KEY_INVALID"}]}});
        assert_eq!(
            error_fields(&gemini),
            (Some("API_KEY_INVALID".into()), "API key not valid.".into())
        );
        let xai = json!({"code": "Client specified an invalid argument", "error": "Incorrect API key provided"});
        assert_eq!(error_fields(&xai).1, "Incorrect API key provided");
        let ollama = json!({"error": "model \"x\" not found"});
        assert_eq!(
            error_fields(&ollama),
            (None, "model \"x\" not found".into())
        );
        let meta = json!({"title": "Too Many Requests", "detail": "Wait", "status": 429});
        assert_eq!(
            error_fields(&meta),
            (Some("Too Many Requests".into()), "Wait".into())
        );
        let perplexity = json!({"error": {"message": "Invalid API key", "type": "invalid_api_key", "code": 401}});
        assert_eq!(
            error_fields(&perplexity).0.as_deref(),
            Some("invalid_api_key")
        );
    }
}
