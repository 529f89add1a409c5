//! OpenTelemetry: `ask` with `OTEL_EXPORTER_OTLP_ENDPOINT` set exports its spans over OTLP/HTTP
//! to a real receiver (the protobuf decoded by `opentelemetry-proto` in Python): the causal
//! root, the turn, each model call and each tool call, nested, with the GenAI attributes — and
//! no prompt, answer, tool argument or key anywhere in the bytes sent (a canary in each).

use std::io::BufRead;
use std::process::{Command, Stdio};

use fuseforks_core::llm::Wire;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{KillOnDrop, TempDataDir};
use serde_json::{Value, json};

use crate::headless::{U, ask_args, command, stub_village};

const CANARY: &str = "canary-7f3a9c";

/// The receiver on a free port, writing into `out`: (the child, its port).
fn receiver(out: &std::path::Path) -> (KillOnDrop, u16) {
    let mut child = Command::new("python3")
        .arg(fuseforks_testkit::otlp_receiver_script())
        .arg(out)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().strip_prefix("PORT ").unwrap().parse().unwrap();
    (KillOnDrop::new(child), port)
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_exports_nested_genai_spans_without_any_body() {
    if !fuseforks_testkit::python_otlp() {
        return;
    }
    let call = ScriptCall {
        id: "c1".into(),
        name: "file".into(),
        args: json!({"op": "list", "path": ".", "reason": CANARY}),
    };
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(Wire::OpenAiCompat, &[call], U),
        wire_replies::text(Wire::OpenAiCompat, &format!("done {CANARY}"), U),
    ])
    .await;
    let (data, work, spans_dir) = (TempDataDir::new(), TempDataDir::new(), TempDataDir::new());
    let at = work.data_dir().display().to_string();
    stub_village(stub.base_url())
        .world(|w| {
            w.agents[0].work_dir = Some(at);
            w.agents[0].enabled_tools = Some(vec!["file".into()]);
        })
        .write(&data);
    let (_receiver, port) = receiver(spans_dir.data_dir());
    let dir = data.data_dir().display().to_string();
    let args = ask_args(&dir, &[], &format!("hello {CANARY}"));
    let mut ask = command(args, true);
    ask.env(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        format!("http://127.0.0.1:{port}"),
    )
    .env("FUSEFORKS_SECRET_STUB", CANARY);
    let out = tokio::task::spawn_blocking(move || ask.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    let spans: Vec<Value> = std::fs::read_to_string(spans_dir.data_dir().join("spans.jsonl"))
        .unwrap_or_else(|e| panic!("no spans exported before ask exited ({e}): {stderr}"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let named = |prefix: &str| -> Vec<&Value> {
        spans
            .iter()
            .filter(|s| s["name"].as_str().unwrap_or("").starts_with(prefix))
            .collect()
    };
    let (roots, turns, calls, tools) = (
        named("request "),
        named("invoke_agent "),
        named("chat "),
        named("execute_tool "),
    );
    assert_eq!(
        (roots.len(), turns.len(), calls.len(), tools.len()),
        (1, 1, 2, 1),
        "{spans:#?}"
    );
    let (root, turn, tool) = (roots[0], turns[0], tools[0]);
    assert_eq!(root["parentSpanId"], "", "the causal root has no parent");
    assert_eq!(turn["parentSpanId"], root["spanId"]);
    assert_eq!(tool["parentSpanId"], turn["spanId"]);
    for call in &calls {
        assert_eq!(call["parentSpanId"], turn["spanId"]);
        assert_eq!(call["traceId"], root["traceId"]);
        assert_eq!(call["kind"], 3, "client");
        assert_eq!(attr(call, "gen_ai.operation.name"), "chat");
        assert_eq!(attr(call, "gen_ai.provider.name"), "openai");
        assert_eq!(attr(call, "gen_ai.request.model"), "stub-model");
        assert_eq!(attr(call, "gen_ai.usage.input_tokens"), U.prompt);
        assert_eq!(attr(call, "gen_ai.usage.output_tokens"), U.completion);
        assert_eq!(attr(call, "server.address"), "127.0.0.1");
    }
    assert_eq!(
        attr(calls[0], "gen_ai.response.finish_reasons"),
        "tool_calls"
    );
    assert_eq!(attr(tool, "gen_ai.tool.name"), "file");
    assert_eq!(attr(tool, "gen_ai.tool.call.id"), "c1");
    assert_eq!(attr(turn, "gen_ai.agent.id"), "rec");
    assert_eq!(attr(turn, "fuseforks.turn.rounds"), 2);
    assert_eq!(attr(turn, "gen_ai.usage.input_tokens"), 2 * U.prompt);
    assert_eq!(root["resource"]["service.name"], "fuseforks");

    let raw = std::fs::read(spans_dir.data_dir().join("raw.bin")).unwrap();
    let hits = raw
        .windows(CANARY.len())
        .filter(|w| *w == CANARY.as_bytes())
        .count();
    assert_eq!(
        hits, 0,
        "no prompt, answer, argument or key in the exported bytes"
    );
}

/// A protocol the exporter lacks is said (code and fix) and the answer still comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_otlp_protocol_is_said_and_the_work_goes_on() {
    let stub = StubServer::start(vec![wire_replies::text(Wire::OpenAiCompat, "fine", U)]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let dir = data.data_dir().display().to_string();
    let mut ask = command(ask_args(&dir, &[], "hi"), true);
    ask.env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
    let out = tokio::task::spawn_blocking(move || ask.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("TELEMETRY_PROTOCOL_UNSUPPORTED"),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fine\n");
}
