//! Why a price table was refused: each cause its stable code and fix; nothing is written.

use crate::error::Coded;

/// A price table that could not be fetched or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PricingError {
    /// The source is plain `http` to a host that is not this machine.
    #[error("the price table source {origin} is plain http: prices must come over https")]
    Insecure {
        /// Scheme and host (never a path or query).
        origin: String,
    },
    /// The source is neither an https URL, an http URL to loopback, nor a file path.
    #[error("the price table source is not usable: {why}")]
    InvalidSource {
        /// What is wrong.
        why: String,
    },
    /// The body is over the limit.
    #[error("the price table is larger than {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// No whole answer within the limit.
    #[error("the price table did not arrive within {secs} s")]
    TimedOut {
        /// The limit, in seconds (fractions rounded up).
        secs: u64,
    },
    /// The answer is not a 200, the connection failed, or the file does not read.
    #[error("the price table could not be fetched: {why}")]
    FetchFailed {
        /// What happened (a status, a network class, an I/O error).
        why: String,
    },
    /// The body is not a price table.
    #[error("the price table is malformed{}: {reason}", at(.field, .line, .column))]
    Malformed {
        /// The JSON path of the field, where known (`models.gpt-5.inputPerMtok`).
        field: Option<String>,
        /// 1-based line, where known.
        line: Option<usize>,
        /// 1-based column, where known.
        column: Option<usize>,
        /// What is wrong.
        reason: String,
    },
}

fn at(field: &Option<String>, line: &Option<usize>, column: &Option<usize>) -> String {
    let mut text = String::new();
    if let (Some(l), Some(c)) = (line, column) {
        text.push_str(&format!(" at {l}:{c}"));
    }
    if let Some(f) = field {
        text.push_str(&format!(", field `{f}`"));
    }
    text
}

impl Coded for PricingError {
    fn code(&self) -> &'static str {
        match self {
            Self::Insecure { .. } => "PRICING_SOURCE_INSECURE",
            Self::InvalidSource { .. } => "PRICING_SOURCE_INVALID",
            Self::TooLarge { .. } => "PRICING_TOO_LARGE",
            Self::TimedOut { .. } => "PRICING_TIMED_OUT",
            Self::FetchFailed { .. } => "PRICING_FETCH_FAILED",
            Self::Malformed { .. } => "PRICING_MALFORMED",
        }
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some(match self {
            Self::Insecure { .. } | Self::InvalidSource { .. } => {
                "give an https:// URL (or http:// to this machine), or a local file; the source lives in DATA_DIR/pricing.json `url`".into()
            }
            Self::TooLarge { .. } => "a price table is small: check that the URL is the table itself".into(),
            Self::TimedOut { .. } | Self::FetchFailed { .. } => {
                "check the URL and the network, then fetch again (or give a local file)".into()
            }
            Self::Malformed { .. } => {
                "correct the table as docs/formats/prices.json.md shows ({asOf, models: {model: {inputPerMtok, outputPerMtok, …}}})".into()
            }
        })
    }
}
