//! The other `.sse` wire fixtures of `crates/testkit/fixtures/wire/`, served over HTTP and read
//! by the client with a streaming template: xAI's chat chunks (text with reasoning and a
//! usage-only last chunk, a tool call in one delta) and Responses events (reasoning, then many
//! text deltas), Perplexity's chat chunks (citations repeated, a `chat.completion.done` last
//! chunk, no `[DONE]`) and its Responses stream (a search, skipped sequence numbers), and
//! Anthropic's thinking stream (JSON padded with spaces) and parallel tool calls with the answer
//! after them.

use fuseforks_core::llm::{ContentBlock, StopReason, Wire};
use fuseforks_testkit::stub::StubReply;
use serde_json::json;

use crate::llm_stream::through_client;

fn sse(file: &str) -> StubReply {
    StubReply::sse_fixture(file)
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
    let (text, pieces, _) = through_client(Wire::OpenAiCompat, sse("xai/text.sse"), true).await;
    assert_eq!(text.text().as_deref(), Some("Lantern Night."));
    assert_eq!(pieces, ["Lantern Night."]);
    assert_eq!(text.stop, StopReason::End);
    assert_eq!(
        text.reasoning_summary.concat(),
        "Asked for the festival's name in two words. The village calls it Lantern Night.",
        "reasoning_content kept"
    );
    let usage = text.usage.unwrap();
    assert_eq!((usage.prompt, usage.cache_read), (14, 9), "{usage:?}");
    // completion_tokens excludes reasoning on xAI: 3 + 172 (total 189 = 14 + 3 + 172).
    assert_eq!((usage.completion, usage.reasoning), (175, 172), "{usage:?}");

    let (tool, _, _) = through_client(Wire::OpenAiCompat, sse("xai/tool-call.sse"), true).await;
    assert_eq!(tool.stop, StopReason::ToolUse);
    assert_eq!(
        calls(&tool.content),
        [(
            "lookup_tide".to_owned(),
            json!({"port": "Kirkwall", "day": "today"})
        )]
    );
    assert_eq!(tool.usage.unwrap().cache_read, 288);
}

#[tokio::test]
async fn xai_responses_stream_decodes_its_completed_response() {
    let (response, pieces, _) =
        through_client(Wire::XaiResponses, sse("xai/responses-reasoning.sse"), true).await;
    let text = response.text().unwrap();
    assert!(
        text.starts_with(
            "The lantern custom of Fuseforks came with the ferry families from Orkney"
        ),
        "{text}"
    );
    assert_eq!(text, pieces.concat(), "the pieces make the text");
    assert_eq!(pieces.len(), 96, "one piece per word");
    assert!(response.reasoning_summary[0].contains("name Orkney"));
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.cache_read), (240, 224), "{usage:?}");
    assert_eq!((usage.completion, usage.reasoning), (512, 301));
}

#[tokio::test]
async fn perplexity_chat_stream_keeps_its_citations() {
    let (response, pieces, _) =
        through_client(Wire::OpenAiCompat, sse("perplexity/text.sse"), true).await;
    let text = response.text().unwrap();
    assert_eq!(text, pieces.concat());
    assert!(text.starts_with("The pier music starts"), "{text}");
    assert_eq!(response.stop, StopReason::End);
    let usage = response.usage.unwrap();
    assert_eq!(
        (usage.prompt, usage.completion),
        (8, 57),
        "the last chunk's usage"
    );
    let grounding = response.grounding.expect("citations as grounding");
    assert_eq!(grounding.sources.len(), 4, "{grounding:?}");
    assert_eq!(grounding.sources[3].uri, "https://example.com/pier-music");
}

#[tokio::test]
async fn anthropic_streams_decode_thinking_and_parallel_tool_calls() {
    let (response, pieces, _) =
        through_client(Wire::Anthropic, sse("anthropic/thinking.sse"), true).await;
    assert_eq!(
        response.text().unwrap(),
        "Twelve lanterns light the way to the pier."
    );
    assert_eq!(response.text().unwrap(), pieces.concat());
    assert!(
        response
            .reasoning_summary
            .concat()
            .starts_with("Count the gates"),
        "the thinking text: {:?}",
        response.reasoning_summary
    );
    // The thinking block rides on the text for its replay, its signature whole.
    let ContentBlock::Text { extra, .. } = &response.content[0] else {
        panic!("text: {:?}", response.content)
    };
    let signature = extra["anthropic"]["before"][0]["signature"]
        .as_str()
        .unwrap();
    assert_eq!((&signature[..4], signature.len()), ("RkZz", 284));
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.completion), (52, 88));

    let (first, _, _) =
        through_client(Wire::Anthropic, sse("anthropic/parallel-tools.sse"), true).await;
    assert_eq!(first.stop, StopReason::ToolUse);
    assert_eq!(
        calls(&first.content),
        [
            ("ring_count".to_owned(), json!({})),
            ("lookup_tide".to_owned(), json!({"port": "Stromness"}))
        ],
        "two parallel calls, the first without arguments"
    );
    let (second, pieces, _) = through_client(
        Wire::Anthropic,
        sse("anthropic/tool-result-answer.sse"),
        true,
    )
    .await;
    assert_eq!(second.stop, StopReason::End);
    assert_eq!(
        second.text().unwrap(),
        "The bell has rung four times, and high water at Stromness is at 20:15."
    );
    assert_eq!(second.text().unwrap(), pieces.concat());
}

#[tokio::test]
async fn perplexity_responses_stream_answers_with_its_search() {
    let (response, pieces, _) = through_client(
        Wire::PerplexityResponses,
        sse("perplexity/agent-stream.sse"),
        true,
    )
    .await;
    let text = response.text().unwrap();
    assert_eq!(
        text,
        "The last ferry from Kirkwall on Lantern Night leaves at 21:40.[1]"
    );
    assert_eq!(text, pieces.concat());
    assert!(pieces.len() > 1, "several pieces: {pieces:?}");
    assert!(
        response.tool_calls().is_empty(),
        "the search is the server's"
    );
    let usage = response.usage.unwrap();
    assert_eq!((usage.prompt, usage.cache_read), (2890, 2048), "{usage:?}");
    let grounding = response.grounding.expect("the search results");
    assert_eq!(
        grounding.queries,
        ["When is the Kirkwall ferry's last crossing on Lantern Night?"]
    );
    assert_eq!(
        grounding.sources[0].uri,
        "https://example.net/kirkwall-ferry/timetable"
    );
}
