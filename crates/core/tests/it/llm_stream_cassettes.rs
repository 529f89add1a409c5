//! The other recorded streams of `shared/reference/wire-fixtures/`, served over HTTP and read by
//! the client with a streaming template: xAI's chat chunks (text with reasoning, a tool call)
//! and Responses events, Perplexity's chat chunks (citations), and the vcrpy cassettes
//! (Anthropic thinking and parallel tool calls, Perplexity's Responses stream), whose SSE bodies
//! are taken out of their YAML by a YAML parser, bytes as recorded.

use fuseforks_core::llm::{ContentBlock, StopReason, Wire};
use fuseforks_testkit::reference;
use fuseforks_testkit::stub::StubReply;
use yaml_rust2::YamlLoader;

use crate::llm_stream::{sse_body, through_client};

fn sse(body: Vec<u8>) -> StubReply {
    let mut reply = StubReply::sse(&[]);
    reply.body = body;
    reply
}

/// The response bodies of a vcrpy cassette, in order.
fn cassette(file: &str) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(reference(&format!("wire-fixtures/{file}"))).unwrap();
    let docs = YamlLoader::load_from_str(&text).unwrap();
    docs[0]["interactions"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|i| {
            let body = i["response"]["body"]["string"]
                .as_str()
                .expect("a string body");
            body.as_bytes().to_vec()
        })
        .collect()
}

/// The `signature` of the first thinking block found anywhere in `v`.
fn signature(v: &serde_json::Value) -> Option<&str> {
    match v {
        serde_json::Value::Object(m) if m.get("type").is_some_and(|t| t == "thinking") => {
            m.get("signature").and_then(serde_json::Value::as_str)
        }
        serde_json::Value::Object(m) => m.values().find_map(signature),
        serde_json::Value::Array(a) => a.iter().find_map(signature),
        _ => None,
    }
}

fn calls(content: &[ContentBlock]) -> Vec<(String, serde_json::Value)> {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse(c) => Some((c.name.clone(), c.args.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn xai_chat_streams_decode_text_reasoning_and_a_tool_call() {
    let (text, pieces, _) = through_client(
        Wire::OpenAiCompat,
        sse(sse_body("xai/xai-text.chunks.txt")),
        true,
    )
    .await;
    assert_eq!(text.text().unwrap(), pieces.concat());
    assert_eq!(text.stop, StopReason::End);
    assert!(!text.reasoning_summary.is_empty(), "reasoning_content kept");
    let usage = text.usage.unwrap();
    assert_eq!((usage.prompt, usage.cache_read), (12, 11), "{usage:?}");
    assert_eq!(usage.reasoning, 290, "{usage:?}");

    let (tool, _, _) = through_client(
        Wire::OpenAiCompat,
        sse(sse_body("xai/xai-tool-call.chunks.txt")),
        true,
    )
    .await;
    assert_eq!(tool.stop, StopReason::ToolUse);
    let found = calls(&tool.content);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, "weather");
    assert_eq!(found[0].1["location"], "San Francisco");
    assert_eq!(tool.usage.unwrap().cache_read, 290);
}

#[tokio::test]
async fn xai_responses_stream_decodes_its_completed_response() {
    let body = sse_body("xai/xai-text-with-reasoning-streaming-store-false.1.chunks.txt");
    let (response, pieces, _) = through_client(Wire::XaiResponses, sse(body), true).await;
    let text = response.text().unwrap();
    assert!(text.contains("Sonoran"), "{text}");
    assert_eq!(text, pieces.concat(), "the pieces make the text");
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.cache_read), (216, 192), "{usage:?}");
    assert_eq!(usage.reasoning, 253);
}

#[tokio::test]
async fn perplexity_chat_stream_keeps_its_citations() {
    let body = sse_body("perplexity/perplexity-text.chunks.txt");
    let (response, pieces, _) = through_client(Wire::OpenAiCompat, sse(body), true).await;
    assert_eq!(response.text().unwrap(), pieces.concat());
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (11, 434));
    let grounding = response.grounding.expect("citations as grounding");
    assert_eq!(grounding.sources.len(), 5, "{grounding:?}");
}

#[tokio::test]
async fn anthropic_cassettes_decode_thinking_and_parallel_tool_calls() {
    let thinking = cassette("anthropic/test_thinking_prompt.yaml");
    let (response, pieces, _) =
        through_client(Wire::Anthropic, sse(thinking[0].clone()), true).await;
    assert_eq!(response.text().unwrap(), pieces.concat());
    assert!(!response.reasoning_summary.is_empty(), "the thinking text");
    // The thinking block rides on the text for its replay, its signature whole.
    let signed = response.content.iter().any(|b| match b {
        ContentBlock::Text { extra, .. } => signature(extra).is_some_and(|s| s.len() > 20),
        _ => false,
    });
    assert!(
        signed,
        "the thinking block and its signature: {:?}",
        response.content
    );
    assert_eq!(response.usage.unwrap().prompt, 45);

    let tools = cassette("anthropic/test_tools.yaml");
    assert_eq!(tools.len(), 2, "two interactions");
    let (first, _, _) = through_client(Wire::Anthropic, sse(tools[0].clone()), true).await;
    assert_eq!(first.stop, StopReason::ToolUse);
    assert_eq!(calls(&first.content).len(), 2, "two parallel calls");
    let (second, pieces, _) = through_client(Wire::Anthropic, sse(tools[1].clone()), true).await;
    assert_eq!(second.stop, StopReason::End);
    assert_eq!(second.text().unwrap(), pieces.concat());
}

#[tokio::test]
async fn perplexity_cassette_streams_a_responses_answer() {
    let bodies = cassette("perplexity/test_streaming_prompt_yields_several_chunks.yaml");
    let (response, pieces, _) =
        through_client(Wire::PerplexityResponses, sse(bodies[0].clone()), true).await;
    let text = response.text().unwrap();
    assert!(text.contains("Paris"), "{text}");
    assert!(pieces.len() > 1, "several chunks: {pieces:?}");
    assert_eq!(text, pieces.concat());
    assert!(response.usage.unwrap().prompt > 0);
}
