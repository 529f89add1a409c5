//! Streaming figures, through the public API (the assemblers are not public): a streamed call
//! answered from a loopback stub with the testkit fixture `wire/openai-chat/text.sse` (163
//! chunks and `[DONE]`: HTTP on loopback + SSE framing + folding into the whole body + the one
//! decoder), and how long after the call starts the first piece is handed out (the latency a
//! person sees added to the provider's first byte, loopback included; target ≤ 2 ms). Median
//! and p99.
//!
//! Run with `cargo bench -p fuseforks-core --bench stream`.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fuseforks_core::llm::{
    ApiKey, ChatMessage, ChatRequest, DeltaSink, LlmClient, Piece, Role, Wire,
};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::stub_template;
use tokio_util::sync::CancellationToken;

fn summary(name: &str, mut samples: Vec<Duration>, bytes: Option<usize>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    let rate = bytes.map_or(String::new(), |b| {
        format!("   {:.0} MB/s", b as f64 / at(0.5).as_secs_f64() / 1e6)
    });
    println!(
        "{name:<58} median {:>9.1} µs   p99 {:>9.1} µs{rate}",
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6
    );
}

/// `runs` streamed calls of the fixture: (whole call, first piece after the call starts).
async fn calls(runs: usize) -> (Vec<Duration>, Vec<Duration>) {
    let stub = StubServer::start(Vec::new()).await;
    stub.push((0..runs).map(|_| StubReply::sse_fixture("openai-chat/text.sse")));
    let mut template = stub_template(Wire::OpenAiCompat, stub.base_url());
    template.streaming = true;
    let endpoint = endpoint_of(&template, Some(ApiKey::new("k"))).unwrap();
    let client = LlmClient::new().unwrap();
    let first: Arc<Mutex<Option<Instant>>> = Arc::default();
    let mut request = ChatRequest::new(
        "stub-model",
        vec![ChatMessage::text(Role::User, "go")],
        CancellationToken::new(),
    );
    let seen = Arc::clone(&first);
    request.on_delta = Some(DeltaSink(Arc::new(move |piece| {
        if let Piece::Text(_) = piece {
            seen.lock().unwrap().get_or_insert_with(Instant::now);
        }
    })));
    let (mut whole, mut to_first) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        *first.lock().unwrap() = None;
        let began = Instant::now();
        black_box(client.chat(&endpoint, &request).await.unwrap());
        whole.push(began.elapsed());
        to_first.push(first.lock().unwrap().unwrap().duration_since(began));
    }
    (whole, to_first)
}

fn main() {
    let body = fuseforks_testkit::fixture_bytes("wire/openai-chat/text.sse");
    let chunks = body.windows(6).filter(|w| w == b"data: ").count();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let (whole, first) = runtime.block_on(calls(300));
    summary(
        &format!("a streamed call ({chunks} events, {} bytes)", body.len()),
        whole,
        Some(body.len()),
    );
    summary("first piece after the call starts (loopback)", first, None);
}
