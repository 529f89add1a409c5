//! MCP servers as tool providers (the client side, through rmcp): an agent's servers — the
//! shared `mcp.json` and its own — are connected when it starts (stdio children without a
//! shell, through [`crate::process`]: a minimal environment, their own process group, gone with
//! us; or Streamable HTTP with `${secret:NAME}` headers resolved all-or-nothing), their tools
//! offered as `<server>__<tool>`, and the children's groups ended when it stops (SIGTERM, then
//! SIGKILL 2 s later). A connect in progress ends at once when the context's token is cancelled.
//! A server that fails leaves the agent running without its tools, and says why in one `mcp:`
//! line.
//!
//! # Parts
//!
//! `mcp/` — the MCP client through rmcp (decision 0007): `mod.rs` (`McpConnections`: one agent's
//! servers from the shared and its own `mcp.json`, stdio children without a shell started through
//! `process/` — minimal environment, own process group, group ended on close or drop — Streamable
//! HTTP with `${secret:NAME}` headers resolved right before connecting, all or nothing; 30 s
//! connect timeout, cancelled at once when the agent is stopped (not by a turn's interrupt); one
//! `mcp:` log line per server; `ChildOutput` receives children's stderr line by line, each capped
//! at 64 KiB; never inherited, so a server's escape sequences cannot reach a terminal), `error.rs`
//! (`ConnectError`, the `reason=` of a failed server, its cause kept as the source), `naming.rs`
//! (`<server>__<tool>` within 64 characters, the reference's rule). Invariants: a failed server
//! leaves the agent running without its tools; header values never reach a log, error or event; an
//! agent's children end with the agent.

mod error;
pub(crate) mod naming;

pub use error::ConnectError;

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::llm::ToolSpec;
use crate::log::LogSink;
use crate::process::{self, GroupChild};
use crate::tools::ToolOutput;
use crate::village::mcp_config::{
    HttpServer, McpConfig, McpServerEntry, StdioServer, secret_names_in,
};

/// A connected server, introduced as `fuseforks` with our version.
type Client = RunningService<RoleClient, ClientConfig>;

/// What the client says of itself in `initialize` (rmcp's default would be its own name), and
/// the newest protocol version that has that handshake: rmcp's default names 2026-07-28, which
/// has none, and a server answering `initialize` can only name 2025-11-25 or older anyway.
fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("fuseforks", crate::version::get()),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// How long a server may take to connect.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The most characters of a tool result the model reads.
pub const RESULT_MAX_CHARS: usize = 16_000;
/// The longest line of a child's stderr forwarded at once.
pub(crate) const CHILD_LINE_MAX: u64 = 64 * 1024;

/// Where the stderr lines of stdio children go (the CLI: one JSON line each under
/// `--events jsonl`, else a prefixed line with terminal escapes stripped; never into
/// `fuseforks.log`). A child's stderr is never inherited.
pub trait ChildOutput: Send + Sync + std::fmt::Debug {
    /// One line a child wrote.
    fn line(&self, server: &str, line: &str);
}

/// Looks a secret up by key (`mcp:NAME`).
pub(crate) type SecretFn = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// What connecting needs besides the configs.
#[derive(Clone)]
pub struct McpContext {
    /// Looks a secret up by key (`mcp:NAME`).
    pub secret: SecretFn,
    /// The village log (one `mcp:` line per server).
    pub log: Arc<dyn LogSink>,
    /// Children's stderr, line by line; discarded when `None` (never inherited).
    pub child_output: Option<Arc<dyn ChildOutput>>,
    /// Cancelled when the agent stops (not by an interrupt): connects in progress end at once.
    pub cancel: CancellationToken,
}

struct Server {
    name: String,
    client: Client,
    /// A stdio server's process group (ended on close, and by its watchdog on drop).
    group: Option<GroupChild>,
}

/// A connected server and its tools, before registration.
type Connected = (
    String,
    Client,
    Option<GroupChild>,
    Vec<rmcp::model::Tool>,
    Duration,
);

/// One tool of a connected server.
#[derive(Debug, Clone)]
struct RemoteTool {
    server: usize,
    tool: String,
    spec: ToolSpec,
}

/// Connected servers by name, each with its tools' names (as the server names them).
pub type ServerTools = Vec<(String, Vec<String>)>;

/// The connected servers of one agent.
#[derive(Default)]
pub struct McpConnections {
    servers: Vec<Server>,
    tools: HashMap<String, RemoteTool>,
    order: Vec<String>,
}

impl std::fmt::Debug for McpConnections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnections")
            .field("servers", &self.servers.len())
            .field("tools", &self.order)
            .finish()
    }
}

impl McpConnections {
    /// Connects every enabled server of the configs (the shared one first; an agent's entry of
    /// the same name replaces the shared one).
    pub async fn connect(agent_id: &str, configs: &[McpConfig], ctx: &McpContext) -> Self {
        let mut entries: Vec<(String, McpServerEntry)> = Vec::new();
        for config in configs {
            for (name, entry) in &config.mcp_servers {
                entries.retain(|(n, _)| n != name);
                entries.push((name.clone(), entry.clone()));
            }
        }
        // All servers connect at once (each start is mostly the child's own start-up), and
        // register in the configs' order, so the offered tool list does not depend on timing.
        let attempts = entries
            .iter()
            .filter(|(_, e)| e.enabled())
            .map(|(name, entry)| connect_one(agent_id, name, entry, ctx));
        let connected = futures_util::future::join_all(attempts).await;
        let mut out = Self::default();
        for (name, client, group, tools, elapsed) in connected.into_iter().flatten() {
            let index = out.servers.len();
            for tool in &tools {
                let qualified = naming::qualified(&name, &tool.name);
                let spec = ToolSpec {
                    name: qualified.clone(),
                    description: tool.description.as_deref().unwrap_or_default().to_owned(),
                    parameters: Value::Object((*tool.input_schema).clone()),
                };
                // A name already taken (by a bundled tool of an earlier server, or after
                // cleaning and cutting to 64 characters) is never given to a later server.
                if out.tools.contains_key(&qualified) {
                    ctx.log.line(&format!(
                        "mcp tool skipped: agent={agent_id} server={name} tool={qualified} reason=name_taken"
                    ));
                    continue;
                }
                out.tools.insert(
                    qualified.clone(),
                    RemoteTool {
                        server: index,
                        tool: tool.name.to_string(),
                        spec,
                    },
                );
                out.order.push(qualified);
            }
            ctx.log.line(&format!(
                "mcp: agent={agent_id} server={name} outcome=connected tools={} elapsed_ms={}",
                tools.len(),
                elapsed.as_millis()
            ));
            out.servers.push(Server {
                name,
                client,
                group,
            });
        }
        out
    }

    /// Each connected server with the names of its tools (as the server names them), in
    /// connection order.
    pub fn server_tools(&self) -> ServerTools {
        let mut out: ServerTools = self
            .servers
            .iter()
            .map(|s| (s.name.clone(), Vec::new()))
            .collect();
        for tool in self.order.iter().filter_map(|n| self.tools.get(n)) {
            if let Some((_, tools)) = out.get_mut(tool.server) {
                tools.push(tool.tool.clone());
            }
        }
        out
    }

    /// The tool specs, in connection order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.order
            .iter()
            .filter_map(|n| self.tools.get(n))
            .map(|t| t.spec.clone())
            .collect()
    }

    /// True when `name` is one of these tools.
    pub fn has(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Calls a tool; failures come back as text for the model.
    pub async fn call(&self, name: &str, args: &Value) -> ToolOutput {
        let Some(tool) = self.tools.get(name) else {
            return ToolOutput::fail(format!("unknown MCP tool {name}"));
        };
        let Some(server) = self.servers.get(tool.server) else {
            return ToolOutput::fail("the MCP server is gone");
        };
        let mut params = CallToolRequestParams::new(tool.tool.clone());
        if let Value::Object(map) = args {
            params = params.with_arguments(map.clone());
        }
        match server.client.call_tool(params).await {
            Ok(result) => {
                let mut parts = Vec::new();
                for block in serde_json::to_value(&result.content)
                    .ok()
                    .and_then(|v| v.as_array().cloned())
                    .unwrap_or_default()
                {
                    match block.get("type").and_then(Value::as_str) {
                        Some("text") => parts.push(
                            block
                                .get("text")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_owned(),
                        ),
                        Some(kind) => parts.push(format!("[{kind}]")),
                        None => {}
                    }
                }
                if parts.is_empty()
                    && let Some(structured) = &result.structured_content
                {
                    parts.push(structured.to_string());
                }
                let body = crate::tools::cap(&parts.join("\n"), RESULT_MAX_CHARS);
                ToolOutput {
                    ok: result.is_error != Some(true),
                    body,
                    approval: None,
                }
            }
            Err(e) => ToolOutput::fail(format!("MCP server {}: {e}", server.name)),
        }
    }

    /// Disconnects every server at once; each stdio child's group gets SIGTERM, then SIGKILL
    /// after [`process::KILL_GRACE`]. Once `cut` is cancelled (before or during the close),
    /// nothing more is awaited: the servers are dropped, and each group's watchdog ends it in
    /// the background.
    pub async fn close(self, cut: &CancellationToken) {
        let closing = self.servers.into_iter().map(|server| async move {
            let _ = server.client.cancel().await;
            if let Some(mut group) = server.group {
                group.terminate().await;
            }
        });
        tokio::select! {
            biased;
            () = cut.cancelled() => {}
            _ = futures_util::future::join_all(closing) => {}
        }
    }
}

/// Starts a stdio server (minimal environment, own process group, see [`crate::process`]) and
/// connects to it. Dropping the returned group (or this future) ends the child's group.
async fn connect_stdio(
    name: &str,
    server: &StdioServer,
    ctx: &McpContext,
) -> Result<(Client, GroupChild), ConnectError> {
    let mut command = tokio::process::Command::new(&server.command);
    // Never inherited: a server's bytes reach our stderr only through the sink, which escapes
    // them for a terminal; without a sink they are dropped.
    let piped = ctx.child_output.is_some();
    command
        .args(&server.args)
        .env_clear()
        .envs(process::minimal_env(&server.env))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if piped { Stdio::piped() } else { Stdio::null() });
    let mut group =
        process::spawn(command, None).map_err(|source| ConnectError::Spawn { source })?;
    let child = group.child_mut();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(ConnectError::Pipes);
    };
    if let (Some(stderr), Some(output)) = (child.stderr.take(), ctx.child_output.clone()) {
        let name = name.to_owned();
        tokio::spawn(async move { forward_lines(stderr, &name, output.as_ref()).await });
    }
    let transport = (stdout, stdin);
    let client = client_info()
        .serve(transport)
        .await
        .map_err(|e| ConnectError::Handshake {
            source: Box::new(e),
        })?;
    Ok((client, group))
}

async fn connect_http(server: &HttpServer, ctx: &McpContext) -> Result<Client, ConnectError> {
    let mut headers = HashMap::new();
    for (key, value) in &server.headers {
        let mut resolved = value.clone();
        for name in secret_names_in(value) {
            // All or nothing: one missing secret and the server is not connected.
            let Some(secret) = (ctx.secret)(&format!("mcp:{name}")) else {
                return Err(ConnectError::SecretMissing { name });
            };
            resolved = resolved.replace(&format!("${{secret:{name}}}"), &secret);
        }
        let header_name = reqwest::header::HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| ConnectError::BadHeader { key: key.clone() })?;
        let header_value = reqwest::header::HeaderValue::from_str(&resolved)
            .map_err(|_| ConnectError::BadHeaderValue { key: key.clone() })?;
        headers.insert(header_name, header_value);
    }
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url.clone()).custom_headers(headers);
    let client = crate::llm::LlmClient::http_client().map_err(|e| ConnectError::HttpClient {
        source: Box::new(e),
    })?;
    let transport = StreamableHttpClientTransport::with_client(client, config);
    client_info()
        .serve(transport)
        .await
        .map_err(|e| ConnectError::Handshake {
            source: Box::new(e),
        })
}

/// Connects one server and lists its tools, within [`CONNECT_TIMEOUT`] and until the context's
/// token is cancelled; a failure is logged and gives `None`.
async fn connect_one(
    agent_id: &str,
    name: &str,
    entry: &McpServerEntry,
    ctx: &McpContext,
) -> Option<Connected> {
    let started = std::time::Instant::now();
    let attempt = async {
        let (client, group) = match entry {
            McpServerEntry::Stdio(s) => {
                let (client, group) = connect_stdio(name, s, ctx).await?;
                (client, Some(group))
            }
            McpServerEntry::Http(h) => (connect_http(h, ctx).await?, None),
        };
        match list_tools_bounded(&client).await {
            Ok(tools) => Ok((client, group, tools)),
            Err(e) => {
                let _ = client.cancel().await;
                if let Some(mut group) = group {
                    group.terminate().await;
                }
                Err(e)
            }
        }
    };
    // Dropping the attempt (timeout, cancel) drops a started child: its watchdog ends the group.
    let outcome = tokio::select! {
        done = tokio::time::timeout(CONNECT_TIMEOUT, attempt) => done,
        () = ctx.cancel.cancelled() => Ok(Err(ConnectError::Cancelled)),
    };
    let reason = match outcome {
        Ok(Ok((client, group, tools))) => {
            return Some((name.to_owned(), client, group, tools, started.elapsed()));
        }
        Ok(Err(reason)) => reason,
        Err(_) => ConnectError::Timeout,
    };
    ctx.log.line(&format!(
        "mcp: agent={agent_id} server={name} outcome=failed reason={reason}"
    ));
    None
}

/// The most pages of `tools/list` read from one server.
const MAX_TOOL_PAGES: usize = 20;
/// The most tools taken from one server.
const MAX_TOOLS: usize = 500;

/// Lists a server's tools page by page, at most [`MAX_TOOL_PAGES`] pages and [`MAX_TOOLS`]
/// tools (a server that pages forever, or offers thousands of tools, is cut there).
async fn list_tools_bounded(client: &Client) -> Result<Vec<rmcp::model::Tool>, ConnectError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_TOOL_PAGES {
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
        let page = client
            .list_tools(Some(params))
            .await
            .map_err(|source| ConnectError::ListTools { source })?;
        tools.extend(page.tools);
        if tools.len() >= MAX_TOOLS {
            tools.truncate(MAX_TOOLS);
            return Ok(tools);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    Ok(tools)
}

/// Forwards a child's stderr line by line, each read capped at [`CHILD_LINE_MAX`] bytes so a
/// child that never writes a newline cannot grow the parent's memory.
pub(crate) async fn forward_lines(
    reader: impl tokio::io::AsyncRead + Unpin,
    server: &str,
    output: &dyn ChildOutput,
) {
    let mut reader = BufReader::new(reader);
    loop {
        let mut buf = Vec::new();
        let mut limited = (&mut reader).take(CHILD_LINE_MAX);
        match limited.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                output.line(server, line.trim_end_matches(['\n', '\r']));
            }
        }
    }
}
