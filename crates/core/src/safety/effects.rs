//! Which tool calls have side effects, and the audit log's `action` and `target` for them:
//! `file` write/append/mkdir/move/copy/remove, `sd`/`yq` with `apply`, `run`, `remember`,
//! `blackboard` write/append/move/remove, and every MCP tool call. Read-only calls have none.

use serde_json::Value;

/// The `action` and `target` of a side-effecting call; `None` for a read-only one.
pub fn side_effect(tool: &str, args: &Value, is_mcp: bool) -> Option<(String, String)> {
    let s = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or("");
    let apply = args.get("apply").and_then(Value::as_bool).unwrap_or(false);
    if is_mcp {
        return Some(("mcp_call".into(), tool.replacen("__", "/", 1)));
    }
    match tool {
        "file" => match s("op") {
            op @ ("write" | "append" | "mkdir" | "remove") => {
                Some((format!("file_{op}"), s("path").to_owned()))
            }
            op @ ("move" | "copy") => Some((
                format!("file_{op}"),
                format!("{} -> {}", s("path"), s("to")),
            )),
            _ => None,
        },
        "sd" | "yq" if apply => Some((format!("{tool}_apply"), s("path").to_owned())),
        "run" => Some(("run".into(), s("command").to_owned())),
        "remember" => Some(("remember".into(), "Memory.md".into())),
        "blackboard" => match s("op") {
            op @ ("write" | "append" | "move" | "remove") => {
                Some((format!("blackboard_{op}"), s("name").to_owned()))
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::side_effect;
    use serde_json::json;

    #[test]
    fn reads_have_no_side_effect_and_writes_do() {
        assert_eq!(
            side_effect("file", &json!({"op": "read", "path": "a"}), false),
            None
        );
        assert_eq!(side_effect("grep", &json!({}), false), None);
        assert_eq!(side_effect("sd", &json!({"path": "a"}), false), None);
        assert_eq!(
            side_effect("sd", &json!({"path": "a", "apply": true}), false),
            Some(("sd_apply".into(), "a".into()))
        );
        assert_eq!(
            side_effect("file", &json!({"op": "write", "path": "a"}), false),
            Some(("file_write".into(), "a".into()))
        );
        assert_eq!(
            side_effect("echo__say", &json!({}), true),
            Some(("mcp_call".into(), "echo/say".into()))
        );
    }
}
