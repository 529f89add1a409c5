//! Anthropic prompt caching: the breakpoint lands exactly at `cacheable_prefix_len`, the last
//! message carries the second one, and two calls with the same prefix send it byte-identical.

use fuseforks_core::llm::{ChatMessage, LlmClient, Role, Wire};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::json;

use crate::llm_support::{FIRST, endpoint, task_request};

const STABLE: &str = "# 条例\n礼儀正しく。\n## About you\nYou forecast.\n## Skill\nLook it up.\n";

fn request_with(volatile: &str) -> fuseforks_core::llm::ChatRequest {
    let mut request = task_request();
    request.messages[0] = ChatMessage::text(
        Role::System,
        format!("{STABLE}## Current roster\n{volatile}"),
    );
    request.cacheable_prefix_len = STABLE.chars().count();
    request
}

#[tokio::test]
async fn the_breakpoint_is_exactly_at_the_stable_prefix_and_the_prefix_is_byte_identical() {
    let wire = Wire::Anthropic;
    let stub = StubServer::start(vec![
        wire_replies::text(wire, "a", FIRST),
        wire_replies::text(wire, "b", FIRST),
    ])
    .await;
    let client = LlmClient::new().unwrap();
    client
        .chat(
            &endpoint(wire, stub.base_url()),
            &request_with("alice: running"),
        )
        .await
        .unwrap();
    client
        .chat(
            &endpoint(wire, stub.base_url()),
            &request_with("alice: stopped, bob: running"),
        )
        .await
        .unwrap();
    let requests = stub.requests();

    let system = &requests[0].body["system"];
    assert_eq!(
        system[0]["text"], STABLE,
        "the first block is exactly the stable prefix"
    );
    assert_eq!(
        system[0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert_eq!(system[1]["text"], "## Current roster\nalice: running");
    assert!(
        system[1].get("cache_control").is_none(),
        "nothing volatile is cached"
    );
    let last = requests[0].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let last_block = last["content"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last_block["cache_control"]["type"], "ephemeral",
        "the last message carries a breakpoint"
    );
    assert_eq!(
        requests[0].header("anthropic-beta"),
        Some("extended-cache-ttl-2025-04-11")
    );

    // Byte-identical prefix: tools, then the first system block, serialise the same way.
    let prefix = |raw: &[u8]| {
        let text = String::from_utf8_lossy(raw).into_owned();
        let end = text.find("## Current roster").unwrap();
        text[..end].to_owned()
    };
    let (a, b) = (prefix(&requests[0].raw_body), prefix(&requests[1].raw_body));
    assert_eq!(a, b);
    assert_eq!(requests[0].body["tools"], requests[1].body["tools"]);
    assert_eq!(requests[0].body["system"][0], requests[1].body["system"][0]);
}
