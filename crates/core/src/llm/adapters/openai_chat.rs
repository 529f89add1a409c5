//! OpenAI chat completions, and the servers that speak it (Ollama `/v1`, LM Studio, vLLM,
//! DeepSeek, xAI chat, Gemini's OpenAI endpoint with `extra_content.google.thought_signature`).

use serde_json::{Map, Value, json};

use super::{ArgsBudget, EncodeContext, args_string, count, effort_word, extra_for, extra_of};
use crate::llm::canonical::{
    AttachmentKind, ChatMessage, ChatRequest, ChatResponse, ContentBlock, Grounding,
    GroundingSource, Role, StopReason, ToolCall, ToolChoice,
};
use crate::llm::error::LlmError;
use crate::llm::usage::Usage;
use crate::llm::wire::{CompatFlavour, Wire};

const WIRE: Wire = Wire::OpenAiCompat;

/// Builds a `/chat/completions` body.
pub(crate) fn encode(request: &ChatRequest, ctx: &EncodeContext<'_>) -> Result<Value, LlmError> {
    let flavour = CompatFlavour::detect(ctx.base_url);
    let mut messages = Vec::new();
    let system = request.system_text();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system}));
    }
    for message in request.turns() {
        encode_message(message, &mut messages)?;
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    // Ollama's /v1 has no tool_choice: ToolChoice::None is sent as "no tools offered".
    let none_by_omission =
        request.tool_choice == ToolChoice::None && flavour == CompatFlavour::Ollama;
    let offer_tools = !request.tools.is_empty() && !none_by_omission;
    if offer_tools {
        body.insert("tools".into(), super::function_tools(&request.tools));
        if flavour != CompatFlavour::Ollama {
            let choice = match &request.tool_choice {
                ToolChoice::None => json!("none"),
                ToolChoice::Auto => json!("auto"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Specific(name) => {
                    json!({"type": "function", "function": {"name": name}})
                }
            };
            body.insert("tool_choice".into(), choice);
        }
        if let Some(parallel) = request.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }
    // OpenAI itself wants max_completion_tokens (reasoning models refuse max_tokens); other
    // servers know max_tokens.
    let max_key = if is_openai_host(ctx.base_url) {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body.insert(max_key.into(), json!(request.max_output_tokens));
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(effort) = request.effort {
        body.insert("reasoning_effort".into(), json!(effort_word(effort)));
    }
    if let Some(format) = &request.response_format {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": format.name, "schema": format.schema, "strict": true}}),
        );
    }
    body.insert("stream".into(), json!(false));
    Ok(Value::Object(body))
}

fn is_openai_host(base_url: &str) -> bool {
    base_url.to_ascii_lowercase().contains("api.openai.com")
}

fn encode_message(message: &ChatMessage, out: &mut Vec<Value>) -> Result<(), LlmError> {
    match message.role {
        Role::System => {}
        Role::User => out.push(json!({"role": "user", "content": user_content(message)?})),
        Role::Assistant => {
            let text = message.joined_text();
            let calls: Vec<Value> = message
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse(call) => Some(encode_call(call)),
                    _ => None,
                })
                .collect();
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            m.insert(
                "content".into(),
                if text.is_empty() && !calls.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                },
            );
            if !calls.is_empty() {
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(m));
        }
        Role::Tool => {
            for block in &message.content {
                if let ContentBlock::ToolResult(r) = block {
                    out.push(
                        json!({"role": "tool", "tool_call_id": r.call_id, "content": r.content}),
                    );
                }
            }
        }
    }
    Ok(())
}

fn encode_call(call: &ToolCall) -> Value {
    let mut c = json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": args_string(&call.args)}});
    if let Some(extra_content) = extra_for(&call.extra, WIRE).and_then(|e| e.get("extra_content")) {
        c["extra_content"] = extra_content.clone();
    }
    c
}

fn user_content(message: &ChatMessage) -> Result<Value, LlmError> {
    let only_text = message
        .content
        .iter()
        .all(|b| matches!(b, ContentBlock::Text { .. }));
    if only_text {
        return Ok(json!(message.joined_text()));
    }
    let mut parts = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::Text { text, .. } => parts.push(json!({"type": "text", "text": text})),
            ContentBlock::Attachment(a) => parts.push(match a.kind {
                AttachmentKind::Image => json!({"type": "image_url", "image_url": {"url": a.data_url()}}),
                AttachmentKind::Audio => json!({"type": "input_audio", "input_audio": {"data": a.data, "format": a.audio_format()}}),
                AttachmentKind::Pdf => json!({"type": "file", "file": {"filename": a.file_name, "file_data": a.data_url()}}),
                AttachmentKind::Video => {
                    return Err(LlmError::unsupported(WIRE, "carry a video attachment", "leave it out"));
                }
            }),
            ContentBlock::ToolUse(_) | ContentBlock::ToolResult(_) => {
                return Err(LlmError::InvalidRequest("a user message holds tool calls or results".into()));
            }
        }
    }
    Ok(Value::Array(parts))
}

/// Reads a `/chat/completions` body.
pub(crate) fn decode(body: Value) -> Result<ChatResponse, LlmError> {
    let choice = body
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| LlmError::Decode("no choices in the chat completion".into()))?;
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let mut content = Vec::new();
    if let Some(text) = message.get("content").and_then(Value::as_str)
        && !text.is_empty()
    {
        content.push(ContentBlock::text(text));
    }
    let message_extra = message.get("extra_content").cloned();
    let mut budget = ArgsBudget::default();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, call) in calls.iter().enumerate() {
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty());
            let function = call.get("function").cloned().unwrap_or(Value::Null);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let args = match function.get("arguments") {
                Some(Value::String(s)) => budget.parse_args(s),
                Some(other) => other.clone(),
                None => Value::Object(Map::new()),
            };
            let mut extra = Map::new();
            let call_extra = call
                .get("extra_content")
                .cloned()
                .or_else(|| if i == 0 { message_extra.clone() } else { None });
            if let Some(e) = call_extra {
                extra.insert("extra_content".into(), e);
            }
            content.push(ContentBlock::ToolUse(ToolCall {
                id: id.map_or_else(|| format!("call_{i}"), str::to_owned),
                name: name.to_owned(),
                args,
                extra: extra_of(WIRE, extra),
            }));
        }
    }
    let has_calls = content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolUse(_)));
    let refused = message
        .get("refusal")
        .and_then(Value::as_str)
        .is_some_and(|r| !r.is_empty());
    let stop = match choice.get("finish_reason").and_then(Value::as_str) {
        _ if refused => StopReason::Refusal,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        _ if has_calls => StopReason::ToolUse,
        _ => StopReason::End,
    };
    if refused
        && content.is_empty()
        && let Some(r) = message.get("refusal").and_then(Value::as_str)
    {
        content.push(ContentBlock::text(r));
    }
    let reasoning_summary = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| message.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .map(|s| vec![s.to_owned()])
        .unwrap_or_default();
    let grounding = body
        .get("citations")
        .and_then(Value::as_array)
        .map(|urls| Grounding {
            queries: Vec::new(),
            sources: urls
                .iter()
                .filter_map(Value::as_str)
                .map(|u| GroundingSource {
                    uri: u.to_owned(),
                    title: String::new(),
                })
                .collect(),
            engine: "perplexity".into(),
        });
    Ok(ChatResponse {
        content,
        stop,
        usage: body.get("usage").map(usage),
        grounding,
        reasoning_summary,
        model: body.get("model").and_then(Value::as_str).map(str::to_owned),
        raw: body,
    })
}

/// Maps chat usage. `prompt_tokens` includes cached tokens; `completion_tokens` includes
/// reasoning on OpenAI but not on xAI, and Gemini's endpoint hides its thoughts: whenever
/// `total_tokens` exceeds prompt + completion, the difference is output the provider billed
/// as reasoning.
pub(crate) fn usage(u: &Value) -> Usage {
    let prompt = count(u, &["prompt_tokens"]);
    let completion = count(u, &["completion_tokens"]);
    let total = count(u, &["total_tokens"]);
    let mut reasoning = count(u, &["completion_tokens_details", "reasoning_tokens"])
        .max(count(u, &["reasoning_tokens"]));
    let hidden = total.saturating_sub(prompt + completion);
    let completion = completion + hidden;
    reasoning = reasoning.max(hidden).min(completion);
    let cache_read = count(u, &["prompt_tokens_details", "cached_tokens"]).min(prompt);
    let cache_write =
        count(u, &["prompt_tokens_details", "cache_write_tokens"]).min(prompt - cache_read);
    Usage {
        prompt,
        completion,
        cache_read,
        cache_write,
        cache_write_1h: 0,
        reasoning,
    }
}
