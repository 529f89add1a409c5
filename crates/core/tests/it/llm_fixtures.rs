//! The wire fixtures of `crates/testkit/fixtures/wire/` (ours, one folder per wire): every JSON
//! body there parses into the canonical response (or error) with the numbers the file implies,
//! and the stub replays them over HTTP through the client. With `FUSEFORKS_SHARED` set, the
//! same decoders also read every JSON body of `$FUSEFORKS_SHARED/reference/wire-fixtures/`.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use fuseforks_core::llm::adapters::{decode, error_fields};
use fuseforks_core::llm::classify;
use fuseforks_core::llm::gemini_retry_delay;
use fuseforks_core::llm::{
    ChatResponse, ContentBlock, LlmClient, RetryClass, StopReason, Usage, Wire,
};
use fuseforks_testkit::fixture;
use fuseforks_testkit::stub::{StubReply, StubServer};
use serde_json::Value;

use crate::llm_support::{endpoint, task_request};

fn usage(prompt: u64, completion: u64, cache_read: u64, cache_write: u64, reasoning: u64) -> Usage {
    Usage {
        prompt,
        completion,
        cache_read,
        cache_write,
        cache_write_1h: 0,
        reasoning,
    }
}

/// A check of what a fixture's response implies.
type Check = Box<dyn Fn(&ChatResponse)>;

/// The first tool call's `extra[key]` string (a signature or an id).
fn extra_str<'a>(extra: &'a Value, wire: &str, key: &str) -> &'a str {
    extra[wire][key].as_str().unwrap_or("")
}

/// Every success fixture, its wire, and a check of what it implies.
fn success_cases() -> Vec<(&'static str, Wire, Check)> {
    vec![
        (
            "openai-chat/text.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(21, 148, 0, 0, 0)));
                assert_eq!(r.stop, StopReason::End);
                assert!(
                    r.text()
                        .unwrap()
                        .starts_with("**Village Almanac:** Lantern Night")
                );
                assert_eq!(r.model.as_deref(), Some("gpt-4.1-mini-2025-04-14"));
            }),
        ),
        (
            "openai-chat/tool-call-reasoning.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(402, 71, 384, 0, 23)));
                assert_eq!(r.stop, StopReason::ToolUse);
                let call = r.tool_calls()[0];
                assert_eq!(
                    (call.id.as_str(), call.name.as_str()),
                    ("call_00_ffTideKirkwall0001", "lookup_tide")
                );
                assert_eq!(call.args["port"], "Kirkwall");
                assert!(r.reasoning_summary[0].starts_with("The villager asks"));
            }),
        ),
        (
            "xai/tool-call.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                // completion_tokens excludes reasoning on xAI: 31 + 204 (total 540 = 305 + 31 + 204).
                assert_eq!(r.usage, Some(usage(305, 235, 256, 0, 204)));
                assert_eq!(r.stop, StopReason::ToolUse);
                assert_eq!(r.tool_calls()[0].id, "call_41207736");
                assert_eq!(r.tool_calls()[0].args["port"], "Lerwick");
            }),
        ),
        (
            "xai/text.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                // total 262 = 18 + 5 + 239 reasoning.
                assert_eq!(r.usage, Some(usage(18, 244, 6, 0, 239)));
                assert_eq!(r.text().as_deref(), Some("Lantern"));
                assert!(r.reasoning_summary[0].contains("Lantern Night"));
            }),
        ),
        (
            "perplexity/text.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(9, 214, 0, 0, 0)));
                let g = r.grounding.as_ref().unwrap();
                assert_eq!((g.sources.len(), g.engine.as_str()), (4, "perplexity"));
                assert_eq!(
                    g.sources[2].uri,
                    "https://example.net/orkney-ferries/history"
                );
            }),
        ),
        (
            "anthropic/text.json",
            Wire::Anthropic,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(15, 22, 0, 0, 0)));
                assert_eq!(r.stop, StopReason::End);
                assert!(r.text().unwrap().starts_with("Good evening!"));
            }),
        ),
        (
            "anthropic/tool.json",
            Wire::Anthropic,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(980, 64, 0, 0, 0)));
                assert_eq!(r.stop, StopReason::ToolUse);
                assert!(r.text().unwrap().starts_with("I will look up"));
                let call = r.tool_calls()[0];
                assert_eq!(
                    (call.id.as_str(), call.name.as_str()),
                    ("toolu_01FfTideAllPorts0003", "lookup_tide")
                );
                assert_eq!(call.args["ports"].as_array().unwrap().len(), 3);
                assert_eq!(call.args["ports"][2]["port"], "Lerwick");
            }),
        ),
        (
            "anthropic/thinking.json",
            Wire::Anthropic,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(48, 612, 0, 0, 97)));
                assert_eq!(r.reasoning_summary.len(), 1);
                let ContentBlock::Text { extra, .. } = &r.content[0] else {
                    panic!("text first")
                };
                let thinking = &extra["anthropic"]["before"][0];
                assert_eq!(thinking["type"], "thinking");
                assert!(thinking["signature"].as_str().unwrap().starts_with("RkZ0"));
            }),
        ),
        (
            "gemini/text.json",
            Wire::Gemini,
            Box::new(|r| {
                // candidates exclude thoughts: 35 + 187 (total 233 = 11 + 35 + 187).
                assert_eq!(r.usage, Some(usage(11, 222, 0, 0, 187)));
                let ContentBlock::Text { extra, .. } = &r.content[0] else {
                    panic!("text")
                };
                assert!(extra_str(extra, "gemini", "thoughtSignature").starts_with("RkZn"));
            }),
        ),
        (
            "gemini/tool-call.json",
            Wire::Gemini,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(41, 1220, 0, 0, 1204)));
                assert_eq!(
                    r.stop,
                    StopReason::ToolUse,
                    "a call reports STOP; the part decides"
                );
                let call = r.tool_calls()[0];
                assert_eq!(call.args["port"], "Kirkwall");
                assert!(extra_str(&call.extra, "gemini", "thoughtSignature").starts_with("RkZj"));
            }),
        ),
        (
            "gemini/tool-use-usage.json",
            Wire::Gemini,
            Box::new(|r| {
                // total 232 = 62 + 97 (tool-use prompt) + 40 + 33 (thoughts).
                assert_eq!(r.usage, Some(usage(159, 73, 0, 0, 33)));
                assert_eq!(r.usage.unwrap().total(), 232);
            }),
        ),
        (
            "openai-responses/tool-call.json",
            Wire::OpenAiResponses,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(52, 19, 0, 0, 0)));
                assert_eq!(r.stop, StopReason::ToolUse);
                let call = r.tool_calls()[0];
                assert_eq!(call.id, "call_FfTideKirkwallResp0001");
                assert_eq!(call.args["day"], "today");
                assert_eq!(
                    extra_str(&call.extra, "responses", "id"),
                    "fc_ff0a1b2c3d4e5f60718293a4"
                );
            }),
        ),
        (
            "openai-responses/phase.json",
            Wire::OpenAiResponses,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(6150, 388, 2560, 0, 41)));
                assert_eq!(r.content.len(), 2);
                assert!(r.text().unwrap().contains("214 lanterns"));
            }),
        ),
        (
            "openai-responses/reasoning.json",
            Wire::OpenAiResponses,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(712, 205, 0, 0, 144)));
                assert_eq!(
                    r.reasoning_summary,
                    ["Working out which harbour has the later high water tonight."]
                );
                let ContentBlock::Text { extra, .. } = &r.content[0] else {
                    panic!("text")
                };
                assert!(
                    extra["responses"]["before"][0]["encrypted_content"]
                        .as_str()
                        .unwrap()
                        .starts_with("gAAAAAB")
                );
            }),
        ),
        (
            "xai/responses-web-search.json",
            Wire::XaiResponses,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(1822, 611, 896, 0, 402)));
                let g = r.grounding.as_ref().unwrap();
                assert_eq!(g.engine, "xai");
                assert_eq!(g.queries, ["lantern night harbour custom origins"]);
                let uris: Vec<&str> = g.sources.iter().map(|s| s.uri.as_str()).collect();
                assert_eq!(
                    uris,
                    [
                        "https://example.org/lantern-night/origins",
                        "https://example.com/harbour-fair"
                    ]
                );
            }),
        ),
        (
            "perplexity/agent-web-search.json",
            Wire::PerplexityResponses,
            Box::new(|r| {
                // input_tokens 2650 includes 1536 read and 1011 written.
                assert_eq!(r.usage, Some(usage(2650, 44, 1536, 1011, 0)));
                let g = r.grounding.as_ref().unwrap();
                assert_eq!((g.sources.len(), g.queries.len()), (5, 2));
                assert_eq!(g.sources[4].title, "Oat cakes with a flame");
                assert!(r.text().unwrap().contains("ferry families"));
            }),
        ),
    ]
}

/// Every error fixture, the status it is served with, and its class and code.
fn error_cases() -> Vec<(&'static str, u16, RetryClass, Option<&'static str>)> {
    vec![
        (
            "openai-chat/error-unsupported-parameter.json",
            400,
            RetryClass::ClientError,
            Some("unsupported_parameter"),
        ),
        (
            "anthropic/error-invalid-request.json",
            400,
            RetryClass::ClientError,
            Some("invalid_request_error"),
        ),
        (
            "gemini/error-429-retry-info.json",
            429,
            RetryClass::RateLimit,
            Some("RESOURCE_EXHAUSTED"),
        ),
        (
            "gemini/error-invalid-argument.json",
            400,
            RetryClass::ClientError,
            Some("INVALID_ARGUMENT"),
        ),
        (
            "openai-responses/error-quota.json",
            429,
            RetryClass::Billing,
            Some("insufficient_quota"),
        ),
        (
            "openai-responses/error-unsupported-parameter.json",
            400,
            RetryClass::ClientError,
            Some("invalid_request_error"),
        ),
        (
            "perplexity/error-invalid-key.json",
            401,
            RetryClass::Auth,
            Some("invalid_api_key"),
        ),
    ]
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_fixture(relative: &str) -> Value {
    read(&fixture(&format!("wire/{relative}")))
}

/// Every `.json` under `root`'s wire folders, as `wire-folder/name`, sorted.
fn json_files(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for dir in fs::read_dir(root).unwrap() {
        let dir = dir.unwrap();
        if !dir.path().is_dir() {
            continue;
        }
        for file in fs::read_dir(dir.path()).unwrap() {
            let name = file.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") {
                out.insert(format!("{}/{name}", dir.file_name().to_string_lossy()));
            }
        }
    }
    out
}

#[test]
fn every_wire_fixture_body_is_covered_and_parses() {
    let mut covered = BTreeSet::new();
    for (file, wire, check) in success_cases() {
        let response = decode(wire, read_fixture(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        check(&response);
        let u = response.usage.unwrap_or_else(|| panic!("{file}: no usage"));
        assert!(u.is_consistent(), "{file}: {u:?}");
        covered.insert(file.to_owned());
    }
    for (file, status, class, code) in error_cases() {
        let body = read_fixture(file);
        let (got_code, message) = error_fields(&body);
        assert_eq!(got_code.as_deref(), code, "{file}");
        assert!(!message.is_empty(), "{file}");
        assert_eq!(
            classify(status, got_code.as_deref(), &message),
            class,
            "{file}"
        );
        covered.insert(file.to_owned());
    }
    assert_eq!(
        gemini_retry_delay(&read_fixture("gemini/error-429-retry-info.json")),
        Some(std::time::Duration::from_millis(12_500))
    );
    // A fixture added without a case here fails this test.
    assert_eq!(json_files(&fixture("wire")), covered);
}

#[tokio::test]
async fn the_stub_replays_the_fixture_bodies_through_the_client() {
    let client = LlmClient::new().unwrap();
    for (file, wire, check) in success_cases() {
        let stub = StubServer::start(vec![StubReply::fixture(file)]).await;
        let mut request = task_request();
        request.tools.clear();
        let response = client
            .chat(&endpoint(wire, stub.base_url()), &request)
            .await
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        check(&response);
    }
    let stub = StubServer::start(vec![
        StubReply::fixture("openai-responses/error-quota.json").status(429),
    ])
    .await;
    let err = client
        .chat(
            &endpoint(Wire::OpenAiResponses, stub.base_url()),
            &task_request(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class(),
        Some(RetryClass::Billing),
        "insufficient_quota is never retried"
    );
    assert_eq!(stub.requests().len(), 1);
}
