//! Streaming figures: the decode throughput of an OpenAI chat stream (the testkit fixture
//! `wire/openai-chat/text.sse`, 163 chunks and `[DONE]`: SSE framing + folding into the whole
//! body + the one decoder), and what our pipeline adds before the first piece is handed out
//! (framing and folding the first event: the latency a person sees added to the provider's
//! first byte; target ≤ 2 ms). Median and p99.
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
use std::time::{Duration, Instant};

use fuseforks_core::llm::adapters::openai_chat::decode;
use fuseforks_core::llm::adapters::openai_chat_stream::ChatStream;
use fuseforks_core::llm::sse::SseParser;

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

fn main() {
    let body = fuseforks_testkit::fixture_bytes("wire/openai-chat/text.sse");
    let chunks = body.windows(6).filter(|w| w == b"data: ").count();
    let whole: Vec<Duration> = (0..300)
        .map(|_| {
            let began = Instant::now();
            let (mut parser, mut stream) = (SseParser::default(), ChatStream::default());
            // 1 KiB network reads, as a socket would hand them over.
            for piece in black_box(&body).chunks(1024) {
                for event in parser.push(piece).unwrap() {
                    black_box(stream.push(&event.data).unwrap());
                }
            }
            black_box(decode(stream.finish().unwrap()).unwrap());
            began.elapsed()
        })
        .collect();
    summary(
        &format!("decode a stream ({chunks} events, {} bytes)", body.len()),
        whole,
        Some(body.len()),
    );
    let first_event_end = body.windows(2).position(|w| w == b"\n\n").unwrap() + 2;
    let second_event_end = first_event_end
        + body[first_event_end..]
            .windows(2)
            .position(|w| w == b"\n\n")
            .unwrap()
        + 2;
    let first = &body[..second_event_end];
    let added: Vec<Duration> = (0..5_000)
        .map(|_| {
            let began = Instant::now();
            let (mut parser, mut stream) = (SseParser::default(), ChatStream::default());
            let mut handed = 0;
            for event in parser.push(black_box(first)).unwrap() {
                handed += stream.push(&event.data).unwrap().len();
            }
            black_box(handed);
            began.elapsed()
        })
        .collect();
    summary(
        "added before the first piece (frame + fold 2 events)",
        added,
        None,
    );
}
