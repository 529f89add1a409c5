//! The wire fixtures of `crates/testkit/fixtures/wire/` replayed by the stub over HTTP through
//! the client: each answer the client returns is what the fixture implies (the cases are the
//! adapters' own, `crates/core/src/llm/adapters/tests/wire_cases.rs`, where the decoders read
//! the same bodies directly). With `FUSEFORKS_SHARED` set, the decoders also read every JSON
//! body of `$FUSEFORKS_SHARED/reference/wire-fixtures/` (`adapters/tests/shared.rs`).

use fuseforks_core::llm::{self, LlmClient, RetryClass, Wire};
use fuseforks_testkit::stub::{StubReply, StubServer};

use crate::llm_support::{endpoint, task_request};

#[path = "../../src/llm/adapters/tests/wire_cases.rs"]
mod wire_cases;
use wire_cases::success_cases;

#[tokio::test]
async fn the_stub_replays_the_fixture_bodies_through_the_client() {
    let client = LlmClient::new().unwrap();
    for (file, wire, check) in success_cases() {
        let stub = StubServer::start(vec![StubReply::fixture(file)]).await;
        let mut request = task_request();
        request.tools.clear();
        let response = client
            .chat(&endpoint(wire, stub.base_url()), &request)
            .await
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        check(&response);
    }
    let stub = StubServer::start(vec![
        StubReply::fixture("openai-responses/error-quota.json").status(429),
    ])
    .await;
    let err = client
        .chat(
            &endpoint(Wire::OpenAiResponses, stub.base_url()),
            &task_request(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class(),
        Some(RetryClass::Billing),
        "insufficient_quota is never retried"
    );
    assert_eq!(stub.requests().len(), 1);
}
