//! The wire fixtures' cases: every success body of `crates/testkit/fixtures/wire/`, its wire,
//! and a check of what it implies. Shared by the decoders' own test (`fixtures.rs` beside this
//! file) and the client's replay over HTTP (`crates/core/tests/it/llm_fixtures.rs`, which
//! includes this file by path); each parent names `llm` (this crate's, or the library's).

use serde_json::Value;

use super::llm::{ChatResponse, ContentBlock, StopReason, Usage, Wire};

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
pub(super) type Check = Box<dyn Fn(&ChatResponse)>;

/// The first tool call's `extra[key]` string (a signature or an id).
fn extra_str<'a>(extra: &'a Value, wire: &str, key: &str) -> &'a str {
    extra[wire][key].as_str().unwrap_or("")
}

/// Every success fixture, its wire, and a check of what it implies.
pub(super) fn success_cases() -> Vec<(&'static str, Wire, Check)> {
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
