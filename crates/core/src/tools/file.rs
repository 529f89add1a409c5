//! The `file` tool: read, write, append, mkdir, move, copy, remove (to the trash) — only
//! inside the work folder, never in a fenced folder, every write answered with its diff. Every
//! path goes through the jail's folder handle; reads are bounded by what the tool may return.

use std::io::Write;

use serde_json::{Value, json};

use super::sandbox::{EntryKind, ReadError, WorkDir, WriteMode};
use super::specs::{prop, schema};
use super::text_edit::unified_diff;
use super::trash::{TrashSource, move_to_trash};
use super::{RunApproval, ToolContext, ToolOutput, bool_arg, cap, str_arg};
use crate::village::Language;

/// The most characters `read` returns.
pub(super) const READ_MAX_CHARS: usize = 12_000;
/// The most bytes `read` takes from a file (four per character at worst).
const READ_MAX_BYTES: u64 = READ_MAX_CHARS as u64 * 4;
/// The most characters of a diff shown after a write.
const DIFF_MAX_CHARS: usize = 4_000;
/// The largest earlier content read to show a diff after a write.
pub(crate) const DIFF_SOURCE_MAX_BYTES: u64 = 1024 * 1024;

/// Runs one `file` call.
pub(super) fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let jail = match ctx.jail() {
        Ok(j) => j,
        Err(out) => return out,
    };
    let Some(path) = str_arg(args, "path") else {
        return ToolOutput::fail(ctx.say("path が必要です。", "path is required."));
    };
    match str_arg(args, "op").unwrap_or("") {
        "read" => read(jail, path, ctx),
        op @ ("write" | "append") => write(jail, path, op == "append", args, ctx),
        "mkdir" if ctx.dry_run => match jail.writable_entry(path) {
            Ok(_) => ctx
                .would(|| format!("make the folder {path}"))
                .unwrap_or_else(|| ToolOutput::fail("")),
            Err(e) => ctx.refused(&e),
        },
        "mkdir" => match jail.make_folder(path) {
            Ok(()) => ToolOutput::ok(ctx.say("フォルダを作りました。", "Folder created.")),
            Err(e) => ctx.refused(&e),
        },
        op @ ("move" | "copy") => move_or_copy(jail, path, op == "move", args, ctx),
        "remove" => remove(jail, path, ctx),
        _ => ToolOutput::fail(ctx.say(
            "op は read / write / append / mkdir / move / copy / remove のどれかです。",
            "op is one of read, write, append, mkdir, move, copy, remove.",
        )),
    }
}

fn read(jail: &WorkDir, path: &str, ctx: &ToolContext) -> ToolOutput {
    match jail.read_text(path, READ_MAX_BYTES) {
        Ok(read) if read.truncated => {
            let mut text: String = read.text.chars().take(READ_MAX_CHARS).collect();
            text.push_str(&format!(
                "\n… [{} {READ_MAX_CHARS} {}: {} bytes]",
                ctx.say("先頭", "the first"),
                ctx.say("字のみ。ファイル全体", "characters only; the file holds"),
                read.size
            ));
            ToolOutput::ok(text)
        }
        Ok(read) => ToolOutput::ok(cap(&read.text, READ_MAX_CHARS)),
        Err(ReadError::NotText) => {
            ToolOutput::fail(ctx.say("テキストではないファイルです。", "Not a text file."))
        }
        Err(ReadError::Refused(e)) => ctx.refused(&e),
    }
}

/// The current text of a file about to be written, for the diff (empty when absent, too
/// large or not text).
fn before_text(jail: &WorkDir, path: &str) -> Option<String> {
    jail.read_text(path, DIFF_SOURCE_MAX_BYTES)
        .ok()
        .filter(|t| !t.truncated)
        .map(|t| t.text)
}

fn write(jail: &WorkDir, path: &str, append: bool, args: &Value, ctx: &ToolContext) -> ToolOutput {
    let content = str_arg(args, "content").unwrap_or("");
    let existed = match jail.entry_kind(path) {
        Ok(kind) => kind.is_some(),
        Err(e) => return ctx.refused(&e),
    };
    if !append && existed && !bool_arg(args, "overwrite", false) {
        return ToolOutput::fail(ctx.say(
            "ファイルがあります。上書きするなら overwrite:true を付けてください。",
            "The file exists. Pass overwrite:true to replace it.",
        ));
    }
    let before = if existed {
        before_text(jail, path)
    } else {
        Some(String::new())
    };
    let mode = match (append, existed) {
        (true, _) => WriteMode::Append,
        (false, true) => WriteMode::Replace,
        (false, false) => WriteMode::CreateNew,
    };
    if let Some(out) = ctx.would(|| {
        let verb = if append { "append to" } else { "write" };
        let diff = before.as_ref().map_or_else(
            || {
                format!(
                    "({} characters; diff left out: the file is large)",
                    content.chars().count()
                )
            },
            |b| {
                let after = if append {
                    format!("{b}{content}")
                } else {
                    content.to_owned()
                };
                cap(&unified_diff(b, &after, path), DIFF_MAX_CHARS)
            },
        );
        format!("{verb} {path}:\n{diff}")
    }) {
        return out;
    }
    let mut file = match jail.create_file(path, mode) {
        Ok(f) => f,
        Err(e) => return ctx.refused(&e),
    };
    if let Err(e) = file.write_all(content.as_bytes()) {
        return ToolOutput::fail(e.to_string());
    }
    let Some(before) = before else {
        return ToolOutput::ok(ctx.say(
            "書きました（大きいファイルなので差分は省略）。",
            "Written (diff left out: the file is large).",
        ));
    };
    let after = if append {
        format!("{before}{content}")
    } else {
        content.to_owned()
    };
    ToolOutput::ok(cap(&unified_diff(&before, &after, path), DIFF_MAX_CHARS))
}

fn move_or_copy(
    jail: &WorkDir,
    path: &str,
    is_move: bool,
    args: &Value,
    ctx: &ToolContext,
) -> ToolOutput {
    let Some(to) = str_arg(args, "to") else {
        return ToolOutput::fail(ctx.say("to が必要です。", "to is required."));
    };
    let overwrite = bool_arg(args, "overwrite", false);
    if ctx.dry_run {
        return dry_move_or_copy(jail, path, to, is_move, overwrite, ctx);
    }
    let result = if is_move {
        jail.rename(path, to, overwrite)
    } else {
        jail.copy(path, to, overwrite).map(drop)
    };
    match result {
        Ok(()) => ToolOutput::ok(format!("{path} → {to}")),
        Err(super::SandboxError::Exists) => ToolOutput::fail(ctx.say(
            "行き先にファイルがあります。overwrite:true で上書きします。",
            "The destination exists. Pass overwrite:true to replace it.",
        )),
        Err(e) => ctx.refused(&e),
    }
}

fn remove(jail: &WorkDir, path: &str, ctx: &ToolContext) -> ToolOutput {
    let (dir, name) = match jail.writable_entry(path) {
        Ok(entry) => entry,
        Err(e) => return ctx.refused(&e),
    };
    match jail.entry_kind(path) {
        Ok(None) => return ctx.refused(&super::SandboxError::NotFound),
        Ok(Some(EntryKind::Link)) => return ctx.refused(&super::SandboxError::Link),
        Err(e) => return ctx.refused(&e),
        Ok(Some(_)) => {}
    }
    let shown = jail.shown(path);
    let source = TrashSource {
        dir: &dir,
        name: &name,
        shown: &shown,
    };
    if let Some(out) = ctx.would(|| format!("move {path} to the trash")) {
        return out;
    }
    match move_to_trash(&source, &ctx.trash) {
        Ok(_) => ToolOutput::ok(ctx.say("ゴミ箱へ移しました。", "Moved to the trash.")),
        Err(e) => ToolOutput::fail(e.to_string()),
    }
}

/// `move` / `copy` under dry-run: the checks the real call makes before it touches anything
/// (the source is there and no link, the destination is writable and free unless
/// `overwrite`), then what it would do.
fn dry_move_or_copy(
    jail: &WorkDir,
    path: &str,
    to: &str,
    is_move: bool,
    overwrite: bool,
    ctx: &ToolContext,
) -> ToolOutput {
    match jail.entry_kind(path) {
        Ok(None) => return ctx.refused(&super::SandboxError::NotFound),
        Ok(Some(EntryKind::Link)) => return ctx.refused(&super::SandboxError::Link),
        Err(e) => return ctx.refused(&e),
        Ok(Some(_)) => {}
    }
    if let Err(e) = jail.writable_entry(path).and(jail.writable_entry(to)) {
        return ctx.refused(&e);
    }
    if !overwrite && matches!(jail.entry_kind(to), Ok(Some(_))) {
        return ToolOutput::fail(ctx.say(
            "行き先にファイルがあります。overwrite:true で上書きします。",
            "The destination exists. Pass overwrite:true to replace it.",
        ));
    }
    let verb = if is_move { "move" } else { "copy" };
    ctx.would(|| format!("{verb} {path} → {to}"))
        .unwrap_or_else(|| ToolOutput::fail(""))
}

/// `file`'s description and schema.
pub(crate) fn spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
            l.pick("作業フォルダ内のファイルを読む・書く・追記する、フォルダを作る、移動・複製する、ゴミ箱へ移す。ファイルを作れるのはこの道具だけです。read は最大 12,000 字を返します。",
                "Read, write or append to files in the work folder, make folders, move, copy, or move to the trash. This is the only tool that creates files. read returns at most 12,000 characters.",
            ),
            schema(
                &["op", "path"],
                json!({
                    "op": {"type": "string", "enum": ["read", "write", "append", "mkdir", "move", "copy", "remove"], "description": l.pick("操作。", "Operation.")},
                    "path": prop("string", l.pick("対象（作業フォルダからの相対パス）。", "Target, relative to the work folder.")),
                    "content": prop("string", l.pick("write と append の内容。", "Content for write and append.")),
                    "to": prop("string", l.pick("move と copy の行き先。", "Destination for move and copy.")),
                    "overwrite": prop("boolean", l.pick("既存のファイルを上書きする。", "Overwrite an existing file."))
                }),
                l,
            ),
        )
}
