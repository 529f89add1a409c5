//! Anthropic Messages: system blocks with a cache breakpoint right after the stable prefix and on
//! the last message, thinking (adaptive or budgeted by model), thinking blocks replayed verbatim.

use serde_json::{Map, Value, json};

use super::{CacheTtl, EncodeContext, count, effort_word, extra_for, extra_of};
use crate::effort::Effort;
use crate::llm::canonical::{
    AttachmentKind, ChatMessage, ChatRequest, ChatResponse, ContentBlock, Role, StopReason,
    ToolCall, ToolChoice,
};
use crate::llm::error::LlmError;
use crate::llm::usage::Usage;
use crate::llm::wire::Wire;

const WIRE: Wire = Wire::Anthropic;

/// The `anthropic-version` header value.
pub(crate) const API_VERSION: &str = "2023-06-01";
/// The beta header that enables the 1-hour cache lifetime on older API versions.
pub(crate) const EXTENDED_TTL_BETA: &str = "extended-cache-ttl-2025-04-11";

/// Builds a `/messages` body.
pub(crate) fn encode(request: &ChatRequest, ctx: &EncodeContext<'_>) -> Result<Value, LlmError> {
    let cache = cache_control(ctx.cache_ttl);
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("max_tokens".into(), json!(request.max_output_tokens));
    let system = request.system_text();
    if !system.is_empty() {
        body.insert(
            "system".into(),
            system_blocks(&system, request.cacheable_prefix_len, &cache),
        );
    }
    let mut messages = encode_messages(request)?;
    if let Some(last) = messages
        .last_mut()
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut)
        && let Some(block) = last.last_mut()
    {
        block["cache_control"] = cache.clone();
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let mut choice = match &request.tool_choice {
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Specific(name) => json!({"type": "tool", "name": name}),
        };
        if let (Some(parallel), false) = (
            request.parallel_tool_calls,
            request.tool_choice == ToolChoice::None,
        ) {
            choice["disable_parallel_tool_use"] = json!(!parallel);
        }
        body.insert("tool_choice".into(), choice);
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(effort) = request.effort {
        if adaptive_thinking(&request.model) {
            body.insert("thinking".into(), json!({"type": "adaptive"}));
            body.insert(
                "output_config".into(),
                json!({"effort": effort_word(effort)}),
            );
        } else {
            let budget = thinking_budget(effort, request.max_output_tokens)?;
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
    }
    if let Some(format) = &request.response_format {
        let config = body.entry("output_config").or_insert_with(|| json!({}));
        config["format"] = json!({"type": "json_schema", "schema": format.schema});
    }
    Ok(Value::Object(body))
}

fn cache_control(ttl: CacheTtl) -> Value {
    match ttl {
        CacheTtl::FiveMinutes => json!({"type": "ephemeral", "ttl": "5m"}),
        CacheTtl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

/// The system text as blocks: the stable prefix (first `prefix_chars` characters) carries the
/// breakpoint, the volatile rest follows without one.
fn system_blocks(system: &str, prefix_chars: usize, cache: &Value) -> Value {
    let split = system
        .char_indices()
        .nth(prefix_chars)
        .map_or(system.len(), |(i, _)| i);
    let (stable, rest) = system.split_at(split);
    let mut blocks = Vec::new();
    if !stable.is_empty() {
        blocks.push(json!({"type": "text", "text": stable, "cache_control": cache}));
    }
    if !rest.is_empty() {
        blocks.push(json!({"type": "text", "text": rest}));
    }
    Value::Array(blocks)
}

/// Claude models from 4.6 on think adaptively with an effort; older ones take a budget.
pub(crate) fn adaptive_thinking(model: &str) -> bool {
    let numbers: Vec<u32> = model
        .split(['-', '.'])
        .filter_map(|p| p.parse::<u32>().ok())
        .filter(|n| *n < 100) // skip date stamps such as 20250929
        .collect();
    match numbers.as_slice() {
        [major, ..] if *major >= 5 => true,
        [4, minor, ..] => *minor >= 6,
        _ => false,
    }
}

fn thinking_budget(effort: Effort, max_tokens: u32) -> Result<u32, LlmError> {
    let wanted = match effort {
        Effort::Low => 1024,
        Effort::Medium => 4096,
        Effort::High => 8192,
        Effort::Xhigh => 16_384,
        Effort::Max => 32_000,
    };
    if max_tokens <= 1024 {
        return Err(LlmError::InvalidRequest(format!(
            "thinking needs max_output_tokens above 1024 (got {max_tokens}); raise it or drop the effort"
        )));
    }
    Ok(wanted.min(max_tokens - 1).max(1024))
}

fn encode_messages(request: &ChatRequest) -> Result<Vec<Value>, LlmError> {
    let mut out: Vec<Value> = Vec::new();
    for message in request.turns() {
        let (role, blocks) = match message.role {
            Role::System => continue,
            Role::User | Role::Tool => ("user", user_blocks(message)?),
            Role::Assistant => ("assistant", assistant_blocks(message)),
        };
        if blocks.is_empty() {
            continue;
        }
        // Messages alternate: tool results and the next user text share one user message.
        match out.last_mut() {
            Some(prev) if prev["role"] == role => {
                if let Some(content) = prev["content"].as_array_mut() {
                    content.extend(blocks);
                }
            }
            _ => out.push(json!({"role": role, "content": blocks})),
        }
    }
    Ok(out)
}

fn user_blocks(message: &ChatMessage) -> Result<Vec<Value>, LlmError> {
    let mut blocks = Vec::new();
    for block in &message.content {
        blocks.push(match block {
            ContentBlock::Text { text, .. } => json!({"type": "text", "text": text}),
            ContentBlock::Attachment(a) => match a.kind {
                AttachmentKind::Image => {
                    json!({"type": "image", "source": {"type": "base64", "media_type": a.media_type, "data": a.data}})
                }
                AttachmentKind::Pdf => {
                    json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": a.data}})
                }
                AttachmentKind::Audio | AttachmentKind::Video => {
                    return Err(LlmError::unsupported(WIRE, "carry audio or video", "leave it out"));
                }
            },
            ContentBlock::ToolResult(r) => {
                json!({"type": "tool_result", "tool_use_id": r.call_id, "content": r.content, "is_error": r.is_error})
            }
            ContentBlock::ToolUse(_) => {
                return Err(LlmError::InvalidRequest("a user message holds a tool call".into()));
            }
        });
    }
    Ok(blocks)
}

fn assistant_blocks(message: &ChatMessage) -> Vec<Value> {
    let mut blocks = Vec::new();
    for block in &message.content {
        let extra = match block {
            ContentBlock::Text { extra, .. } => extra,
            ContentBlock::ToolUse(call) => &call.extra,
            _ => &Value::Null,
        };
        if let Some(before) = extra_for(extra, WIRE)
            .and_then(|e| e.get("before"))
            .and_then(Value::as_array)
        {
            blocks.extend(before.iter().cloned());
        }
        match block {
            ContentBlock::Text { text, .. } if !text.is_empty() => {
                blocks.push(json!({"type": "text", "text": text}))
            }
            ContentBlock::ToolUse(call) => {
                let input = if call.args.is_object() {
                    call.args.clone()
                } else {
                    json!({})
                };
                blocks.push(
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                );
            }
            _ => {}
        }
    }
    blocks
}

/// Reads a `/messages` body.
pub(crate) fn decode(body: Value) -> Result<ChatResponse, LlmError> {
    let blocks = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Decode("no content in the Anthropic message".into()))?;
    let mut content = Vec::new();
    let mut before: Vec<Value> = Vec::new();
    let mut reasoning_summary = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                if let Some(t) = block
                    .get("thinking")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    reasoning_summary.push(t.to_owned());
                }
                before.push(block.clone());
            }
            Some("redacted_thinking") => before.push(block.clone()),
            Some("text") => {
                let text = block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                content.push(ContentBlock::Text {
                    text: text.to_owned(),
                    extra: take_before(&mut before),
                });
            }
            Some("tool_use") => content.push(ContentBlock::ToolUse(ToolCall {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                args: block.get("input").cloned().unwrap_or_else(|| json!({})),
                extra: take_before(&mut before),
            })),
            _ => {}
        }
    }
    if !before.is_empty() {
        content.push(ContentBlock::Text {
            text: String::new(),
            extra: take_before(&mut before),
        });
    }
    let stop = match body.get("stop_reason").and_then(Value::as_str) {
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens" | "model_context_window_exceeded") => StopReason::MaxTokens,
        Some("refusal") => StopReason::Refusal,
        _ => StopReason::End,
    };
    Ok(ChatResponse {
        content,
        stop,
        usage: body.get("usage").map(usage),
        grounding: None,
        reasoning_summary,
        model: body.get("model").and_then(Value::as_str).map(str::to_owned),
        raw: body,
    })
}

fn take_before(before: &mut Vec<Value>) -> Value {
    if before.is_empty() {
        return Value::Null;
    }
    let mut data = Map::new();
    data.insert("before".into(), Value::Array(std::mem::take(before)));
    extra_of(WIRE, data)
}

/// Maps Anthropic usage: `input_tokens` excludes cache reads and writes, so the prompt is the
/// sum of the three; `output_tokens` includes thinking.
pub(crate) fn usage(u: &Value) -> Usage {
    let input = count(u, &["input_tokens"]);
    let cache_read = count(u, &["cache_read_input_tokens"]);
    let cache_write = count(u, &["cache_creation_input_tokens"]);
    let completion = count(u, &["output_tokens"]);
    Usage {
        prompt: input + cache_read + cache_write,
        completion,
        cache_read,
        cache_write,
        cache_write_1h: count(u, &["cache_creation", "ephemeral_1h_input_tokens"]).min(cache_write),
        reasoning: count(u, &["output_tokens_details", "thinking_tokens"]).min(completion),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_by_model_name() {
        assert!(adaptive_thinking("claude-opus-5"));
        assert!(adaptive_thinking("claude-sonnet-4-6"));
        assert!(!adaptive_thinking("claude-sonnet-4-5-20250929"));
        assert!(!adaptive_thinking("claude-3-7-sonnet-20250219"));
        assert!(!adaptive_thinking("claude-haiku-4-5"));
    }

    #[test]
    fn the_breakpoint_splits_at_a_character_count() {
        let cache = json!({"type": "ephemeral"});
        let blocks = system_blocks("条例ABCrest", 5, &cache);
        assert_eq!(blocks[0]["text"], "条例ABC");
        assert_eq!(blocks[1]["text"], "rest");
        assert!(blocks[1].get("cache_control").is_none());
        assert_eq!(
            system_blocks("abc", 99, &cache).as_array().unwrap().len(),
            1
        );
    }
}
