//! What tracing costs an ask: the same 20-round turn (a grep tool call per round, then the
//! answer) against a zero-latency loopback stub, without a tracer and with the real
//! OpenTelemetry exporter (batch processor, OTLP/HTTP protobuf to a loopback receiver that
//! answers 200). Against a real model, whose calls take seconds, the share is far smaller; this
//! is the worst case. Target ≤ 5 %. Run with `cargo bench -p fuseforks-host --bench traces`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::sync::Arc;
use std::time::Instant;

use fuseforks_core::llm::Wire;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::sessions::Endpoint;
use fuseforks_core::trace::Tracer;
use fuseforks_host::telemetry::Telemetry;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use fuseforks_testkit::{TempDataDir, TestVillage, stub_template};
use serde_json::json;

const WIRE: Wire = Wire::OpenAiCompat;
const USAGE: ScriptUsage = ScriptUsage {
    prompt: 2000,
    completion: 20,
    cache_read: 1500,
    reasoning: 0,
};
const TURNS: usize = 40;

fn open(data: &TempDataDir, tracer: Option<Arc<dyn Tracer>>) -> Orchestrator {
    fuseforks_testkit::bench_orchestrator(data, tracer)
}

/// A loopback OTLP receiver that reads each export and answers 200 (empty response).
async fn receiver() -> String {
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(|_body: axum::body::Bytes| async {
            (
                [("content-type", "application/x-protobuf")],
                Vec::<u8>::new(),
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let url = format!(
        "http://{}",
        listener.local_addr().unwrap_or_else(|e| panic!("{e}"))
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// Median and p90 wall time of a 20-round turn, in ms.
async fn turns(tracer: Option<Arc<dyn Tracer>>) -> (f64, f64) {
    let stub = StubServer::start(Vec::new()).await;
    let data = TempDataDir::new();
    let mut template = stub_template(WIRE, stub.base_url());
    template.model = "m".into();
    TestVillage::builder()
        .language(None)
        .template(template)
        .work_file("notes.txt", &"alpha\nbeta\n".repeat(50))
        .agent_with("a0", "Agent", |a| {
            a.work_dir = Some(TestVillage::WORK.into());
            a.max_tool_iterations = Some(30);
        })
        .write(&data);
    let orch = open(&data, tracer);
    orch.start_agent("a0").unwrap_or_else(|e| panic!("{e}"));
    let mut times = Vec::new();
    for turn in 0..TURNS {
        let mut script: Vec<_> = (0..19)
            .map(|r| {
                let call = ScriptCall {
                    id: format!("t{turn}r{r}"),
                    name: "grep".into(),
                    args: json!({"pattern": format!("beta{r}")}),
                };
                wire_replies::tool_calls(WIRE, &[call], USAGE)
            })
            .collect();
        script.push(wire_replies::text(WIRE, "done", USAGE));
        stub.push(script);
        let t = Instant::now();
        let outcome = orch
            .deliver_and_wait("a0", Endpoint::User, "work")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(outcome.answer.as_deref(), Some("done"));
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[times.len() * 9 / 10])
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let url = runtime.block_on(receiver());
    // Built outside the runtime: the exporter's blocking client runs on its own thread.
    let telemetry = std::thread::spawn(move || Telemetry::build(Some(&url)))
        .join()
        .unwrap_or_else(|_| panic!("exporter thread"))
        .unwrap_or_else(|e| panic!("{e}"));
    // Warm up, then alternate so that drift hits both alike.
    runtime.block_on(turns(None));
    let mut off = Vec::new();
    let mut on = Vec::new();
    for _ in 0..3 {
        off.push(runtime.block_on(turns(None)));
        on.push(runtime.block_on(turns(Some(telemetry.tracer()))));
    }
    let median = |v: &[(f64, f64)]| {
        let mut m: Vec<f64> = v.iter().map(|x| x.0).collect();
        m.sort_by(f64::total_cmp);
        m[m.len() / 2]
    };
    let (off_ms, on_ms) = (median(&off), median(&on));
    println!("20-round turn, tracing off: median {off_ms:.2} ms (runs: {off:?})");
    println!("20-round turn, tracing on (41 spans): median {on_ms:.2} ms (runs: {on:?})");
    println!(
        "overhead: {:+.1} % of a turn against a zero-latency stub (target ≤ 5 %)",
        (on_ms - off_ms) / off_ms * 100.0
    );
    std::thread::spawn(move || telemetry.shutdown())
        .join()
        .unwrap_or_else(|_| panic!("shutdown"));
}
