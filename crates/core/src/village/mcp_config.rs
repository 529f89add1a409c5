//! `mcp.json` (shared `workspace/mcp.json` and `agents/<id>/mcp.json`) in the Claude Desktop
//! format: stdio and Streamable HTTP entries, in the order the user wrote them.
//!
//! This module reads the shape (the transport by `type`, `sse` refused by name) and keeps
//! unknown fields; the full connection rules (mutual exclusion, URL scheme, `${secret:NAME}`)
//! belong to the MCP client. Header and environment values may be secrets: `Debug` hides them
//! and parse errors never quote them.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use super::Extra;
use super::doc::JsonDoc;

/// A whole `mcp.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpConfig {
    /// Servers by name, in written order.
    #[serde(default)]
    pub mcp_servers: IndexMap<String, McpServerEntry>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl JsonDoc for McpConfig {
    const MAY_HOLD_SECRETS: bool = true;
}

/// One server entry.
#[derive(Debug, Clone, PartialEq)]
pub enum McpServerEntry {
    /// A child process spoken to over stdio.
    Stdio(StdioServer),
    /// A remote server over Streamable HTTP.
    Http(HttpServer),
}

impl McpServerEntry {
    /// Whether the entry is switched on.
    pub fn enabled(&self) -> bool {
        match self {
            Self::Stdio(s) => s.enabled,
            Self::Http(h) => h.enabled,
        }
    }
}

/// A stdio server. `type` is omitted when written.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct StdioServer {
    /// Program (no shell).
    pub command: String,
    /// Arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment of the child (values may be secrets).
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Switched on (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A Streamable HTTP server. `type: "http"` is always written.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct HttpServer {
    /// Endpoint URL.
    pub url: String,
    /// Request headers (values may be secrets or `${secret:NAME}` references).
    #[serde(default)]
    pub headers: IndexMap<String, String>,
    /// Switched on (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Extra,
}

impl HttpServer {
    /// The `NAME`s of the `${secret:NAME}` references in the header values, in order.
    pub fn secret_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for value in self.headers.values() {
            let mut rest = value.as_str();
            while let Some(i) = rest.find("${secret:") {
                let after = &rest[i + "${secret:".len()..];
                let Some(end) = after.find('}') else { break };
                names.push(after[..end].to_owned());
                rest = &after[end..];
            }
        }
        names
    }
}

impl fmt::Debug for StdioServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioServer")
            .field("command", &self.command)
            .field("args", &self.args)
            .field(
                "env",
                &self.env.keys().map(|k| (k, "<hidden>")).collect::<Vec<_>>(),
            )
            .field("enabled", &self.enabled)
            .field("extra_keys", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServer")
            .field("url", &self.url)
            .field(
                "headers",
                &self
                    .headers
                    .keys()
                    .map(|k| (k, "<hidden>"))
                    .collect::<Vec<_>>(),
            )
            .field("enabled", &self.enabled)
            .field("extra_keys", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl<'de> Deserialize<'de> for McpServerEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut object = Extra::deserialize(deserializer)?;
        let kind = match object.remove("type") {
            None => None,
            Some(serde_json::Value::String(s)) => Some(s),
            Some(_) => {
                return Err(de::Error::custom(
                    "`type` must be a string: \"stdio\" or \"http\"",
                ));
            }
        };
        let body = serde_json::Value::Object(object);
        match kind.as_deref() {
            None | Some("stdio") => serde_json::from_value(body)
                .map(Self::Stdio)
                .map_err(de::Error::custom),
            Some("http") => serde_json::from_value(body)
                .map(Self::Http)
                .map_err(de::Error::custom),
            Some("sse") => Err(de::Error::custom(
                "type \"sse\" is not supported (the SSE transport is deprecated); use \"type\": \"http\" for Streamable HTTP",
            )),
            Some(_) => Err(de::Error::custom(
                "unknown `type`, expected \"stdio\" or \"http\"",
            )),
        }
    }
}

impl Serialize for McpServerEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Stdio(stdio) => stdio.serialize(serializer),
            Self::Http(http) => {
                #[derive(Serialize)]
                struct Tagged<'a> {
                    #[serde(rename = "type")]
                    kind: &'static str,
                    #[serde(flatten)]
                    server: &'a HttpServer,
                }
                Tagged {
                    kind: "http",
                    server: http,
                }
                .serialize(serializer)
            }
        }
    }
}

fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_shapes_in_order_and_writes_them_back() {
        let text = r#"{"mcpServers":{
            "zeta":{"command":"npx","args":["-y","srv"],"env":{"TOKEN":"s3cret"},"future":1},
            "alpha":{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer ${secret:ALPHA}"},"enabled":false},
            "beta":{"type":"stdio","command":"uvx"}
        },"topLevelFuture":true}"#;
        let config: McpConfig = serde_json::from_str(text).unwrap();
        let names: Vec<_> = config.mcp_servers.keys().cloned().collect();
        assert_eq!(names, ["zeta", "alpha", "beta"]);
        assert!(!config.mcp_servers["alpha"].enabled());
        assert!(config.mcp_servers["beta"].enabled());
        let debug = format!("{config:?}");
        assert!(
            !debug.contains("s3cret") && !debug.contains("Bearer"),
            "{debug}"
        );

        let written = serde_json::to_value(&config).unwrap();
        assert_eq!(written["mcpServers"]["alpha"]["type"], "http");
        assert!(written["mcpServers"]["beta"].get("type").is_none());
        assert_eq!(written["mcpServers"]["zeta"]["future"], 1);
        assert_eq!(written["topLevelFuture"], true);
        let again: McpConfig = serde_json::from_value(written).unwrap();
        assert_eq!(again, config);
    }

    #[test]
    fn refuses_sse_and_unknown_types_by_name() {
        let sse = r#"{"mcpServers":{"old":{"type":"sse","url":"https://x/sse"}}}"#;
        let err = serde_json::from_str::<McpConfig>(sse)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"sse\" is not supported"), "{err}");
        let odd = r#"{"mcpServers":{"odd":{"type":"websocket","url":"wss://x"}}}"#;
        let err = serde_json::from_str::<McpConfig>(odd)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown `type`"), "{err}");
    }
}
