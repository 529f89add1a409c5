//! The embedded demo model: an OpenAI-compatible chat-completions server on 127.0.0.1 inside
//! our own process (`POST /v1/chat/completions`, `GET /v1/models` for `check
//! --probe-endpoints`), answering from the script in `script.rs`. The host starts one per
//! `demo` template at boot, on the port of its `baseUrl`, and stops it when the host is
//! dropped. It reads bodies up to [`MAX_BODY_BYTES`], logs one line when it starts, and never
//! leaves loopback.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use fuseforks_core::Coded;
use fuseforks_core::log::LogSink;
use fuseforks_core::village::{Language, Provider, World, demo_port};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::script::{self, DEMO_MARK_EN};

/// The largest request body the demo model reads (a demo conversation is a few KiB).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The longest `--pace-ms` a demo model waits before each answer: well below the demo
/// template's request timeout ([`super::village::DEMO_REQUEST_TIMEOUT_SECS`]), so that a paced
/// answer is never cut by it.
pub const MAX_PACE_MS: u64 = 20_000;
const _: () = assert!(MAX_PACE_MS + 5_000 <= super::village::DEMO_REQUEST_TIMEOUT_SECS * 1000);

/// Why the demo model could not start.
#[derive(Debug, thiserror::Error)]
pub enum DemoModelError {
    /// The port of the template's `baseUrl` cannot be bound.
    #[error("the demo model cannot listen on 127.0.0.1:{port} (template {template}): {reason}")]
    Bind {
        /// The template.
        template: String,
        /// The port.
        port: u16,
        /// The OS's reason (its kind, never a path).
        reason: String,
        /// The OS refused the port for lack of privileges (a port below 1024).
        denied: bool,
    },
    /// Started outside an async runtime.
    #[error("the demo model needs the async runtime it was started outside of")]
    NoRuntime,
}

impl Coded for DemoModelError {
    fn code(&self) -> &'static str {
        match self {
            Self::Bind { .. } => "DEMO_PORT_UNAVAILABLE",
            Self::NoRuntime => "DEMO_MODEL_NO_RUNTIME",
        }
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        match self {
            Self::Bind {
                port, denied: true, ..
            } => Some(format!(
                "port {port} needs privileges this user lacks: use a port of 1024 or above (`demo --port N`, or no --port for a free one; in world.json, the demo template's baseUrl)"
            ).into()),
            Self::Bind { port, .. } => Some(format!(
                "stop what holds port {port}, or change the port of the demo template's baseUrl in world.json (`demo --port N` for a new demo)"
            ).into()),
            Self::NoRuntime => None,
        }
    }
}

/// One running demo model; dropping it stops it.
pub struct DemoModel {
    address: SocketAddr,
    pace_ms: Arc<AtomicU64>,
    stop: CancellationToken,
    server: JoinHandle<()>,
}

impl DemoModel {
    /// Starts a demo model on `127.0.0.1:port` (0: a free port), answering in `language`.
    /// Must run inside a tokio runtime.
    pub fn start(
        template: &str,
        port: u16,
        language: Language,
        log: &Arc<dyn LogSink>,
    ) -> Result<Self, DemoModelError> {
        let runtime =
            tokio::runtime::Handle::try_current().map_err(|_| DemoModelError::NoRuntime)?;
        let bind_error = |e: std::io::Error| bind_error(template, port, &e);
        let listener = reserve(template, port)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let address = listener.local_addr().map_err(bind_error)?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(bind_error)?
        };
        let state = Arc::new(Script {
            language,
            pace_ms: Arc::new(AtomicU64::new(0)),
            serial: AtomicU64::new(0),
        });
        let pace_ms = Arc::clone(&state.pace_ms);
        let router = axum::Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/models", get(models))
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            .with_state(state);
        let stop = CancellationToken::new();
        let stopping = stop.clone();
        let server_log = Arc::clone(log);
        let server = runtime.spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async move { stopping.cancelled().await })
                .await;
            if let Err(e) = served {
                server_log.line(&format!("demo model: stopped: {}", e.kind()));
            }
        });
        log.line(&format!(
            "demo model: template={template} listening={address} ({DEMO_MARK_EN})"
        ));
        Ok(Self {
            address,
            pace_ms,
            stop,
            server,
        })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Waits this long before each answer (`demo --pace-ms`), at most [`MAX_PACE_MS`].
    pub fn set_pace(&self, pace: Duration) {
        let ms = u64::try_from(pace.as_millis()).map_or(MAX_PACE_MS, |ms| ms.min(MAX_PACE_MS));
        self.pace_ms.store(ms, Ordering::Relaxed);
    }
}

/// Binds `127.0.0.1:port` for the demo model of `template` (0: a free port). `demo` calls it
/// before it writes anything, to refuse a port that cannot be bound up front.
pub fn reserve(template: &str, port: u16) -> Result<std::net::TcpListener, DemoModelError> {
    std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .map_err(|e| bind_error(template, port, &e))
}

fn bind_error(template: &str, port: u16, e: &std::io::Error) -> DemoModelError {
    DemoModelError::Bind {
        template: template.to_owned(),
        port,
        reason: e.kind().to_string(),
        denied: e.kind() == std::io::ErrorKind::PermissionDenied,
    }
}

impl Drop for DemoModel {
    fn drop(&mut self) {
        self.stop.cancel();
        self.server.abort();
    }
}

/// Starts a demo model for each `demo` template of `world` (one per port), for the host's
/// boot. A template whose `baseUrl` the core's demo rule (`demo_port`, also the endpoint rule
/// of `check` and of the LLM client) refuses is skipped: its turns fail with
/// `ENDPOINT_INVALID`, as any template's would.
pub fn start_for_world(
    world: &World,
    language: Language,
    log: &Arc<dyn LogSink>,
) -> Result<Vec<DemoModel>, DemoModelError> {
    let mut models: Vec<DemoModel> = Vec::new();
    for template in world
        .model_templates
        .iter()
        .filter(|t| t.provider() == Provider::Demo)
    {
        let Ok(port) = demo_port(&template.base_url) else {
            continue;
        };
        if models.iter().any(|m| m.address.port() == port) {
            continue;
        }
        models.push(DemoModel::start(template.id.as_str(), port, language, log)?);
    }
    Ok(models)
}

/// What the handlers share.
struct Script {
    language: Language,
    pace_ms: Arc<AtomicU64>,
    serial: AtomicU64,
}

/// `POST /v1/chat/completions`: the script's next step.
async fn chat(State(script): State<Arc<Script>>, body: axum::body::Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => {
            let error = json!({"error": {"message": "the demo model reads a JSON chat-completions body", "type": "invalid_request_error"}});
            return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
        }
    };
    let pace = script.pace_ms.load(Ordering::Relaxed);
    if pace > 0 {
        tokio::time::sleep(Duration::from_millis(pace)).await;
    }
    let serial = script.serial.fetch_add(1, Ordering::Relaxed) + 1;
    let step = script::next_step(&request, script.language);
    axum::Json(script::completion(
        &step,
        &request,
        body.len(),
        serial,
        script.language,
    ))
    .into_response()
}

/// `GET /v1/models`: the one model, for `check --probe-endpoints`.
async fn models() -> Response {
    axum::Json(json!({"object": "list", "data": [{"id": "demo", "object": "model", "owned_by": DEMO_MARK_EN}]}))
        .into_response()
}
