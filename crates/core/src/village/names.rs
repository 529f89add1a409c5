//! Display names (`userName`, `externalName`, agent and judge names): what counts as a usable
//! name. Bad names are dropped on read and refused on write.

/// The longest display name, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 64;

/// Returns the name trimmed when it is usable (non-empty, at most [`MAX_NAME_CHARS`]
/// characters, no control characters), or `None`.
pub(crate) fn normalize_user_name(name: &str) -> Option<String> {
    let trimmed = name.trim();
    let ok = !trimmed.is_empty()
        && trimmed.chars().count() <= MAX_NAME_CHARS
        && !trimmed.chars().any(char::is_control);
    ok.then(|| trimmed.to_owned())
}

/// True for a usable agent or judge name: non-empty after trimming and free of control
/// characters (no length cap: the original did not cap these).
pub(crate) fn is_valid_agent_name(name: &str) -> bool {
    !name.trim().is_empty() && !name.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names() {
        assert_eq!(normalize_user_name("  Aki "), Some("Aki".into()));
        assert_eq!(normalize_user_name(""), None);
        assert_eq!(normalize_user_name("a\u{7}b"), None);
        assert_eq!(normalize_user_name(&"x".repeat(65)), None);
        assert!(is_valid_agent_name("受付"));
        assert!(!is_valid_agent_name(" \t"));
    }
}
