//! Responses-style wires: OpenAI, xAI, Meta and Perplexity (Agent API). Stateless: every call
//! sends the whole conversation, and every reasoning item (with `encrypted_content`) is replayed
//! verbatim ahead of the call or message it preceded.

use serde_json::{Map, Value, json};

use super::{ArgsBudget, args_string, count, effort_word, extra_for, extra_of};
use crate::llm::canonical::{
    AttachmentKind, ChatMessage, ChatRequest, ChatResponse, ContentBlock, Grounding,
    GroundingSource, Role, StopReason, ToolCall, ToolChoice,
};
use crate::llm::error::{LlmError, ProviderError, classify};
use crate::llm::usage::Usage;
use crate::llm::wire::Wire;

/// Builds a `/responses` body.
pub(crate) fn encode(request: &ChatRequest, wire: Wire) -> Result<Value, LlmError> {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let system = request.system_text();
    if !system.is_empty() {
        body.insert("instructions".into(), json!(system));
    }
    let mut input = Vec::new();
    for message in request.turns() {
        encode_message(message, wire, &mut input)?;
    }
    body.insert("input".into(), Value::Array(input));

    let mut tools: Vec<Value> = Vec::new();
    // ToolChoice::None is sent as "no tools offered" (documented emulation).
    if !request.tools.is_empty() && request.tool_choice != ToolChoice::None {
        tools.extend(request.tools.iter().map(|t| {
            json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters})
        }));
        let choice = match &request.tool_choice {
            ToolChoice::Required => Some(json!("required")),
            ToolChoice::Specific(name) => Some(json!({"type": "function", "name": name})),
            // Auto is every wire's default and Meta accepts nothing else: not sent.
            ToolChoice::Auto | ToolChoice::None => None,
        };
        if let Some(choice) = choice.filter(|_| wire != Wire::MetaResponses) {
            body.insert("tool_choice".into(), choice);
        }
        if let (Some(parallel), false) = (request.parallel_tool_calls, wire == Wire::MetaResponses)
        {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }
    let skills = &request.skills;
    let server_tools: &[(bool, &str)] = match wire {
        Wire::OpenAiResponses => &[(skills.openai_web_search, "web_search")],
        Wire::XaiResponses => &[
            (skills.xai_web_search, "web_search"),
            (skills.xai_x_search, "x_search"),
        ],
        Wire::MetaResponses => &[(skills.meta_web_search, "web_search")],
        Wire::PerplexityResponses => &[
            (skills.perplexity_web_search, "web_search"),
            (skills.perplexity_finance_search, "finance_search"),
            (skills.perplexity_people_search, "people_search"),
            (skills.perplexity_fetch_url, "fetch_url"),
        ],
        _ => &[],
    };
    tools.extend(
        server_tools
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, kind)| json!({"type": kind})),
    );
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
    }
    if wire == Wire::PerplexityResponses && skills.perplexity_finance_search {
        body.insert("max_steps".into(), json!(5));
    }

    body.insert("max_output_tokens".into(), json!(request.max_output_tokens));
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    let mut reasoning = Map::new();
    if let (Some(effort), false) = (request.effort, wire == Wire::MetaResponses) {
        reasoning.insert("effort".into(), json!(effort_word(effort)));
        if wire == Wire::OpenAiResponses {
            reasoning.insert("summary".into(), json!("detailed"));
        }
    }
    if wire == Wire::OpenAiResponses && skills.openai_reasoning_pro {
        reasoning.insert("mode".into(), json!("pro"));
    }
    if !reasoning.is_empty() {
        body.insert("reasoning".into(), Value::Object(reasoning));
    }
    if matches!(wire, Wire::OpenAiResponses | Wire::XaiResponses) {
        body.insert("store".into(), json!(false));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if let Some(format) = &request.response_format {
        if wire == Wire::PerplexityResponses {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": format.name, "schema": format.schema}}),
            );
        } else {
            body.insert(
                "text".into(),
                json!({"format": {"type": "json_schema", "name": format.name, "schema": format.schema, "strict": true}}),
            );
        }
    }
    Ok(Value::Object(body))
}

fn encode_message(message: &ChatMessage, wire: Wire, out: &mut Vec<Value>) -> Result<(), LlmError> {
    match message.role {
        Role::System => {}
        Role::User => out.push(json!({"role": "user", "content": user_content(message, wire)?})),
        Role::Assistant => {
            for block in &message.content {
                let extra = match block {
                    ContentBlock::Text { extra, .. } => extra,
                    ContentBlock::ToolUse(call) => &call.extra,
                    _ => continue,
                };
                let mine = extra_for(extra, wire);
                if let Some(before) = mine.and_then(|e| e.get("before")).and_then(Value::as_array) {
                    out.extend(before.iter().cloned());
                }
                match block {
                    ContentBlock::Text { text, .. } if !text.is_empty() => out.push(json!({
                        "type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": text}]
                    })),
                    ContentBlock::ToolUse(call) => {
                        let mut item = json!({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": args_string(&call.args)});
                        for key in ["id", "thought_signature"] {
                            if let Some(v) = mine.and_then(|e| e.get(key)) {
                                item[key] = v.clone();
                            }
                        }
                        out.push(item);
                    }
                    _ => {}
                }
            }
        }
        Role::Tool => {
            for block in &message.content {
                if let ContentBlock::ToolResult(r) = block {
                    out.push(json!({"type": "function_call_output", "call_id": r.call_id, "output": r.content}));
                }
            }
        }
    }
    Ok(())
}

fn user_content(message: &ChatMessage, wire: Wire) -> Result<Value, LlmError> {
    if message
        .content
        .iter()
        .all(|b| matches!(b, ContentBlock::Text { .. }))
    {
        return Ok(json!(message.joined_text()));
    }
    let mut parts = Vec::new();
    for block in &message.content {
        parts.push(match block {
            ContentBlock::Text { text, .. } => json!({"type": "input_text", "text": text}),
            ContentBlock::Attachment(a) => match a.kind {
                AttachmentKind::Image => json!({"type": "input_image", "image_url": a.data_url()}),
                AttachmentKind::Pdf | AttachmentKind::Video => {
                    json!({"type": "input_file", "filename": a.file_name, "file_data": a.data_url()})
                }
                AttachmentKind::Audio => {
                    json!({"type": "input_audio", "input_audio": {"data": a.data, "format": a.audio_format()}})
                }
            },
            _ => {
                return Err(LlmError::InvalidRequest(format!(
                    "a user message for {} holds a tool call or result",
                    wire.as_str()
                )));
            }
        });
    }
    Ok(Value::Array(parts))
}

/// Reads a `/responses` body.
pub(crate) fn decode(body: Value, wire: Wire) -> Result<ChatResponse, LlmError> {
    let output = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| LlmError::Decode("no output in the response".into()))?;
    if body.get("status").and_then(Value::as_str) == Some("failed") {
        return Err(failed(&body));
    }
    let mut read = Reading {
        wire,
        content: Vec::new(),
        before: Vec::new(),
        reasoning_summary: Vec::new(),
        grounding: Grounding {
            engine: engine(wire).into(),
            ..Grounding::default()
        },
        refused: false,
        budget: ArgsBudget::default(),
    };
    for item in output {
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => read.reasoning(item),
            Some("message") => read.message(item),
            Some("function_call") => read.function_call(item),
            Some("web_search_call") => read.web_search_call(item),
            Some("search_results") => read.search_results(item),
            _ => {}
        }
    }
    let Reading {
        mut content,
        mut before,
        reasoning_summary,
        grounding,
        refused,
        ..
    } = read;
    if !before.is_empty() {
        content.push(ContentBlock::Text {
            text: String::new(),
            extra: take_before(&mut before, wire, Map::new()),
        });
    }
    let has_calls = content
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolUse(_)));
    let stop = match (
        body.get("status").and_then(Value::as_str),
        incomplete_reason(&body),
    ) {
        _ if refused => StopReason::Refusal,
        (Some("incomplete"), Some("content_filter")) => StopReason::Refusal,
        (Some("incomplete"), _) => StopReason::MaxTokens,
        _ if has_calls => StopReason::ToolUse,
        _ => StopReason::End,
    };
    let grounding =
        (!grounding.sources.is_empty() || !grounding.queries.is_empty()).then_some(grounding);
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

/// The error of a `status: failed` body.
fn failed(body: &Value) -> LlmError {
    let error = body.get("error").cloned().unwrap_or(Value::Null);
    let code = error.get("code").and_then(Value::as_str).map(str::to_owned);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the response failed")
        .to_owned();
    LlmError::Provider(Box::new(ProviderError {
        status: 200,
        class: classify(0, code.as_deref(), &message),
        code,
        message,
        retry_after: None,
        hint_source: crate::llm::retry::HintSource::None,
    }))
}

/// What the output items have given so far.
struct Reading {
    wire: Wire,
    content: Vec<ContentBlock>,
    /// Reasoning items not yet attached to the block that follows them.
    before: Vec<Value>,
    reasoning_summary: Vec<String>,
    grounding: Grounding,
    refused: bool,
    /// The JSON values this answer's argument strings may still hold.
    budget: ArgsBudget,
}

impl Reading {
    fn reasoning(&mut self, item: &Value) {
        let summaries = item
            .get("summary")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        self.reasoning_summary.extend(
            summaries
                .filter_map(|s| s.get("text").and_then(Value::as_str))
                .map(str::to_owned),
        );
        self.before.push(item.clone());
    }

    fn message(&mut self, item: &Value) {
        for part in item
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match part.get("type").and_then(Value::as_str) {
                Some("output_text") => {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or_default();
                    collect_citations(part, &mut self.grounding);
                    self.content.push(ContentBlock::Text {
                        text: text.to_owned(),
                        extra: take_before(&mut self.before, self.wire, Map::new()),
                    });
                }
                Some("refusal") => {
                    self.refused = true;
                    let text = part
                        .get("refusal")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    self.content.push(ContentBlock::text(text));
                }
                _ => {}
            }
        }
    }

    fn function_call(&mut self, item: &Value) {
        let mut data = Map::new();
        for key in ["id", "thought_signature"] {
            if let Some(v) = item.get(key) {
                data.insert(key.into(), v.clone());
            }
        }
        let args = match item.get("arguments") {
            Some(Value::String(s)) => self.budget.parse_args(s),
            Some(other) => other.clone(),
            None => json!({}),
        };
        let text = |key: &str| {
            item.get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        self.content.push(ContentBlock::ToolUse(ToolCall {
            id: text("call_id"),
            name: text("name"),
            args,
            extra: take_before(&mut self.before, self.wire, data),
        }));
    }

    fn web_search_call(&mut self, item: &Value) {
        let query = item
            .get("action")
            .and_then(|a| a.get("query"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| {
                item.get("arguments")
                    .and_then(Value::as_str)
                    .map(|a| self.budget.parse_args(a))
                    .and_then(|a| a.get("query").and_then(Value::as_str).map(str::to_owned))
            });
        self.grounding.queries.extend(query);
    }

    fn search_results(&mut self, item: &Value) {
        let queries = item
            .get("queries")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        self.grounding
            .queries
            .extend(queries.filter_map(Value::as_str).map(str::to_owned));
        for r in item
            .get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            push_source(&mut self.grounding, r.get("url"), r.get("title"));
        }
    }
}

fn incomplete_reason(body: &Value) -> Option<&str> {
    body.get("incomplete_details")
        .and_then(|d| d.get("reason"))
        .and_then(Value::as_str)
}

fn engine(wire: Wire) -> &'static str {
    match wire {
        Wire::XaiResponses => "xai",
        Wire::MetaResponses => "meta",
        Wire::PerplexityResponses => "perplexity",
        _ => "open_ai",
    }
}

fn collect_citations(part: &Value, grounding: &mut Grounding) {
    for a in part
        .get("annotations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if a.get("type").and_then(Value::as_str) == Some("url_citation") {
            push_source(grounding, a.get("url"), a.get("title"));
        }
    }
}

fn push_source(grounding: &mut Grounding, url: Option<&Value>, title: Option<&Value>) {
    if let Some(uri) = url.and_then(Value::as_str)
        && !grounding.sources.iter().any(|s| s.uri == uri)
    {
        let title = title.and_then(Value::as_str).unwrap_or_default().to_owned();
        grounding.sources.push(GroundingSource {
            uri: uri.to_owned(),
            title,
        });
    }
}

fn take_before(before: &mut Vec<Value>, wire: Wire, mut data: Map<String, Value>) -> Value {
    if !before.is_empty() {
        data.insert("before".into(), Value::Array(std::mem::take(before)));
    }
    extra_of(wire, data)
}

/// Maps Responses usage: `input_tokens` includes cached tokens, `output_tokens` includes
/// reasoning. Cache fields differ by provider (`cached_tokens` / `cache_read_input_tokens`,
/// `cache_write_tokens` / `cache_creation_input_tokens`).
pub(crate) fn usage(u: &Value) -> Usage {
    let prompt = count(u, &["input_tokens"]);
    let completion = count(u, &["output_tokens"]);
    let details = |keys: &[&str]| {
        keys.iter()
            .map(|k| count(u, &["input_tokens_details", k]))
            .max()
            .unwrap_or(0)
    };
    let cache_read = details(&["cached_tokens", "cache_read_input_tokens"]).min(prompt);
    let cache_write =
        details(&["cache_write_tokens", "cache_creation_input_tokens"]).min(prompt - cache_read);
    Usage {
        prompt,
        completion,
        cache_read,
        cache_write,
        cache_write_1h: 0,
        reasoning: count(u, &["output_tokens_details", "reasoning_tokens"]).min(completion),
    }
}
