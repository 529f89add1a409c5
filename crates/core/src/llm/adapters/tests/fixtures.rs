//! The wire fixtures of `crates/testkit/fixtures/wire/` (ours, one folder per wire): every JSON
//! body there parses into the canonical response (or error) with the numbers the file implies,
//! and no fixture is left without a case. The stub replays the same bodies over HTTP through
//! the client in `crates/core/tests/it/llm_fixtures.rs`.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use serde_json::Value;

use super::support::fixture;
use super::wire_cases::success_cases;
use crate::llm::adapters::{decode, error_fields};
use crate::llm::{RetryClass, classify, gemini_retry_delay};

/// Every error fixture, the status it is served with, and its class and code.
fn error_cases() -> Vec<(&'static str, u16, RetryClass, Option<&'static str>)> {
    vec![
        (
            "openai-chat/error-unsupported-parameter.json",
            400,
            RetryClass::ClientError,
            Some("unsupported_parameter"),
        ),
        (
            "anthropic/error-invalid-request.json",
            400,
            RetryClass::ClientError,
            Some("invalid_request_error"),
        ),
        (
            "gemini/error-429-retry-info.json",
            429,
            RetryClass::RateLimit,
            Some("RESOURCE_EXHAUSTED"),
        ),
        (
            "gemini/error-invalid-argument.json",
            400,
            RetryClass::ClientError,
            Some("INVALID_ARGUMENT"),
        ),
        (
            "openai-responses/error-quota.json",
            429,
            RetryClass::Billing,
            Some("insufficient_quota"),
        ),
        (
            "openai-responses/error-unsupported-parameter.json",
            400,
            RetryClass::ClientError,
            Some("invalid_request_error"),
        ),
        (
            "perplexity/error-invalid-key.json",
            401,
            RetryClass::Auth,
            Some("invalid_api_key"),
        ),
    ]
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_fixture(relative: &str) -> Value {
    read(&fixture(&format!("wire/{relative}")))
}

/// Every `.json` under `root`'s wire folders, as `wire-folder/name`, sorted.
fn json_files(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for dir in fs::read_dir(root).unwrap() {
        let dir = dir.unwrap();
        if !dir.path().is_dir() {
            continue;
        }
        for file in fs::read_dir(dir.path()).unwrap() {
            let name = file.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") {
                out.insert(format!("{}/{name}", dir.file_name().to_string_lossy()));
            }
        }
    }
    out
}

#[test]
fn every_wire_fixture_body_is_covered_and_parses() {
    let mut covered = BTreeSet::new();
    for (file, wire, check) in success_cases() {
        let response = decode(wire, read_fixture(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        check(&response);
        let u = response.usage.unwrap_or_else(|| panic!("{file}: no usage"));
        assert!(u.is_consistent(), "{file}: {u:?}");
        covered.insert(file.to_owned());
    }
    for (file, status, class, code) in error_cases() {
        let body = read_fixture(file);
        let (got_code, message) = error_fields(&body);
        assert_eq!(got_code.as_deref(), code, "{file}");
        assert!(!message.is_empty(), "{file}");
        assert_eq!(
            classify(status, got_code.as_deref(), &message),
            class,
            "{file}"
        );
        covered.insert(file.to_owned());
    }
    assert_eq!(
        gemini_retry_delay(&read_fixture("gemini/error-429-retry-info.json")),
        Some(std::time::Duration::from_millis(12_500))
    );
    // A fixture added without a case here fails this test.
    assert_eq!(json_files(&fixture("wire")), covered);
}
