//! Real recorded traffic: every JSON body in `shared/reference/wire-fixtures/` parses into the
//! canonical response (or error) with the numbers the file implies; the stub also replays them
//! over HTTP through the client.

use std::collections::BTreeMap;
use std::fs;

use fuseforks_core::llm::adapters::{decode, error_fields};
use fuseforks_core::llm::classify;
use fuseforks_core::llm::gemini_retry_delay;
use fuseforks_core::llm::{
    ChatResponse, ContentBlock, LlmClient, RetryClass, StopReason, Usage, Wire,
};
use fuseforks_testkit::reference;
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

/// A check of what a recorded response implies.
type Check = Box<dyn Fn(&ChatResponse)>;

/// Every success fixture, its wire, and a check of what it implies.
fn success_cases() -> Vec<(&'static str, Wire, Check)> {
    vec![
        (
            "openai-chat/openai-text.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(16, 363, 0, 0, 0)));
                assert_eq!(r.stop, StopReason::End);
                assert!(
                    r.text()
                        .unwrap()
                        .starts_with("**Holiday Name:** Galaxy Day")
                );
            }),
        ),
        (
            "openai-chat/deepseek-tool-call.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(374, 60, 0, 0, 16)));
                assert_eq!(r.stop, StopReason::ToolUse);
                let call = r.tool_calls()[0];
                assert_eq!(
                    (call.id.as_str(), call.name.as_str()),
                    ("call_00_lCIkdHRa7AKmCG3TlxXz1061", "weather")
                );
                assert_eq!(call.args["location"], "San Francisco");
                assert!(!r.reasoning_summary.is_empty());
            }),
        ),
        (
            "xai/xai-tool-call.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                // completion_tokens excludes reasoning on xAI: 26 + 189 (total 506 = 291 + 26 + 189).
                assert_eq!(r.usage, Some(usage(291, 215, 244, 0, 189)));
                assert_eq!(r.stop, StopReason::ToolUse);
                assert_eq!(r.tool_calls()[0].id, "call_93562515");
            }),
        ),
        (
            "xai/xai-text.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(12, 322, 2, 0, 320)));
                assert_eq!(r.text().as_deref(), Some("Grok"));
            }),
        ),
        (
            "perplexity/perplexity-text.json",
            Wire::OpenAiCompat,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(11, 392, 0, 0, 0)));
                let g = r.grounding.as_ref().unwrap();
                assert_eq!((g.sources.len(), g.engine.as_str()), (6, "perplexity"));
            }),
        ),
        (
            "anthropic/anthropic-text.json",
            Wire::Anthropic,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(12, 29, 0, 0, 0)));
                assert_eq!(r.stop, StopReason::End);
                assert!(r.text().unwrap().starts_with("Hello!"));
            }),
        ),
        (
            "anthropic/anthropic-json-tool.1.json",
            Wire::Anthropic,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(1151, 87, 0, 0, 0)));
                assert_eq!(r.stop, StopReason::ToolUse);
                assert_eq!(r.tool_calls()[0].name, "json");
                assert_eq!(
                    r.tool_calls()[0].args["elements"].as_array().unwrap().len(),
                    4
                );
            }),
        ),
        (
            "anthropic/anthropic-claude-opus-5-reasoning-high.1.json",
            Wire::Anthropic,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(51, 1699, 0, 0, 139)));
                assert_eq!(r.reasoning_summary.len(), 1);
                let ContentBlock::Text { extra, .. } = &r.content[0] else {
                    panic!("text first")
                };
                let thinking = &extra["anthropic"]["before"][0];
                assert_eq!(thinking["type"], "thinking");
                assert!(thinking["signature"].as_str().unwrap().starts_with("CAIS"));
            }),
        ),
        (
            "gemini/google-text.json",
            Wire::Gemini,
            Box::new(|r| {
                // candidates exclude thoughts: 28 + 244 (total 281 = 9 + 28 + 244).
                assert_eq!(r.usage, Some(usage(9, 272, 0, 0, 244)));
                let ContentBlock::Text { extra, .. } = &r.content[0] else {
                    panic!("text")
                };
                assert!(
                    extra["gemini"]["thoughtSignature"]
                        .as_str()
                        .unwrap()
                        .starts_with("EtoF")
                );
            }),
        ),
        (
            "gemini/google-tool-call-gemini3.json",
            Wire::Gemini,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(29, 1816, 0, 0, 1801)));
                assert_eq!(
                    r.stop,
                    StopReason::ToolUse,
                    "a call reports STOP; the part decides"
                );
                let call = r.tool_calls()[0];
                assert_eq!(call.args["location"], "San Francisco");
                assert!(
                    call.extra["gemini"]["thoughtSignature"]
                        .as_str()
                        .unwrap()
                        .starts_with("Eqo+")
                );
            }),
        ),
        (
            "gemini/google-tool-use-usage.json",
            Wire::Gemini,
            Box::new(|r| {
                // total 251 = 55 + 89 (tool-use prompt) + 51 + 56 (thoughts).
                assert_eq!(r.usage, Some(usage(144, 107, 0, 0, 56)));
                assert_eq!(r.usage.unwrap().total(), 251);
            }),
        ),
        (
            "openai-responses/azure-tool-call.1.json",
            Wire::OpenAiResponses,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(45, 24, 0, 0, 0)));
                assert_eq!(r.stop, StopReason::ToolUse);
                let call = r.tool_calls()[0];
                assert_eq!(call.id, "call_YunNGbIwdVJ2i0y0Mybva4Pw");
                assert!(
                    call.extra["responses"]["id"]
                        .as_str()
                        .unwrap()
                        .starts_with("fc_")
                );
            }),
        ),
        (
            "openai-responses/openai-phase.1.json",
            Wire::OpenAiResponses,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(7243, 423, 3072, 0, 58)));
                assert_eq!(r.content.len(), 2);
            }),
        ),
        (
            "openai-responses/openai-reasoning-encrypted-content.1.json",
            Wire::OpenAiResponses,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(865, 163, 0, 0, 128)));
                assert!(!r.reasoning_summary.is_empty());
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
            "xai/xai-web-search-tool.1.json",
            Wire::XaiResponses,
            Box::new(|r| {
                assert_eq!(r.usage, Some(usage(1941, 583, 947, 0, 380)));
                let g = r.grounding.as_ref().unwrap();
                assert_eq!(g.engine, "xai");
                assert_eq!(g.queries, ["what is xAI"]);
                assert!(g.sources.iter().any(|s| s.uri == "https://x.ai/"));
            }),
        ),
        (
            "perplexity/agent-web-search.json",
            Wire::PerplexityResponses,
            Box::new(|r| {
                // input_tokens 3007 includes 1780 read and 1224 written.
                assert_eq!(r.usage, Some(usage(3007, 36, 1780, 1224, 0)));
                let g = r.grounding.as_ref().unwrap();
                assert!(g.sources.len() >= 4 && !g.queries.is_empty());
                assert!(r.text().is_some());
            }),
        ),
    ]
}

/// Every error fixture, the status it was recorded with (or implies), and its class.
fn error_cases() -> Vec<(&'static str, u16, RetryClass, Option<&'static str>)> {
    vec![
        (
            "openai-chat/reasoning-model-legacy-parameter-error.json",
            400,
            RetryClass::ClientError,
            Some("unsupported_parameter"),
        ),
        (
            "anthropic/anthropic-root-union-tool-schema-error.json",
            400,
            RetryClass::ClientError,
            Some("invalid_request_error"),
        ),
        (
            "gemini/google-429-retry-info.json",
            429,
            RetryClass::RateLimit,
            Some("RESOURCE_EXHAUSTED"),
        ),
        (
            "gemini/google-thinking-level-minimal-unsupported.json",
            400,
            RetryClass::ClientError,
            Some("INVALID_ARGUMENT"),
        ),
        (
            "openai-responses/openai-error.1.json",
            429,
            RetryClass::Billing,
            Some("insufficient_quota"),
        ),
        (
            "openai-responses/reasoning-model-temperature-error.json",
            400,
            RetryClass::ClientError,
            Some("invalid_request_error"),
        ),
    ]
}

fn read(relative: &str) -> Value {
    serde_json::from_slice(&fs::read(reference(&format!("wire-fixtures/{relative}"))).unwrap())
        .unwrap()
}

#[test]
fn every_recorded_json_body_is_covered_and_parses() {
    let mut covered: BTreeMap<String, bool> = BTreeMap::new();
    for (file, wire, check) in success_cases() {
        let response = decode(wire, read(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        check(&response);
        if let Some(u) = response.usage {
            assert!(u.is_consistent(), "{file}: {u:?}");
        }
        covered.insert(file.to_owned(), true);
    }
    for (file, status, class, code) in error_cases() {
        let body = read(file);
        let (got_code, message) = error_fields(&body);
        assert_eq!(got_code.as_deref(), code, "{file}");
        assert!(!message.is_empty(), "{file}");
        assert_eq!(
            classify(status, got_code.as_deref(), &message),
            class,
            "{file}"
        );
        covered.insert(file.to_owned(), true);
    }
    assert_eq!(
        gemini_retry_delay(&read("gemini/google-429-retry-info.json")),
        Some(std::time::Duration::from_millis(34_400))
    );
    // A fixture added to shared/ without a case here fails this test.
    let root = reference("wire-fixtures");
    for dir in fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap();
        if !dir.path().is_dir() {
            continue;
        }
        for file in fs::read_dir(dir.path()).unwrap() {
            let name = file.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") {
                let relative = format!("{}/{name}", dir.file_name().to_string_lossy());
                assert!(covered.contains_key(&relative), "{relative} has no case");
            }
        }
    }
}

#[tokio::test]
async fn the_stub_replays_recorded_bodies_through_the_client() {
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
        StubReply::fixture("openai-responses/openai-error.1.json").status(429),
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
