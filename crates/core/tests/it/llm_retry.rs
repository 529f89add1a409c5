//! Retries and cancellation over real loopback HTTP: a 429 with `Retry-After: 1` waits at
//! least a second and retries once; 401 never retries; a cancel during the wait returns at
//! once; an abort drops a request in flight and invents no usage; a hint over 60 s stops.

use std::time::{Duration, Instant};

use fuseforks_core::llm::{ChatRequest, InFlight, LlmClient, RetryClass, StopReason, Wire};
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies;

use crate::llm_support::{FIRST, KEY, endpoint, task_request};

fn plain_request() -> ChatRequest {
    let mut r = task_request();
    r.tools.clear();
    r
}

#[tokio::test]
async fn a_429_with_retry_after_waits_and_retries_once() {
    let logs = fuseforks_testkit::log_capture::capture();
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::error(wire, 429, "Rate limit reached", Some("1")),
        wire_replies::text(wire, "ok", FIRST),
    ])
    .await;
    let response = LlmClient::new()
        .unwrap()
        .chat(&endpoint(wire, stub.base_url()), &plain_request())
        .await
        .unwrap();
    assert_eq!(response.text().as_deref(), Some("ok"));
    let requests = stub.requests();
    assert_eq!(requests.len(), 2, "exactly one retry");
    let waited = requests[1].at - requests[0].at;
    assert!(waited >= Duration::from_secs(1), "waited {waited:?}");
    assert!(waited < Duration::from_secs(3), "waited {waited:?}");

    // One `llm retry:` line, with counts and codes only.
    let retries: Vec<String> = logs
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("llm retry:"))
        .collect();
    assert_eq!(retries.len(), 1, "{retries:?}");
    let line = &retries[0];
    for part in [
        "model=stub-model",
        "attempt=1/3",
        "status=429",
        "class=rate_limit",
        "code=rate_limit_exceeded",
        "hint=1000ms",
        "src=header",
    ] {
        assert!(line.contains(part), "{line}");
    }
    assert!(
        !line.contains("Rate limit reached") && !line.contains(KEY),
        "no bodies or keys: {line}"
    );
}

#[tokio::test]
async fn gemini_body_hints_and_overload_are_retried() {
    let stub = StubServer::start(vec![
        wire_replies::error(Wire::Gemini, 503, "The model is overloaded.", None),
        wire_replies::error(Wire::Anthropic, 529, "Overloaded", None).status(503),
        wire_replies::text(Wire::Gemini, "ok", FIRST),
    ])
    .await;
    let response = LlmClient::new()
        .unwrap()
        .chat(&endpoint(Wire::Gemini, stub.base_url()), &plain_request())
        .await
        .unwrap();
    assert_eq!(response.text().as_deref(), Some("ok"));
    assert_eq!(stub.requests().len(), 3);
}

#[tokio::test]
async fn errors_that_cannot_succeed_are_not_retried() {
    let cases = [
        (Wire::OpenAiCompat, 401, RetryClass::Auth),
        (Wire::Anthropic, 401, RetryClass::Auth),
        (Wire::OpenAiCompat, 408, RetryClass::ClientError),
        (Wire::Anthropic, 400, RetryClass::ClientError),
    ];
    for (wire, status, class) in cases {
        let stub = StubServer::start(vec![
            wire_replies::error(wire, status, "no", None),
            wire_replies::text(wire, "never", FIRST),
        ])
        .await;
        let err = LlmClient::new()
            .unwrap()
            .chat(&endpoint(wire, stub.base_url()), &plain_request())
            .await
            .unwrap_err();
        assert_eq!(err.class(), Some(class), "{wire:?} {status}");
        assert_eq!(err.code(), "LLM_HTTP");
        assert_eq!(stub.requests().len(), 1, "{wire:?} {status}: no retry");
    }
    // Gemini and xAI report a bad key as 400.
    let gemini = StubReply::json(
        400,
        &serde_json::json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT", "details": [{"reason": "API_KEY_INVALID"}]}}),
    );
    let stub = StubServer::start(vec![gemini]).await;
    let err = LlmClient::new()
        .unwrap()
        .chat(&endpoint(Wire::Gemini, stub.base_url()), &plain_request())
        .await
        .unwrap_err();
    assert_eq!(err.class(), Some(RetryClass::Auth));
    let xai = StubReply::json(
        400,
        &serde_json::json!({"code": "Client specified an invalid argument", "error": "Incorrect API key provided: sk***ef."}),
    );
    let stub = StubServer::start(vec![xai]).await;
    let err = LlmClient::new()
        .unwrap()
        .chat(
            &endpoint(Wire::XaiResponses, stub.base_url()),
            &plain_request(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.class(), Some(RetryClass::Auth));
}

#[tokio::test]
async fn the_api_key_never_reaches_an_error() {
    let wire = Wire::OpenAiCompat;
    let echo = wire_replies::error(
        wire,
        401,
        &format!("Incorrect API key provided: {KEY}"),
        None,
    );
    let stub = StubServer::start(vec![echo]).await;
    let err = LlmClient::new()
        .unwrap()
        .chat(&endpoint(wire, stub.base_url()), &plain_request())
        .await
        .unwrap_err();
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(shown.contains("<api key>"), "{shown}");
}

/// Cancels `request` after `ms` (virtual time in the paused tests).
fn cancel_after(request: &ChatRequest, ms: u64) -> tokio::task::JoinHandle<()> {
    let cancel = request.cancel.clone();
    tokio::spawn(async move {
        // tidy: paused time (a moment on the virtual clock, not a wait)
        tokio::time::sleep(Duration::from_millis(ms)).await;
        cancel.cancel();
    })
}

// Paused time: the stub's delay and the test's sleeps are virtual, so the order is exact.
#[tokio::test(start_paused = true)]
async fn a_cancel_during_the_wait_returns_at_once() {
    let wire = Wire::Anthropic;
    let stub = StubServer::start(vec![
        wire_replies::error(wire, 429, "slow down", Some("30")),
        wire_replies::text(wire, "late", FIRST),
    ])
    .await;
    let request = plain_request();
    let started = tokio::time::Instant::now();
    let canceller = cancel_after(&request, 300);
    let response = LlmClient::new()
        .unwrap()
        .chat(&endpoint(wire, stub.base_url()), &request)
        .await
        .unwrap();
    canceller.await.unwrap();
    assert_eq!(response.stop, StopReason::Aborted);
    assert_eq!(response.usage, None, "no usage is invented");
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(300),
        "back at the cancel, not after the 30 s wait"
    );
    assert_eq!(
        stub.requests().len(),
        1,
        "no second attempt after the cancel"
    );
}

// Paused time: the stub's delay and the test's sleeps are virtual, so the order is exact.
#[tokio::test(start_paused = true)]
async fn abort_drops_the_request_in_flight_and_finish_waits_for_it() {
    let wire = Wire::OpenAiResponses;
    let slow = || wire_replies::text(wire, "slow answer", FIRST).after(Duration::from_secs(3));
    let stub = StubServer::start(vec![slow(), slow()]).await;
    let client = LlmClient::new().unwrap();

    let mut abort = plain_request();
    abort.in_flight = InFlight::Abort;
    cancel_after(&abort, 200);
    let started = tokio::time::Instant::now();
    let response = client
        .chat(&endpoint(wire, stub.base_url()), &abort)
        .await
        .unwrap();
    assert_eq!((response.stop, response.usage), (StopReason::Aborted, None));
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(200),
        "back at the cancel, not after the 3 s answer"
    );

    // The default lets a paid call finish so its usage is recorded.
    let finish = plain_request();
    cancel_after(&finish, 200);
    let started = tokio::time::Instant::now();
    let response = client
        .chat(&endpoint(wire, stub.base_url()), &finish)
        .await
        .unwrap();
    assert_eq!(response.text().as_deref(), Some("slow answer"));
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "it waited for the answer"
    );
    assert!(response.usage.is_some());
}

#[tokio::test]
async fn a_hint_over_sixty_seconds_stops_at_once() {
    let wire = Wire::Gemini;
    let stub = StubServer::start(vec![
        wire_replies::error(wire, 429, "quota", Some("120")),
        wire_replies::text(wire, "never", FIRST),
    ])
    .await;
    let started = Instant::now();
    let err = LlmClient::new()
        .unwrap()
        .chat(&endpoint(wire, stub.base_url()), &plain_request())
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(err.class(), Some(RetryClass::RateLimit));
    assert!(err.to_string().contains("120 s"), "{err}");
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn a_dead_endpoint_is_a_network_error_after_every_attempt() {
    // Bind and drop a port so that nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut ep = endpoint(Wire::OpenAiCompat, &format!("http://127.0.0.1:{port}"));
    ep.max_attempts = 2;
    let err = LlmClient::new()
        .unwrap()
        .chat(&ep, &plain_request())
        .await
        .unwrap_err();
    assert_eq!(err.class(), Some(RetryClass::Network));
    assert_eq!(
        err.network_kind(),
        Some(fuseforks_core::llm::NetworkKind::ConnectionRefused)
    );
    assert_eq!(err.failure_class(), Some("connection_refused"));
    assert_eq!(err.status(), None);
}

#[tokio::test]
async fn a_host_that_does_not_resolve_is_a_dns_failure() {
    // `.invalid` never resolves (RFC 6761).
    let mut ep = endpoint(Wire::OpenAiCompat, "https://no-such-host.invalid");
    ep.max_attempts = 1;
    let err = LlmClient::new()
        .unwrap()
        .chat(&ep, &plain_request())
        .await
        .unwrap_err();
    assert_eq!(
        err.network_kind(),
        Some(fuseforks_core::llm::NetworkKind::Dns),
        "{err:?}"
    );
}

#[tokio::test]
async fn https_to_a_plain_http_server_is_a_tls_failure() {
    let stub = StubServer::start(vec![]).await;
    let mut ep = endpoint(
        Wire::OpenAiCompat,
        &stub.base_url().replace("http://", "https://"),
    );
    ep.max_attempts = 1;
    let err = LlmClient::new()
        .unwrap()
        .chat(&ep, &plain_request())
        .await
        .unwrap_err();
    assert_eq!(
        err.network_kind(),
        Some(fuseforks_core::llm::NetworkKind::Tls),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_200_that_is_not_json_is_a_decode_failure_and_not_retried() {
    let wire = Wire::OpenAiCompat;
    let mut page = StubReply::json(200, &serde_json::json!(null));
    page.body = b"<!doctype html><title>Welcome</title>".to_vec();
    let stub = StubServer::start(vec![page.clone(), page]).await;
    let err = LlmClient::new()
        .unwrap()
        .chat(&endpoint(wire, stub.base_url()), &plain_request())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LLM_DECODE", "{err}");
    assert!(err.to_string().contains("baseUrl"), "{err}");
    assert!(!err.to_string().contains("Welcome"), "no body: {err}");
    assert_eq!(stub.requests().len(), 1, "not retried");
}
