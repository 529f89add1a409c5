//! The embedded demo model over real HTTP on loopback: a scripted answer with its mark, a body
//! that is not JSON (400), a body over the cap (413, never read whole), the pace.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fuseforks_core::log::LogSink;
use fuseforks_core::village::Language;
use fuseforks_host::demo::model::MAX_BODY_BYTES;
use fuseforks_host::demo::{DEMO_MARK_EN, DemoModel};
use serde_json::json;

/// A sink that drops the lines.
#[derive(Debug)]
struct Quiet;

impl LogSink for Quiet {
    fn line(&self, _line: &str) {}
}

/// One HTTP/1.1 POST on a fresh connection; the status and the body.
fn post(address: SocketAddr, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // A server that refuses early may close before the whole body is sent.
    let _ = stream.write_all(body);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_model_answers_by_script_and_bounds_what_it_reads() {
    let log: Arc<dyn LogSink> = Arc::new(Quiet);
    let model = DemoModel::start("demo", 0, Language::En, &log).unwrap();
    let address = model.address();
    assert!(address.ip().is_loopback());

    let request = json!({"model": "demo", "messages": [{"role": "user", "content": "hi"}]});
    let (status, body) =
        tokio::task::spawn_blocking(move || post(address, request.to_string().as_bytes()))
            .await
            .unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(DEMO_MARK_EN) && body.contains("\"finish_reason\":\"stop\""),
        "{body}"
    );

    let (status, _) = tokio::task::spawn_blocking(move || post(address, b"not json"))
        .await
        .unwrap();
    assert_eq!(status, 400);

    let huge = vec![b' '; MAX_BODY_BYTES + 1];
    let (status, _) = tokio::task::spawn_blocking(move || post(address, &huge))
        .await
        .unwrap();
    assert_eq!(status, 413, "a body over the cap is refused");

    model.set_pace(Duration::from_millis(300));
    let started = Instant::now();
    let (status, _) = tokio::task::spawn_blocking(move || post(address, b"{}"))
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the pace is kept"
    );
    drop(model);
}

#[test]
fn the_longest_pace_stays_below_the_demo_templates_request_timeout() {
    use fuseforks_host::demo::model::MAX_PACE_MS;
    use fuseforks_host::demo::village::{DEMO_REQUEST_TIMEOUT_SECS, demo_template};
    let template = demo_template(4100, Language::En).unwrap();
    assert_eq!(template.request_timeout_secs, DEMO_REQUEST_TIMEOUT_SECS);
    // A paced answer plus the engine's own time must fit in one request's timeout.
    assert!(MAX_PACE_MS + 5_000 <= template.request_timeout_secs * 1000);
}

#[test]
fn a_port_refused_for_privileges_says_so() {
    use fuseforks_core::Coded;
    use fuseforks_host::demo::DemoModelError;
    let denied = DemoModelError::Bind {
        template: "demo".into(),
        port: 81,
        reason: "permission denied".into(),
        denied: true,
    };
    let fix = denied.fix().unwrap().change;
    assert!(
        fix.contains("needs privileges") && fix.contains("1024"),
        "{fix}"
    );
    assert!(!fix.contains("stop what holds"), "{fix}");
    let held = DemoModelError::Bind {
        template: "demo".into(),
        port: 4100,
        reason: "address in use".into(),
        denied: false,
    };
    assert!(
        held.fix()
            .unwrap()
            .change
            .contains("stop what holds port 4100")
    );
}
