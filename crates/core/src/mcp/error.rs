//! [`ConnectError`]: why one MCP server was not connected. Its `Display` is the `reason=` token
//! of the `mcp:` log line (`spawn:entity not found`, `secret_missing:NAME`, `handshake`, …); the
//! underlying error, where there is one, is kept as the source. A header's value (which may hold
//! a secret) is never part of it, only the header's name.

use crate::process::SpawnError;

/// One server's failed connect.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The stdio server's program did not start (the OS's error kind, when it refused).
    #[error("spawn{}", source.kind().map(|k| format!(":{k}")).unwrap_or_default())]
    Spawn {
        /// The spawn's error.
        #[source]
        source: SpawnError,
    },
    /// The child started without its stdin or stdout pipe.
    #[error("spawn:pipes")]
    Pipes,
    /// A `${secret:NAME}` of a header is not in the secret store (`mcp:NAME`).
    #[error("secret_missing:{name}")]
    SecretMissing {
        /// The secret's name.
        name: String,
    },
    /// A header's name is not a valid HTTP header name.
    #[error("bad_header:{key}")]
    BadHeader {
        /// The header's name.
        key: String,
    },
    /// A header's value (after the secrets went in) is not a valid header value.
    #[error("bad_header_value:{key}")]
    BadHeaderValue {
        /// The header's name (never the value).
        key: String,
    },
    /// The HTTP client could not be built.
    #[error("http_client")]
    HttpClient {
        /// Its error.
        #[source]
        source: Box<crate::llm::LlmError>,
    },
    /// The MCP handshake failed.
    #[error("handshake")]
    Handshake {
        /// rmcp's error.
        #[source]
        source: Box<rmcp::service::ClientInitializeError>,
    },
    /// Listing the server's tools failed.
    #[error("list_tools")]
    ListTools {
        /// rmcp's error.
        #[source]
        source: rmcp::ServiceError,
    },
    /// The agent stopped while connecting.
    #[error("cancelled")]
    Cancelled,
    /// No connection within the connect timeout.
    #[error("timeout")]
    Timeout,
}

impl crate::error::Coded for ConnectError {
    fn code(&self) -> &'static str {
        "MCP_CONNECT_FAILED"
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some(match self {
            Self::SecretMissing { name } => crate::error::Fix::remedy(
                crate::error::Remedy::StoreSecret {
                    name: format!("mcp:{name}"),
                    env: true,
                },
                "",
            ),
            Self::Spawn { .. } | Self::Pipes => {
                "check the server's command in mcp.json (installed, executable)".into()
            }
            Self::BadHeader { .. } | Self::BadHeaderValue { .. } => {
                "correct the header in mcp.json".into()
            }
            _ => "check that the server runs and speaks MCP at the configured address".into(),
        })
    }
}
