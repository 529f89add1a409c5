//! `remember`: appends one note to the agent's `Memory.md` (at most 500 characters).

use serde_json::{Value, json};

use super::specs::{prop, schema};
use super::{RunApproval, ToolContext, ToolOutput, str_arg};
use crate::village::Language;

/// The longest `remember` note, in characters.
pub const MAX_NOTE_CHARS: usize = 500;

/// Runs one `remember` call.
pub(super) fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let Some(note) = str_arg(args, "note")
        .map(str::trim)
        .filter(|n| !n.is_empty())
    else {
        return ToolOutput::fail(ctx.say("note が必要です。", "note is required."));
    };
    if note.chars().count() > MAX_NOTE_CHARS {
        return ToolOutput::fail(ctx.say(
            "note は 500 字までです。",
            "A note holds at most 500 characters.",
        ));
    }
    let memory = match ctx.agent_files.read_memory() {
        Ok(m) => m,
        Err(e) => return ToolOutput::fail(e.code().to_owned()),
    };
    let mut next = memory;
    if !next.is_empty() && !next.ends_with('\n') {
        next.push('\n');
    }
    next.push_str("- ");
    next.push_str(&note.replace('\n', " "));
    next.push('\n');
    if let Some(out) = ctx.would(|| {
        format!(
            "add a note of {} characters to Memory.md",
            note.chars().count()
        )
    }) {
        return out;
    }
    match ctx.agent_files.write_memory(&next) {
        Ok(()) => ToolOutput::ok(ctx.say("Memory.md に追記しました。", "Added to Memory.md.")),
        Err(e) => ToolOutput::fail(e.code().to_owned()),
    }
}

/// `remember`'s description and schema.
pub(crate) fn spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
        l.pick(
            "長く覚えておくことを Memory.md に 1 行追記します（500 字まで）。",
            "Append one note to Memory.md to remember it for long (up to 500 characters).",
        ),
        schema(
            &["note"],
            json!({"note": prop("string", l.pick("覚えること。", "What to remember."))}),
            l,
        ),
    )
}
