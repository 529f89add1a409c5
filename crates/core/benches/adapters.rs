//! Adapter overhead per wire: encode a 50-message conversation to wire bytes, and parse + decode
//! a tool-call answer, in microseconds (median of many runs). Run with
//! `cargo bench -p fuseforks-core --bench adapters` (release profile).

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::hint::black_box;
use std::time::Instant;

use fuseforks_core::llm::adapters::{CacheTtl, EncodeContext, decode, encode};
use fuseforks_core::llm::{
    CancellationToken, ChatMessage, ChatRequest, ContentBlock, Role, ToolCall, ToolResult,
    ToolSpec, Wire,
};
use serde_json::json;

fn conversation() -> ChatRequest {
    let mut messages = vec![ChatMessage::text(
        Role::System,
        "# Ordinance\n".to_owned() + &"Rule of the village. ".repeat(200),
    )];
    for i in 0..49 {
        let message = match i % 3 {
            0 => ChatMessage::text(
                Role::User,
                format!("Request {i}: ") + &"please look into the logs and summarise. ".repeat(8),
            ),
            1 => ChatMessage {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("Let me search."),
                    ContentBlock::ToolUse(ToolCall {
                        id: format!("call_{i}"),
                        name: "grep".into(),
                        args: json!({"pattern": "error", "path": "logs/", "context": 2}),
                        extra: json!({"gemini": {"thoughtSignature": "Eqo+Cqc+Ab4+9vtgONaaz6qwy6WX"}, "responses": {"before": [{"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA".repeat(40), "summary": []}]}, "anthropic": {"before": [{"type": "thinking", "thinking": "hm", "signature": "EqEE".repeat(30)}]}}),
                    }),
                ],
            },
            _ => ChatMessage {
                role: Role::Tool,
                content: vec![ContentBlock::ToolResult(ToolResult {
                    call_id: format!("call_{}", i - 1),
                    name: "grep".into(),
                    content: "logs/app.log:12: error: disk full\n".repeat(20),
                    is_error: false,
                })],
            },
        };
        messages.push(message);
    }
    let mut request = ChatRequest::new("model-x", messages, CancellationToken::new());
    request.tools = (0..12)
        .map(|i| ToolSpec {
            name: format!("tool_{i}"),
            description: "A bundled tool with a description of moderate length.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}, "reason": {"type": "string"}}, "required": ["path"], "additionalProperties": false}),
        })
        .collect();
    request.cacheable_prefix_len = 2000;
    request
}

fn answer(wire: Wire) -> Vec<u8> {
    let body = match wire {
        Wire::OpenAiCompat => {
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\":\"x\"}"}}]}}], "usage": {"prompt_tokens": 9000, "completion_tokens": 40, "total_tokens": 9040, "prompt_tokens_details": {"cached_tokens": 8000}}})
        }
        Wire::Anthropic => {
            json!({"content": [{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "tool_use", "id": "c", "name": "grep", "input": {"pattern": "x"}}], "stop_reason": "tool_use", "usage": {"input_tokens": 1000, "cache_read_input_tokens": 8000, "output_tokens": 40}})
        }
        Wire::Gemini => {
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "grep", "args": {"pattern": "x"}}, "thoughtSignature": "sig"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 9000, "candidatesTokenCount": 40, "totalTokenCount": 9040}})
        }
        Wire::OllamaNative => {
            json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "grep", "arguments": {"pattern": "x"}}}]}, "done": true, "prompt_eval_count": 9000, "eval_count": 40})
        }
        _ => {
            json!({"status": "completed", "output": [{"type": "reasoning", "id": "rs", "encrypted_content": "e", "summary": []}, {"type": "function_call", "id": "fc", "call_id": "c", "name": "grep", "arguments": "{\"pattern\":\"x\"}"}], "usage": {"input_tokens": 9000, "output_tokens": 40}})
        }
    };
    body.to_string().into_bytes()
}

fn median_micros(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    let request = conversation();
    println!("| wire | encode 50 messages → bytes (µs) | bytes | parse + decode answer (µs) |");
    println!("|---|---|---|---|");
    for wire in Wire::ALL {
        let ctx = EncodeContext {
            wire,
            base_url: "https://api.example.com/v1",
            cache_ttl: CacheTtl::OneHour,
        };
        let bytes =
            serde_json::to_vec(&encode(&request, &ctx).unwrap_or_default()).unwrap_or_default();
        let encode_us = median_micros(300, || {
            let body = encode(black_box(&request), &ctx).unwrap_or_default();
            black_box(serde_json::to_vec(&body).unwrap_or_default());
        });
        let reply = answer(wire);
        let decode_us = median_micros(3000, || {
            let value: serde_json::Value =
                serde_json::from_slice(black_box(&reply)).unwrap_or_default();
            black_box(decode(wire, value).ok());
        });
        println!(
            "| {} | {encode_us:.1} | {} | {decode_us:.1} |",
            wire.as_str(),
            bytes.len()
        );
    }
}
