//! Streams that do not reach their end: a connection that breaks is sent again under the retry
//! policy (the pieces restart, the broken attempt's usage is counted), one that breaks every
//! time is `LLM_STREAM_INTERRUPTED` with the usage seen, and a call cancelled mid-stream keeps
//! the usage the stream had reported — in the turn record too.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fuseforks_core::llm::{
    ApiKey, ChatResponse, DeltaSink, Endpoint, LlmClient, LlmError, Piece, StopReason, Usage, Wire,
};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_testkit::stub::{StreamEnd, StubReply, StubServer};
use fuseforks_testkit::wire_replies::{self, ScriptUsage};
use fuseforks_testkit::wire_streams::streamed;

const USAGE: ScriptUsage = ScriptUsage {
    prompt: 900,
    completion: 40,
    cache_read: 0,
    reasoning: 0,
};

/// Anthropic's stream of "Hello from the stream." (its `message_start` reports 900 input
/// tokens and 1 output token).
fn anthropic_stream() -> StubReply {
    streamed(
        Wire::Anthropic,
        &wire_replies::text(Wire::Anthropic, "Hello from the stream.", USAGE),
    )
}

/// The same stream, sent only up to its first text piece, then ended as `end` says.
fn stopped_after_first_piece(end: StreamEnd) -> StubReply {
    let whole = anthropic_stream();
    let text = String::from_utf8_lossy(&whole.body).into_owned();
    let first = text.find("text_delta").expect("a text piece");
    let at = first + text[first..].find("\n\n").expect("its event's end") + 2;
    whole.stop_at(at, end)
}

/// What `message_start` reports: the input, and one output token.
fn start_usage() -> Usage {
    Usage {
        prompt: 900,
        completion: 1,
        ..Usage::default()
    }
}

fn endpoint(stub: &StubServer, attempts: u32) -> Endpoint {
    let mut template = crate::llm_support::template(Wire::Anthropic, stub.base_url());
    template.max_retries = attempts;
    assert!(template.streaming, "streaming is on by default");
    endpoint_of(&template, Some(ApiKey::new("k"))).unwrap()
}

/// A request whose pieces (and restarts, as `<restart>`) are collected.
fn collecting() -> (fuseforks_core::llm::ChatRequest, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let mut request = crate::llm_support::task_request();
    request.on_delta = Some(DeltaSink(Arc::new(move |piece| {
        let piece = match piece {
            Piece::Text(t) => t.to_owned(),
            Piece::Restart => "<restart>".to_owned(),
        };
        sink.lock().unwrap().push(piece);
    })));
    (request, seen)
}

#[tokio::test]
async fn a_broken_stream_is_sent_again_and_its_usage_counted() {
    let stub = StubServer::start(vec![
        stopped_after_first_piece(StreamEnd::Break),
        anthropic_stream(),
    ])
    .await;
    let (request, seen) = collecting();
    let response = LlmClient::new()
        .unwrap()
        .chat(&endpoint(&stub, 3), &request)
        .await
        .unwrap();
    assert_eq!(response.text().as_deref(), Some("Hello from the stream."));
    assert_eq!(stub.requests().len(), 2, "sent again once");
    let pieces = seen.lock().unwrap().clone();
    assert_eq!(pieces[1], "<restart>", "{pieces:?}");
    assert_eq!(pieces[2..].concat(), "Hello from the stream.");
    // The broken attempt's reported usage is paid for: it is added to the answer's.
    let mut expected = start_usage();
    expected.add(&Usage {
        prompt: 900,
        completion: 40,
        ..Usage::default()
    });
    assert_eq!(response.usage, Some(expected));
}

#[tokio::test]
async fn a_stream_that_breaks_every_time_is_interrupted_with_its_usage() {
    let stub = StubServer::start(vec![
        stopped_after_first_piece(StreamEnd::Break),
        stopped_after_first_piece(StreamEnd::Break),
    ])
    .await;
    let (request, _) = collecting();
    let err = LlmClient::new()
        .unwrap()
        .chat(&endpoint(&stub, 2), &request)
        .await
        .unwrap_err();
    assert_eq!(fuseforks_core::Coded::code(&err), "LLM_STREAM_INTERRUPTED");
    assert!(err.maybe_billed());
    let LlmError::StreamInterrupted { usage, reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(reason.contains("connection broke"), "{reason}");
    let mut twice = start_usage();
    twice.add(&start_usage());
    assert_eq!(*usage, Some(twice), "both broken attempts' usage");
    assert_eq!(stub.requests().len(), 2, "the retry policy's attempts");
}

#[tokio::test]
async fn a_call_cancelled_mid_stream_keeps_the_usage_seen() {
    let stub = StubServer::start(vec![stopped_after_first_piece(StreamEnd::Stall)]).await;
    let (request, seen) = collecting();
    let cancel = request.cancel.clone();
    let endpoint = endpoint(&stub, 3);
    let call =
        tokio::spawn(async move { LlmClient::new().unwrap().chat(&endpoint, &request).await });
    let arrived = || !seen.lock().unwrap().is_empty();
    fuseforks_testkit::eventually("the first piece", fuseforks_testkit::DEADLINE, arrived).await;
    cancel.cancel();
    let response: ChatResponse = call.await.unwrap().unwrap();
    assert_eq!(response.stop, StopReason::Aborted);
    assert_eq!(response.usage, Some(start_usage()));
}

/// In a village: an interrupt while the answer streams records the turn with the usage seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_streaming_turn_is_recorded_with_the_usage_seen() {
    use fuseforks_core::events::CoreEvent;
    use fuseforks_core::sessions::{Endpoint as From, Record};
    let stub = StubServer::start(vec![stopped_after_first_piece(StreamEnd::Stall)]).await;
    let v = crate::orch_support::Village::new(Wire::Anthropic, stub.base_url(), None);
    let orch = v.open();
    let mut events = orch.events();
    orch.start_agent("a1").unwrap();
    let waiting = {
        let orch = orch.clone();
        tokio::spawn(async move { orch.deliver_and_wait("a1", From::User, "hi").await })
    };
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .expect("a piece")
            .unwrap();
        if matches!(event, CoreEvent::MessageDelta { .. }) {
            break;
        }
    }
    orch.interrupt("a1");
    let _ = tokio::time::timeout(Duration::from_secs(10), waiting).await;
    let turn = crate::orchestrator::records(&v, &orch)
        .into_iter()
        .find_map(|r| match r {
            Record::Turn(t) if t.agent_id == "a1" => Some(t),
            _ => None,
        })
        .expect("the interrupted turn is recorded");
    assert_eq!(
        (turn.prompt, turn.completion),
        (900, 1),
        "message_start's usage"
    );
    assert!(turn.usage_unknown, "a cut stream's usage is a lower bound");
}
