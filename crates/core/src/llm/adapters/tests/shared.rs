//! Cross-checks against outside recordings, run only when `FUSEFORKS_SHARED` names a folder
//! holding `reference/wire-fixtures/` (one folder per wire, as the in-repo fixtures): every JSON
//! body there decodes (or reads as an error) and every recorded stream folds into a response
//! the decoders read, with the token counts each recording states. Without the variable each
//! test says `skipped` and passes: the in-repo fixtures (`fixtures.rs` and `stream.rs` here,
//! `llm_stream*` of `tests/it/`) cover the same features always.

use std::fs;
use std::path::{Path, PathBuf};

// The one reader of `FUSEFORKS_SHARED` is testkit's; it deals in paths only.
use fuseforks_testkit::shared_reference;
use serde_json::Value;
use yaml_rust2::YamlLoader;

use crate::llm::adapters::anthropic_stream::MessagesStream;
use crate::llm::adapters::gemini_stream::GeminiStream;
use crate::llm::adapters::openai_chat_stream::{ChatStream, Delta};
use crate::llm::adapters::responses_stream::ResponsesStream;
use crate::llm::adapters::{decode, error_fields};
use crate::llm::sse::SseParser;
use crate::llm::{ChatResponse, LlmError, Wire};

/// `(file, prompt, completion)` the recordings state, after each wire's usage mapping.
const JSON_USAGE: &[(&str, u64, u64)] = &[
    ("openai-chat/openai-text.json", 16, 363),
    ("openai-chat/deepseek-tool-call.json", 374, 60),
    ("xai/xai-tool-call.json", 291, 215),
    ("xai/xai-text.json", 12, 322),
    ("perplexity/perplexity-text.json", 11, 392),
    ("anthropic/anthropic-text.json", 12, 29),
    ("anthropic/anthropic-json-tool.1.json", 1151, 87),
    (
        "anthropic/anthropic-claude-opus-5-reasoning-high.1.json",
        51,
        1699,
    ),
    ("gemini/google-text.json", 9, 272),
    ("gemini/google-tool-call-gemini3.json", 29, 1816),
    ("gemini/google-tool-use-usage.json", 144, 107),
    ("openai-responses/azure-tool-call.1.json", 45, 24),
    ("openai-responses/openai-phase.1.json", 7243, 423),
    (
        "openai-responses/openai-reasoning-encrypted-content.1.json",
        865,
        163,
    ),
    ("xai/xai-web-search-tool.1.json", 1941, 583),
    ("perplexity/agent-web-search.json", 3007, 36),
];

/// `(stream file, prompt, cache_read)` the recordings state.
const STREAM_USAGE: &[(&str, u64, u64)] = &[
    ("openai-chat/openai-text.chunks.txt", 16, 0),
    ("openai-chat/deepseek-tool-call.chunks.txt", 0, 256),
    ("anthropic/anthropic-text.chunks.txt", 12, 0),
    ("anthropic/anthropic-json-tool.1.chunks.txt", 849, 0),
    (
        "anthropic/anthropic-code-execution-20260120-prompt-cache.1.chunks.txt",
        0,
        6289,
    ),
    ("xai/xai-text.chunks.txt", 12, 11),
    ("xai/xai-tool-call.chunks.txt", 0, 290),
    (
        "xai/xai-text-with-reasoning-streaming-store-false.1.chunks.txt",
        216,
        192,
    ),
    ("perplexity/perplexity-text.chunks.txt", 11, 0),
];

/// The wire a recorded body or stream of `file` speaks, from its folder and its shape.
fn wire_of(file: &str, text: &str) -> Wire {
    let responses = text.contains("\"object\":\"response\"")
        || text.contains("\"object\": \"response\"")
        || text.contains("response.created");
    match file.split('/').next().unwrap_or("") {
        "anthropic" => Wire::Anthropic,
        "gemini" => Wire::Gemini,
        "openai-responses" => Wire::OpenAiResponses,
        "xai" if responses => Wire::XaiResponses,
        "perplexity" if responses => Wire::PerplexityResponses,
        _ => Wire::OpenAiCompat,
    }
}

/// Every file under `root`'s wire folders ending in `suffix`, as `wire-folder/name`, sorted.
fn files(root: &Path, suffix: &str) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for dir in fs::read_dir(root).unwrap().flatten() {
        if !dir.path().is_dir() {
            continue;
        }
        for file in fs::read_dir(dir.path()).unwrap().flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            if name.ends_with(suffix) {
                let relative = format!("{}/{name}", dir.file_name().to_string_lossy());
                out.push((relative, file.path()));
            }
        }
    }
    out.sort();
    out
}

/// Folds an SSE body with `wire`'s assembler and decodes the whole answer: the response and
/// the text deltas joined.
fn fold(wire: Wire, body: &[u8]) -> Result<(ChatResponse, String), LlmError> {
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    for piece in body.chunks(61) {
        events.extend(parser.push(piece).unwrap());
    }
    events.extend(parser.finish().unwrap());
    let mut deltas = Vec::new();
    let whole = match wire {
        Wire::Anthropic => {
            let mut s = MessagesStream::default();
            for e in &events {
                deltas.extend(s.push(&e.data)?);
            }
            s.finish()?
        }
        Wire::Gemini => {
            let mut s = GeminiStream::default();
            for e in &events {
                deltas.extend(s.push(&e.data)?);
            }
            s.finish()?
        }
        Wire::OpenAiCompat => {
            let mut s = ChatStream::default();
            for e in &events {
                deltas.extend(s.push(&e.data)?);
            }
            s.finish()?
        }
        _ => {
            let mut s = ResponsesStream::default();
            for e in &events {
                deltas.extend(s.push(&e.data)?);
            }
            s.finish()?
        }
    };
    let text = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Text(t) => Some(t.as_str()),
            Delta::Reasoning(_) => None,
        })
        .collect();
    Ok((decode(wire, whole)?, text))
}

/// The response's text without line breaks (its blocks are joined with one; the deltas not).
fn lines_joined(response: &ChatResponse) -> String {
    response.text().unwrap_or_default().replace('\n', "")
}

/// A file of bare JSON lines (one payload a line) framed as `data:` events.
fn framed(text: &str) -> Vec<u8> {
    let mut body = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        body.push_str(&format!("data: {line}\n\n"));
    }
    body.into_bytes()
}

/// The 200 response bodies of a vcrpy cassette, in order.
fn cassette(path: &Path) -> Vec<Vec<u8>> {
    let docs = YamlLoader::load_from_str(&fs::read_to_string(path).unwrap()).unwrap();
    docs[0]["interactions"]
        .as_vec()
        .unwrap()
        .iter()
        .filter(|i| i["response"]["status"]["code"].as_i64() == Some(200))
        .filter_map(|i| i["response"]["body"]["string"].as_str())
        .map(|b| b.as_bytes().to_vec())
        .collect()
}

#[test]
fn shared_json_bodies_decode_with_their_stated_usage() {
    let Some(root) = shared_reference("wire-fixtures") else {
        return;
    };
    let (mut decoded, mut errors) = (0, 0);
    for (file, path) in files(&root, ".json") {
        let text = fs::read_to_string(&path).unwrap();
        let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        if body.get("error").is_some_and(|e| !e.is_null()) {
            let (code, message) = error_fields(&body);
            assert!(code.is_some() && !message.is_empty(), "{file}");
            errors += 1;
            continue;
        }
        let response =
            decode(wire_of(&file, &text), body).unwrap_or_else(|e| panic!("{file}: {e}"));
        let usage = response.usage.unwrap_or_else(|| panic!("{file}: no usage"));
        assert!(usage.is_consistent(), "{file}: {usage:?}");
        let stated = JSON_USAGE
            .iter()
            .find(|(f, ..)| *f == file)
            .unwrap_or_else(|| panic!("{file} has no stated usage here"));
        assert_eq!(
            (usage.prompt, usage.completion),
            (stated.1, stated.2),
            "{file}"
        );
        decoded += 1;
    }
    assert_eq!((decoded, errors), (JSON_USAGE.len(), 6));
}

#[test]
fn shared_streams_fold_with_their_stated_usage() {
    let Some(root) = shared_reference("wire-fixtures") else {
        return;
    };
    let mut folded = 0;
    for (file, path) in files(&root, ".chunks.txt") {
        let text = fs::read_to_string(&path).unwrap();
        let wire = wire_of(&file, &text);
        let result = fold(wire, &framed(&text));
        if file.contains("error") {
            assert!(result.is_err(), "{file} ends with its error");
            continue;
        }
        let (response, deltas) = result.unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(lines_joined(&response), deltas.replace('\n', ""), "{file}");
        let usage = response.usage.unwrap_or_else(|| panic!("{file}: no usage"));
        assert!(usage.is_consistent(), "{file}: {usage:?}");
        if let Some((_, prompt, cache_read)) = STREAM_USAGE.iter().find(|(f, ..)| *f == file) {
            assert_eq!(usage.cache_read, *cache_read, "{file}");
            assert!(*prompt == 0 || usage.prompt == *prompt, "{file}: {usage:?}");
            folded += 1;
        }
    }
    assert_eq!(folded, STREAM_USAGE.len());
    // The vcrpy cassettes hold raw SSE (`event:` lines, padding inside the JSON).
    for (file, path) in files(&root, ".yaml") {
        let wire = if file.starts_with("anthropic") {
            Wire::Anthropic
        } else {
            Wire::PerplexityResponses
        };
        for body in cassette(&path) {
            let (response, deltas) = fold(wire, &body).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(lines_joined(&response), deltas.replace('\n', ""), "{file}");
            assert!(response.usage.is_some_and(|u| u.prompt > 0), "{file}");
        }
    }
}
