//! Scripted replies in each wire's own JSON: a text answer, tool calls (with the provider data
//! that must come back verbatim: Gemini thought signatures, Responses reasoning items, Anthropic
//! thinking blocks), and errors with retry hints. The stub serves them; the adapters under test
//! must read them back into the same canonical shape.

use fuseforks_core::llm::Wire;
use serde_json::{Value, json};

use crate::stub::StubReply;

/// Token counts in canonical terms: `prompt` includes `cache_read`, `completion` includes
/// `reasoning`. Each wire spells them its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptUsage {
    /// All input tokens.
    pub prompt: u64,
    /// All output tokens.
    pub completion: u64,
    /// Cached input tokens.
    pub cache_read: u64,
    /// Reasoning output tokens.
    pub reasoning: u64,
}

/// A tool call to script.
#[derive(Debug, Clone)]
pub struct ScriptCall {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub args: Value,
}

/// The opaque values the tool-call replies carry, so tests can check they come back verbatim.
pub mod opaque {
    /// Gemini's thought signature on the first call.
    pub const GEMINI_SIGNATURE: &str = "Eqo+Cqc+Ab4+9vtgONaaz6qwy6WX/sig==";
    /// The Responses reasoning item's encrypted content.
    pub const RESPONSES_ENCRYPTED: &str = "gAAAAABpPMlcH0HHEv5_ozHwP5Gxz5ZLE7A8Aw7G==";
    /// Anthropic's thinking-block signature.
    pub const ANTHROPIC_SIGNATURE: &str = "EqEEClYIBhgCKkDxSig+/==";
}

/// A text answer.
pub fn text(wire: Wire, text: &str, usage: ScriptUsage) -> StubReply {
    StubReply::json(200, &text_body(wire, text, usage))
}

/// An answer made of tool calls.
pub fn tool_calls(wire: Wire, calls: &[ScriptCall], usage: ScriptUsage) -> StubReply {
    StubReply::json(200, &calls_body(wire, calls, usage))
}

/// An error in the wire's envelope; `retry_after` adds the header (and, for Gemini 429s, the
/// `RetryInfo` body hint).
pub fn error(wire: Wire, status: u16, message: &str, retry_after: Option<&str>) -> StubReply {
    let body = match wire {
        Wire::Anthropic => {
            json!({"type": "error", "error": {"type": anthropic_type(status), "message": message}, "request_id": "req_stub"})
        }
        Wire::Gemini => {
            let mut e = json!({"error": {"code": status, "message": message, "status": gemini_status(status)}});
            if let (429, Some(secs)) = (status, retry_after) {
                e["error"]["details"] = json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{secs}s")}]);
            }
            e
        }
        Wire::OllamaNative => json!({"error": message}),
        _ => {
            json!({"error": {"message": message, "type": openai_type(status), "param": null, "code": openai_type(status)}})
        }
    };
    let mut reply = StubReply::json(status, &body);
    if let Some(value) = retry_after {
        reply = reply.header("retry-after", value);
    }
    reply
}

fn anthropic_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

fn gemini_status(status: u16) -> &'static str {
    match status {
        429 => "RESOURCE_EXHAUSTED",
        403 => "PERMISSION_DENIED",
        503 => "UNAVAILABLE",
        500..=599 => "INTERNAL",
        _ => "INVALID_ARGUMENT",
    }
}

fn openai_type(status: u16) -> &'static str {
    match status {
        401 => "invalid_api_key",
        429 => "rate_limit_exceeded",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    }
}

fn text_body(wire: Wire, text: &str, u: ScriptUsage) -> Value {
    match wire {
        Wire::OpenAiCompat => json!({
            "id": "chatcmpl-stub", "object": "chat.completion", "model": "stub-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text, "refusal": null}}],
            "usage": openai_usage(u)
        }),
        Wire::Anthropic => json!({
            "id": "msg_stub", "type": "message", "role": "assistant", "model": "stub-model",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": anthropic_usage(u)
        }),
        Wire::Gemini => json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": gemini_usage(u), "modelVersion": "stub-model"
        }),
        Wire::OllamaNative => json!({
            "model": "stub-model", "message": {"role": "assistant", "content": text}, "done": true, "done_reason": "stop",
            "prompt_eval_count": u.prompt, "eval_count": u.completion
        }),
        _ => json!({
            "id": "resp_stub", "object": "response", "status": "completed", "model": "stub-model",
            "output": [{"id": "msg_stub", "type": "message", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "usage": responses_usage(u)
        }),
    }
}

fn calls_body(wire: Wire, calls: &[ScriptCall], u: ScriptUsage) -> Value {
    match wire {
        Wire::OpenAiCompat => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args.to_string()}}))
                .collect();
            json!({
                "id": "chatcmpl-stub", "object": "chat.completion", "model": "stub-model",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}}],
                "usage": openai_usage(u)
            })
        }
        Wire::Anthropic => {
            let mut content = vec![
                json!({"type": "thinking", "thinking": "I should look it up.", "signature": opaque::ANTHROPIC_SIGNATURE}),
            ];
            content.extend(
                calls.iter().map(
                    |c| json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.args}),
                ),
            );
            json!({
                "id": "msg_stub", "type": "message", "role": "assistant", "model": "stub-model",
                "content": content, "stop_reason": "tool_use", "stop_sequence": null, "usage": anthropic_usage(u)
            })
        }
        Wire::Gemini => {
            let parts: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let mut part =
                        json!({"functionCall": {"id": c.id, "name": c.name, "args": c.args}});
                    if i == 0 {
                        part["thoughtSignature"] = json!(opaque::GEMINI_SIGNATURE);
                    }
                    part
                })
                .collect();
            json!({
                "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": gemini_usage(u), "modelVersion": "stub-model"
            })
        }
        Wire::OllamaNative => {
            // Older servers send no ids: the adapter must make them up.
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|c| json!({"function": {"name": c.name, "arguments": c.args}}))
                .collect();
            json!({
                "model": "stub-model", "message": {"role": "assistant", "content": "", "tool_calls": tool_calls},
                "done": true, "done_reason": "stop", "prompt_eval_count": u.prompt, "eval_count": u.completion
            })
        }
        _ => {
            let mut output = vec![json!({
                "id": "rs_stub", "type": "reasoning", "encrypted_content": opaque::RESPONSES_ENCRYPTED,
                "summary": [{"type": "summary_text", "text": "Looking it up."}]
            })];
            output.extend(calls.iter().map(|c| {
                json!({"id": format!("fc_{}", c.id), "type": "function_call", "status": "completed",
                       "call_id": c.id, "name": c.name, "arguments": c.args.to_string()})
            }));
            json!({"id": "resp_stub", "object": "response", "status": "completed", "model": "stub-model", "output": output, "usage": responses_usage(u)})
        }
    }
}

fn openai_usage(u: ScriptUsage) -> Value {
    json!({"prompt_tokens": u.prompt, "completion_tokens": u.completion, "total_tokens": u.prompt + u.completion,
           "prompt_tokens_details": {"cached_tokens": u.cache_read}, "completion_tokens_details": {"reasoning_tokens": u.reasoning}})
}

fn anthropic_usage(u: ScriptUsage) -> Value {
    json!({"input_tokens": u.prompt - u.cache_read, "cache_read_input_tokens": u.cache_read, "cache_creation_input_tokens": 0,
           "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
           "output_tokens": u.completion, "output_tokens_details": {"thinking_tokens": u.reasoning}})
}

fn gemini_usage(u: ScriptUsage) -> Value {
    json!({"promptTokenCount": u.prompt, "cachedContentTokenCount": u.cache_read, "candidatesTokenCount": u.completion - u.reasoning,
           "thoughtsTokenCount": u.reasoning, "totalTokenCount": u.prompt + u.completion})
}

fn responses_usage(u: ScriptUsage) -> Value {
    json!({"input_tokens": u.prompt, "input_tokens_details": {"cached_tokens": u.cache_read},
           "output_tokens": u.completion, "output_tokens_details": {"reasoning_tokens": u.reasoning},
           "total_tokens": u.prompt + u.completion})
}
