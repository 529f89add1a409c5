//! The `file` tool: read, write, append, mkdir, move, copy, remove (to the trash) — only
//! inside the work folder, never in a fenced folder, every write answered with its diff.

use std::io::{Read, Write};

use serde_json::Value;

use super::text_edit::unified_diff;
use super::trash::move_to_trash;
use super::{ToolContext, ToolOutput, bool_arg, cap, str_arg};

/// The most characters `read` returns.
pub const READ_MAX_CHARS: usize = 12_000;
/// The most characters of a diff shown after a write.
const DIFF_MAX_CHARS: usize = 4_000;

/// Runs one `file` call.
pub fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let jail = match ctx.jail() {
        Ok(j) => j,
        Err(out) => return out,
    };
    let Some(path) = str_arg(args, "path") else {
        return ToolOutput::fail(ctx.say("path が必要です。", "path is required."));
    };
    match str_arg(args, "op").unwrap_or("") {
        "read" => {
            let resolved = match jail.existing(path) {
                Ok(p) => p,
                Err(e) => return ctx.refused(&e),
            };
            let mut file = match jail.open_read(&resolved) {
                Ok(f) => f,
                Err(e) => return ctx.refused(&e),
            };
            let mut bytes = Vec::new();
            if let Err(e) = file.read_to_end(&mut bytes) {
                return ToolOutput::fail(e.to_string());
            }
            match String::from_utf8(bytes) {
                Ok(text) => ToolOutput::ok(cap(&text, READ_MAX_CHARS)),
                Err(_) => {
                    ToolOutput::fail(ctx.say("テキストではないファイルです。", "Not a text file."))
                }
            }
        }
        op @ ("write" | "append") => {
            let content = str_arg(args, "content").unwrap_or("");
            let resolved = match jail.writable(path) {
                Ok(p) => p,
                Err(e) => return ctx.refused(&e),
            };
            let existed = resolved.exists();
            if op == "write" && existed && !bool_arg(args, "overwrite", false) {
                return ToolOutput::fail(ctx.say(
                    "ファイルがあります。上書きするなら overwrite:true を付けてください。",
                    "The file exists. Pass overwrite:true to replace it.",
                ));
            }
            let before = if existed {
                std::fs::read_to_string(&resolved).unwrap_or_default()
            } else {
                String::new()
            };
            if let Some(parent) = resolved.parent()
                && let Err(e) = std::fs::create_dir_all(parent)
            {
                return ToolOutput::fail(e.to_string());
            }
            let mut file = match jail.open_write(&resolved, op == "append") {
                Ok(f) => f,
                Err(e) => return ctx.refused(&e),
            };
            if let Err(e) = file.write_all(content.as_bytes()) {
                return ToolOutput::fail(e.to_string());
            }
            let after = if op == "append" {
                format!("{before}{content}")
            } else {
                content.to_owned()
            };
            ToolOutput::ok(cap(&unified_diff(&before, &after, path), DIFF_MAX_CHARS))
        }
        "mkdir" => match jail.writable(path) {
            Ok(p) => match std::fs::create_dir_all(&p) {
                Ok(()) => ToolOutput::ok(ctx.say("フォルダを作りました。", "Folder created.")),
                Err(e) => ToolOutput::fail(e.to_string()),
            },
            Err(e) => ctx.refused(&e),
        },
        op @ ("move" | "copy") => {
            let Some(to) = str_arg(args, "to") else {
                return ToolOutput::fail(ctx.say("to が必要です。", "to is required."));
            };
            let from = match if op == "move" {
                jail.writable(path).and_then(|_| jail.existing(path))
            } else {
                jail.existing(path)
            } {
                Ok(p) => p,
                Err(e) => return ctx.refused(&e),
            };
            let dest = match jail.writable(to) {
                Ok(p) => p,
                Err(e) => return ctx.refused(&e),
            };
            if dest.exists() && !bool_arg(args, "overwrite", false) {
                return ToolOutput::fail(ctx.say(
                    "行き先にファイルがあります。overwrite:true で上書きします。",
                    "The destination exists. Pass overwrite:true to replace it.",
                ));
            }
            if from
                .symlink_metadata()
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(true)
                || from.is_dir() && op == "copy"
            {
                return ToolOutput::fail(ctx.say(
                    "この種類は扱えません（リンクか、フォルダの複製）。",
                    "Not supported here (a link, or copying a folder).",
                ));
            }
            if let Some(parent) = dest.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let result = if op == "move" {
                std::fs::rename(&from, &dest)
            } else {
                std::fs::copy(&from, &dest).map(drop)
            };
            match result {
                Ok(()) => ToolOutput::ok(format!("{} → {to}", path)),
                Err(e) => ToolOutput::fail(e.to_string()),
            }
        }
        "remove" => {
            let resolved = match jail.writable(path).and_then(|_| jail.existing(path)) {
                Ok(p) => p,
                Err(e) => return ctx.refused(&e),
            };
            match move_to_trash(&resolved, &ctx.trash) {
                Ok(_) => ToolOutput::ok(ctx.say("ゴミ箱へ移しました。", "Moved to the trash.")),
                Err(e) => ToolOutput::fail(e.to_string()),
            }
        }
        _ => ToolOutput::fail(ctx.say(
            "op は read / write / append / mkdir / move / copy / remove のどれかです。",
            "op is one of read, write, append, mkdir, move, copy, remove.",
        )),
    }
}
