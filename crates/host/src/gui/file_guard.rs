//! What the editors protect. An `mcp.json`'s `env` and `headers` values that reference no
//! `${secret:NAME}` may be secrets themselves: they leave for the page as a mask and the mask
//! is put back to the value on disk when the text is saved (an `mcp.json` that does not parse
//! is not shown at all). And a save names the hash of the text it was edited from: a file
//! changed on disk since (an approval, the `remember` tool, another tab) is not overwritten.

use axum::http::StatusCode;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::error::ApiError;

/// What a hidden value reads as on the page.
pub(super) const MASK: &str = "(hidden: kept as it is on save)";

/// The hex SHA-256 of a file's text as on disk.
pub(super) fn hash(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Refuses a save whose `base` is not the hash of the text on disk now.
pub(super) fn unchanged(base: Option<&str>, on_disk: &str) -> Result<(), ApiError> {
    match base {
        Some(b) if b != hash(on_disk) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "FILE_CHANGED",
            "the file changed on disk since it was opened; nothing was saved",
        )
        .with_fix("open the file again (your text is lost on reload: copy it first)")),
        _ => Ok(()),
    }
}

/// The values a mask stands for: every `env` / `headers` string of every server.
fn hidden_values(root: &mut Value, mut each: impl FnMut(&str, &str, &str, &mut Value)) {
    let Some(servers) = root.get_mut("mcpServers").and_then(Value::as_object_mut) else {
        return;
    };
    for (server, entry) in servers.iter_mut() {
        for field in ["env", "headers"] {
            let Some(values) = entry.get_mut(field).and_then(Value::as_object_mut) else {
                continue;
            };
            for (key, value) in values.iter_mut() {
                if value.is_string() {
                    each(server, field, key, value);
                }
            }
        }
    }
}

/// The text of an `mcp.json` for the page: plain values masked. `None`: it does not parse
/// (so nothing of it is shown).
pub(super) fn masked(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return Some(String::new());
    }
    let mut root: Value = serde_json::from_str(text).ok()?;
    hidden_values(&mut root, |_, _, _, value| {
        let shown = value.as_str().is_some_and(|v| v.contains("${secret:"));
        if !shown {
            *value = Value::String(MASK.into());
        }
    });
    serde_json::to_string_pretty(&root).ok().map(|t| t + "\n")
}

/// The text to save: every mask put back to the value on disk at the same place.
pub(super) fn unmasked(text: &str, on_disk: &str) -> Result<String, ApiError> {
    let Ok(mut root) = serde_json::from_str::<Value>(text) else {
        return Ok(text.to_owned()); // the parser's finding will say what is wrong
    };
    let disk: Value = serde_json::from_str(on_disk).unwrap_or(Value::Null);
    let mut missing = None;
    hidden_values(&mut root, |server, field, key, value| {
        if value.as_str() != Some(MASK) {
            return;
        }
        match disk.pointer(&format!(
            "/mcpServers/{}/{field}/{}",
            escape(server),
            escape(key)
        )) {
            Some(original @ Value::String(_)) => *value = original.clone(),
            _ => missing = Some(format!("{server}.{field}.{key}")),
        }
    });
    if let Some(place) = missing {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "FILE_INVALID",
            format!("{place} is hidden but has no value on disk to keep; nothing was saved"),
        )
        .with_fix("write a ${secret:NAME} reference there (and store its value below), or the value itself"));
    }
    serde_json::to_string_pretty(&root)
        .map(|t| t + "\n")
        .map_err(|e| ApiError::bad_request(e.to_string()))
}

/// A JSON pointer token.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_are_masked_and_put_back() {
        let disk = r#"{"mcpServers": {"a": {"command": "x", "env": {"TOKEN": "s3cret", "REF": "${secret:GH}"}}}}"#;
        let page = masked(disk).unwrap();
        assert!(!page.contains("s3cret") && page.contains(MASK) && page.contains("${secret:GH}"));
        let edited = page.replace("\"x\"", "\"y\"");
        let saved = unmasked(&edited, disk).unwrap();
        assert!(saved.contains("s3cret") && saved.contains("\"y\""));
        let added = page.replace(
            "\"REF\"",
            "\"NEW\": \"(hidden: kept as it is on save)\", \"REF\"",
        );
        assert!(
            unmasked(&added, disk).is_err(),
            "a mask with nothing behind it"
        );
        assert_eq!(masked("{ not json"), None);
        assert!(unchanged(Some(&hash(disk)), disk).is_ok());
        assert!(unchanged(Some("0"), disk).is_err());
        assert!(unchanged(None, disk).is_ok());
    }
}
