//! The door: the village as an MCP server (Streamable HTTP through rmcp) on
//! `127.0.0.1:<port>/mcp`, guarded by a loopback-only `Host` check, an `Origin` that is absent or
//! loopback, and a bearer token compared in constant time, offering one tool,
//! `ask_fuseforks {message}`, that goes to the reception. Each MCP session is a conversation of
//! its own; a session DELETE answers 204 (404 for a session the door does not know).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use fuseforks_core::log::{LogSink, VillageLog};
use fuseforks_core::orchestrator::{Conversation, Orchestrator, RequestMode};
use fuseforks_core::village::ShelfStore;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::paths::HostPaths;
use crate::secrets::SecretStore;

/// The door's one tool.
pub const DOOR_TOOL: &str = "ask_fuseforks";
/// How long closing waits for requests in flight before it drops them.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// The largest request body the door reads.
const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Why the door could not open.
#[derive(Debug, thiserror::Error)]
pub enum DoorError {
    /// The token is empty.
    #[error("the door has no token")]
    TokenMissing,
    /// `mcp_server.json` is broken.
    #[error(transparent)]
    Settings(#[from] fuseforks_core::village::VillageError),
    /// The port is taken or cannot be bound.
    #[error("cannot listen on 127.0.0.1:{port}: {reason}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// The OS's reason.
        reason: String,
    },
}

impl DoorError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TokenMissing => "DOOR_TOKEN_MISSING",
            Self::Settings(e) => e.code(),
            Self::Bind { .. } => "DOOR_BIND_FAILED",
        }
    }
}

impl fuseforks_core::Coded for DoorError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        match self {
            Self::TokenMissing => Some("set the secret door_token (FUSEFORKS_SECRET_DOOR_TOKEN) or `token` in mcp_server.json".into()),
            Self::Settings(e) => fuseforks_core::Coded::fix(e),
            Self::Bind { .. } => Some("choose another port (--door-port or `port` in mcp_server.json) or stop what holds it".into()),
        }
    }
}

/// The secret key of the door's token under `serve --door-port`.
pub const DOOR_TOKEN_KEY: &str = "door_token";

/// Which door a boot opens: `serve --door-port` (`port`), or the one of `mcp_server.json` when
/// `open` (the GUI, `serve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DoorAsked {
    /// Open the door per `mcp_server.json`.
    pub open: bool,
    /// Open it on 127.0.0.1:`port` with the secret `door_token` instead.
    pub port: Option<u16>,
}

/// Opens the door the boot was asked for (`build_host` calls it in its order, before the
/// agents start): `serve --door-port N` opens 127.0.0.1:N with the secret `door_token` and
/// never reads `mcp_server.json`; otherwise, when the host may open the door,
/// `mcp_server.json` decides (`enabled`, `port`, `token`). `Ok(None)`: no door.
pub(crate) async fn open_at_boot(
    paths: &HostPaths,
    asked: DoorAsked,
    secrets: &dyn SecretStore,
    orchestrator: &Orchestrator,
    log: &Arc<VillageLog>,
) -> Result<Option<Door>, DoorError> {
    let log: Arc<dyn LogSink> = log.clone();
    let orchestrator = orchestrator.clone();
    if let Some(port) = asked.port {
        let token = secrets
            .get(DOOR_TOKEN_KEY)
            .ok()
            .flatten()
            .ok_or(DoorError::TokenMissing)?;
        return Door::open(orchestrator, port, &token, log).await.map(Some);
    }
    if !asked.open {
        return Ok(None);
    }
    let settings = ShelfStore::new(paths.data_dir()).load_door()?.value;
    if !settings.enabled {
        return Ok(None);
    }
    let token = settings.token.ok_or(DoorError::TokenMissing)?;
    Door::open(orchestrator, settings.port, &token, log)
        .await
        .map(Some)
}

/// An open door. Close it with [`Door::close`] before the agents stop.
pub struct Door {
    address: SocketAddr,
    cancel: CancellationToken,
    server: JoinHandle<()>,
    log: Arc<dyn LogSink>,
}

impl Door {
    /// Opens the door on `127.0.0.1:port` (port 0 takes a free one) and writes the
    /// `mcp server:` log line.
    pub async fn open(
        orchestrator: Orchestrator,
        port: u16,
        token: &str,
        log: Arc<dyn LogSink>,
    ) -> Result<Self, DoorError> {
        if token.trim().is_empty() {
            return Err(DoorError::TokenMissing);
        }
        let orchestrator_language = orchestrator.language();
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .await
            .map_err(|e| DoorError::Bind {
                port,
                reason: e.kind().to_string(),
            })?;
        let address = listener.local_addr().map_err(|e| DoorError::Bind {
            port,
            reason: e.kind().to_string(),
        })?;
        let cancel = CancellationToken::new();
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel.child_token())
            .with_max_request_body_bytes(MAX_BODY_BYTES);
        let sessions = Arc::new(LocalSessionManager::default());
        // rmcp asks the factory for the service of each new MCP session: each gets a
        // conversation of its own, closed when rmcp drops the session.
        let service = StreamableHttpService::new(
            move || Ok(DoorHandler::new(&orchestrator)),
            Arc::clone(&sessions),
            config,
        );
        let guard = Guard {
            token_digest: digest(token),
            sessions,
        };
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(from_fn_with_state(Arc::new(guard), admit));
        let stopping = cancel.clone();
        let server_log = Arc::clone(&log);
        let server = tokio::spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async move { stopping.cancelled().await })
                .await;
            if let Err(e) = served {
                server_log.line(&format!("mcp server: stopped: {}", e.kind()));
            }
        });
        let words = crate::startup::door_words(orchestrator_language);
        log.line(&format!("mcp server: {address}/mcp {words}"));
        Ok(Self {
            address,
            cancel,
            server,
            log,
        })
    }

    /// Where the door listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The URL clients connect to.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// Stops accepting, gives requests in flight a short grace, then drops them.
    pub async fn close(self) {
        self.cancel.cancel();
        let mut server = self.server;
        if tokio::time::timeout(CLOSE_GRACE, &mut server)
            .await
            .is_err()
        {
            server.abort();
        }
        self.log
            .line(&format!("mcp server: closed {}/mcp", self.address));
    }
}

/// What every request must show before rmcp sees it.
struct Guard {
    token_digest: [u8; 32],
    /// rmcp's sessions, to answer a DELETE of an unknown one.
    sessions: Arc<LocalSessionManager>,
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// Admits a request only with a loopback `Host` and an `Origin` that is absent or loopback
/// (403 otherwise, against DNS rebinding) and the right bearer token (401 otherwise). Both
/// digests have a fixed length, so the comparison takes the same time whatever the token shown.
async fn admit(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if !host_is_loopback(request.headers()) {
        return forbidden(
            "DOOR_HOST_FORBIDDEN",
            "Host must be a loopback name (localhost, 127.0.0.1 or [::1])",
        );
    }
    if !origin_is_allowed(request.headers()) {
        return forbidden(
            "DOOR_ORIGIN_FORBIDDEN",
            "Origin must be absent or a loopback origin (http://localhost:PORT, http://127.0.0.1:PORT or http://[::1]:PORT)",
        );
    }
    let shown = bearer(request.headers()).map(digest).unwrap_or([0; 32]);
    let matches: bool = shown.ct_eq(&guard.token_digest).into();
    if !matches || bearer(request.headers()).is_none() {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a valid bearer token is required\n",
        )
            .into_response();
    }
    if request.method() == Method::DELETE {
        return end_session(&guard, request, next).await;
    }
    let opens_session =
        request.method() == Method::POST && !request.headers().contains_key("mcp-session-id");
    if opens_session && guard.sessions.sessions.read().await.len() >= MAX_SESSIONS {
        return busy();
    }
    match crate::door_body::checked(request).await {
        Ok(request) => next.run(request).await,
        Err(refused) => refused,
    }
}

/// The most door sessions open at once (each holds a conversation and a worker; idle ones
/// end after rmcp's keep-alive).
pub const MAX_SESSIONS: usize = 64;

/// 503 when every session slot is taken: the client may retry after ending one.
fn busy() -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "error": {"code": -32000, "message": format!("[DOOR_SESSIONS_FULL] {MAX_SESSIONS} sessions are open; end one (DELETE) or retry later")},
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::RETRY_AFTER, "5"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// 403 with a JSON-RPC error without id (what the MCP spec allows), naming the code.
fn forbidden(code: &str, why: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": format!("[{code}] {why}")},
    });
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A session DELETE: 404 for a session the door does not know (the spec's answer for an ended
/// one), else rmcp ends it and the door answers 204 instead of rmcp's 202 (the official SDKs
/// accept 200, 204 or 405 and warn on anything else).
async fn end_session(guard: &Guard, request: Request, next: Next) -> Response {
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(|s| Arc::<str>::from(s.to_owned()));
    if let Some(session) = session {
        let known = guard.sessions.has_session(&session).await.unwrap_or(false);
        if !known {
            return (StatusCode::NOT_FOUND, "Not Found: no such MCP session\n").into_response();
        }
    }
    let response = next.run(request).await;
    if response.status() == StatusCode::ACCEPTED {
        return StatusCode::NO_CONTENT.into_response();
    }
    response
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// `localhost`, `127.0.0.1` or `[::1]`, with or without a port.
fn host_is_loopback(headers: &HeaderMap) -> bool {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(authority_is_loopback)
}

/// `host[:port]` where host is `localhost`, `127.0.0.1` or `[::1]`.
pub(crate) fn authority_is_loopback(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((inside, port)) if port.is_empty() || valid_port(port) => inside,
            _ => return false,
        }
    } else {
        match host.split_once(':') {
            Some((name, port)) if valid_port(port) => name,
            Some(_) => return false,
            None => host,
        }
    };
    matches!(
        name.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "::1"
    )
}

/// No `Origin`, or an http(s) origin on a loopback name (any port): a page served from
/// elsewhere (DNS rebinding) shows its own origin and is refused.
fn origin_is_allowed(headers: &HeaderMap) -> bool {
    let mut all = headers.get_all(header::ORIGIN).iter();
    let Some(origin) = all.next() else {
        return true;
    };
    if all.next().is_some() {
        // A browser sends one; two are a forgery that a later reader might take differently.
        return false;
    }
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let lower = origin.to_ascii_lowercase();
    let Some(authority) = lower
        .strip_prefix("http://")
        .or_else(|| lower.strip_prefix("https://"))
    else {
        return false;
    };
    !authority.contains(['/', '@', '?', '#']) && authority_is_loopback(authority)
}

/// Digits only (no sign, no second colon), within a port's range.
fn valid_port(text: &str) -> bool {
    let digits = text.strip_prefix(':').unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.parse::<u16>().is_ok()
}

/// The MCP side of one MCP session: one tool that asks the reception, in the session's own
/// conversation.
#[derive(Clone)]
struct DoorHandler {
    orchestrator: Orchestrator,
    conversation: Arc<Conversation>,
}

impl DoorHandler {
    fn new(orchestrator: &Orchestrator) -> Self {
        Self {
            conversation: Arc::new(orchestrator.open_conversation()),
            orchestrator: orchestrator.clone(),
        }
    }

    fn tool() -> Tool {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "The request for the village."},
                "dryRun": {"type": "boolean", "description": "Run as a dry-run: side-effecting tools stop at their side effect, and the answer's structured content lists the effects the request would have had ({tool, target, argumentsDigest}). Default false."},
            },
            "required": ["message"],
        });
        let schema = match schema {
            serde_json::Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        Tool::new(
            DOOR_TOOL,
            "Send one request to this Fuseforks village's reception agent and get its answer.",
            schema,
        )
    }

    /// Asks the reception; every failure is a text result, never a protocol error. A dry-run's
    /// answer carries the effects as structured content ([`DryRunAnswer`]).
    async fn ask(&self, message: Option<&str>, client: &str, mode: RequestMode) -> CallToolResult {
        let language = self.orchestrator.language();
        let Some(message) = message.map(str::trim).filter(|m| !m.is_empty()) else {
            return CallToolResult::error(vec![ContentBlock::text(
                "`message` is required: a non-empty string.",
            )]);
        };
        let outcome = self
            .orchestrator
            .ask_external_mode_in(&self.conversation, client, message, mode)
            .await;
        let mut result = match outcome.answer {
            Some(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            // The fixed line, then why (code, status or network class, template, host; never
            // a key or a body).
            None => CallToolResult::error(vec![ContentBlock::text(match &outcome.failure {
                Some(failure) => format!(
                    "{} {}",
                    outcome.state.no_answer_line(language),
                    failure.line()
                ),
                None => outcome.state.no_answer_line(language).to_owned(),
            })]),
        };
        if mode.dry_run {
            let answer = DryRunAnswer {
                dry_run: true,
                effects: outcome.effects,
            };
            result.structured_content = serde_json::to_value(answer).ok();
        }
        result
    }
}

/// The structured content of a dry-run's answer.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct DryRunAnswer {
    dry_run: bool,
    /// What the request would have done, in call order.
    effects: Vec<fuseforks_core::safety::DryRunEffect>,
}

/// The `dryRun` argument: absent or a boolean.
fn dry_run_arg(arguments: Option<&serde_json::Map<String, serde_json::Value>>) -> Option<bool> {
    match arguments.and_then(|a| a.get("dryRun")) {
        None | Some(serde_json::Value::Null) => Some(false),
        Some(serde_json::Value::Bool(b)) => Some(*b),
        Some(_) => None,
    }
}

impl ServerHandler for DoorHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("fuseforks", fuseforks_core::version::get()),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![Self::tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != DOOR_TOOL {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "unknown tool; this door offers only {DOOR_TOOL}"
            ))])
            .into());
        }
        let Some(dry_run) = dry_run_arg(request.arguments.as_ref()) else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "`dryRun` must be a boolean (true or false) when given.",
            )])
            .into());
        };
        let message = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("message"))
            .and_then(|m| m.as_str());
        let client = context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| "mcp".to_owned());
        let mode = RequestMode { dry_run };
        Ok(self.ask(message, &client, mode).await.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(name: &'static str, value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, value.parse().unwrap());
        headers
    }

    #[test]
    fn only_loopback_hosts_pass() {
        for ok in [
            "localhost",
            "127.0.0.1",
            "127.0.0.1:39641",
            "LOCALHOST:1",
            "[::1]",
            "[::1]:8080",
        ] {
            assert!(host_is_loopback(&with("host", ok)), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:39641",
            "127.0.0.1.evil.example",
            "localhost:notaport",
            "[::1]x",
            "0.0.0.0",
            "",
        ] {
            assert!(!host_is_loopback(&with("host", bad)), "{bad}");
        }
        assert!(!host_is_loopback(&HeaderMap::new()));
    }

    #[test]
    fn only_absent_or_loopback_origins_pass() {
        assert!(origin_is_allowed(&HeaderMap::new()));
        for ok in [
            "http://localhost",
            "http://127.0.0.1:39641",
            "https://localhost:5173",
            "HTTP://LOCALHOST:1",
            "http://[::1]:8080",
        ] {
            assert!(origin_is_allowed(&with("origin", ok)), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://127.0.0.1.evil.example:1",
            "http://localhost.evil.example",
            "http://localhost@evil.example",
            "http://localhost:1/path",
            "http://localhost:x",
            "ftp://localhost",
            "file://",
            "null",
            "localhost",
            "http://0.0.0.0",
            "",
        ] {
            assert!(!origin_is_allowed(&with("origin", bad)), "{bad}");
        }
        let mut twice = with("origin", "http://localhost");
        twice.append(
            header::ORIGIN,
            axum::http::HeaderValue::from_static("http://evil.example"),
        );
        assert!(!origin_is_allowed(&twice), "two Origin headers");
    }

    #[test]
    fn bearer_is_read_case_insensitively_and_nothing_else_is() {
        assert_eq!(bearer(&with("authorization", "Bearer abc")), Some("abc"));
        assert_eq!(bearer(&with("authorization", "bearer abc")), Some("abc"));
        assert_eq!(bearer(&with("authorization", "Basic abc")), None);
        assert_eq!(bearer(&with("authorization", "abc")), None);
        assert_eq!(bearer(&HeaderMap::new()), None);
    }
}
