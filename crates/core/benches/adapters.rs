//! Adapter overhead per wire, through the public API (the adapters are not public): encode a
//! 50-message conversation to wire bytes (`Endpoint::request_bytes`, which is the encoder and
//! the serialisation), and a tool-call answer taken by `LlmClient::chat` from a loopback stub
//! (HTTP on loopback + parse + decode), in microseconds (median of many runs). Run with
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

use fuseforks_core::llm::{
    ApiKey, ChatMessage, ChatRequest, ContentBlock, Endpoint, LlmClient, Role, ToolCall,
    ToolResult, ToolSpec, Wire,
};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::stub_template;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

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

fn answer(wire: Wire) -> Value {
    match wire {
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
    }
}

/// The endpoint of a non-streaming template of `wire` at `base` (a stub's, or one never called).
fn endpoint(wire: Wire, base: &str) -> Endpoint {
    let mut template = stub_template(wire, base);
    template.streaming = false;
    endpoint_of(&template, Some(ApiKey::new("k"))).unwrap_or_else(|e| panic!("{e}"))
}

/// The median time of `runs` calls answered by `reply` from a loopback stub, in µs.
fn answered_micros(wire: Wire, reply: &Value, runs: usize) -> f64 {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let stub = StubServer::start(Vec::new()).await;
        stub.push((0..runs).map(|_| StubReply::json(200, reply)));
        let (client, endpoint) = (
            LlmClient::new().unwrap_or_else(|e| panic!("{e}")),
            endpoint(wire, stub.base_url()),
        );
        let request = ChatRequest::new(
            "model-x",
            vec![ChatMessage::text(Role::User, "go")],
            CancellationToken::new(),
        );
        let mut samples = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            black_box(client.chat(&endpoint, &request).await.ok());
            samples.push(start.elapsed().as_secs_f64() * 1e6);
        }
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2]
    })
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
    println!(
        "| wire | encode 50 messages → bytes (µs) | bytes | answer on loopback: HTTP + decode (µs) |"
    );
    println!("|---|---|---|---|");
    for wire in Wire::ALL {
        let at = endpoint(wire, "https://api.example.com");
        let bytes = at.request_bytes(&request).unwrap_or_default();
        let encode_us = median_micros(300, || {
            black_box(at.request_bytes(black_box(&request)));
        });
        let decode_us = answered_micros(wire, &answer(wire), 1000);
        println!(
            "| {} | {encode_us:.1} | {bytes} | {decode_us:.1} |",
            wire.as_str()
        );
    }
}
