//! Ollama native `/api/chat`: arguments as objects, images as bare base64, no `tool_choice`,
//! `think` for effort, ids synthesised when the server sends none.

use serde_json::{Map, Value, json};

use super::{count, effort_word};
use crate::effort::Effort;
use crate::llm::canonical::{
    ChatRequest, ChatResponse, ContentBlock, Role, StopReason, ToolCall, ToolChoice,
};
use crate::llm::error::LlmError;
use crate::llm::usage::Usage;

/// Builds an `/api/chat` body.
pub(crate) fn encode(request: &ChatRequest) -> Result<Value, LlmError> {
    let mut messages = Vec::new();
    let system = request.system_text();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in request.turns() {
        match message.role {
            Role::System => {}
            Role::User => {
                let mut m = json!({"role": "user", "content": message.joined_text()});
                let images: Vec<&str> = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::Attachment(a) => Some(a.data.as_str()),
                        _ => None,
                    })
                    .collect();
                if !images.is_empty() {
                    m["images"] = json!(images);
                }
                messages.push(m);
            }
            Role::Assistant => {
                let calls: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolUse(c) => {
                            let args = if c.args.is_object() {
                                c.args.clone()
                            } else {
                                json!({})
                            };
                            Some(json!({"function": {"name": c.name, "arguments": args}}))
                        }
                        _ => None,
                    })
                    .collect();
                let mut m = json!({"role": "assistant", "content": message.joined_text()});
                if !calls.is_empty() {
                    m["tool_calls"] = Value::Array(calls);
                }
                messages.push(m);
            }
            Role::Tool => {
                for block in &message.content {
                    if let ContentBlock::ToolResult(r) = block {
                        messages.push(json!({"role": "tool", "tool_name": r.name, "tool_call_id": r.call_id, "content": r.content}));
                    }
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(false));
    // No tool_choice field: None is "no tools offered" (documented emulation).
    if !request.tools.is_empty() && request.tool_choice != ToolChoice::None {
        body.insert("tools".into(), super::function_tools(&request.tools));
    }
    let mut options = Map::new();
    options.insert("num_predict".into(), json!(request.max_output_tokens));
    if let Some(t) = request.temperature {
        options.insert("temperature".into(), json!(t));
    }
    body.insert("options".into(), Value::Object(options));
    if let Some(effort) = request.effort {
        let think = match effort {
            Effort::Xhigh => "high",
            other => effort_word(other),
        };
        body.insert("think".into(), json!(think));
    }
    if let Some(format) = &request.response_format {
        body.insert("format".into(), format.schema.clone());
    }
    Ok(Value::Object(body))
}

/// Reads an `/api/chat` body (`stream: false`).
pub(crate) fn decode(body: Value) -> Result<ChatResponse, LlmError> {
    let message = body
        .get("message")
        .ok_or_else(|| LlmError::Decode("no message in the Ollama reply".into()))?;
    let mut content = Vec::new();
    if let Some(text) = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        content.push(ContentBlock::text(text));
    }
    let mut budget = super::ArgsBudget::default();
    for (i, call) in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let function = call.get("function").cloned().unwrap_or(Value::Null);
        let args = match function.get("arguments") {
            Some(Value::String(s)) => budget.parse_args(s),
            Some(v) => v.clone(),
            None => json!({}),
        };
        content.push(ContentBlock::ToolUse(ToolCall {
            id: call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map_or_else(|| format!("ollama_call_{i}"), str::to_owned),
            name: function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            args,
            extra: Value::Null,
        }));
    }
    let has_calls = content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolUse(_)));
    let stop = match body.get("done_reason").and_then(Value::as_str) {
        Some("length") => StopReason::MaxTokens,
        _ if has_calls => StopReason::ToolUse,
        _ => StopReason::End,
    };
    let reasoning_summary = message
        .get("thinking")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(|t| vec![t.to_owned()])
        .unwrap_or_default();
    let usage = usage(&body);
    Ok(ChatResponse {
        content,
        stop,
        usage,
        grounding: None,
        reasoning_summary,
        model: body.get("model").and_then(Value::as_str).map(str::to_owned),
        raw: body,
    })
}

/// The counts of a reply; metrics are omitempty: `None` when the server counted nothing.
pub(crate) fn usage(body: &Value) -> Option<Usage> {
    let reported = body.get("prompt_eval_count").is_some() || body.get("eval_count").is_some();
    reported.then(|| Usage {
        prompt: count(body, &["prompt_eval_count"]),
        completion: count(body, &["eval_count"]),
        ..Usage::default()
    })
}
