//! A whole scripted answer cut into the stream its wire would send instead: OpenAI chat chunks
//! (text in two pieces, each tool call's arguments in two fragments, the `include_usage` chunk),
//! Anthropic's event sequence (`message_start` … `message_delta` with the usage), Gemini's
//! responses one part each, the Responses events ending in `response.completed`, Ollama's
//! NDJSON lines. The conformance test serves both and compares what the client makes of them.

use fuseforks_core::llm::Wire;
use serde_json::{Map, Value, json};

use crate::stub::StubReply;

/// The streamed form of a whole 200 reply of `wire` (its body must be the wire's JSON).
pub fn streamed(wire: Wire, whole: &StubReply) -> StubReply {
    let body: Value = serde_json::from_slice(&whole.body).unwrap_or(Value::Null);
    match wire {
        Wire::OpenAiCompat => sse(&chat_chunks(&body), true),
        Wire::Anthropic => sse(&anthropic_events(&body), false),
        Wire::Gemini => sse(&gemini_events(&body), false),
        Wire::OllamaNative => ndjson(&ollama_lines(&body)),
        _ => sse(&responses_events(&body), false),
    }
}

fn sse(events: &[Value], done: bool) -> StubReply {
    let mut text = String::new();
    for event in events {
        text.push_str(&format!("data: {event}\n\n"));
    }
    if done {
        text.push_str("data: [DONE]\n\n");
    }
    raw(text, "text/event-stream")
}

fn ndjson(lines: &[Value]) -> StubReply {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    raw(text, "application/x-ndjson")
}

fn raw(text: String, content_type: &str) -> StubReply {
    let mut reply = StubReply::json(200, &Value::Null);
    reply.body = text.into_bytes();
    reply.header("content-type", content_type)
}

/// `text` in two pieces (one when it is shorter than two characters).
fn halves(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mid = chars.len() / 2;
    if mid == 0 {
        return vec![text.to_owned()];
    }
    vec![chars[..mid].iter().collect(), chars[mid..].iter().collect()]
}

fn chat_chunks(body: &Value) -> Vec<Value> {
    let model = &body["model"];
    let choice = &body["choices"][0];
    let message = &choice["message"];
    let chunk = |delta: Value, finish: Value| {
        json!({"object": "chat.completion.chunk", "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut chunks = vec![chunk(json!({"role": "assistant"}), Value::Null)];
    for key in ["reasoning_content", "content"] {
        if let Some(text) = message[key].as_str() {
            for piece in halves(text) {
                chunks.push(chunk(json!({ key: piece }), Value::Null));
            }
        }
    }
    for (index, call) in message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let args = call["function"]["arguments"].as_str().unwrap_or("");
        for (n, piece) in halves(args).into_iter().enumerate() {
            let mut part = json!({"index": index, "function": {"arguments": piece}});
            if n == 0 {
                part["id"] = call["id"].clone();
                part["type"] = json!("function");
                part["function"]["name"] = call["function"]["name"].clone();
            }
            chunks.push(chunk(json!({ "tool_calls": [part] }), Value::Null));
        }
    }
    chunks.push(chunk(json!({}), choice["finish_reason"].clone()));
    chunks.push(
        json!({"object": "chat.completion.chunk", "model": model, "choices": [],
                       "usage": body["usage"]}),
    );
    chunks
}

fn anthropic_events(body: &Value) -> Vec<Value> {
    let mut start = body.as_object().cloned().unwrap_or_default();
    start.insert("content".into(), json!([]));
    start.insert("stop_reason".into(), Value::Null);
    let input = json!({"input_tokens": body["usage"]["input_tokens"], "output_tokens": 1});
    start.insert("usage".into(), input);
    let mut events = vec![json!({"type": "message_start", "message": start})];
    for (index, block) in body["content"].as_array().into_iter().flatten().enumerate() {
        events.extend(anthropic_block(index, block));
    }
    events.push(json!({"type": "message_delta",
        "delta": {"stop_reason": body["stop_reason"], "stop_sequence": null},
        "usage": body["usage"]}));
    events.push(json!({"type": "message_stop"}));
    events
}

fn anthropic_block(index: usize, block: &Value) -> Vec<Value> {
    let delta = |d: Value| json!({"type": "content_block_delta", "index": index, "delta": d});
    let mut opened = block.clone();
    let mut deltas = Vec::new();
    match block["type"].as_str().unwrap_or("") {
        "text" => {
            opened["text"] = json!("");
            let text = block["text"].as_str().unwrap_or("");
            deltas.extend(
                halves(text)
                    .into_iter()
                    .map(|t| delta(json!({"type": "text_delta", "text": t}))),
            );
        }
        "thinking" => {
            opened["thinking"] = json!("");
            opened["signature"] = json!("");
            let text = block["thinking"].as_str().unwrap_or("");
            deltas.extend(
                halves(text)
                    .into_iter()
                    .map(|t| delta(json!({"type": "thinking_delta", "thinking": t}))),
            );
            deltas.push(delta(
                json!({"type": "signature_delta", "signature": block["signature"]}),
            ));
        }
        "tool_use" => {
            opened["input"] = json!({});
            let args = block["input"].to_string();
            deltas.extend(
                halves(&args)
                    .into_iter()
                    .map(|p| delta(json!({"type": "input_json_delta", "partial_json": p}))),
            );
        }
        _ => {}
    }
    let mut events =
        vec![json!({"type": "content_block_start", "index": index, "content_block": opened})];
    events.extend(deltas);
    events.push(json!({"type": "content_block_stop", "index": index}));
    events
}

fn gemini_events(body: &Value) -> Vec<Value> {
    let candidate = &body["candidates"][0];
    let parts = candidate["content"]["parts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut pieces: Vec<Value> = Vec::new();
    for part in parts {
        match part.get("text").and_then(Value::as_str) {
            // Gemini signs the end of a text part: the signature rides on its last piece.
            Some(text) => {
                let split = halves(text);
                let last = split.len() - 1;
                for (n, piece) in split.into_iter().enumerate() {
                    let mut p = if n == last {
                        part.clone()
                    } else {
                        Map::new().into()
                    };
                    p["text"] = json!(piece);
                    pieces.push(p);
                }
            }
            None => pieces.push(part),
        }
    }
    let count = pieces.len();
    pieces
        .into_iter()
        .enumerate()
        .map(|(n, part)| {
            let mut c = json!({"content": {"role": "model", "parts": [part]}, "index": 0});
            if n + 1 == count {
                for key in ["finishReason", "groundingMetadata", "citationMetadata"] {
                    if let Some(v) = candidate.get(key) {
                        c[key] = v.clone();
                    }
                }
            }
            json!({"candidates": [c], "usageMetadata": body["usageMetadata"],
                   "modelVersion": body["modelVersion"]})
        })
        .collect()
}

fn responses_events(body: &Value) -> Vec<Value> {
    let mut created = body.clone();
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    created["usage"] = Value::Null;
    let mut events = vec![json!({"type": "response.created", "response": created})];
    for item in body["output"].as_array().into_iter().flatten() {
        let text_of = |list: &Value, kind: &str| -> Vec<String> {
            list.as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["type"] == kind)
                .filter_map(|c| c["text"].as_str().map(str::to_owned))
                .collect()
        };
        for text in text_of(&item["summary"], "summary_text") {
            for piece in halves(&text) {
                events
                    .push(json!({"type": "response.reasoning_summary_text.delta", "delta": piece}));
            }
        }
        for text in text_of(&item["content"], "output_text") {
            for piece in halves(&text) {
                events.push(json!({"type": "response.output_text.delta", "delta": piece}));
            }
        }
        events.push(json!({"type": "response.output_item.done", "item": item}));
    }
    events.push(json!({"type": "response.completed", "response": body}));
    events
}

fn ollama_lines(body: &Value) -> Vec<Value> {
    let message = &body["message"];
    let line = |message: Value| json!({"model": body["model"], "message": message, "done": false});
    let mut lines = Vec::new();
    for key in ["thinking", "content"] {
        if let Some(text) = message[key].as_str().filter(|t| !t.is_empty()) {
            for piece in halves(text) {
                lines.push(line(json!({"role": "assistant", key: piece})));
            }
        }
    }
    if let Some(calls) = message.get("tool_calls") {
        lines.push(line(
            json!({"role": "assistant", "content": "", "tool_calls": calls}),
        ));
    }
    let mut last = body.clone();
    last["message"] = json!({"role": "assistant", "content": ""});
    lines.push(last);
    lines
}
