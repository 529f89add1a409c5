//! `mcp.json` (shared `workspace/mcp.json` and `agents/<id>/mcp.json`) in the Claude Desktop
//! format: stdio and Streamable HTTP entries, in the order the user wrote them.
//!
//! This module reads the shape (the transport by `type`, `sse` refused by name) and keeps
//! unknown fields, and refuses a malformed `${secret:NAME}` reference in a header (unclosed, or
//! a `NAME` outside `[A-Z0-9_]+`); resolving the references belongs to the MCP client. Header and
//! environment values may be secrets: `Debug` hides them and parse errors never quote them.

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

impl McpConfig {
    /// `text` read as the `mcp.json` at `file` (its rules applied, values hidden from errors).
    pub fn from_text(file: &std::path::Path, text: &str) -> Result<Self, super::VillageError> {
        super::doc::parse_text(file, text).map(|l| l.value)
    }

    /// The `NAME`s of the `${secret:NAME}` references in the headers of every server, in order.
    pub fn secret_names(&self) -> Vec<String> {
        self.mcp_servers
            .values()
            .flat_map(|entry| match entry {
                McpServerEntry::Http(h) => h.secret_names(),
                McpServerEntry::Stdio(_) => Vec::new(),
            })
            .collect()
    }
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
        self.headers
            .values()
            .flat_map(|v| secret_names_in(v))
            .collect()
    }
}

/// The `NAME`s of the `${secret:NAME}` references in one header value, in order.
pub(crate) fn secret_names_in(value: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = value;
    while let Some(i) = rest.find("${secret:") {
        let after = &rest[i + "${secret:".len()..];
        let Some(end) = after.find('}') else { break };
        names.push(after[..end].to_owned());
        rest = &after[end..];
    }
    names
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
    /// Checks an entry in the reference's order — shape (`sse` and unknown types refused by
    /// name), mutual exclusion, required fields, value formats, URL scheme — so that the first
    /// failure reported is the one the reference names.
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
        let http = match kind.as_deref() {
            None | Some("stdio") => false,
            Some("http") => true,
            Some("sse") => {
                return Err(de::Error::custom(
                    "type \"sse\" is not supported (the SSE transport is deprecated); use \"type\": \"http\" for Streamable HTTP",
                ));
            }
            Some(_) => {
                return Err(de::Error::custom(
                    "unknown `type`, expected \"stdio\" or \"http\"",
                ));
            }
        };
        let (forbidden, required): (&[&str], &str) = if http {
            (&["command", "args", "env"], "url")
        } else {
            (&["url", "headers"], "command")
        };
        if let Some(key) = forbidden.iter().find(|k| object.contains_key(**k)) {
            let shape = if http { "an http" } else { "a stdio" };
            return Err(de::Error::custom(format!(
                "`{key}` is not allowed on {shape} entry"
            )));
        }
        match object.get(required) {
            Some(serde_json::Value::String(s)) if !s.trim().is_empty() => {}
            Some(serde_json::Value::String(_)) | None => {
                return Err(de::Error::custom(format!("missing field `{required}`")));
            }
            Some(_) => return Err(de::Error::custom(format!("`{required}` must be a string"))),
        }
        let body = serde_json::Value::Object(object);
        if !http {
            return serde_json::from_value(body)
                .map(Self::Stdio)
                .map_err(de::Error::custom);
        }
        let server: HttpServer = serde_json::from_value(body).map_err(de::Error::custom)?;
        check_url(&server.url).map_err(de::Error::custom)?;
        check_secret_refs(&server.headers).map_err(de::Error::custom)?;
        Ok(Self::Http(server))
    }
}

/// Every `${secret:NAME}` in a header value is closed by `}` and its `NAME` is `[A-Z0-9_]+`
/// (docs/formats/mcp.json.md), so that a malformed reference is refused when the file is read and
/// never sent literally. The error names the header, never its value.
fn check_secret_refs(headers: &IndexMap<String, String>) -> Result<(), String> {
    for (header, value) in headers {
        let mut rest = value.as_str();
        while let Some(i) = rest.find("${secret:") {
            let after = &rest[i + "${secret:".len()..];
            let Some(end) = after.find('}') else {
                return Err(format!(
                    "header `{header}`: a `${{secret:` reference is not closed by `}}`; write `${{secret:NAME}}`"
                ));
            };
            let name = &after[..end];
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            {
                return Err(format!(
                    "header `{header}`: a `${{secret:NAME}}` reference has an invalid NAME; use only A-Z, 0-9 and _ (for example `${{secret:OUTCASTS_TOKEN}}`)"
                ));
            }
            rest = &after[end..];
        }
    }
    Ok(())
}

/// An http entry's URL must be absolute, and https unless it points at loopback
/// (`127.0.0.0/8`, `::1`, `localhost`).
fn check_url(url: &str) -> Result<(), String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("`url` must be an absolute URL (https://…)".into());
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return Err("`url` has no host".into());
    }
    match scheme.to_ascii_lowercase().as_str() {
        "https" => Ok(()),
        "http" if is_loopback(host) => Ok(()),
        "http" => Err(
            "`url` must use https (plain http is allowed only to 127.0.0.1, ::1 or localhost)"
                .into(),
        ),
        _ => Err("`url` must use https".into()),
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
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
    fn validation_follows_the_reference_order() {
        let err = |entry: serde_json::Value| {
            serde_json::from_value::<McpConfig>(serde_json::json!({"mcpServers": {"x": entry}}))
                .unwrap_err()
                .to_string()
        };
        assert!(
            err(serde_json::json!({"type": "http", "command": "npx"}))
                .contains("`command` is not allowed on an http entry")
        );
        assert!(
            err(serde_json::json!({"command": "npx", "url": "https://x"}))
                .contains("`url` is not allowed on a stdio entry")
        );
        assert!(err(serde_json::json!({"type": "http"})).contains("missing field `url`"));
        assert!(err(serde_json::json!({"command": ""})).contains("missing field `command`"));
        assert!(
            err(serde_json::json!({"type": "http", "url": "mcp.example.com"}))
                .contains("absolute URL")
        );
        assert!(
            err(serde_json::json!({"type": "http", "url": "http://mcp.example.com/mcp"}))
                .contains("https")
        );
        assert!(err(serde_json::json!({"type": "http", "url": "https://x/mcp", "headers": {"Authorization": 5}})).contains("invalid type"));
        for ok in [
            "https://mcp.example.com/mcp",
            "http://127.0.0.1:8080/mcp",
            "http://localhost/mcp",
            "http://[::1]:9/mcp",
            "http://127.9.9.9/mcp",
        ] {
            let c: McpConfig = serde_json::from_value(
                serde_json::json!({"mcpServers": {"x": {"type": "http", "url": ok}}}),
            )
            .unwrap();
            assert!(
                matches!(c.mcp_servers["x"], McpServerEntry::Http(_)),
                "{ok}"
            );
        }
        let disabled = err(
            serde_json::json!({"type": "http", "url": "http://evil.example", "enabled": false}),
        );
        assert!(
            disabled.contains("https"),
            "validation applies to disabled entries too"
        );
    }

    #[test]
    fn malformed_secret_references_are_refused_naming_the_header_only() {
        let read = |value: &str| {
            serde_json::from_value::<McpConfig>(serde_json::json!({"mcpServers": {"x": {
                "type": "http", "url": "https://x/mcp", "headers": {"Authorization": value}
            }}}))
        };
        for bad in [
            "Bearer ${secret:bad-name}",
            "Bearer ${secret:OPEN",
            "${secret:}",
            "${secret:OK} and ${secret:lower}",
        ] {
            let err = read(bad).unwrap_err().to_string();
            assert!(err.contains("header `Authorization`"), "{bad}: {err}");
            assert!(!err.contains("Bearer"), "no value in the error: {err}");
        }
        let ok = read("Bearer ${secret:OUTCASTS_TOKEN} ${secret:B2}").unwrap();
        let McpServerEntry::Http(h) = &ok.mcp_servers["x"] else {
            panic!("http")
        };
        assert_eq!(h.secret_names(), ["OUTCASTS_TOKEN", "B2"]);
        assert!(read("cost $5 {x}").is_ok(), "no reference, no rule");
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
