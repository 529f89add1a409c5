//! Which tool calls have side effects, and the audit log's `action` and `target` for them:
//! `file` write/append/mkdir/move/copy/remove, `sd`/`yq` with `apply`, `run`, `remember`,
//! `blackboard` write/append/move/remove, and every MCP tool call. Read-only calls have none.
//! Under dry-run, what such a call would have done is a [`DryRunEffect`] (docs/gui-api.md).

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::sync::LockOrRecover;

/// One effect a dry-run request would have had: the tool, its target (a path in the work
/// folder, the command, `server__tool` for an MCP call) and the SHA-256 of its canonical
/// arguments (keys sorted, no spaces).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DryRunEffect {
    /// The tool as the model called it (`file`, `run`, `server__tool`, …).
    pub tool: String,
    /// What it would have touched.
    pub target: String,
    /// The SHA-256 (hex) of the canonical arguments.
    pub arguments_digest: String,
}

impl DryRunEffect {
    /// The effect of a side-effecting call stopped by dry-run; `None` for a read-only call.
    pub fn of_call(tool: &str, args: &Value, is_mcp: bool) -> Option<Self> {
        let (_, target) = side_effect(tool, args, is_mcp)?;
        Some(Self {
            tool: tool.to_owned(),
            target: if is_mcp { tool.to_owned() } else { target },
            arguments_digest: super::sha256_hex(canonical(args).as_bytes()),
        })
    }
}

/// The effects one dry-run request collects, shared by every turn of its causal chain.
#[derive(Debug, Clone, Default)]
pub struct DryRunLog(Arc<Mutex<Vec<DryRunEffect>>>);

impl DryRunLog {
    /// Adds one effect.
    pub fn push(&self, effect: DryRunEffect) {
        self.0.lock_or_recover().push(effect);
    }

    /// The effects so far, in the order the calls were made.
    pub fn effects(&self) -> Vec<DryRunEffect> {
        self.0.lock_or_recover().clone()
    }
}

impl PartialEq for DryRunLog {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for DryRunLog {}

/// The canonical text of a JSON value: object keys sorted, no spaces.
pub fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

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
    fn an_effect_names_its_target_and_digests_canonical_arguments() {
        use super::{DryRunEffect, canonical};
        let a = json!({"path": "a.md", "op": "write", "content": "x"});
        let b = json!({"op": "write", "content": "x", "path": "a.md"});
        assert_eq!(
            canonical(&a),
            r#"{"content":"x","op":"write","path":"a.md"}"#
        );
        let (ea, eb) = (
            DryRunEffect::of_call("file", &a, false).unwrap(),
            DryRunEffect::of_call("file", &b, false).unwrap(),
        );
        assert_eq!(ea, eb, "key order does not change the digest");
        assert_eq!(ea.target, "a.md");
        let mcp = DryRunEffect::of_call("echo__say", &json!({}), true).unwrap();
        assert_eq!(mcp.target, "echo__say");
        assert_eq!(
            DryRunEffect::of_call("file", &json!({"op": "read"}), false),
            None
        );
    }

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
