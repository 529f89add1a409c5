//! MCP tool names as the model sees them: `<server>__<tool>`, symbols turned into `_`, at most
//! 64 characters (keeping the tail, which tells tools of one server apart).

/// The longest tool name.
pub(crate) const MAX_LEN: usize = 64;

/// The qualified name of a server's tool.
pub(crate) fn qualified(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let full = format!("{}__{}", clean(server), clean(tool));
    let len = full.chars().count();
    if len <= MAX_LEN {
        full
    } else {
        full.chars().skip(len - MAX_LEN).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(qualified("files", "read_file"), "files__read_file");
        assert_eq!(qualified("my server", "do.it"), "my_server__do_it");
        let long = qualified(&"s".repeat(60), "tool_name");
        assert_eq!(long.len(), 64);
        assert!(long.ends_with("__tool_name"));
    }
}
