//! The same scripted task through every wire's stub gives the
//! same canonical shape — a user message with one image, the model calls one tool, gets the
//! result, answers. Also: the opaque provider data of the first answer goes back verbatim. Each
//! wire runs twice, whole and streamed (the same answers cut into the wire's stream), and the
//! two must give the same canonical responses.

use fuseforks_core::llm::{
    ChatMessage, ContentBlock, LlmClient, Role, StopReason, ToolResult, Usage, Wire,
};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall, ScriptUsage, opaque};
use fuseforks_testkit::wire_streams::streamed;
use serde_json::{Value, json};

use crate::llm_support::{FIRST, KEY, PNG, SECOND, endpoint, task_request, template};

#[derive(Debug, PartialEq)]
struct Shape {
    first_kinds: Vec<&'static str>,
    first_stop: StopReason,
    second_kinds: Vec<&'static str>,
    second_stop: StopReason,
    text: Option<String>,
    call_name: String,
    call_args: Value,
}

fn expected_usage(wire: Wire, u: ScriptUsage) -> Usage {
    if wire == Wire::OllamaNative {
        // Ollama reports only prompt and output counts.
        Usage {
            prompt: u.prompt,
            completion: u.completion,
            ..Usage::default()
        }
    } else {
        Usage {
            prompt: u.prompt,
            completion: u.completion,
            cache_read: u.cache_read,
            reasoning: u.reasoning,
            ..Usage::default()
        }
    }
}

/// The canonical response less the provider's own JSON (for logs only).
fn canonical(r: &fuseforks_core::llm::ChatResponse) -> impl PartialEq + std::fmt::Debug + use<> {
    (
        r.content.clone(),
        r.stop,
        r.usage,
        r.grounding.clone(),
        r.reasoning_summary.clone(),
        r.model.clone(),
    )
}

#[tokio::test]
async fn the_same_task_through_every_wire_gives_the_same_shape() {
    let client = LlmClient::new().unwrap();
    let mut shapes = Vec::new();
    let mut answers = Vec::new();
    for (wire, streaming) in Wire::ALL.into_iter().flat_map(|w| [(w, false), (w, true)]) {
        let call = ScriptCall {
            id: "call_1".into(),
            name: "weather".into(),
            args: json!({"city": "Paris"}),
        };
        let mut replies = vec![
            wire_replies::tool_calls(wire, &[call], FIRST),
            wire_replies::text(wire, "It is sunny in Paris.", SECOND),
        ];
        if streaming {
            replies = replies.iter().map(|r| streamed(wire, r)).collect();
        }
        let stub = StubServer::start(replies).await;
        let mut template = template(wire, stub.base_url());
        template.streaming = streaming;
        let endpoint = endpoint_of(&template, Some(fuseforks_core::llm::ApiKey::new(KEY))).unwrap();
        let first_request = task_request();
        let first = client
            .chat(&endpoint, &first_request)
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(first.usage, Some(expected_usage(wire, FIRST)), "{wire:?}");
        assert!(first.usage.unwrap().is_consistent());
        let call = first.tool_calls()[0].clone();

        let mut second_request = task_request();
        second_request.messages.push(first.to_message());
        second_request.messages.push(ChatMessage {
            role: Role::Tool,
            content: vec![ContentBlock::ToolResult(ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: "sunny, 21 °C".into(),
                is_error: false,
            })],
        });
        let pieces = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = std::sync::Arc::clone(&pieces);
        second_request.on_delta = Some(fuseforks_core::llm::DeltaSink(std::sync::Arc::new(
            move |piece| {
                if let fuseforks_core::llm::Piece::Text(t) = piece {
                    sink.lock().unwrap().push_str(t);
                }
            },
        )));
        let second = client
            .chat(&endpoint, &second_request)
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(second.usage, Some(expected_usage(wire, SECOND)), "{wire:?}");
        // Streamed, the text came in pieces first (the stream was read, not a whole answer).
        let shown = match streaming {
            true => "It is sunny in Paris.",
            false => "",
        };
        assert_eq!(*pieces.lock().unwrap(), shown, "{wire:?}");

        let requests = stub.requests();
        assert_eq!(requests.len(), 2, "{wire:?}");
        let first_sent = String::from_utf8_lossy(&requests[0].raw_body).into_owned();
        assert!(
            first_sent.contains(PNG),
            "{wire:?}: the image is in the first request"
        );
        let second_sent = String::from_utf8_lossy(&requests[1].raw_body).into_owned();
        assert!(
            second_sent.contains("sunny, 21 °C") || second_sent.contains("sunny, 21 \\u00b0C"),
            "{wire:?}: {second_sent}"
        );
        assert_auth(wire, streaming, &requests[0]);
        assert_extra_returned(wire, &requests[1].body, &second_sent);
        let asked = requests[0].body.get("stream").and_then(Value::as_bool);
        match (wire, streaming) {
            (Wire::Gemini, _) => assert_eq!(asked, None), // the method says it
            (_, true) => assert_eq!(asked, Some(true), "{wire:?}"),
            (_, false) => assert_ne!(asked, Some(true), "{wire:?}"),
        }
        answers.push(((wire, streaming), canonical(&first), canonical(&second)));
        assert!(!format!("{first:?}").contains(KEY));

        shapes.push((
            wire,
            Shape {
                first_kinds: first.content.iter().map(ContentBlock::kind).collect(),
                first_stop: first.stop,
                second_kinds: second.content.iter().map(ContentBlock::kind).collect(),
                second_stop: second.stop,
                text: second.text(),
                call_name: call.name,
                call_args: call.args,
            },
        ));
    }
    let (first_wire, reference) = &shapes[0];
    assert_eq!(
        reference,
        &Shape {
            first_kinds: vec!["tool_use"],
            first_stop: StopReason::ToolUse,
            second_kinds: vec!["text"],
            second_stop: StopReason::End,
            text: Some("It is sunny in Paris.".into()),
            call_name: "weather".into(),
            call_args: json!({"city": "Paris"}),
        },
        "{first_wire:?}"
    );
    for (wire, shape) in &shapes[1..] {
        assert_eq!(shape, reference, "{wire:?} differs from {first_wire:?}");
    }
    // Streamed equals whole, wire by wire: text, tool calls, provider data, usage, model.
    for pair in answers.chunks(2) {
        let [(whole_at, whole_1, whole_2), (_, streamed_1, streamed_2)] = pair else {
            panic!("two modes per wire");
        };
        assert_eq!(
            streamed_1, whole_1,
            "{whole_at:?}: the first answer streamed"
        );
        assert_eq!(
            streamed_2, whole_2,
            "{whole_at:?}: the second answer streamed"
        );
    }
}

fn assert_auth(wire: Wire, streaming: bool, request: &fuseforks_testkit::stub::Captured) {
    match wire {
        Wire::Anthropic => {
            assert_eq!(request.header("x-api-key"), Some(KEY));
            assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(request.header("authorization"), None);
        }
        Wire::Gemini => assert_eq!(request.header("x-goog-api-key"), Some(KEY)),
        Wire::OllamaNative => assert_eq!(
            request.header("authorization"),
            None,
            "not_required sends no key"
        ),
        _ => assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        ),
    }
    let path = request.path.as_str();
    let expected = match wire {
        Wire::OpenAiCompat => "/v1/chat/completions",
        Wire::Anthropic => "/v1/messages",
        Wire::Gemini if streaming => "/v1beta/models/stub-model:streamGenerateContent?alt=sse",
        Wire::Gemini => "/v1beta/models/stub-model:generateContent",
        Wire::OllamaNative => "/api/chat",
        _ => "/v1/responses",
    };
    assert_eq!(path, expected, "{wire:?}");
}

/// The provider data that must come back verbatim is in the second request, in its place.
fn assert_extra_returned(wire: Wire, body: &Value, raw: &str) {
    match wire {
        Wire::Gemini => {
            let model_turn = &body["contents"][1];
            assert_eq!(model_turn["role"], "model");
            assert_eq!(
                model_turn["parts"][0]["thoughtSignature"],
                opaque::GEMINI_SIGNATURE
            );
            assert_eq!(model_turn["parts"][0]["functionCall"]["name"], "weather");
            assert_eq!(model_turn["parts"][0]["functionCall"]["id"], "call_1");
            assert_eq!(
                body["contents"][2]["parts"][0]["functionResponse"]["id"],
                "call_1"
            );
            assert!(raw.contains(opaque::GEMINI_SIGNATURE));
        }
        Wire::OpenAiResponses
        | Wire::XaiResponses
        | Wire::MetaResponses
        | Wire::PerplexityResponses => {
            let input = body["input"].as_array().unwrap();
            let at = input
                .iter()
                .position(|i| i["type"] == "reasoning")
                .expect("reasoning item replayed");
            assert_eq!(
                input[at],
                json!({"id": "rs_stub", "type": "reasoning", "encrypted_content": opaque::RESPONSES_ENCRYPTED,
                       "summary": [{"type": "summary_text", "text": "Looking it up."}]})
            );
            assert_eq!(input[at + 1]["type"], "function_call");
            assert_eq!(input[at + 1]["id"], "fc_call_1");
            assert_eq!(
                input[at + 2],
                json!({"type": "function_call_output", "call_id": "call_1", "output": "sunny, 21 °C"})
            );
            assert!(raw.contains(opaque::RESPONSES_ENCRYPTED));
        }
        Wire::Anthropic => {
            let assistant = &body["messages"][1];
            assert_eq!(assistant["role"], "assistant");
            assert_eq!(
                assistant["content"][0],
                json!({"type": "thinking", "thinking": "I should look it up.", "signature": opaque::ANTHROPIC_SIGNATURE})
            );
            assert_eq!(assistant["content"][1]["type"], "tool_use");
            assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
            assert!(raw.contains(opaque::ANTHROPIC_SIGNATURE));
        }
        Wire::OpenAiCompat => {
            let messages = body["messages"].as_array().unwrap();
            assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
            assert_eq!(
                messages[3],
                json!({"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 °C"})
            );
        }
        Wire::OllamaNative => {
            let messages = body["messages"].as_array().unwrap();
            assert_eq!(
                messages[1]["images"][0], PNG,
                "bare base64, no data-URL prefix"
            );
            assert_eq!(
                messages[2]["tool_calls"][0]["function"]["arguments"],
                json!({"city": "Paris"}),
                "arguments as an object"
            );
            assert_eq!(messages[3]["tool_name"], "weather");
            assert!(body.get("tool_choice").is_none());
        }
    }
}

#[tokio::test]
async fn parallel_calls_keep_their_order_and_ids_on_every_wire() {
    let client = LlmClient::new().unwrap();
    for wire in Wire::ALL {
        let calls = [
            ScriptCall {
                id: "call_a".into(),
                name: "weather".into(),
                args: json!({"city": "Paris"}),
            },
            ScriptCall {
                id: "call_b".into(),
                name: "weather".into(),
                args: json!({"city": "Oslo"}),
            },
        ];
        let stub = StubServer::start(vec![
            wire_replies::tool_calls(wire, &calls, FIRST),
            wire_replies::text(wire, "Paris sunny, Oslo snowy.", SECOND),
        ])
        .await;
        let endpoint = endpoint(wire, stub.base_url());
        let first = client.chat(&endpoint, &task_request()).await.unwrap();
        let got: Vec<(String, Value)> = first
            .tool_calls()
            .iter()
            .map(|c| (c.name.clone(), c.args["city"].clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("weather".to_owned(), json!("Paris")),
                ("weather".to_owned(), json!("Oslo"))
            ],
            "{wire:?}"
        );
        let ids: Vec<String> = first.tool_calls().iter().map(|c| c.id.clone()).collect();
        assert_ne!(
            ids[0], ids[1],
            "{wire:?}: ids stay distinct (synthesised where the wire gives none)"
        );

        let mut second = task_request();
        second.messages.push(first.to_message());
        second.messages.push(ChatMessage {
            role: Role::Tool,
            content: first
                .tool_calls()
                .iter()
                .map(|c| {
                    ContentBlock::ToolResult(ToolResult {
                        call_id: c.id.clone(),
                        name: c.name.clone(),
                        content: format!("{} done", c.args["city"]),
                        is_error: false,
                    })
                })
                .collect(),
        });
        let answer = client.chat(&endpoint, &second).await.unwrap();
        assert_eq!(answer.text().as_deref(), Some("Paris sunny, Oslo snowy."));
        let sent = String::from_utf8_lossy(&stub.requests()[1].raw_body).into_owned();
        let (a, b) = (
            sent.find("\\\"Paris\\\" done")
                .or_else(|| sent.find("Paris\\\" done")),
            sent.find("Oslo\\\" done"),
        );
        assert!(
            a.is_some() && b.is_some() && a < b,
            "{wire:?}: both results, in order: {sent}"
        );
    }
}
