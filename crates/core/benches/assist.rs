//! The editors' and the assistant's own costs: (1) checking a 20 KB text as the person types
//! (`check_editable`: a judge.toml through the judge parser with the roster, a schedules.json
//! through its model) — target ≤ 30 ms; (2) the assistant's overhead per round, excluding the
//! model's time: one `assist_draft` exchange against a zero-latency loopback stub minus a plain
//! client call of the same size. Run with `cargo bench -p fuseforks-core --bench assist`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::time::Instant;

use fuseforks_core::assist::{AssistRequest, AssistTarget, DraftKind};
use fuseforks_core::llm::{ApiKey, ChatMessage, ChatRequest, LlmClient, Role, Wire};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_core::village::{EditableFile, VillageStore};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptUsage};
use fuseforks_testkit::{TempDataDir, TestVillage, stub_template};
use tokio_util::sync::CancellationToken;

const U: ScriptUsage = ScriptUsage {
    prompt: 900,
    completion: 40,
    cache_read: 0,
    reasoning: 0,
};

fn median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[(v.len() - 1) * 99 / 100])
}

/// A judge file of about 20 KB: 60 questions (the parser allows 64) with long asks, a rule
/// each, all valid.
fn judge_text() -> String {
    let mut text = String::new();
    let ask = "Is this request about the topic named here? Read the whole message, its subject and its attachments before answering, and weigh what the sender asks for against what they merely mention.";
    for i in 0..60 {
        text.push_str(&format!("[questions.q{i}]\ntype = \"choice\"\nask = \"{ask} ({i})\"\noptions = {{ yes = \"it is\", other = \"anything else\" }}\n\n"));
    }
    for j in 0..60 {
        text.push_str(&format!(
            "[[rules]]\nwhen = \"q{j} == yes and q{j}.p >= 0.6\"\nto = [\"a1\"]\n\n"
        ));
    }
    text.push_str("[otherwise]\ndo = \"return\"\nnote = \"No rule matched.\"\n");
    text
}

fn checks(data: &TempDataDir) {
    let store = VillageStore::new(data.workspace());
    let world = store.load_world().unwrap_or_else(|e| panic!("{e}")).value;
    let judge = judge_text();
    let file = EditableFile::parse("judges/gate/judge.toml").unwrap_or_else(|| panic!("judge"));
    let mut times = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        let findings = store.check_editable(&file, &judge, &world);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(findings.is_empty(), "{findings:?}");
    }
    let (m, p99) = median(times);
    println!(
        "check a {} KB judge.toml: median {m:.2} ms, p99 {p99:.2} ms (target ≤ 30 ms)",
        judge.len() / 1024
    );
    let mut schedules = String::from("[");
    let mut n = 0;
    while schedules.len() < 20_000 {
        if n > 0 {
            schedules.push(',');
        }
        schedules.push_str(&format!("{{\"id\": \"t{n}\", \"to\": \"a1\", \"message\": \"Write the weekly report number {n} and file it where the team can read it.\", \"recurrence\": {{\"kind\": \"interval\", \"everyMinutes\": 60}}, \"enabled\": false}}"));
        n += 1;
    }
    schedules.push(']');
    let file = EditableFile::parse("schedules.json").unwrap_or_else(|| panic!("schedules"));
    let mut times = Vec::new();
    for _ in 0..50 {
        let t = Instant::now();
        let findings = store.check_editable(&file, &schedules, &world);
        times.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(findings.is_empty(), "{findings:?}");
    }
    let (m, p99) = median(times);
    println!(
        "check a {} KB schedules.json: median {m:.2} ms, p99 {p99:.2} ms (target ≤ 30 ms)",
        schedules.len() / 1024
    );
}

async fn overhead(data: &TempDataDir, stub: &StubServer) {
    let orch = fuseforks_testkit::bench_orchestrator(data, None);
    let id = orch
        .sessions()
        .unwrap_or_else(|| panic!("store"))
        .create("b", 0)
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = orch.continue_conversation(&id);
    let request = AssistRequest {
        target: AssistTarget {
            kind: DraftKind::Skill,
            id: "a1".into(),
        },
        template_id: "stub".into(),
        history: Vec::new(),
        input: Some("Write a skill that checks the notes first.".into()),
        force_draft: false,
        current: "1. Read notes.txt.\n".repeat(40),
    };
    let client = LlmClient::new().unwrap_or_else(|e| panic!("{e}"));
    let endpoint = endpoint_of(
        &stub_template(Wire::OpenAiCompat, stub.base_url()),
        Some(ApiKey::new("k")),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (mut with, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        stub.push([wire_replies::text(Wire::OpenAiCompat, "Which notes?", U)]);
        let t = Instant::now();
        let _ = orch
            .assist_draft(&request, CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        with.push(t.elapsed().as_secs_f64() * 1e6);
        stub.push([wire_replies::text(Wire::OpenAiCompat, "Which notes?", U)]);
        let chat = ChatRequest::new(
            "stub-model",
            vec![
                ChatMessage::text(Role::System, "x".repeat(4_000)),
                ChatMessage::text(Role::User, "y".repeat(200)),
            ],
            CancellationToken::new(),
        );
        let t = Instant::now();
        let _ = client.chat(&endpoint, &chat).await;
        plain.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let (w, wp) = median(with);
    let (p, _) = median(plain);
    println!(
        "assist round: median {w:.0} µs (p99 {wp:.0} µs); a plain call of the same size {p:.0} µs; overhead {:.0} µs (facts, prompt, record, log line)",
        w - p
    );
}

fn main() {
    let stub_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let stub = stub_rt.block_on(StubServer::start(Vec::new()));
    let data = TempDataDir::new();
    TestVillage::builder()
        .stub(Wire::OpenAiCompat, stub.base_url())
        .agent("a1", "Ada")
        .world(|w| {
            w.judges.push(
                serde_json::from_value(
                    serde_json::json!({"id": "gate", "name": "Gate", "order": 0, "enabled": false}),
                )
                .unwrap_or_else(|e| panic!("{e}")),
            )
        })
        .write(&data);
    checks(&data);
    stub_rt.block_on(overhead(&data, &stub));
}
