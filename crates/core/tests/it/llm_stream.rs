//! Streamed answers through the client over real HTTP: a streaming template asks for a stream,
//! the sink gets the pieces in order, the response is the whole answer's, on every wire; a cut
//! stream is said. The wire fixtures folded by the assemblers themselves are the adapters' own
//! tests (`crates/core/src/llm/adapters/tests/stream.rs`).

use fuseforks_core::model_endpoint::endpoint_of;
use serde_json::{Value, json};

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
    use fuseforks_core::llm::{LlmClient, Wire};
    use fuseforks_testkit::stub::{StubReply, StubServer};
    let mut cut = StubReply::sse(&streamed_text(&["Half"]));
    let at = cut.body.len() / 2;
    cut.body.truncate(at);
    let stub = StubServer::start(vec![cut]).await;
    let mut template = crate::llm_support::template(Wire::OpenAiCompat, stub.base_url());
    template.streaming = true;
    let endpoint = endpoint_of(&template, Some(fuseforks_core::llm::ApiKey::new("k"))).unwrap();
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
    use fuseforks_core::llm::{ApiKey, DeltaSink, LlmClient, Piece};
    use std::sync::{Arc, Mutex};
    let stub = fuseforks_testkit::stub::StubServer::start(vec![reply]).await;
    let mut template = crate::llm_support::template(wire, stub.base_url());
    template.streaming = true;
    let endpoint = endpoint_of(&template, keyed.then(|| ApiKey::new("k"))).unwrap();
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
