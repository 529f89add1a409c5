//! The blackboard (original Specs 54-55): shared notes in `<workDir>/blackboard/<doing|on-hold|
//! done>/<agent_id> - <job>.md`. Everyone may list and read; an agent writes only its own notes;
//! `write` only creates (in `doing/`); a note in `done/` is frozen; a note holds at most 12,000
//! characters. Other write tools are fenced out of `blackboard/` by the work-folder jail.
//! Its helpers fail with `String`: that string IS the tool result the model reads, not an error
//! an edge renders, so it stays words.

use std::io::Write;

use serde_json::{Value, json};

use super::sandbox::{EntryKind, SandboxError, WorkDir, WriteMode};
use super::trash::{TrashSource, move_to_trash};
use super::{ToolContext, ToolOutput, cap, str_arg};
use crate::llm::ToolSpec;
use crate::village::Language;

/// The folders, in board order.
pub(crate) const FOLDERS: [&str; 3] = ["doing", "on-hold", "done"];
/// The most characters a note holds.
pub(crate) const MAX_NOTE_CHARS: usize = 12_000;
/// The most bytes read of a note (four per character at worst).
const NOTE_MAX_BYTES: u64 = MAX_NOTE_CHARS as u64 * 4;

/// The tool's spec.
pub(crate) fn spec(language: Language) -> ToolSpec {
    let (d, name, body, to, owner) = match language {
        Language::Ja => (
            "黒板のメモを扱います（list / read / write / append / move / remove）。書けるのは自分のメモだけで、write は doing に新しく作るときだけ、done のメモは変えられません。",
            "仕事の名前（ファイル名の「ID - 」の後ろ）。",
            "本文。",
            "move の行き先（doing / on-hold / done）。",
            "read で他の個体のメモを読むときの ID。",
        ),
        Language::En => (
            "Work with notes on the blackboard (list / read / write / append / move / remove). You write only your own notes; write only creates a note in doing; notes in done are frozen.",
            "The job name (the file name after \"ID - \").",
            "The text.",
            "Destination of move (doing / on-hold / done).",
            "Whose note to read, when it is another agent's.",
        ),
    };
    ToolSpec {
        name: "blackboard".into(),
        description: d.into(),
        parameters: json!({"type": "object", "properties": {
            "op": {"type": "string", "enum": ["list", "read", "write", "append", "move", "remove"]},
            "name": {"type": "string", "description": name},
            "body": {"type": "string", "description": body},
            "to": {"type": "string", "enum": FOLDERS, "description": to},
            "owner": {"type": "string", "description": owner}
        }, "required": ["op"], "additionalProperties": false}),
    }
}

/// An outcome word for the `blackboard op:` log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Done.
    Ok,
    /// Nothing to do.
    Noop,
    /// The note exists already.
    Exists,
    /// Someone else's note.
    NotOwner,
    /// The note is in `done/`.
    Frozen,
    /// No such note.
    NotFound,
    /// Over the size cap.
    TooLarge,
    /// The agent has no blackboard.
    Disabled,
}

impl Outcome {
    /// The log word.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Noop => "noop",
            Self::Exists => "exists",
            Self::NotOwner => "not_owner",
            Self::Frozen => "frozen",
            Self::NotFound => "not_found",
            Self::TooLarge => "too_large",
            Self::Disabled => "disabled",
        }
    }
}

fn valid_job(job: &str) -> bool {
    let job = job.trim();
    !job.is_empty()
        && job.chars().count() <= 100
        && !job.chars().any(|c| {
            c.is_control() || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|')
        })
        && job != "."
        && job != ".."
}

fn file_name(owner: &str, job: &str) -> String {
    format!("{owner} - {}.md", job.trim())
}

/// Where a note is, if anywhere: its folder's index and its path on the board.
fn find(board: &WorkDir, owner: &str, job: &str) -> Option<(usize, String)> {
    FOLDERS
        .iter()
        .enumerate()
        .map(|(i, f)| (i, format!("{f}/{}", file_name(owner, job))))
        .find(|(_, p)| matches!(board.entry_kind(p), Ok(Some(EntryKind::File))))
}

/// The board's names in board order: regular `.md` files only (links and the rest are not
/// notes).
fn list(board: &WorkDir) -> Vec<String> {
    let mut lines = Vec::new();
    for folder in FOLDERS {
        let entries = board.list(folder).unwrap_or_default();
        lines.extend(
            entries
                .into_iter()
                .filter(|e| e.kind == EntryKind::File)
                .map(|e| e.name.to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".md"))
                .map(|n| format!("{folder}/{n}")),
        );
    }
    lines
}

fn io_fail(e: impl std::fmt::Display) -> Answer {
    (ToolOutput::fail(e.to_string()), Outcome::NotFound)
}

/// What a call gives: the output and the outcome word for the log.
type Answer = (ToolOutput, Outcome);

/// Runs one `blackboard` call; returns the output and the outcome word for the log.
pub(crate) fn run(args: &Value, ctx: &ToolContext) -> Answer {
    let op = str_arg(args, "op").unwrap_or("");
    let board = match open_board(op, ctx) {
        Ok(board) => board,
        Err(answer) => return answer,
    };
    if op == "list" {
        let lines = list(&board);
        let body = if lines.is_empty() {
            ctx.say("黒板は空です。", "The blackboard is empty.")
        } else {
            cap(&lines.join("\n"), MAX_NOTE_CHARS)
        };
        return (ToolOutput::ok(body), Outcome::Ok);
    }
    let (job, owner) = match note_names(args, op, ctx) {
        Ok(names) => names,
        Err(answer) => return answer,
    };
    let me = ctx.agent_id.as_str();
    let body = str_arg(args, "body").unwrap_or("");
    match (op, find(&board, owner, job)) {
        ("read", Some((_, path))) => match board.read_text(&path, NOTE_MAX_BYTES) {
            Ok(read) => (ToolOutput::ok(cap(&read.text, MAX_NOTE_CHARS)), Outcome::Ok),
            Err(e) => io_fail(e),
        },
        ("write", Some(_)) => (
            ToolOutput::fail(ctx.say(
                "そのメモはもうあります。append を使ってください。",
                "The note exists; use append.",
            )),
            Outcome::Exists,
        ),
        ("write", None) => write(&board, &file_name(me, job), body, ctx),
        (_, Some((2, _))) if op != "read" => (
            ToolOutput::fail(ctx.say("done のメモは変えられません。", "Notes in done are frozen.")),
            Outcome::Frozen,
        ),
        ("append", Some((_, path))) => append(&board, &path, body, ctx),
        ("move", Some((from, path))) => {
            let to = str_arg(args, "to");
            move_note(&board, (from, &path), to, &file_name(me, job), ctx)
        }
        ("remove", Some((_, path))) if ctx.dry_run => match board.writable_entry(&path) {
            Ok(_) => (
                dry(ctx, || format!("move the note {path} to the trash")),
                Outcome::Ok,
            ),
            Err(e) => io_fail(e.to_string()),
        },
        ("remove", Some((_, path))) => match trash(&board, &path, ctx) {
            Ok(()) => (
                ToolOutput::ok(ctx.say("ゴミ箱へ移しました。", "Moved to the trash.")),
                Outcome::Ok,
            ),
            Err(e) => io_fail(e),
        },
        ("read" | "append" | "move" | "remove", None) => (
            ToolOutput::fail(ctx.say("そのメモはありません。", "No such note.")),
            Outcome::NotFound,
        ),
        _ => (
            ToolOutput::fail(ctx.say(
                "op は list / read / write / append / move / remove です。",
                "op is list, read, write, append, move or remove.",
            )),
            Outcome::NotFound,
        ),
    }
}

/// The board of the agent's work folder (made by a `write`); a missing board is an empty
/// list, or no such note.
fn open_board(op: &str, ctx: &ToolContext) -> Result<WorkDir, Answer> {
    let Some(jail) = ctx.work_dir.as_ref() else {
        return Err((
            ToolOutput::fail(ctx.say(
                "黒板がありません（作業フォルダが未設定）。",
                "No blackboard (no work folder).",
            )),
            Outcome::Disabled,
        ));
    };
    match jail.sub_jail("blackboard", op == "write" && !ctx.dry_run) {
        Ok(board) => Ok(board),
        Err(SandboxError::NotFound) if op == "write" && ctx.dry_run => Err((
            dry(ctx, || {
                "create the blackboard folder and write the note".into()
            }),
            Outcome::Ok,
        )),
        Err(SandboxError::NotFound) if op == "list" => Err((
            ToolOutput::ok(ctx.say("黒板は空です。", "The blackboard is empty.")),
            Outcome::Ok,
        )),
        Err(SandboxError::NotFound) => Err((
            ToolOutput::fail(ctx.say("そのメモはありません。", "No such note.")),
            Outcome::NotFound,
        )),
        Err(e) => Err((
            ToolOutput::fail(format!(
                "{}: {e}",
                ctx.say(
                    "黒板のフォルダを開けません",
                    "The blackboard folder cannot be opened"
                )
            )),
            Outcome::Disabled,
        )),
    }
}

/// The note's job name and owner; an agent other than the owner may only read.
fn note_names<'a>(
    args: &'a Value,
    op: &str,
    ctx: &'a ToolContext,
) -> Result<(&'a str, &'a str), Answer> {
    let Some(job) = str_arg(args, "name").filter(|j| valid_job(j)) else {
        return Err((
            ToolOutput::fail(ctx.say(
                "name が無いか、使えない文字を含みます。",
                "name is missing or holds characters that cannot be used.",
            )),
            Outcome::NotFound,
        ));
    };
    let owner = str_arg(args, "owner").unwrap_or(ctx.agent_id.as_str());
    if !crate::village::ids::is_safe_identifier(owner) {
        return Err((ToolOutput::fail("owner"), Outcome::NotFound));
    }
    if op != "read" && owner != ctx.agent_id.as_str() {
        return Err((
            ToolOutput::fail(ctx.say(
                "書けるのは自分のメモだけです。",
                "You can write only your own notes.",
            )),
            Outcome::NotOwner,
        ));
    }
    Ok((job, owner))
}

/// `write`: a new note of the agent's own in `doing/`.
fn write(board: &WorkDir, mine: &str, body: &str, ctx: &ToolContext) -> Answer {
    if body.chars().count() > MAX_NOTE_CHARS {
        return too_large(ctx);
    }
    let path = format!("doing/{mine}");
    if ctx.dry_run {
        return (
            dry(ctx, || {
                format!(
                    "write the note {path} ({} characters)",
                    body.chars().count()
                )
            }),
            Outcome::Ok,
        );
    }
    let written = board
        .create_file(&path, WriteMode::CreateNew)
        .map_err(|e| e.to_string())
        .and_then(|mut f| f.write_all(body.as_bytes()).map_err(|e| e.to_string()));
    match written {
        Ok(()) => (ToolOutput::ok(path), Outcome::Ok),
        Err(e) => io_fail(e),
    }
}

/// `append`: more text at the end of a note, within the cap.
fn append(board: &WorkDir, path: &str, body: &str, ctx: &ToolContext) -> Answer {
    let current = match board.read_text(path, NOTE_MAX_BYTES) {
        Ok(read) if !read.truncated => read.text,
        Ok(_) => return too_large(ctx),
        Err(e) => return io_fail(e),
    };
    if current.chars().count() + body.chars().count() > MAX_NOTE_CHARS {
        return too_large(ctx);
    }
    if ctx.dry_run {
        return (
            dry(ctx, || {
                format!(
                    "append {} characters to the note {path}",
                    body.chars().count()
                )
            }),
            Outcome::Ok,
        );
    }
    let appended = board
        .create_file(path, WriteMode::Append)
        .map_err(|e| e.to_string())
        .and_then(|mut f| f.write_all(body.as_bytes()).map_err(|e| e.to_string()));
    match appended {
        Ok(()) => (
            ToolOutput::ok(ctx.say("追記しました。", "Appended.")),
            Outcome::Ok,
        ),
        Err(e) => io_fail(e),
    }
}

/// `move`: the note (in folder `from`, at `path`) to the folder `to`.
fn move_note(
    board: &WorkDir,
    (from, path): (usize, &str),
    to: Option<&str>,
    mine: &str,
    ctx: &ToolContext,
) -> Answer {
    let Some(to) = to.and_then(|t| FOLDERS.iter().position(|f| *f == t)) else {
        return (
            ToolOutput::fail(ctx.say(
                "to は doing / on-hold / done です。",
                "to is doing, on-hold or done.",
            )),
            Outcome::NotFound,
        );
    };
    if to == from {
        return (
            ToolOutput::ok(ctx.say("そのままです。", "Already there.")),
            Outcome::Noop,
        );
    }
    let dest = format!("{}/{mine}", FOLDERS[to]);
    if ctx.dry_run {
        return (
            dry(ctx, || format!("move the note {path} → {dest}")),
            Outcome::Ok,
        );
    }
    match board.rename(path, &dest, false) {
        Ok(()) => (ToolOutput::ok(dest), Outcome::Ok),
        Err(e) => io_fail(e),
    }
}

fn trash(board: &WorkDir, path: &str, ctx: &ToolContext) -> Result<(), String> {
    let (dir, name) = board.writable_entry(path).map_err(|e| e.to_string())?;
    let shown = board.shown(path);
    let source = TrashSource {
        dir: &dir,
        name: &name,
        shown: &shown,
    };
    move_to_trash(&source, &ctx.trash)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// The dry-run answer (`ctx.dry_run` is checked by the caller).
fn dry(ctx: &ToolContext, what: impl FnOnce() -> String) -> ToolOutput {
    ctx.would(what).unwrap_or_else(|| ToolOutput::fail(""))
}

fn too_large(ctx: &ToolContext) -> Answer {
    (
        ToolOutput::fail(ctx.say(
            "メモは 12,000 字までです。",
            "A note holds at most 12,000 characters.",
        )),
        Outcome::TooLarge,
    )
}
