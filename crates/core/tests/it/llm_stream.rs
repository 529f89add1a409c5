//! Streamed OpenAI chat completions: the recorded streams of `shared/reference/wire-fixtures/`
//! framed as Server-Sent Events (whatever the chunking) and folded back into the body a whole
//! answer has, so that the one decoder reads it: text and reasoning deltas equal the final
//! text, tool calls assembled from their fragments, the final chunk's usage kept; and a stream
//! made from a whole answer decodes to the same canonical response as the whole answer.

use fuseforks_core::llm::adapters::openai_chat::decode;
use fuseforks_core::llm::adapters::openai_chat_stream::{ChatStream, Delta};
use fuseforks_core::llm::sse::SseParser;
use fuseforks_core::llm::{ContentBlock, StopReason};
use fuseforks_testkit::reference;
use serde_json::{Value, json};

/// The recorded chunks (one JSON per line) as an SSE body, `[DONE]` at the end.
fn sse_body(file: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(reference(&format!("wire-fixtures/{file}"))).unwrap();
    let mut body = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        body.push_str(&format!("data: {line}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// Frames `body` in chunks of `size` bytes and folds it: (deltas, whole body).
fn fold(body: &[u8], size: usize) -> (Vec<Delta>, Value) {
    let (mut parser, mut stream, mut deltas) =
        (SseParser::default(), ChatStream::default(), Vec::new());
    for piece in body.chunks(size) {
        for event in parser.push(piece).unwrap() {
            deltas.extend(stream.push(&event.data).unwrap());
        }
    }
    if let Some(event) = parser.finish().unwrap() {
        deltas.extend(stream.push(&event.data).unwrap());
    }
    (deltas, stream.finish().unwrap())
}

fn joined(deltas: &[Delta], reasoning: bool) -> String {
    deltas
        .iter()
        .filter_map(|d| match (d, reasoning) {
            (Delta::Text(t), false) | (Delta::Reasoning(t), true) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_recorded_text_stream_decodes_to_its_deltas_and_usage() {
    let body = sse_body("openai-chat/openai-text.chunks.txt");
    let (deltas, whole) = fold(&body, 7);
    let response = decode(whole.clone()).unwrap();
    let text = response.text().unwrap();
    assert_eq!(text, joined(&deltas, false));
    assert!(text.len() > 500, "{} characters", text.len());
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (16, 300));
    assert_eq!(response.stop, StopReason::End);
    assert_eq!(fold(&body, 1).1, whole, "the chunking changes nothing");
}

#[test]
fn a_recorded_tool_call_stream_is_assembled_with_reasoning_and_cache_usage() {
    let (deltas, whole) = fold(&sse_body("openai-chat/deepseek-tool-call.chunks.txt"), 64);
    let response = decode(whole).unwrap();
    let call = response
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolUse(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a tool call");
    assert!(!call.name.is_empty() && !call.id.is_empty(), "{call:?}");
    assert!(
        call.args.is_object() && !call.args.as_object().unwrap().is_empty(),
        "{:?}",
        call.args
    );
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.reasoning_summary.concat(), joined(&deltas, true));
    let usage = response.usage.unwrap();
    assert_eq!((usage.cache_read, usage.reasoning), (256, 17));
}

/// A whole answer cut into the chunks a server would send decodes to the same response.
#[test]
fn a_stream_made_of_a_whole_answer_decodes_the_same() {
    let whole = json!({
        "id": "c", "object": "chat.completion", "model": "m-1",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Let me look.",
            "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\":\"err\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "file", "arguments": "{\"op\":\"read\",\"path\":\"a.md\"}"}}]}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
                  "prompt_tokens_details": {"cached_tokens": 100}}
    });
    let chunk = |delta: Value, finish: Value| json!({"object": "chat.completion.chunk", "model": "m-1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    let chunks = [
        chunk(json!({"role": "assistant", "content": "Let "}), Value::Null),
        chunk(json!({"content": "me look."}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "function": {"name": "grep", "arguments": "{\"pat"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "tern\":\"err\"}"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "file", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"op\":\"read\",\"path\":\"a.md\"}"}}]}),
            json!("tool_calls"),
        ),
        json!({"object": "chat.completion.chunk", "model": "m-1", "choices": [], "usage": whole["usage"]}),
    ];
    let mut body = String::new();
    for c in &chunks {
        body.push_str(&format!("data: {c}\r\n\r\n"));
    }
    body.push_str("data: [DONE]\r\n\r\n");
    let (_, rebuilt) = fold(body.as_bytes(), 5);
    let (mut streamed, mut direct) = (decode(rebuilt).unwrap(), decode(whole).unwrap());
    streamed.raw = Value::Null;
    direct.raw = Value::Null;
    assert_eq!(streamed, direct);
}

#[test]
fn a_chunk_that_is_not_json_is_a_located_error_and_an_empty_stream_too() {
    let mut stream = ChatStream::default();
    assert!(stream.push(r#"{"choices":[]}"#).is_ok());
    let err = stream.push("{not json").unwrap_err();
    assert!(err.to_string().contains("chunk 2"), "{err}");
    assert!(ChatStream::default().finish().is_err());
}
