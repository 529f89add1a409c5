//! The blackboard (original Specs 54-55): shared notes in `<workDir>/blackboard/<doing|on-hold|
//! done>/<agent_id> - <job>.md`. Everyone may list and read; an agent writes only its own notes;
//! `write` only creates (in `doing/`); a note in `done/` is frozen; a note holds at most 12,000
//! characters. Other write tools are fenced out of `blackboard/` by the work-folder jail.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{ToolContext, ToolOutput, str_arg};
use crate::llm::ToolSpec;
use crate::village::Language;

/// The folders, in board order.
pub const FOLDERS: [&str; 3] = ["doing", "on-hold", "done"];
/// The most characters a note holds.
pub const MAX_NOTE_CHARS: usize = 12_000;

/// The tool's spec.
pub fn spec(language: Language) -> ToolSpec {
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
pub enum Outcome {
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
    pub fn as_str(self) -> &'static str {
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

/// Where a note is, if anywhere.
fn find(board: &Path, owner: &str, job: &str) -> Option<(usize, PathBuf)> {
    FOLDERS
        .iter()
        .enumerate()
        .map(|(i, f)| (i, board.join(f).join(file_name(owner, job))))
        .find(|(_, p)| p.is_file())
}

/// Runs one `blackboard` call; returns the output and the outcome word for the log.
pub fn run(args: &Value, ctx: &ToolContext) -> (ToolOutput, Outcome) {
    let Some(jail) = ctx.work_dir.as_ref() else {
        return (
            ToolOutput::fail(ctx.say(
                "黒板がありません（作業フォルダが未設定）。",
                "No blackboard (no work folder).",
            )),
            Outcome::Disabled,
        );
    };
    let board = jail.root().join("blackboard");
    if board
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        return (
            ToolOutput::fail(ctx.say(
                "黒板のフォルダがリンクです。",
                "The blackboard folder is a link.",
            )),
            Outcome::Disabled,
        );
    }
    let me = ctx.agent_id.as_str();
    let op = str_arg(args, "op").unwrap_or("");
    if op == "list" {
        let mut lines = Vec::new();
        for folder in FOLDERS {
            let mut names: Vec<String> = std::fs::read_dir(board.join(folder))
                .map(|d| {
                    d.filter_map(Result::ok)
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.ends_with(".md"))
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            lines.extend(names.into_iter().map(|n| format!("{folder}/{n}")));
        }
        let body = if lines.is_empty() {
            ctx.say("黒板は空です。", "The blackboard is empty.")
        } else {
            lines.join("\n")
        };
        return (ToolOutput::ok(body), Outcome::Ok);
    }
    let Some(job) = str_arg(args, "name").filter(|j| valid_job(j)) else {
        return (
            ToolOutput::fail(ctx.say(
                "name が無いか、使えない文字を含みます。",
                "name is missing or holds characters that cannot be used.",
            )),
            Outcome::NotFound,
        );
    };
    let owner = str_arg(args, "owner").unwrap_or(me);
    if !crate::village::ids::is_safe_identifier(owner) {
        return (ToolOutput::fail("owner"), Outcome::NotFound);
    }
    if op != "read" && owner != me {
        return (
            ToolOutput::fail(ctx.say(
                "書けるのは自分のメモだけです。",
                "You can write only your own notes.",
            )),
            Outcome::NotOwner,
        );
    }
    let body = str_arg(args, "body").unwrap_or("");
    let found = find(&board, owner, job);
    match (op, found) {
        ("read", Some((_, path))) => match std::fs::read_to_string(path) {
            Ok(text) => (ToolOutput::ok(text), Outcome::Ok),
            Err(e) => (ToolOutput::fail(e.to_string()), Outcome::NotFound),
        },
        ("write", Some(_)) => (
            ToolOutput::fail(ctx.say(
                "そのメモはもうあります。append を使ってください。",
                "The note exists; use append.",
            )),
            Outcome::Exists,
        ),
        ("write", None) => {
            if body.chars().count() > MAX_NOTE_CHARS {
                return (
                    ToolOutput::fail(ctx.say(
                        "メモは 12,000 字までです。",
                        "A note holds at most 12,000 characters.",
                    )),
                    Outcome::TooLarge,
                );
            }
            let path = board.join("doing").join(file_name(me, job));
            let written = std::fs::create_dir_all(board.join("doing"))
                .and_then(|()| std::fs::write(&path, body));
            match written {
                Ok(()) => (
                    ToolOutput::ok(format!("doing/{}", file_name(me, job))),
                    Outcome::Ok,
                ),
                Err(e) => (ToolOutput::fail(e.to_string()), Outcome::NotFound),
            }
        }
        (_, Some((2, _))) if op != "read" => (
            ToolOutput::fail(ctx.say("done のメモは変えられません。", "Notes in done are frozen.")),
            Outcome::Frozen,
        ),
        ("append", Some((_, path))) => {
            let current = std::fs::read_to_string(&path).unwrap_or_default();
            if current.chars().count() + body.chars().count() > MAX_NOTE_CHARS {
                return (
                    ToolOutput::fail(ctx.say(
                        "メモは 12,000 字までです。",
                        "A note holds at most 12,000 characters.",
                    )),
                    Outcome::TooLarge,
                );
            }
            match std::fs::write(&path, format!("{current}{body}")) {
                Ok(()) => (
                    ToolOutput::ok(ctx.say("追記しました。", "Appended.")),
                    Outcome::Ok,
                ),
                Err(e) => (ToolOutput::fail(e.to_string()), Outcome::NotFound),
            }
        }
        ("move", Some((from, path))) => {
            let Some(to) = str_arg(args, "to").and_then(|t| FOLDERS.iter().position(|f| *f == t))
            else {
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
            let dest = board.join(FOLDERS[to]).join(file_name(me, job));
            match std::fs::create_dir_all(board.join(FOLDERS[to]))
                .and_then(|()| std::fs::rename(&path, &dest))
            {
                Ok(()) => (
                    ToolOutput::ok(format!("{}/{}", FOLDERS[to], file_name(me, job))),
                    Outcome::Ok,
                ),
                Err(e) => (ToolOutput::fail(e.to_string()), Outcome::NotFound),
            }
        }
        ("remove", Some((_, path))) => match super::trash::move_to_trash(&path, &ctx.trash) {
            Ok(_) => (
                ToolOutput::ok(ctx.say("ゴミ箱へ移しました。", "Moved to the trash.")),
                Outcome::Ok,
            ),
            Err(e) => (ToolOutput::fail(e.to_string()), Outcome::NotFound),
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
