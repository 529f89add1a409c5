//! Orchestrator overhead against a zero-latency loopback stub:
//! 1. per tool round of a 20-round turn (grep tool, redb appends, log lines), with the plain
//!    LLM round trip (HTTP + adapters, measured separately) subtracted — median and p99;
//! 2. 100 agents each running one turn at once: wall time against the slowest single turn.
//!
//! Run with `cargo bench -p fuseforks-core --bench orchestrator`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fuseforks_core::llm::{
    ApiKey, ChatMessage, ChatRequest, Endpoint as LlmEndpoint, LlmClient, Role, Wire,
};
use fuseforks_core::log::VillageLog;
use fuseforks_core::orchestrator::{Orchestrator, OrchestratorConfig};
use fuseforks_core::sessions::Endpoint;
use fuseforks_core::tools::TrashTarget;
use fuseforks_core::village::{
    AgentId, AgentSpec, Credential, ModelTemplate, Provider, TemplateId, VillageStore, World,
};
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage};
use serde_json::json;

const WIRE: Wire = Wire::OpenAiCompat;
const USAGE: ScriptUsage = ScriptUsage {
    prompt: 2000,
    completion: 20,
    cache_read: 1500,
    reasoning: 0,
};

fn template(base: &str) -> ModelTemplate {
    let mut t = ModelTemplate::new(
        TemplateId::new("stub").unwrap_or_else(|e| panic!("{e}")),
        "stub",
        format!("{base}/v1"),
        "m",
    );
    t.provider = Some(Provider::OpenAiCompat);
    t.credential = Credential::Keyring;
    t.max_retries = 1;
    t
}

fn village(data: &TempDataDir, base: &str, agents: usize) {
    let work = data.data_dir().join("work");
    std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(work.join("notes.txt"), "alpha\nbeta\n".repeat(50))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut world = World {
        model_templates: vec![template(base)],
        ..World::default()
    };
    for i in 0..agents {
        let mut a = AgentSpec::new(
            AgentId::new(format!("a{i}")).unwrap_or_else(|e| panic!("{e}")),
            format!("Agent {i}"),
            TemplateId::new("stub").unwrap_or_else(|e| panic!("{e}")),
        );
        a.work_dir = Some(work.display().to_string());
        a.max_tool_iterations = Some(30);
        world.agents.push(a);
    }
    VillageStore::new(data.workspace())
        .save_world(&world)
        .unwrap_or_else(|e| panic!("{e}"));
}

fn open(data: &TempDataDir) -> Orchestrator {
    let log = Arc::new(
        VillageLog::open(&data.workspace().join("fuseforks.log")).unwrap_or_else(|e| panic!("{e}")),
    );
    Orchestrator::bootstrap(OrchestratorConfig {
        workspace: data.workspace(),
        secrets: Arc::new(|_| Some(ApiKey::new("k"))),
        log: log.clone(),
        llm: LlmClient::new()
            .unwrap_or_else(|e| panic!("{e}"))
            .with_log(log),
        os_locale: None,
        trash: TrashTarget::Folder(data.data_dir().join("trash")),
    })
    .unwrap_or_else(|e| panic!("{e}"))
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
    let endpoint = LlmEndpoint::for_template(&template(stub.base_url()), Some(ApiKey::new("k")))
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
        per_round.push((total / 20.0 - plain_median).max(0.0));
    }
    let median = percentile(&mut per_round.clone(), 0.5);
    let p99 = percentile(&mut per_round, 0.99);
    println!("plain LLM round trip to the loopback stub: median {plain_median:.0} µs");
    println!(
        "orchestrator overhead per tool round (20-round turn, 30 turns): median {median:.0} µs, p99 {p99:.0} µs"
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

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        twenty_rounds().await;
        hundred_agents(Duration::ZERO).await;
        hundred_agents(Duration::from_millis(300)).await;
    });
}
