//! Identifiers of agents, judges and templates, and the safe-identifier rule
//! (`[A-Za-z0-9_-]{1,64}`) for ids that double as folder names.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The longest safe identifier, in bytes (all allowed characters are ASCII).
pub(crate) const MAX_ID_LEN: usize = 64;

/// True when `id` is `[A-Za-z0-9_-]{1,64}`: safe as a folder name on every OS.
pub(crate) fn is_safe_identifier(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The id of an agent or a judge (one namespace). Ids read from disk are checked by the store;
/// [`AgentId::new`] checks ids made in code.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentId(String);

impl AgentId {
    /// Makes an id, refusing anything that is not a safe identifier.
    pub fn new(id: impl Into<String>) -> Result<Self, InvalidIdError> {
        let id = id.into();
        if is_safe_identifier(&id) {
            Ok(Self(id))
        } else {
            Err(InvalidIdError { id })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when the id follows the safe-identifier rule.
    pub fn is_safe(&self) -> bool {
        is_safe_identifier(&self.0)
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of a model template. It is also the key of the template's API key in the secret
/// store, so it must be non-empty and free of control characters.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TemplateId(String);

impl TemplateId {
    /// Makes a template id, refusing an empty one or one with control characters.
    pub fn new(id: impl Into<String>) -> Result<Self, InvalidIdError> {
        let id = id.into();
        if is_plain_key(&id) {
            Ok(Self(id))
        } else {
            Err(InvalidIdError { id })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TemplateId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// True for a key that is usable as a secret-store key and a map key: non-empty after trimming,
/// at most 128 characters, no control characters.
pub(crate) fn is_plain_key(id: &str) -> bool {
    !id.trim().is_empty() && id.chars().count() <= 128 && !id.chars().any(char::is_control)
}

/// An id that breaks its rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid id {id:?}")]
pub struct InvalidIdError {
    /// The refused id.
    pub id: String,
}

impl crate::error::Coded for InvalidIdError {
    fn code(&self) -> &'static str {
        "INVALID_ID"
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some("use 1-64 characters from A-Z a-z 0-9 _ -".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_identifiers() {
        assert!(is_safe_identifier("agent_1"));
        assert!(is_safe_identifier("A-z_09"));
        assert!(is_safe_identifier(&"a".repeat(64)));
        assert!(!is_safe_identifier(&"a".repeat(65)));
        assert!(!is_safe_identifier(""));
        assert!(!is_safe_identifier("a b"));
        assert!(!is_safe_identifier("../x"));
        assert!(!is_safe_identifier("a.b"));
        assert!(!is_safe_identifier("ａ")); // full-width letter
        assert!(AgentId::new("x/y").is_err());
    }

    #[test]
    fn template_keys() {
        assert!(TemplateId::new("gpt-5.1 mini").is_ok());
        assert!(TemplateId::new("  ").is_err());
        assert!(TemplateId::new("a\nb").is_err());
    }
}
