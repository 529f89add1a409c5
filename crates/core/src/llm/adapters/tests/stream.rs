//! Streamed answers: the `.sse` wire fixtures of `crates/testkit/fixtures/wire/` (each framed as
//! its wire's server frames it), cut at any byte and folded back into the body a whole
//! answer has, so that the one decoder reads it: text and reasoning deltas equal the final
//! text, tool calls assembled from their fragments, the final chunk's usage kept; and a stream
//! made from a whole answer decodes to the same canonical response as the whole answer.

use serde_json::{Value, json};

use super::support::fixture_bytes;
use crate::llm::adapters::openai_chat::decode;
use crate::llm::adapters::openai_chat_stream::{ChatStream, Delta};
use crate::llm::sse::SseParser;
use crate::llm::{ContentBlock, StopReason};

/// The bytes of the `.sse` wire fixture `file` (under `fixtures/wire/`).
fn sse_body(file: &str) -> Vec<u8> {
    fixture_bytes(&format!("wire/{file}"))
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
fn a_text_stream_decodes_to_its_deltas_and_its_usage_only_last_chunk() {
    let body = sse_body("openai-chat/text.sse");
    let (deltas, whole) = fold(&body, 7);
    let response = decode(whole.clone()).unwrap();
    let text = response.text().unwrap();
    assert_eq!(text, joined(&deltas, false));
    assert_eq!(deltas.len(), 160, "one delta per word");
    assert!(text.starts_with("**Village Almanac:** Lantern Night\n\nOn the first dark evening"));
    assert!(
        text.ends_with("chooses the first song of the spring fair."),
        "{text}"
    );
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (21, 176));
    assert_eq!(response.stop, StopReason::End);
    assert_eq!(fold(&body, 1).1, whole, "the chunking changes nothing");
}

#[test]
fn a_tool_call_stream_is_assembled_with_reasoning_and_cache_usage() {
    let (deltas, whole) = fold(&sse_body("openai-chat/tool-call-reasoning.sse"), 64);
    let response = decode(whole).unwrap();
    let call = response
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolUse(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a tool call");
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("call_00_ffTideStromness002", "lookup_tide")
    );
    assert_eq!(call.args, json!({"port": "Stromness", "day": "tonight"}));
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.reasoning_summary.concat(), joined(&deltas, true));
    assert!(response.reasoning_summary[0].starts_with("The villager wants the evening tide"));
    let usage = response.usage.unwrap();
    assert_eq!((usage.cache_read, usage.reasoning), (320, 19));
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
    let (streamed, direct) = (decode(rebuilt).unwrap(), decode(whole).unwrap());
    // Everything but the provider's own JSON (kept for logs only) is equal.
    assert_eq!(streamed.content, direct.content);
    assert_eq!(
        (
            streamed.stop,
            streamed.usage,
            streamed.model,
            streamed.reasoning_summary
        ),
        (
            direct.stop,
            direct.usage,
            direct.model,
            direct.reasoning_summary
        )
    );
    assert_eq!(streamed.grounding, direct.grounding);
}

#[test]
fn a_chunk_that_is_not_json_is_a_located_error_and_an_empty_stream_too() {
    let mut stream = ChatStream::default();
    assert!(stream.push(r#"{"choices":[]}"#).is_ok());
    let err = stream.push("{not json").unwrap_err();
    assert!(err.to_string().contains("chunk 2"), "{err}");
    assert!(ChatStream::default().finish().is_err());
}

/// Anthropic's streams (`event:` lines, `message_start` … `message_stop`, no `[DONE]`) fold into the body a whole
/// answer has: the text equal to its deltas, a tool call's input joined from its fragments, the
/// usage of `message_delta` over the start's.
#[test]
fn anthropic_streams_decode_text_tools_and_usage() {
    use crate::llm::adapters::anthropic::decode as decode_messages;
    use crate::llm::adapters::anthropic_stream::MessagesStream;
    let fold_messages = |file: &str, size: usize| {
        let body = sse_body(file);
        let (mut parser, mut stream, mut deltas) =
            (SseParser::default(), MessagesStream::default(), Vec::new());
        for piece in body.chunks(size) {
            for event in parser.push(piece).unwrap() {
                let name = event.event.clone().expect("every event is named");
                assert!(
                    event.data.contains(&format!("\"type\":\"{name}\"")),
                    "{event:?}"
                );
                deltas.extend(stream.push(&event.data).unwrap());
            }
        }
        (deltas, decode_messages(stream.finish().unwrap()).unwrap())
    };
    let (deltas, text) = fold_messages("anthropic/text.sse", 9);
    assert_eq!(text.text().unwrap(), joined(&deltas, false));
    assert_eq!(
        text.text().unwrap(),
        "Good evening from the harbour! The ferry is in, the lanterns are lit, and the bakery is still open."
    );
    assert_eq!(text.stop, StopReason::End);
    assert_eq!(
        (text.usage.unwrap().prompt, text.usage.unwrap().completion),
        (17, 26)
    );
    let (_, tool) = fold_messages("anthropic/tool.sse", 33);
    let call = tool
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolUse(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a tool call");
    assert_eq!(call.name, "lookup_tide");
    assert_eq!(call.args["ports"][0]["port"], "Kirkwall");
    assert_eq!(call.args["ports"][1]["port"], "Lerwick");
    assert_eq!(tool.stop, StopReason::ToolUse);
    let usage = tool.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (702, 51));
    // The cache write of message_start, then message_delta's read and write over it; the
    // server-tool blocks between the two texts add no text.
    let (_, cached) = fold_messages("anthropic/prompt-cache.sse", 64);
    let usage = cached.usage.unwrap();
    assert_eq!(
        (usage.prompt, usage.cache_read, usage.cache_write),
        (12 + 4096 + 2210, 4096, 2210),
        "{usage:?}"
    );
    assert_eq!(
        cached.text().unwrap(),
        "Let me count the lanterns in the list.\nThere are 214 lanterns on the list."
    );
}

/// Responses wires: the stream's `response.completed` is the whole answer (the last one, where
/// a body holds several), and the text deltas are its text; an `error` event ends it.
#[test]
fn responses_streams_decode_to_their_completed_response() {
    use crate::llm::Wire;
    use crate::llm::adapters::decode as decode_wire;
    use crate::llm::adapters::responses_stream::ResponsesStream;
    let fold_responses = |file: &str| {
        let body = sse_body(file);
        let (mut parser, mut stream, mut deltas) =
            (SseParser::default(), ResponsesStream::default(), Vec::new());
        for piece in body.chunks(17) {
            for event in parser.push(piece).unwrap() {
                assert!(event.event.is_some(), "every event is named: {event:?}");
                deltas.extend(stream.push(&event.data)?);
            }
        }
        Ok::<_, crate::llm::LlmError>((
            deltas,
            decode_wire(Wire::OpenAiResponses, stream.finish()?).unwrap(),
        ))
    };
    let (_, response) = fold_responses("openai-responses/tool-call.sse").unwrap();
    let calls = response.tool_calls();
    assert_eq!(calls.len(), 1, "{:?}", response.content);
    assert_eq!(calls[0].id, "call_FfTideStromnessStr0002");
    assert_eq!(
        calls[0].args,
        json!({"port": "Stromness", "day": "tonight"})
    );
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.usage.unwrap().prompt, 58);

    // Two responses in one body (a tool round, then the answer): the last one is the answer,
    // and the deltas are those of both.
    let (deltas, last) = fold_responses("openai-responses/two-responses.sse").unwrap();
    assert_eq!(
        last.text().as_deref(),
        Some("High water at Kirkwall is at 19:55.")
    );
    assert_eq!(
        joined(&deltas, false),
        "High water at Kirkwall is at 19:55."
    );
    assert!(last.tool_calls().is_empty() && last.stop == StopReason::End);
    let usage = last.usage.unwrap();
    assert_eq!((usage.prompt, usage.cache_read), (131, 64));

    let err = fold_responses("openai-responses/error-quota.sse").unwrap_err();
    assert!(
        err.to_string().contains("has used its whole quota"),
        "{err}"
    );
    let mut failed = ResponsesStream::default();
    let err = failed
        .push(r#"{"type":"response.failed","response":{"error":{"message":"overloaded"}}}"#)
        .unwrap_err();
    assert!(err.to_string().contains("overloaded"));
    assert!(
        ResponsesStream::default().finish().is_err(),
        "no completed response"
    );
}

/// Gemini's streams (`data:` lines only, no `[DONE]`) join into one response: the text equal to its deltas, the tool
/// call with its thought signature kept (replayed on the next request as before), the usage.
#[test]
fn gemini_streams_join_parts_and_keep_signatures() {
    use crate::llm::adapters::gemini::decode as decode_gemini;
    use crate::llm::adapters::gemini_stream::GeminiStream;
    let fold_gemini = |file: &str| {
        let body = sse_body(file);
        let (mut parser, mut stream, mut deltas) =
            (SseParser::default(), GeminiStream::default(), Vec::new());
        for piece in body.chunks(100) {
            for event in parser.push(piece).unwrap() {
                deltas.extend(stream.push(&event.data).unwrap());
            }
        }
        (deltas, decode_gemini(stream.finish().unwrap()).unwrap())
    };
    let (deltas, text) = fold_gemini("gemini/text.sse");
    assert_eq!(text.text().unwrap(), joined(&deltas, false));
    assert_eq!(
        text.text().unwrap(),
        "Lantern Night starts when the mill bell rings at dusk; the pier is lit last."
    );
    let usage = text.usage.unwrap();
    assert_eq!(
        (usage.prompt, usage.completion, usage.reasoning),
        (13, 17 + 96, 96)
    );
    let ContentBlock::Text { extra, .. } = &text.content[0] else {
        panic!("text")
    };
    assert!(
        extra["gemini"]["thoughtSignature"]
            .as_str()
            .unwrap()
            .starts_with("RkZn"),
        "the last event's signature rides on the joined text: {extra:?}"
    );
    let (_, tool) = fold_gemini("gemini/tool-call.sse");
    let call = tool
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolUse(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a tool call");
    assert_eq!(call.name, "lookup_tide");
    assert_eq!(call.args, json!({"port": "Lerwick", "day": "tomorrow"}));
    assert_eq!(
        call.extra["gemini"]["thoughtSignature"]
            .as_str()
            .map(str::len),
        Some(2404),
        "the signature whole"
    );
    assert_eq!(tool.stop, StopReason::ToolUse);
}
