//! What the adapters' own tests share: the fixtures of `crates/testkit/fixtures/` (read by
//! path: the fixtures stay with the stub that replays them) and the scripted task's request.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::llm::{
    Attachment, AttachmentKind, CancellationToken, ChatMessage, ChatRequest, ContentBlock, Role,
    ToolSpec,
};

/// A file or folder under `crates/testkit/fixtures/` (the fixtures stay with the stub that
/// replays them), checked to exist so that a wrong name fails loudly.
pub(super) fn fixture(relative: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testkit/fixtures")
        .join(relative);
    assert!(path.exists(), "fixture {} is missing", path.display());
    path
}

/// The bytes of [`fixture`]`(relative)`.
pub(super) fn fixture_bytes(relative: &str) -> Vec<u8> {
    let path = fixture(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// A 1x1 PNG, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// The scripted task's first request (as `tests/it/llm_support.rs` builds it): a system
/// prompt, a user message with one image, one tool.
pub(super) fn task_request() -> ChatRequest {
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
    request.tools = vec![ToolSpec {
        name: "weather".into(),
        description: "Current weather of a city".into(),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": false}),
    }];
    request.max_output_tokens = 2048;
    request
}
