//! The client's bounds: an answer body over the template's cap is refused with
//! `LLM_RESPONSE_TOO_LARGE` (never retried, nothing of the body in the error), and a key is
//! never sent over plain http to a host that is not loopback (`ENDPOINT_INSECURE`), even when
//! an `Endpoint` is built by hand past the template rule.

use fuseforks_core::llm::{ApiKey, LlmClient, Wire};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_core::village::DEFAULT_MAX_RESPONSE_BYTES;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;

use crate::llm_support::{FIRST, KEY, task_request, template};

const MARK: &str = "BODY-MARKER-7d1e";

#[tokio::test]
async fn an_answer_over_the_template_cap_is_refused_without_its_body() {
    let client = LlmClient::new().unwrap();
    let wire = Wire::OpenAiCompat;
    // A declared length over the cap, and a chunked stream with none: both are refused.
    let whole = wire_replies::text(wire, &format!("{MARK}{}", "x".repeat(10_000)), FIRST);
    let streamed = wire_replies::text(wire, &format!("{MARK}FILL"), FIRST).fill("FILL", 1 << 20);
    for reply in [whole, streamed] {
        let stub = StubServer::start(vec![reply.clone(), reply.clone(), reply]).await;
        let mut t = template(wire, stub.base_url());
        t.max_response_bytes = Some(4_096);
        t.max_retries = 3;
        let ep = endpoint_of(&t, Some(ApiKey::new(KEY))).unwrap();
        let err = client.chat(&ep, &task_request()).await.unwrap_err();
        assert_eq!(err.code(), "LLM_RESPONSE_TOO_LARGE", "{err}");
        let text = err.to_string();
        assert!(text.contains("4096"), "names the cap: {text}");
        assert!(
            !text.contains(MARK) && !text.contains("xxxx"),
            "no body: {text}"
        );
        assert_eq!(stub.requests().len(), 1, "not retried");
    }
}

#[tokio::test]
async fn an_answer_under_the_cap_passes_and_the_default_cap_is_16_mib() {
    let client = LlmClient::new().unwrap();
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::text(wire, "FILL", FIRST).fill("FILL", 60_000),
    ])
    .await;
    let mut t = template(wire, stub.base_url());
    t.max_response_bytes = Some(64 * 1024);
    let ep = endpoint_of(&t, Some(ApiKey::new(KEY))).unwrap();
    let answer = client.chat(&ep, &task_request()).await.unwrap();
    assert_eq!(answer.text().unwrap().len(), 60_000);
    let plain = endpoint_of(&template(wire, stub.base_url()), None);
    let plain =
        plain.or_else(|_| endpoint_of(&template(wire, stub.base_url()), Some(ApiKey::new(KEY))));
    assert_eq!(
        plain.unwrap().max_response_bytes,
        DEFAULT_MAX_RESPONSE_BYTES
    );
    assert_eq!(DEFAULT_MAX_RESPONSE_BYTES, 16 * 1024 * 1024);
}

#[tokio::test]
async fn a_huge_error_body_is_read_only_up_to_its_small_cap() {
    let client = LlmClient::new().unwrap();
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::error(wire, 400, "FILL", None).fill("FILL", 50 << 20),
    ])
    .await;
    let ep = endpoint_of(&template(wire, stub.base_url()), Some(ApiKey::new(KEY))).unwrap();
    let err = client.chat(&ep, &task_request()).await.unwrap_err();
    assert_eq!(err.code(), "LLM_HTTP", "{err}");
    assert!(
        err.to_string().len() < 2_000,
        "short: {} chars",
        err.to_string().len()
    );
}

#[tokio::test]
async fn bad_endpoints_are_refused_before_anything_is_sent() {
    let stub = StubServer::start(vec![]).await;
    let wire = Wire::OpenAiCompat;
    let key = || Some(ApiKey::new(KEY));
    let mut t = template(wire, stub.base_url());
    for (url, code) in [
        ("not a url", "ENDPOINT_INVALID"),
        ("file:///etc/passwd", "ENDPOINT_INVALID"),
        ("http://192.0.2.10:8080/v1", "ENDPOINT_INSECURE"),
    ] {
        t.base_url = url.into();
        let err = endpoint_of(&t, key()).unwrap_err();
        assert_eq!(err.code(), code, "{url}");
        assert!(
            err.to_string().contains("stub"),
            "names the template: {err}"
        );
    }
    t.allow_insecure_http = true;
    assert!(endpoint_of(&t, key()).is_ok(), "allowed on purpose");

    // Defence in depth: an endpoint built past the template rule still keeps the key home.
    let client = LlmClient::new().unwrap();
    let mut ep = endpoint_of(&template(wire, stub.base_url()), key()).unwrap();
    ep.base_url = "http://192.0.2.10:8080/v1".into();
    let err = client.chat(&ep, &task_request()).await.unwrap_err();
    assert_eq!(err.code(), "ENDPOINT_INSECURE", "{err}");
    assert!(!err.to_string().contains(KEY));
    ep.base_url = format!("{}/v1", stub.base_url());
    ep.api_key = None;
    ep.allow_insecure_http = false;
    assert!(stub.requests().is_empty());
}

/// A redirect is never followed: it would carry the key headers (`x-api-key`,
/// `x-goog-api-key`) and the conversation to another host.
#[tokio::test]
async fn a_redirect_is_not_followed_with_the_key() {
    let client = LlmClient::new().unwrap();
    for wire in [Wire::Anthropic, Wire::Gemini, Wire::OpenAiCompat] {
        let elsewhere = StubServer::start(vec![wire_replies::text(wire, "hijacked", FIRST)]).await;
        let target = format!("{}/v1/steal", elsewhere.base_url());
        let redirect = fuseforks_testkit::stub::StubReply::json(307, &serde_json::json!({}))
            .header("location", &target);
        let stub = StubServer::start(vec![redirect.clone(), redirect.clone(), redirect]).await;
        let mut t = template(wire, stub.base_url());
        t.max_retries = 1;
        let ep = endpoint_of(&t, Some(ApiKey::new(KEY))).unwrap();
        let outcome = client.chat(&ep, &task_request()).await;
        assert!(outcome.is_err(), "{wire:?}: {outcome:?}");
        assert!(
            elsewhere.requests().is_empty(),
            "{wire:?}: the redirect was followed"
        );
    }
}
