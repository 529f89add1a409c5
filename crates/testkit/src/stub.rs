//! A loopback stub server for LLM wires: answers POSTs on 127.0.0.1 (port 0) from a script of
//! replies (status, headers, JSON body, delay, or a body padded to any size and streamed in
//! chunks without being built in memory), and captures every request for assertions.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct StubReply {
    /// HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
    /// Wait before answering.
    pub delay: Duration,
    /// `(marker, bytes)`: the first `marker` in `body` is replaced by that many `a`s, streamed
    /// in 1 MiB chunks (no `content-length`).
    pub fill: Option<(String, u64)>,
    /// `(at, end)`: only the first `at` bytes of the body are sent, then the connection breaks
    /// or stalls for ever.
    pub stop: Option<(usize, StreamEnd)>,
}

/// How a body sent in part ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The connection breaks (the body's framing is never finished).
    Break,
    /// Nothing more comes, ever.
    Stall,
    /// The rest of the body comes after a pause (a stream that has begun and takes its time).
    Resume(Duration),
}

/// One chunk of a padded body.
const FILL_CHUNK: usize = 1 << 20;

impl StubReply {
    /// A JSON reply.
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: body.to_string().into_bytes(),
            delay: Duration::ZERO,
            fill: None,
            stop: None,
        }
    }

    /// A 200 reply with a wire fixture's body from `fixtures/wire/` (bytes as written there).
    pub fn fixture(relative: &str) -> Self {
        let body = crate::fixture_bytes(&format!("wire/{relative}"));
        Self {
            status: 200,
            headers: Vec::new(),
            body,
            delay: Duration::ZERO,
            fill: None,
            stop: None,
        }
    }

    /// A 200 `text/event-stream` reply whose body is a wire fixture's `.sse` file from
    /// `fixtures/wire/`, framed as that wire's server frames it (bytes as written there).
    pub fn sse_fixture(relative: &str) -> Self {
        let mut reply = Self::fixture(relative);
        reply
            .headers
            .push(("content-type".into(), "text/event-stream".into()));
        reply
    }

    /// A 200 stream of Server-Sent Events, one `data:` event per chunk, then `[DONE]`.
    pub fn sse(chunks: &[Value]) -> Self {
        let mut body = String::new();
        for chunk in chunks {
            body.push_str(&format!("data: {chunk}\n\n"));
        }
        body.push_str("data: [DONE]\n\n");
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into_bytes(),
            delay: Duration::ZERO,
            fill: None,
            stop: None,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Answers only after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Replaces the first `marker` in the body by `bytes` ASCII `a`s, streamed in chunks: a
    /// 100 MB answer costs the stub 1 MiB of memory. The marker must sit inside a JSON string.
    pub fn fill(mut self, marker: &str, bytes: u64) -> Self {
        self.fill = Some((marker.to_owned(), bytes));
        self
    }

    /// Sends only the first `at` bytes of the body, then ends as `end` says.
    pub fn stop_at(mut self, at: usize, end: StreamEnd) -> Self {
        self.stop = Some((at, end));
        self
    }

    /// Sets the status.
    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}

/// A request the stub received.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Path and query.
    pub path: String,
    /// Headers, names lower-case.
    pub headers: Vec<(String, String)>,
    /// The body as sent.
    pub raw_body: Vec<u8>,
    /// The body as JSON (`Null` if it was not JSON).
    pub body: Value,
    /// When it arrived.
    pub at: Instant,
}

impl Captured {
    /// The value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<StubReply>>,
    captured: Mutex<Vec<Captured>>,
    /// Replies sent so far (a delayed one counts once its delay is over).
    answered: std::sync::atomic::AtomicUsize,
}

/// A running stub; stops when dropped.
pub struct StubServer {
    base_url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl StubServer {
    /// Starts a stub on 127.0.0.1 with a random port, answering with `script` in order (then
    /// 500 "script exhausted").
    pub async fn start(script: Vec<StubReply>) -> Self {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            captured: Mutex::default(),
            answered: std::sync::atomic::AtomicUsize::new(0),
        });
        let app = Router::new().fallback(answer).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("bind a loopback port: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("local address: {e}"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            base_url: format!("http://{addr}"),
            shared,
            task,
        }
    }

    /// `http://127.0.0.1:PORT` (append the API prefix a template would have, e.g. `/v1`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Captured> {
        relock(&self.shared.captured).clone()
    }

    /// Waits up to 20 s until the stub has received `n` requests (a delayed reply is counted
    /// when its request arrives, before it answers).
    pub async fn wait_requests(&self, n: usize) {
        crate::eventually(
            format_args!("the stub to receive {n} requests"),
            crate::DEADLINE,
            || self.requests().len() >= n,
        )
        .await;
    }

    /// Waits until the stub has sent `n` scripted replies (a delayed one once its delay is
    /// over): the moment a client has its answer, for a test of what the client does next.
    pub async fn wait_answers(&self, n: usize) {
        let answered = || {
            self.shared
                .answered
                .load(std::sync::atomic::Ordering::SeqCst)
        };
        crate::eventually(
            format_args!("the stub to send {n} replies"),
            crate::DEADLINE,
            || answered() >= n,
        )
        .await;
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, replies: impl IntoIterator<Item = StubReply>) {
        relock(&self.shared.script).extend(replies);
    }
}

/// The guard of `lock`, recovered when a test thread panicked while holding it (what it held
/// is still the stub's record; the workspace's one lock rule).
fn relock<T>(lock: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drop for StubServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let captured = Captured {
        path: uri
            .path_and_query()
            .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned()),
        headers: headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_ascii_lowercase(),
                    v.to_str().unwrap_or_default().to_owned(),
                )
            })
            .collect(),
        raw_body: body.to_vec(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        at: Instant::now(),
    };
    relock(&shared.captured).push(captured);
    let reply = relock(&shared.script).pop_front();
    let Some(reply) = reply else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"error":{"message":"stub script exhausted"}}"#,
        )
            .into_response();
    };
    if !reply.delay.is_zero() {
        // tidy: stub latency (a slow answer, as scripted)
        tokio::time::sleep(reply.delay).await;
    }
    shared
        .answered
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let body = match (&reply.fill, reply.stop) {
        (_, Some((at, end))) => stopped(&reply.body, at, end),
        (None, None) => axum::body::Body::from(reply.body),
        (Some((marker, bytes)), None) => padded(&reply.body, marker, *bytes),
    };
    let mut response = Response::new(body);
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        axum::http::HeaderValue::from_static("application/json"),
    );
    for (name, value) in reply.headers {
        if let (Ok(n), Ok(v)) = (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            axum::http::HeaderValue::from_str(&value),
        ) {
            headers.insert(n, v);
        }
    }
    response
}

/// The first `at` bytes of `body`, then a broken connection, nothing for ever, or the rest
/// after a pause.
fn stopped(body: &[u8], at: usize, end: StreamEnd) -> axum::body::Body {
    use futures_util::StreamExt;
    let head = Bytes::copy_from_slice(&body[..at.min(body.len())]);
    let first = futures_util::stream::once(async move { Ok::<Bytes, std::io::Error>(head) });
    if let StreamEnd::Resume(pause) = end {
        let tail = Bytes::copy_from_slice(&body[at.min(body.len())..]);
        let rest = futures_util::stream::once(async move {
            // tidy: stub latency (a stream that takes its time, as scripted)
            tokio::time::sleep(pause).await;
            Ok::<Bytes, std::io::Error>(tail)
        });
        return axum::body::Body::from_stream(first.chain(rest));
    }
    let rest = futures_util::stream::once(async move {
        // Let the client read the head before the end comes.
        // tidy: stub latency
        tokio::time::sleep(Duration::from_millis(50)).await;
        if end == StreamEnd::Stall {
            std::future::pending::<()>().await;
        }
        Err(std::io::Error::other("the stub breaks the connection"))
    });
    axum::body::Body::from_stream(first.chain(rest))
}

/// `body` with `marker` replaced by `bytes` `a`s, as a stream of shared 1 MiB chunks.
fn padded(body: &[u8], marker: &str, bytes: u64) -> axum::body::Body {
    let at = body
        .windows(marker.len())
        .position(|w| w == marker.as_bytes())
        .unwrap_or_else(|| panic!("fill marker {marker:?} is not in the body"));
    let head = Bytes::copy_from_slice(&body[..at]);
    let tail = Bytes::copy_from_slice(&body[at + marker.len()..]);
    let chunk = Bytes::from(vec![b'a'; FILL_CHUNK]);
    let full = bytes / FILL_CHUNK as u64;
    let rest = usize::try_from(bytes % FILL_CHUNK as u64).unwrap_or(0);
    let middle = (0..full)
        .map(move |_| chunk.clone())
        .chain(std::iter::once(Bytes::from(vec![b'a'; rest])));
    let parts = std::iter::once(head)
        .chain(middle)
        .chain(std::iter::once(tail))
        .map(Ok::<Bytes, std::convert::Infallible>);
    axum::body::Body::from_stream(futures_util::stream::iter(parts))
}
