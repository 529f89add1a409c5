//! Shared pieces of the LLM tests: templates and endpoints pointing at a stub, the scripted
//! task, and usage expectations.

use fuseforks_core::llm::{
    ApiKey, Attachment, AttachmentKind, ChatMessage, ChatRequest, ContentBlock, Endpoint, Role,
    ToolSpec, Wire,
};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_core::village::ModelTemplate;
use fuseforks_testkit::stub_template;
use fuseforks_testkit::wire_replies::ScriptUsage;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The key every test endpoint uses; it must never appear in an error.
pub(crate) const KEY: &str = "sk-test-0123456789abcdef";

/// A 1x1 PNG, base64.
pub(crate) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// A template for `wire` at the stub's base URL (with the API prefix the real one has).
pub(crate) fn template(wire: Wire, stub_base: &str) -> ModelTemplate {
    let mut t = stub_template(wire, stub_base);
    t.max_retries = 3;
    t
}

pub(crate) fn endpoint(wire: Wire, stub_base: &str) -> Endpoint {
    endpoint_of(&template(wire, stub_base), Some(ApiKey::new(KEY))).unwrap()
}

pub(crate) fn weather_tool() -> ToolSpec {
    ToolSpec {
        name: "weather".into(),
        description: "Current weather of a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}),
    }
}

/// The scripted task's first request: a system prompt, a user message with one image, one tool.
pub(crate) fn task_request() -> ChatRequest {
    let user = ChatMessage {
        role: Role::User,
        content: vec![
            ContentBlock::text("What is the weather where this photo was taken?"),
            ContentBlock::Attachment(Attachment {
                kind: AttachmentKind::Image,
                media_type: "image/png".into(),
                data: PNG.into(),
                file_name: "photo.png".into(),
            }),
        ],
    };
    let mut request = ChatRequest::new(
        "stub-model",
        vec![
            ChatMessage::text(
                Role::System,
                "# Ordinance\nBe brief.\n## Construct\nYou forecast.",
            ),
            user,
        ],
        CancellationToken::new(),
    );
    request.tools = vec![weather_tool()];
    request.max_output_tokens = 2048;
    request
}

pub(crate) const FIRST: ScriptUsage = ScriptUsage {
    prompt: 1200,
    completion: 40,
    cache_read: 1000,
    reasoning: 25,
};
pub(crate) const SECOND: ScriptUsage = ScriptUsage {
    prompt: 1300,
    completion: 12,
    cache_read: 1200,
    reasoning: 0,
};
