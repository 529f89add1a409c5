//! Fetching a price table: from an https URL (or http to this machine, the project's endpoint
//! rule, so that a table can be served locally), never over plain http elsewhere, no redirects,
//! at most [`MAX_TABLE_BYTES`] within [`TIMEOUT`]; or from a file of the same size limit.

use std::path::PathBuf;
use std::time::Duration;

use super::error::PricingError;
use crate::village::{EndpointProblem, endpoint_security};

/// The largest table read (8 MiB).
pub const MAX_TABLE_BYTES: u64 = 8 * 1024 * 1024;
/// The longest a fetch may take, connection and whole body together.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// Where a table comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PriceSource {
    /// A URL that passed the rule.
    Url(String),
    /// A file on this machine.
    File(PathBuf),
}

impl PriceSource {
    /// How the source is named in answers and logs: a file's path, a URL's origin (a query
    /// might hold a token).
    pub fn label(&self) -> String {
        match self {
            Self::File(path) => path.display().to_string(),
            Self::Url(url) => reqwest::Url::parse(url)
                .map(|u| format!("{}{}", u.origin().ascii_serialization(), u.path()))
                .unwrap_or_default(),
        }
    }
}

/// The bounds of one fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// The largest body, in bytes.
    pub max_bytes: u64,
    /// Connection and whole body.
    pub timeout: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            max_bytes: MAX_TABLE_BYTES,
            timeout: TIMEOUT,
        }
    }
}

/// The source named by `from` (a URL when it holds `://`, else a file path), or else the
/// shelf's `url`; a URL is checked against the rule here, before anything is sent.
pub fn source_of(from: Option<&str>, shelf_url: &str) -> Result<PriceSource, PricingError> {
    let text = match from {
        Some(f) if !f.contains("://") => return Ok(PriceSource::File(PathBuf::from(f))),
        Some(f) => f,
        None => shelf_url,
    };
    match endpoint_security(text, false) {
        Ok(_) => Ok(PriceSource::Url(text.trim().to_owned())),
        Err(EndpointProblem::Insecure { host }) => Err(PricingError::Insecure {
            origin: format!("http://{host}"),
        }),
        Err(EndpointProblem::Invalid { why } | EndpointProblem::Demo { why }) => {
            Err(PricingError::InvalidSource {
                why: format!("the URL {}", why.trim_start_matches("baseUrl ")),
            })
        }
    }
}

/// The table's bytes from `source`, within `limits`.
pub async fn fetch_table(
    source: &PriceSource,
    limits: FetchLimits,
) -> Result<Vec<u8>, PricingError> {
    match source {
        PriceSource::File(path) => read_file(path, limits.max_bytes),
        PriceSource::Url(url) => {
            let secs = limits.timeout.as_millis().div_ceil(1000);
            tokio::time::timeout(limits.timeout, get(url, limits.max_bytes))
                .await
                .map_err(|_| PricingError::TimedOut {
                    secs: u64::try_from(secs).unwrap_or(u64::MAX),
                })?
        }
    }
}

fn read_file(path: &std::path::Path, max: u64) -> Result<Vec<u8>, PricingError> {
    use std::io::Read;
    let failed = |e: std::io::Error| PricingError::FetchFailed {
        why: format!("cannot read {}: {e}", path.display()),
    };
    let file = std::fs::File::open(path).map_err(failed)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(failed)?;
    if bytes.len() as u64 > max {
        return Err(PricingError::TooLarge { limit: max });
    }
    Ok(bytes)
}

async fn get(url: &str, max: u64) -> Result<Vec<u8>, PricingError> {
    let failed = |why: String| PricingError::FetchFailed { why };
    let client = crate::llm::LlmClient::http_client().map_err(|e| failed(e.to_string()))?;
    let mut answer = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| failed(network_class(&e)))?;
    let status = answer.status();
    if status.is_redirection() {
        return Err(failed(format!(
            "HTTP {} (a redirect, not followed): give the table's final URL",
            status.as_u16()
        )));
    }
    if !status.is_success() {
        return Err(failed(format!("HTTP {}", status.as_u16())));
    }
    if answer.content_length().is_some_and(|n| n > max) {
        return Err(PricingError::TooLarge { limit: max });
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer
        .chunk()
        .await
        .map_err(|e| failed(network_class(&e)))?
    {
        if (body.len() + chunk.len()) as u64 > max {
            return Err(PricingError::TooLarge { limit: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A network failure in a few words (never the URL's query).
fn network_class(e: &reqwest::Error) -> String {
    if e.is_connect() {
        "cannot connect".into()
    } else if e.is_body() || e.is_decode() {
        "the connection broke while the body was read".into()
    } else {
        "network error".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Coded;

    #[test]
    fn only_https_or_loopback_http_or_a_file_is_a_source() {
        let code = |from: &str| source_of(Some(from), "").map_err(|e| e.code());
        assert_eq!(
            code("http://prices.example/p.json"),
            Err("PRICING_SOURCE_INSECURE")
        );
        assert_eq!(
            code("ftp://prices.example/p.json"),
            Err("PRICING_SOURCE_INVALID")
        );
        assert_eq!(
            code("https://user:pw@prices.example/p.json"),
            Err("PRICING_SOURCE_INVALID")
        );
        assert!(code("https://prices.example/p.json").is_ok());
        assert!(code("http://127.0.0.1:9/p.json").is_ok());
        assert_eq!(
            source_of(Some("prices.json"), ""),
            Ok(PriceSource::File("prices.json".into()))
        );
        assert_eq!(
            source_of(None, "http://10.0.0.1/p.json").map_err(|e| e.code()),
            Err("PRICING_SOURCE_INSECURE"),
            "the shelf's URL is held to the same rule"
        );
    }
}
