//! Capabilities: asking a wire for something it cannot do is `CAPABILITY_UNSUPPORTED` and
//! nothing is sent; a `keyring` template without a key is refused before sending.

use fuseforks_core::llm::{
    Attachment, AttachmentKind, ContentBlock, LlmClient, ResponseFormat, ToolChoice, Wire,
};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_core::village::Effort;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::json;

use crate::llm_support::{FIRST, endpoint, task_request, template};

fn with_attachment(kind: AttachmentKind, media_type: &str) -> fuseforks_core::llm::ChatRequest {
    let mut request = task_request();
    request.messages[1]
        .content
        .push(ContentBlock::Attachment(Attachment {
            kind,
            media_type: media_type.into(),
            data: "AAAA".into(),
            file_name: "f".into(),
        }));
    request
}

#[tokio::test]
async fn an_attachment_the_wire_cannot_carry_is_refused_and_nothing_is_sent() {
    let cases = [
        (Wire::OpenAiCompat, AttachmentKind::Video, "video/mp4"),
        (Wire::Anthropic, AttachmentKind::Audio, "audio/wav"),
        (Wire::OpenAiResponses, AttachmentKind::Audio, "audio/mpeg"),
        (Wire::XaiResponses, AttachmentKind::Video, "video/mp4"),
        (Wire::OllamaNative, AttachmentKind::Pdf, "application/pdf"),
        (
            Wire::PerplexityResponses,
            AttachmentKind::Pdf,
            "application/pdf",
        ),
    ];
    let client = LlmClient::new().unwrap();
    for (wire, kind, media) in cases {
        let stub = StubServer::start(vec![wire_replies::text(wire, "never", FIRST)]).await;
        let err = client
            .chat(
                &endpoint(wire, stub.base_url()),
                &with_attachment(kind, media),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code(), "CAPABILITY_UNSUPPORTED", "{wire:?} {kind:?}");
        assert!(stub.requests().is_empty(), "{wire:?}: nothing sent");
    }
    // What the carries table allows goes through.
    for (wire, kind, media) in [
        (Wire::Gemini, AttachmentKind::Video, "video/mp4"),
        (Wire::OpenAiCompat, AttachmentKind::Audio, "audio/wav"),
        (Wire::Anthropic, AttachmentKind::Pdf, "application/pdf"),
    ] {
        let stub = StubServer::start(vec![wire_replies::text(wire, "ok", FIRST)]).await;
        client
            .chat(
                &endpoint(wire, stub.base_url()),
                &with_attachment(kind, media),
            )
            .await
            .unwrap_or_else(|e| panic!("{wire:?}: {e}"));
        assert_eq!(stub.requests().len(), 1);
    }
}

#[tokio::test]
async fn forcing_a_tool_where_it_cannot_be_forced_is_refused() {
    let client = LlmClient::new().unwrap();
    let mut forced = task_request();
    forced.tool_choice = ToolChoice::Specific("weather".into());
    let mut thinking = forced.clone();
    thinking.effort = Some(Effort::High);
    let cases = [
        (Wire::MetaResponses, forced.clone()),
        (Wire::OllamaNative, forced.clone()),
        (Wire::Anthropic, thinking),
    ];
    for (wire, request) in cases {
        let stub = StubServer::start(vec![wire_replies::text(wire, "never", FIRST)]).await;
        let err = client
            .chat(&endpoint(wire, stub.base_url()), &request)
            .await
            .unwrap_err();
        assert_eq!(err.code(), "CAPABILITY_UNSUPPORTED", "{wire:?}");
        assert!(stub.requests().is_empty());
    }
    // Ollama's OpenAI endpoint ignores tool_choice, so forcing is refused there too.
    let stub = StubServer::start(vec![]).await;
    let mut t = template(Wire::OpenAiCompat, stub.base_url());
    t.base_url = "http://127.0.0.1:11434/v1".into();
    let ep = endpoint_of(&t, Some(fuseforks_core::llm::ApiKey::new("k"))).unwrap();
    assert_eq!(
        client.chat(&ep, &forced).await.unwrap_err().code(),
        "CAPABILITY_UNSUPPORTED"
    );

    // Where forcing works, it is encoded in the wire's own words.
    let expected = [
        (
            Wire::OpenAiCompat,
            json!({"type": "function", "function": {"name": "weather"}}),
        ),
        (Wire::Anthropic, json!({"type": "tool", "name": "weather"})),
        (
            Wire::OpenAiResponses,
            json!({"type": "function", "name": "weather"}),
        ),
    ];
    for (wire, choice) in expected {
        let stub = StubServer::start(vec![wire_replies::text(wire, "ok", FIRST)]).await;
        client
            .chat(&endpoint(wire, stub.base_url()), &forced)
            .await
            .unwrap();
        assert_eq!(stub.requests()[0].body["tool_choice"], choice, "{wire:?}");
    }
    let stub = StubServer::start(vec![wire_replies::text(Wire::Gemini, "ok", FIRST)]).await;
    client
        .chat(&endpoint(Wire::Gemini, stub.base_url()), &forced)
        .await
        .unwrap();
    assert_eq!(
        stub.requests()[0].body["toolConfig"]["functionCallingConfig"],
        json!({"mode": "ANY", "allowedFunctionNames": ["weather"]})
    );
}

#[tokio::test]
async fn other_capabilities_and_bad_requests() {
    let client = LlmClient::new().unwrap();
    let stub = StubServer::start(vec![]).await;
    let mut structured = task_request();
    structured.response_format = Some(ResponseFormat {
        name: "answer".into(),
        schema: json!({"type": "object"}),
    });
    let err = client
        .chat(&endpoint(Wire::MetaResponses, stub.base_url()), &structured)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "CAPABILITY_UNSUPPORTED");

    let mut too_long = task_request();
    too_long.max_output_tokens = 9000; // the template allows 8192
    let err = client
        .chat(&endpoint(Wire::Gemini, stub.base_url()), &too_long)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "CAPABILITY_UNSUPPORTED");

    let mut unknown_tool = task_request();
    unknown_tool.tool_choice = ToolChoice::Specific("nope".into());
    let err = client
        .chat(
            &endpoint(Wire::OpenAiCompat, stub.base_url()),
            &unknown_tool,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LLM_REQUEST_INVALID");

    let mut t = template(Wire::Anthropic, stub.base_url());
    let err = endpoint_of(&t, None).unwrap_err();
    assert_eq!(err.code(), "LLM_KEY_MISSING");
    t.credential = fuseforks_core::village::Credential::Unset;
    assert_eq!(
        endpoint_of(&t, None).unwrap_err().code(),
        "LLM_KEY_MISSING",
        "no key chosen yet"
    );
    t.credential = fuseforks_core::village::Credential::NotRequired;
    assert!(endpoint_of(&t, None).is_ok());
    assert!(stub.requests().is_empty());
}
