//! The endpoint probe over real loopback HTTP: the request per wire (path, method, auth
//! header), each outcome (ok, 401, a bad key as 400, another status) and each network class
//! (connection refused, TLS, timeout, DNS).

use std::time::Duration;

use fuseforks_core::llm::{ApiKey, LlmClient, LlmError, Wire};
use fuseforks_core::llm::{NetworkKind, ProbeOutcome, probe};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_testkit::stub::{StubReply, StubServer};
use serde_json::json;

use crate::llm_support::{KEY, endpoint, template};

fn http() -> reqwest::Client {
    LlmClient::http_client().unwrap()
}

fn list() -> StubReply {
    StubReply::json(
        200,
        &json!({"object": "list", "data": [{"id": "stub-model"}]}),
    )
}

#[tokio::test]
async fn each_wire_asks_its_cheap_request_with_its_auth() {
    let cases = [
        (Wire::OpenAiCompat, "GET", "/v1/models", "authorization"),
        (Wire::OpenAiResponses, "GET", "/v1/models", "authorization"),
        (Wire::XaiResponses, "GET", "/v1/models", "authorization"),
        (Wire::MetaResponses, "GET", "/v1/models", "authorization"),
        (Wire::Anthropic, "GET", "/v1/models?limit=1", "x-api-key"),
        (
            Wire::Gemini,
            "GET",
            "/v1beta/models?pageSize=1",
            "x-goog-api-key",
        ),
        (Wire::OllamaNative, "GET", "/api/tags", ""),
        (
            Wire::PerplexityResponses,
            "POST",
            "/v1/responses",
            "authorization",
        ),
    ];
    for (wire, method, path, auth) in cases {
        let stub = StubServer::start(vec![list()]).await;
        let report = probe(&http(), &endpoint(wire, stub.base_url()), "stub-model")
            .await
            .unwrap();
        assert_eq!(report.outcome, ProbeOutcome::Ok { status: 200 }, "{wire:?}");
        let bare = path.split('?').next().unwrap();
        assert_eq!(report.request, format!("{method} {bare}"), "{wire:?}");
        assert!(report.host.starts_with("127.0.0.1:"), "{}", report.host);
        let requests = stub.requests();
        assert_eq!(requests.len(), 1, "one request, {wire:?}");
        assert_eq!(requests[0].path, path, "{wire:?}");
        if auth.is_empty() {
            assert!(requests[0].header("authorization").is_none());
        } else {
            assert!(requests[0].header(auth).unwrap().contains(KEY), "{wire:?}");
        }
        if wire == Wire::PerplexityResponses {
            let body = &requests[0].body;
            assert_eq!(body["max_output_tokens"], 1, "a 1-token call: {body}");
        }
        if wire == Wire::Anthropic {
            assert!(requests[0].header("anthropic-version").is_some());
        }
    }
}

#[tokio::test]
async fn statuses_are_classified_without_retrying() {
    let bad_key_400 = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT", "details": [{"reason": "API_KEY_INVALID"}]}});
    let cases = [
        (
            Wire::OpenAiCompat,
            StubReply::json(
                401,
                &json!({"error": {"message": format!("bad key {KEY}")}}),
            ),
            ProbeOutcome::AuthFailed { status: 401 },
        ),
        (
            Wire::Anthropic,
            StubReply::json(403, &json!({"type": "error"})),
            ProbeOutcome::AuthFailed { status: 403 },
        ),
        (
            Wire::Gemini,
            StubReply::json(400, &bad_key_400),
            ProbeOutcome::AuthFailed { status: 400 },
        ),
        (
            Wire::OpenAiCompat,
            // (404, 405 and 501 mean "no models list": the probe then makes a 1-token call,
            // `cli/tests/it/init_probe.rs`.)
            StubReply::json(422, &json!({"error": "unprocessable"})),
            ProbeOutcome::Status { status: 422 },
        ),
        (
            Wire::OpenAiCompat,
            StubReply::json(503, &json!({})),
            ProbeOutcome::Status { status: 503 },
        ),
    ];
    for (wire, reply, expected) in cases {
        let stub = StubServer::start(vec![reply]).await;
        let report = probe(&http(), &endpoint(wire, stub.base_url()), "m")
            .await
            .unwrap();
        assert_eq!(report.outcome, expected, "{wire:?}");
        assert_eq!(stub.requests().len(), 1, "never retried");
        assert!(!format!("{report:?}").contains(KEY));
    }
}

#[tokio::test]
async fn network_failures_name_their_class() {
    // Nothing listens: a port bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = endpoint(Wire::OpenAiCompat, &format!("http://127.0.0.1:{port}"));
    let report = probe(&http(), &closed, "m").await.unwrap();
    assert_eq!(
        report.outcome,
        ProbeOutcome::Unreachable {
            class: NetworkKind::ConnectionRefused
        }
    );

    // https to a plain-http server: the handshake fails.
    let stub = StubServer::start(vec![list()]).await;
    let tls = stub.base_url().replace("http://", "https://");
    let report = probe(&http(), &endpoint(Wire::OpenAiCompat, &tls), "m")
        .await
        .unwrap();
    assert_eq!(
        report.outcome,
        ProbeOutcome::Unreachable {
            class: NetworkKind::Tls
        }
    );

    // No answer within the template's timeout.
    let slow = StubServer::start(vec![list().after(Duration::from_secs(5))]).await;
    let mut t = template(Wire::OpenAiCompat, slow.base_url());
    t.request_timeout_secs = 1;
    let report = probe(
        &http(),
        &endpoint_of(&t, Some(ApiKey::new(KEY))).unwrap(),
        "m",
    )
    .await
    .unwrap();
    assert_eq!(
        report.outcome,
        ProbeOutcome::Unreachable {
            class: NetworkKind::Timeout
        }
    );
    assert!(report.latency < Duration::from_secs(3), "{report:?}");

    // A name that cannot resolve (`.invalid` is reserved).
    let mut t = template(Wire::OpenAiCompat, "https://fuseforks-probe.invalid");
    t.request_timeout_secs = 10;
    let report = probe(
        &http(),
        &endpoint_of(&t, Some(ApiKey::new(KEY))).unwrap(),
        "m",
    )
    .await
    .unwrap();
    assert_eq!(
        report.outcome,
        ProbeOutcome::Unreachable {
            class: NetworkKind::Dns
        }
    );
}

#[tokio::test]
async fn the_endpoint_rule_still_refuses_plain_http_to_another_host() {
    let mut e = endpoint(Wire::OpenAiCompat, "http://127.0.0.1:9");
    e.base_url = "http://192.0.2.1/v1".into();
    let err = probe(&http(), &e, "m").await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Endpoint { problem, .. } if problem.code() == "ENDPOINT_INSECURE"),
        "{err}"
    );
}
