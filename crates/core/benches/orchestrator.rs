//! Orchestrator overhead against a zero-latency loopback stub:
//! 1. per tool round of a 20-round turn (grep tool, redb appends, log lines), with the plain
//!    LLM round trip (HTTP + adapters, measured separately) subtracted — median and p99;
//! 2. 100 agents each running one turn at once: wall time against the slowest single turn.
//!
//! Run with `cargo bench -p fuseforks-core --bench orchestrator`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::time::{Duration, Instant};

use fuseforks_core::llm::{ApiKey, ChatMessage, ChatRequest, LlmClient, Role, Wire};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::sessions::Endpoint;
use fuseforks_core::village::{AgentId, ModelTemplate, TemplateId};
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

fn template(base: &str) -> ModelTemplate {
    let mut t = stub_template(WIRE, base);
    t.model = "m".into();
    t
}

fn village(data: &TempDataDir, base: &str, agents: usize) {
    let mut village = TestVillage::builder()
        .language(None)
        .template(template(base))
        .work_file("notes.txt", &"alpha\nbeta\n".repeat(50));
    for i in 0..agents {
        village = village.agent_with(&format!("a{i}"), &format!("Agent {i}"), |a| {
            a.work_dir = Some(TestVillage::WORK.into());
            a.max_tool_iterations = Some(30);
        });
    }
    village.write(data);
}

fn open(data: &TempDataDir) -> Orchestrator {
    fuseforks_testkit::bench_orchestrator(data, None)
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let i = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[i]
}

async fn twenty_rounds() {
    let stub = StubServer::start(Vec::new()).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), 1);
    let orch = open(&data);
    orch.start_agent("a0").unwrap_or_else(|e| panic!("{e}"));

    // The plain LLM round trip: same stub, same reply size, no orchestrator.
    let client = LlmClient::new().unwrap_or_else(|e| panic!("{e}"));
    let endpoint = endpoint_of(&template(stub.base_url()), Some(ApiKey::new("k")))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut plain = Vec::new();
    for i in 0..200 {
        stub.push([wire_replies::tool_calls(
            WIRE,
            &[ScriptCall {
                id: format!("c{i}"),
                name: "grep".into(),
                args: json!({"pattern": "beta"}),
            }],
            USAGE,
        )]);
        let request = ChatRequest::new(
            "m",
            vec![ChatMessage::text(Role::User, "x".repeat(4000))],
            Default::default(),
        );
        let t = Instant::now();
        let _ = client.chat(&endpoint, &request).await;
        plain.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let plain_median = percentile(&mut plain, 0.5);

    let mut per_round = Vec::new();
    for turn in 0..30 {
        let mut script: Vec<_> = (0..19)
            .map(|r| {
                wire_replies::tool_calls(
                    WIRE,
                    &[ScriptCall {
                        id: format!("t{turn}r{r}"),
                        name: "grep".into(),
                        args: json!({"pattern": format!("beta{r}")}),
                    }],
                    USAGE,
                )
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
        let total = t.elapsed().as_secs_f64() * 1e6;
        let model = outcome.model_time.as_secs_f64() * 1e6;
        per_round.push((total - model) / 20.0);
    }
    let median = percentile(&mut per_round.clone(), 0.5);
    let p99 = percentile(&mut per_round, 0.99);
    println!("plain LLM round trip to the loopback stub: median {plain_median:.0} µs");
    println!(
        "orchestrator overhead per tool round, model time excluded (20-round turn, 30 turns): median {median:.0} µs, p99 {p99:.0} µs"
    );
}

async fn hundred_agents(latency: Duration) {
    let stub = StubServer::start(Vec::new()).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), 100);
    let orch = open(&data);
    for i in 0..100 {
        orch.start_agent(&format!("a{i}"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // One turn alone, for the single-turn time.
    let mut single = Vec::new();
    for _ in 0..5 {
        stub.push([wire_replies::text(WIRE, "hi", USAGE).after(latency)]);
        let t = Instant::now();
        orch.deliver_and_wait("a0", Endpoint::User, "hello")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        single.push(t.elapsed());
    }
    let slowest_single = single.iter().max().copied().unwrap_or_default();
    stub.push(
        (0..100)
            .map(|_| wire_replies::text(WIRE, "hi", USAGE).after(latency))
            .collect::<Vec<_>>(),
    );
    let started = Instant::now();
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let orch = orch.clone();
            tokio::spawn(async move {
                let t = Instant::now();
                orch.deliver_and_wait(&format!("a{i}"), Endpoint::User, "hello")
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
                t.elapsed()
            })
        })
        .collect();
    let mut slowest_concurrent = Duration::ZERO;
    for task in tasks {
        slowest_concurrent = slowest_concurrent.max(task.await.unwrap_or_else(|e| panic!("{e}")));
    }
    let wall = started.elapsed();
    println!(
        "100 agents, one turn each, at once, stub latency {} ms: wall {:.1} ms; slowest single turn alone {:.1} ms; slowest turn in the crowd {:.1} ms",
        latency.as_millis(),
        wall.as_secs_f64() * 1e3,
        slowest_single.as_secs_f64() * 1e3,
        slowest_concurrent.as_secs_f64() * 1e3
    );
}

/// CPU time of this process (user + system), from /proc (Linux).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks: u64 = fields.get(11).and_then(|u| u.parse().ok()).unwrap_or(0)
        + fields.get(12).and_then(|s| s.parse().ok()).unwrap_or(0);
    Duration::from_millis(ticks * 10) // USER_HZ = 100 on Linux
}

async fn plan_wave_over_64() {
    let workers = StubServer::start(Vec::new()).await;
    let coordinator = StubServer::start(Vec::new()).await;
    let data = TempDataDir::new();
    let mut c = template(coordinator.base_url());
    c.id = TemplateId::new("coord").unwrap_or_else(|e| panic!("{e}"));
    let workers_template = template(workers.base_url());
    let mut village = TestVillage::builder()
        .language(None)
        .template(c)
        .agent_with("lead", "Lead", |lead| {
            lead.connected_agents = (0..64)
                .map(|i| AgentId::new(format!("w{i}")).unwrap_or_else(|e| panic!("{e}")))
                .collect();
        })
        .template(workers_template);
    for i in 0..64 {
        village = village.agent_with(&format!("w{i}"), &format!("Worker {i}"), |w| {
            w.hears_room_log = false;
        });
    }
    village.write(&data);
    let orch = open(&data);
    orch.start_agent("lead").unwrap_or_else(|e| panic!("{e}"));
    for i in 0..64 {
        orch.start_agent(&format!("w{i}"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let tasks: Vec<serde_json::Value> = (0..64)
        .map(|i| json!({"to": format!("w{i}"), "message": format!("part {i}")}))
        .collect();
    coordinator.push([
        wire_replies::tool_calls(
            WIRE,
            &[ScriptCall {
                id: "p".into(),
                name: "plan".into(),
                args: json!({"tasks": tasks}),
            }],
            USAGE,
        ),
        wire_replies::text(WIRE, "bundled", USAGE),
    ]);
    workers.push(
        (0..64)
            .map(|_| wire_replies::text(WIRE, "part done", USAGE).after(Duration::from_millis(500)))
            .collect::<Vec<_>>(),
    );
    let mut events = orch.events();
    let cpu_before = cpu_time();
    let outcome = orch
        .deliver_and_wait("lead", Endpoint::User, "fan out")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let cpu = cpu_time() - cpu_before;
    assert_eq!(outcome.answer.as_deref(), Some("bundled"));
    let mut wave_ms = None;
    while let Ok(e) = events.try_recv() {
        if let fuseforks_core::events::CoreEvent::PlanWaveFinished { elapsed_ms, .. } = e {
            wave_ms = Some(elapsed_ms);
        }
    }
    println!(
        "plan wave over 64 agents, stub answering in 500 ms: wave wall {} ms; process CPU for the whole turn {} ms",
        wave_ms.unwrap_or_default(),
        cpu.as_millis()
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        twenty_rounds().await;
        hundred_agents(Duration::ZERO).await;
        hundred_agents(Duration::from_millis(300)).await;
        plan_wave_over_64().await;
    });
}
