//! What `bake` looks for in free text and headers: Windows absolute paths it
//! will not rewrite (a warning), and credential-like MCP headers with a plaintext value (exit
//! 10 unless allowed). Names and places only: never a value.

use fuseforks_core::village::{McpConfig, McpServerEntry};

/// Whether a header name looks like it carries a credential: `authorization`,
/// `proxy-authorization`, `cookie`, `x-api-key`, `x-auth-token`, `api-key`, or a name ending in
/// `-key`, `-token`, `-secret`, `-password` (case-insensitive). A guess, not a guarantee: the
/// guarantee is writing `${secret:NAME}`.
pub fn credential_like(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    const EXACT: [&str; 6] = [
        "authorization",
        "proxy-authorization",
        "cookie",
        "x-api-key",
        "x-auth-token",
        "api-key",
    ];
    const ENDS: [&str; 4] = ["-key", "-token", "-secret", "-password"];
    EXACT.contains(&name.as_str()) || ENDS.iter().any(|e| name.ends_with(e))
}

/// The credential-like headers of `config` whose value holds no `${secret:` reference, as
/// `file: server / header` — enabled or not (the file is copied either way).
pub(super) fn plaintext_headers(file: &str, config: &McpConfig) -> Vec<String> {
    let mut found = Vec::new();
    for (server, entry) in &config.mcp_servers {
        if let McpServerEntry::Http(http) = entry {
            for (name, value) in &http.headers {
                if credential_like(name) && !value.contains("${secret:") {
                    found.push(format!("{file}: {server} / {name}"));
                }
            }
        }
    }
    found
}

/// Whether `text` holds a Windows absolute path (`X:\`), which `bake` never rewrites in free
/// text.
pub(super) fn has_windows_path(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(3).enumerate().any(|(i, w)| {
        w[0].is_ascii_alphabetic()
            && w[1] == b':'
            && w[2] == b'\\'
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
    }) || text.contains("\\\\")
        && text
            .split("\\\\")
            .nth(1)
            .is_some_and(|s| s.starts_with(|c: char| c.is_ascii_alphanumeric()))
}

/// The free-text places of an `mcp.json` that hold a Windows path (stdio command, args, env).
pub(super) fn mcp_free_text(file: &str, config: &McpConfig) -> Vec<String> {
    let mut found = Vec::new();
    for (server, entry) in &config.mcp_servers {
        if let McpServerEntry::Stdio(stdio) = entry {
            if has_windows_path(&stdio.command) {
                found.push(format!("{file}: {server}.command"));
            }
            if stdio.args.iter().any(|a| has_windows_path(a)) {
                found.push(format!("{file}: {server}.args"));
            }
            for (name, value) in &stdio.env {
                if has_windows_path(value) {
                    found.push(format!("{file}: {server}.env.{name}"));
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_like_names() {
        for yes in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "X-API-Key",
            "x-auth-token",
            "api-key",
            "My-Token",
            "client-secret",
            "db-password",
        ] {
            assert!(credential_like(yes), "{yes}");
        }
        for no in ["Accept", "x-request-id", "keyboard", "token-type"] {
            assert!(!credential_like(no), "{no}");
        }
    }

    #[test]
    fn windows_paths_in_free_text() {
        assert!(has_windows_path(r"see D:\Github\x for notes"));
        assert!(has_windows_path(r"C:\"));
        assert!(has_windows_path(r"\\server\share"));
        assert!(!has_windows_path("https://example.com/a:b"));
        assert!(!has_windows_path("/work/x and c:/y"));
        assert!(!has_windows_path(r"ab:\x"));
    }
}
