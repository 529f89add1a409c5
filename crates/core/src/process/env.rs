//! The environment a child starts with: never our own (which holds `FUSEFORKS_SECRET_*`, the
//! model keys and the door token), only a short list of harmless variables plus what the
//! village file gives the child.

use std::ffi::OsString;

/// The variables of our environment a child may see (when set).
pub const PASSED: [&str; 5] = ["PATH", "HOME", "USER", "LANG", "TMPDIR"];

/// The prefix of every secret variable (`--secrets env`); never given to a child.
pub const SECRET_PREFIX: &str = "FUSEFORKS_SECRET_";

/// `PASSED` from our environment, then `extra` (an MCP entry's `env`), minus any
/// `FUSEFORKS_SECRET_*` name. Apply it after `env_clear()`.
pub fn minimal_env<'a>(
    extra: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = PASSED
        .iter()
        .filter_map(|name| std::env::var_os(name).map(|v| (OsString::from(name), v)))
        .collect();
    for (name, value) in extra {
        if name.starts_with(SECRET_PREFIX) || name.is_empty() || name.contains(['=', '\0']) {
            continue;
        }
        out.retain(|(n, _)| n != name.as_str());
        out.push((OsString::from(name), OsString::from(value)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_passed_names_and_the_entry_env() {
        let extra = [
            ("LANG".to_owned(), "C".to_owned()),
            ("API_MODE".to_owned(), "test".to_owned()),
            ("FUSEFORKS_SECRET_DOOR_TOKEN".to_owned(), "x".to_owned()),
        ];
        let env = minimal_env(extra.iter().map(|(a, b)| (a, b)));
        let names: Vec<String> = env
            .iter()
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect();
        assert!(
            names
                .iter()
                .all(|n| PASSED.contains(&n.as_str()) || n == "API_MODE")
        );
        assert!(!names.iter().any(|n| n.starts_with(SECRET_PREFIX)));
        let lang: Vec<_> = env.iter().filter(|(n, _)| n == "LANG").collect();
        assert_eq!(lang.len(), 1);
        assert_eq!(lang[0].1, "C", "the entry's value wins");
    }
}
