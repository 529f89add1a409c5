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
pub(crate) fn sse_body(file: &str) -> Vec<u8> {
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

fn chunk(delta: Value, finish: Value) -> Value {
    json!({"object": "chat.completion.chunk", "model": "stub-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn streamed_text(pieces: &[&str]) -> Vec<Value> {
    let mut chunks: Vec<Value> = pieces
        .iter()
        .map(|p| chunk(json!({"content": p}), Value::Null))
        .collect();
    chunks.push(chunk(json!({}), json!("stop")));
    chunks.push(json!({"object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57}}));
    chunks
}

/// Through the client over real HTTP: a streaming template asks with `stream: true` and
/// `include_usage`, the sink gets the pieces in order, the response is the whole answer's.
#[tokio::test]
async fn the_client_streams_hands_out_the_pieces_and_returns_the_whole_answer() {
    use fuseforks_core::llm::Wire;
    use fuseforks_testkit::stub::StubReply;

    let (response, seen, stub) = through_client(
        Wire::OpenAiCompat,
        StubReply::sse(&streamed_text(&["Hel", "lo ", "there."])),
        true,
    )
    .await;
    assert_eq!(response.text().as_deref(), Some("Hello there."));
    assert_eq!(seen, ["Hel", "lo ", "there."]);
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (50, 7));
    let sent = &stub.requests()[0].body;
    assert_eq!(
        (
            sent["stream"].as_bool(),
            sent["stream_options"]["include_usage"].as_bool()
        ),
        (Some(true), Some(true))
    );
}

/// A stream cut inside an event is `LLM_STREAM_INTERRUPTED` (maybe billed, not retried).
#[tokio::test]
async fn a_cut_stream_is_said() {
    use fuseforks_core::llm::{Endpoint, LlmClient, Wire};
    use fuseforks_testkit::stub::{StubReply, StubServer};
    let mut cut = StubReply::sse(&streamed_text(&["Half"]));
    let at = cut.body.len() / 2;
    cut.body.truncate(at);
    let stub = StubServer::start(vec![cut]).await;
    let mut template = crate::llm_support::template(Wire::OpenAiCompat, stub.base_url());
    template.streaming = true;
    let endpoint =
        Endpoint::for_template(&template, Some(fuseforks_core::llm::ApiKey::new("k"))).unwrap();
    let err = LlmClient::new()
        .unwrap()
        .chat(&endpoint, &crate::llm_support::task_request())
        .await
        .unwrap_err();
    assert_eq!(
        fuseforks_core::Coded::code(&err),
        "LLM_STREAM_INTERRUPTED",
        "{err}"
    );
    assert!(err.maybe_billed());
}

/// In a running village, a streaming template's answer reaches the surfaces as `messageDelta`
/// pieces, then whole as `messageSent`; the log holds neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_agent_sends_message_deltas_then_the_whole_message() {
    use fuseforks_core::events::CoreEvent;
    use fuseforks_core::llm::Wire;
    use fuseforks_core::sessions::Endpoint as From;
    use fuseforks_testkit::stub::{StubReply, StubServer};
    let stub = StubServer::start(vec![StubReply::sse(&streamed_text(&[
        "One ", "two ", "three.",
    ]))])
    .await;
    let v = crate::orch_support::Village::new(Wire::OpenAiCompat, stub.base_url(), None);
    v.data.edit_world(|w| w.model_templates[0].streaming = true);
    let orch = v.open();
    let mut events = orch.events();
    orch.start_agent("a1").unwrap();
    let outcome = orch
        .deliver_and_wait("a1", From::User, "count")
        .await
        .unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("One two three."));
    let mut pieces = Vec::new();
    let mut whole_after_pieces = false;
    while let Ok(e) = events.try_recv() {
        match e {
            CoreEvent::MessageDelta { agent_id, text, .. } if agent_id == "a1" => pieces.push(text),
            CoreEvent::MessageSent { message } if message.content == "One two three." => {
                whole_after_pieces = pieces.len() == 3;
            }
            _ => {}
        }
    }
    assert_eq!(pieces, ["One ", "two ", "three."]);
    assert!(whole_after_pieces, "messageSent comes after the pieces");
    assert!(!v.log().contains("three."), "no answer text in the log");
}

/// Anthropic's recorded streams (`message_start` … `message_stop`) fold into the body a whole
/// answer has: the text equal to its deltas, a tool call's input joined from its fragments, the
/// usage of `message_delta` over the start's.
#[test]
fn recorded_anthropic_streams_decode_text_tools_and_usage() {
    use fuseforks_core::llm::adapters::anthropic::decode as decode_messages;
    use fuseforks_core::llm::adapters::anthropic_stream::MessagesStream;
    let fold_messages = |file: &str, size: usize| {
        let body = sse_body(file);
        let (mut parser, mut stream, mut deltas) =
            (SseParser::default(), MessagesStream::default(), Vec::new());
        for piece in body.chunks(size) {
            for event in parser.push(piece).unwrap() {
                if event.data != "[DONE]" {
                    deltas.extend(stream.push(&event.data).unwrap());
                }
            }
        }
        (deltas, decode_messages(stream.finish().unwrap()).unwrap())
    };
    let (deltas, text) = fold_messages("anthropic/anthropic-text.chunks.txt", 9);
    assert_eq!(text.text().unwrap(), joined(&deltas, false));
    assert_eq!(text.stop, StopReason::End);
    assert_eq!(text.usage.unwrap().prompt, 12);
    let (_, tool) = fold_messages("anthropic/anthropic-json-tool.1.chunks.txt", 33);
    let call = tool
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolUse(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a tool call");
    assert_eq!(call.name, "json");
    assert_eq!(call.args["elements"][0]["location"], "San Francisco");
    assert_eq!(tool.stop, StopReason::ToolUse);
    let usage = tool.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (849, 47));
    let (_, cached) = fold_messages(
        "anthropic/anthropic-code-execution-20260120-prompt-cache.1.chunks.txt",
        64,
    );
    let usage = cached.usage.unwrap();
    assert_eq!(usage.cache_read, 6289, "{usage:?}");
}

/// Through the client: an Anthropic streaming template asks with `stream: true` and reads the
/// events into the whole answer, the text pieces handed out in order.
#[tokio::test]
async fn the_client_streams_the_anthropic_wire() {
    use fuseforks_core::llm::Wire;
    use fuseforks_testkit::stub::StubReply;

    let events = [
        json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "claude-x", "content": [], "stop_reason": null, "usage": {"input_tokens": 30, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Bon"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "jour."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
        json!({"type": "message_stop"}),
    ];
    let (response, seen, stub) =
        through_client(Wire::Anthropic, StubReply::sse(&events), true).await;
    assert_eq!(response.text().as_deref(), Some("Bonjour."));
    assert_eq!(seen, ["Bon", "jour."]);
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (30, 4));
    let sent = &stub.requests()[0].body;
    assert_eq!(sent["stream"], true);
    assert!(sent.get("stream_options").is_none());
}

/// Responses wires: the recorded stream's `response.completed` is the whole answer (the last
/// one, where a file holds several), and the text deltas are its text.
#[test]
fn recorded_responses_streams_decode_to_their_completed_response() {
    use fuseforks_core::llm::Wire;
    use fuseforks_core::llm::adapters::decode as decode_wire;
    use fuseforks_core::llm::adapters::responses_stream::ResponsesStream;
    let body = sse_body("openai-responses/azure-tool-call.1.chunks.txt");
    let (mut parser, mut stream) = (SseParser::default(), ResponsesStream::default());
    for piece in body.chunks(17) {
        for event in parser.push(piece).unwrap() {
            stream.push(&event.data).unwrap();
        }
    }
    let response = decode_wire(Wire::OpenAiResponses, stream.finish().unwrap()).unwrap();
    assert!(
        response
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse(_))),
        "{:?}",
        response.content
    );
    assert!(response.usage.unwrap().prompt > 0);
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

/// Through the client on a Responses wire: the deltas in order, the completed response whole.
#[tokio::test]
async fn the_client_streams_a_responses_wire() {
    use fuseforks_core::llm::Wire;
    use fuseforks_testkit::stub::StubReply;
    use fuseforks_testkit::wire_replies::{ScriptUsage, text};

    let usage = ScriptUsage {
        prompt: 70,
        completion: 6,
        cache_read: 0,
        reasoning: 0,
    };
    let whole: Value =
        serde_json::from_slice(&text(Wire::OpenAiResponses, "Hi there.", usage).body).unwrap();
    let events = [
        json!({"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_text.delta", "delta": "Hi "}),
        json!({"type": "response.output_text.delta", "delta": "there."}),
        json!({"type": "response.completed", "response": whole}),
    ];
    let (response, seen, stub) =
        through_client(Wire::OpenAiResponses, StubReply::sse(&events), true).await;
    assert_eq!(response.text().as_deref(), Some("Hi there."));
    assert_eq!(seen, ["Hi ", "there."]);
    assert_eq!(response.usage.unwrap().prompt, 70);
    assert_eq!(stub.requests()[0].body["stream"], true);
}

/// Gemini's recorded streams join into one response: the text equal to its deltas, the tool
/// call with its thought signature kept (replayed on the next request as before), the usage.
#[test]
fn recorded_gemini_streams_join_parts_and_keep_signatures() {
    use fuseforks_core::llm::adapters::gemini::decode as decode_gemini;
    use fuseforks_core::llm::adapters::gemini_stream::GeminiStream;
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
    let (deltas, text) = fold_gemini("gemini/google-text.chunks.txt");
    assert_eq!(text.text().unwrap(), joined(&deltas, false));
    assert!(text.usage.unwrap().prompt > 0);
    let (_, tool) = fold_gemini("gemini/google-tool-call-gemini3.chunks.txt");
    let call = tool
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::ToolUse(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a tool call");
    assert_eq!(call.name, "weather");
    assert_eq!(call.args["location"], "San Francisco");
    assert!(
        format!("{:?}", call.extra).contains("thoughtSignature"),
        "{:?}",
        call.extra
    );
}

/// Through the client on Gemini: the stream method and `alt=sse`, the pieces, the whole.
#[tokio::test]
async fn the_client_streams_gemini_at_its_stream_method() {
    use fuseforks_core::llm::Wire;
    use fuseforks_testkit::stub::StubReply;

    let part =
        |t: &str| json!({"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}}]});
    let events = [
        part("Gut"),
        part("en Tag."),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}],
               "usageMetadata": {"promptTokenCount": 22, "candidatesTokenCount": 3, "totalTokenCount": 25}}),
    ];
    let (response, seen, stub) = through_client(Wire::Gemini, StubReply::sse(&events), true).await;
    assert_eq!(response.text().as_deref(), Some("Guten Tag."));
    assert_eq!(seen, ["Gut", "en Tag."]);
    assert_eq!(response.usage.unwrap().prompt, 22);
    let path = &stub.requests()[0].path;
    assert!(path.ends_with(":streamGenerateContent?alt=sse"), "{path}");
}

/// Ollama's own API streams NDJSON: the pieces, then the `done` line's counts.
#[tokio::test]
async fn the_client_streams_ollamas_ndjson() {
    use fuseforks_core::llm::Wire;
    use fuseforks_testkit::stub::StubReply;

    let lines = [
        json!({"model": "llama", "message": {"role": "assistant", "content": "Ho"}, "done": false}),
        json!({"model": "llama", "message": {"role": "assistant", "content": "la."}, "done": false}),
        json!({"model": "llama", "message": {"role": "assistant", "content": ""}, "done": true,
               "done_reason": "stop", "prompt_eval_count": 18, "eval_count": 2}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut reply = StubReply::json(200, &json!({}));
    reply.body = body.into_bytes();
    let reply = reply.header("content-type", "application/x-ndjson");
    let (response, seen, stub) = through_client(Wire::OllamaNative, reply, false).await;
    assert_eq!(response.text().as_deref(), Some("Hola."));
    assert_eq!(seen, ["Ho", "la."]);
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (18, 2));
    assert_eq!(stub.requests()[0].body["stream"], true);
}

/// One streamed call through the client over HTTP: the stub answering `reply`, a template of
/// `wire` with `streaming` (with a key when `keyed`); the response, the pieces handed to the
/// sink in order, and the stub (for the request it saw).
pub(crate) async fn through_client(
    wire: fuseforks_core::llm::Wire,
    reply: fuseforks_testkit::stub::StubReply,
    keyed: bool,
) -> (
    fuseforks_core::llm::ChatResponse,
    Vec<String>,
    fuseforks_testkit::stub::StubServer,
) {
    use fuseforks_core::llm::{ApiKey, DeltaSink, Endpoint, LlmClient, Piece};
    use std::sync::{Arc, Mutex};
    let stub = fuseforks_testkit::stub::StubServer::start(vec![reply]).await;
    let mut template = crate::llm_support::template(wire, stub.base_url());
    template.streaming = true;
    let endpoint = Endpoint::for_template(&template, keyed.then(|| ApiKey::new("k"))).unwrap();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut request = crate::llm_support::task_request();
    let sink = Arc::clone(&seen);
    request.on_delta = Some(DeltaSink(Arc::new(move |piece| match piece {
        Piece::Text(t) => sink.lock().unwrap().push(t.to_owned()),
        Piece::Restart => sink.lock().unwrap().push("<restart>".to_owned()),
    })));
    let response = LlmClient::new()
        .unwrap()
        .chat(&endpoint, &request)
        .await
        .unwrap();
    let pieces = seen.lock().unwrap().clone();
    (response, pieces, stub)
}
