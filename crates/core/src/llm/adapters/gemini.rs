//! Gemini native `generateContent`: parts, function calls with ids, thought signatures echoed
//! in the very part they came on, Google Search grounding and URL context, thinking config.

use serde_json::{Map, Value, json};

use super::{count, extra_for, extra_of, result_object};
use crate::effort::Effort;
use crate::llm::canonical::{
    ChatMessage, ChatRequest, ChatResponse, ContentBlock, Grounding, GroundingSource, Role,
    StopReason, ToolCall, ToolChoice,
};
use crate::llm::error::LlmError;
use crate::llm::usage::Usage;
use crate::llm::wire::Wire;

const WIRE: Wire = Wire::Gemini;

/// Builds a `generateContent` body.
pub(crate) fn encode(request: &ChatRequest) -> Result<Value, LlmError> {
    let mut body = Map::new();
    let system = request.system_text();
    if !system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}]}),
        );
    }
    let mut contents: Vec<Value> = Vec::new();
    for message in request.turns() {
        let (role, parts) = match message.role {
            Role::System => continue,
            Role::User | Role::Tool => ("user", user_parts(message)?),
            Role::Assistant => ("model", model_parts(message)),
        };
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some(prev) if prev["role"] == role => {
                if let Some(p) = prev["parts"].as_array_mut() {
                    p.extend(parts);
                }
            }
            _ => contents.push(json!({"role": role, "parts": parts})),
        }
    }
    body.insert("contents".into(), Value::Array(contents));

    let mut tools = Vec::new();
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}))
            .collect();
        tools.push(json!({"functionDeclarations": declarations}));
        let config = match &request.tool_choice {
            ToolChoice::None => json!({"mode": "NONE"}),
            ToolChoice::Auto => json!({"mode": "AUTO"}),
            ToolChoice::Required => json!({"mode": "ANY"}),
            ToolChoice::Specific(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
        };
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": config}),
        );
    }
    if request.skills.google_search {
        tools.push(json!({"googleSearch": {}}));
    }
    if request.skills.gemini_url_context {
        tools.push(json!({"urlContext": {}}));
    }
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }

    let mut generation = Map::new();
    generation.insert("maxOutputTokens".into(), json!(request.max_output_tokens));
    if let Some(t) = request.temperature {
        generation.insert("temperature".into(), json!(t));
    }
    if let Some(effort) = request.effort {
        generation.insert(
            "thinkingConfig".into(),
            thinking_config(&request.model, effort),
        );
    }
    if let Some(format) = &request.response_format {
        generation.insert("responseMimeType".into(), json!("application/json"));
        generation.insert("responseJsonSchema".into(), format.schema.clone());
    }
    body.insert("generationConfig".into(), Value::Object(generation));
    Ok(Value::Object(body))
}

/// Gemini 3 takes a thinking level; earlier models a token budget.
fn thinking_config(model: &str, effort: Effort) -> Value {
    if model.contains("gemini-3") {
        let level = match effort {
            Effort::Low => "LOW",
            Effort::Medium => "MEDIUM",
            Effort::High | Effort::Xhigh | Effort::Max => "HIGH",
        };
        json!({"thinkingLevel": level, "includeThoughts": true})
    } else {
        let budget = match effort {
            Effort::Low => 1024,
            Effort::Medium => 4096,
            Effort::High => 8192,
            Effort::Xhigh => 16_384,
            Effort::Max => 24_576,
        };
        json!({"thinkingBudget": budget, "includeThoughts": true})
    }
}

fn user_parts(message: &ChatMessage) -> Result<Vec<Value>, LlmError> {
    let mut parts = Vec::new();
    for block in &message.content {
        parts.push(match block {
            ContentBlock::Text { text, .. } => json!({"text": text}),
            ContentBlock::Attachment(a) => {
                json!({"inlineData": {"mimeType": a.media_type, "data": a.data}})
            }
            ContentBlock::ToolResult(r) => {
                let mut response =
                    json!({"name": r.name, "response": result_object(&r.content, r.is_error)});
                if !r.call_id.is_empty() && !r.call_id.starts_with(SYNTHETIC_ID_PREFIX) {
                    response["id"] = json!(r.call_id);
                }
                json!({"functionResponse": response})
            }
            ContentBlock::ToolUse(_) => {
                return Err(LlmError::InvalidRequest(
                    "a user message holds a tool call".into(),
                ));
            }
        });
    }
    Ok(parts)
}

/// Ids made up for calls that came without one; never sent back.
const SYNTHETIC_ID_PREFIX: &str = "gemini_call_";

fn model_parts(message: &ChatMessage) -> Vec<Value> {
    let mut parts = Vec::new();
    for block in &message.content {
        let (mut part, extra) = match block {
            ContentBlock::Text { text, extra } => (json!({"text": text}), extra),
            ContentBlock::ToolUse(call) => {
                let mut function_call = json!({"name": call.name, "args": call.args});
                if !call.id.starts_with(SYNTHETIC_ID_PREFIX) {
                    function_call["id"] = json!(call.id);
                }
                (json!({"functionCall": function_call}), &call.extra)
            }
            _ => continue,
        };
        if let Some(signature) = extra_for(extra, WIRE).and_then(|e| e.get("thoughtSignature")) {
            part["thoughtSignature"] = signature.clone();
        }
        parts.push(part);
    }
    parts
}

/// Reads a `generateContent` body.
pub(crate) fn decode(body: Value) -> Result<ChatResponse, LlmError> {
    let candidate = body.get("candidates").and_then(|c| c.get(0));
    let Some(candidate) = candidate else {
        // A blocked prompt: no candidates, a block reason.
        if body
            .get("promptFeedback")
            .and_then(|f| f.get("blockReason"))
            .is_some()
        {
            return Ok(response(
                Vec::new(),
                StopReason::Refusal,
                Vec::new(),
                None,
                body,
            ));
        }
        return Err(LlmError::Decode(
            "no candidates in the Gemini response".into(),
        ));
    };
    let mut content = Vec::new();
    let mut reasoning_summary = Vec::new();
    let parts = candidate
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array);
    for (i, part) in parts.into_iter().flatten().enumerate() {
        let mut data = Map::new();
        if let Some(signature) = part.get("thoughtSignature") {
            data.insert("thoughtSignature".into(), signature.clone());
        }
        if let Some(call) = part.get("functionCall") {
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty());
            content.push(ContentBlock::ToolUse(ToolCall {
                id: id.map_or_else(|| format!("{SYNTHETIC_ID_PREFIX}{i}"), str::to_owned),
                name: call
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                args: call.get("args").cloned().unwrap_or_else(|| json!({})),
                extra: extra_of(WIRE, data),
            }));
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                if !text.is_empty() {
                    reasoning_summary.push(text.to_owned());
                }
            } else if !text.is_empty() || !data.is_empty() {
                content.push(ContentBlock::Text {
                    text: text.to_owned(),
                    extra: extra_of(WIRE, data),
                });
            }
        }
    }
    let has_calls = content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolUse(_)));
    let stop = match candidate.get("finishReason").and_then(Value::as_str) {
        Some("MAX_TOKENS") => StopReason::MaxTokens,
        Some(
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "LANGUAGE",
        ) => StopReason::Refusal,
        _ if has_calls => StopReason::ToolUse,
        _ => StopReason::End,
    };
    let grounding = candidate.get("groundingMetadata").map(grounding);
    Ok(response(content, stop, reasoning_summary, grounding, body))
}

fn response(
    content: Vec<ContentBlock>,
    stop: StopReason,
    reasoning_summary: Vec<String>,
    grounding: Option<Grounding>,
    body: Value,
) -> ChatResponse {
    ChatResponse {
        content,
        stop,
        usage: body.get("usageMetadata").map(usage),
        grounding,
        reasoning_summary,
        model: body
            .get("modelVersion")
            .and_then(Value::as_str)
            .map(str::to_owned),
        raw: body,
    }
}

fn grounding(meta: &Value) -> Grounding {
    let queries = meta
        .get("webSearchQueries")
        .and_then(Value::as_array)
        .map(|q| {
            q.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let sources = meta
        .get("groundingChunks")
        .and_then(Value::as_array)
        .map(|chunks| {
            chunks
                .iter()
                .filter_map(|c| c.get("web"))
                .map(|w| GroundingSource {
                    uri: w
                        .get("uri")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    title: w
                        .get("title")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    Grounding {
        queries,
        sources,
        engine: "google".into(),
    }
}

/// Maps Gemini usage: `promptTokenCount` includes cached tokens; tool-use prompt tokens are
/// input too; `candidatesTokenCount` excludes thoughts, which are billed as output.
pub(crate) fn usage(u: &Value) -> Usage {
    let prompt = count(u, &["promptTokenCount"]) + count(u, &["toolUsePromptTokenCount"]);
    let thoughts = count(u, &["thoughtsTokenCount"]);
    Usage {
        prompt,
        completion: count(u, &["candidatesTokenCount"]) + thoughts,
        cache_read: count(u, &["cachedContentTokenCount"]).min(prompt),
        cache_write: 0,
        cache_write_1h: 0,
        reasoning: thoughts,
    }
}
