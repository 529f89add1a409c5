//! `rag`: a Markdown heading index over the agent's declared `ragSources` folders (outline,
//! search, read a section). It reads only inside those folders, which may be outside the work
//! folder, each opened as a read-only jail (files read through its handle, bounded). The walk
//! (`walk.rs`) skips hidden files and honours each source's `.ignore` and `.gitignore`, read
//! through that jail; one that cannot be read so is said in a `note:` line.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::specs::{prop, schema};
use super::walk::{Hidden, Walk, with_notes};
use super::{RunApproval, ToolContext, ToolOutput, WorkDir, bool_arg, cap, str_arg};
use crate::village::Language;

const MAX_CHARS: usize = 12_000;
const MAX_HITS: usize = 200;

/// The most bytes read of one source file.
const FILE_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// The declared sources that exist, each opened as a read-only jail.
fn sources(ctx: &ToolContext) -> Vec<WorkDir> {
    ctx.rag_sources
        .iter()
        .filter_map(|s| WorkDir::new(s).ok())
        .collect()
}

/// Reads a file inside one of the sources (absolute, or relative to the first source that
/// holds it), through the source's folder handle; bounded.
fn read_source(roots: &[WorkDir], path: &str) -> Option<String> {
    roots
        .iter()
        .find_map(|root| root.read_text(path, FILE_MAX_BYTES).ok())
        .map(|read| read.text)
}

/// Every Markdown file of the sources, as its path and the index of its source, and the
/// walk's notes on ignore files treated as absent.
fn markdown_files(roots: &[WorkDir]) -> (Vec<(PathBuf, usize)>, Vec<String>) {
    let mut files = Vec::new();
    let mut notes = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let mut walk = Walk::new(root, root.root(), Hidden::Skipped);
        for entry in walk.by_ref() {
            let p = entry.path();
            if p.extension().is_some_and(|e| e == "md" || e == "markdown")
                && entry.file_type().is_some_and(|t| t.is_file())
            {
                files.push((p.to_path_buf(), i));
            }
        }
        notes.extend(walk.notes());
    }
    files.sort();
    (files, notes)
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    (1..=6)
        .contains(&level)
        .then(|| line[level..].strip_prefix(' ').map(|t| (level, t.trim())))
        .flatten()
}

/// Runs one `rag` call.
pub(super) fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let roots = sources(ctx);
    if roots.is_empty() {
        return ToolOutput::fail(ctx.say(
            "資料フォルダがありません。",
            "No source folders are declared.",
        ));
    }
    match str_arg(args, "op").unwrap_or("outline") {
        "outline" => outline(&roots, args, ctx),
        "search" => search(&roots, args, ctx),
        "read" => read(&roots, args, ctx),
        _ => ToolOutput::fail(ctx.say(
            "op は outline / search / read です。",
            "op is outline, search or read.",
        )),
    }
}

/// `outline`: the Markdown files, or one file's headings.
fn outline(roots: &[WorkDir], args: &Value, ctx: &ToolContext) -> ToolOutput {
    match str_arg(args, "path") {
        None => {
            let (files, notes) = markdown_files(roots);
            let list: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
            ToolOutput::ok(with_notes(cap(&list.join("\n"), MAX_CHARS), &notes))
        }
        Some(path) => match read_source(roots, path) {
            Some(text) => {
                let outline: Vec<String> = text
                    .lines()
                    .filter_map(heading)
                    .map(|(level, title)| format!("{}{title}", "  ".repeat(level - 1)))
                    .collect();
                ToolOutput::ok(cap(&outline.join("\n"), MAX_CHARS))
            }
            None => ToolOutput::fail(ctx.say(
                "資料フォルダの外か、読めないファイルです。",
                "Outside the source folders, or unreadable.",
            )),
        },
    }
}

/// `search`: the lines matching a pattern, with their file, line and section.
fn search(roots: &[WorkDir], args: &Value, ctx: &ToolContext) -> ToolOutput {
    let Some(pattern) = str_arg(args, "pattern") else {
        return ToolOutput::fail(ctx.say("pattern が必要です。", "pattern is required."));
    };
    let regex = match regex::RegexBuilder::new(pattern)
        .case_insensitive(bool_arg(args, "case_insensitive", false))
        .build()
    {
        Ok(r) => r,
        Err(e) => return ToolOutput::fail(e.to_string()),
    };
    let mut hits = Vec::new();
    let (files, notes) = markdown_files(roots);
    'files: for (file, root) in files {
        let Some(text) = read_source(&roots[root..=root], &file.to_string_lossy()) else {
            continue;
        };
        let mut section = String::new();
        for (n, line) in text.lines().enumerate() {
            if let Some((_, title)) = heading(line) {
                section = title.to_owned();
            }
            if regex.is_match(line) {
                hits.push(format!(
                    "{}:{} [{}] {}",
                    file.display(),
                    n + 1,
                    section,
                    line.trim()
                ));
                if hits.len() >= MAX_HITS {
                    break 'files;
                }
            }
        }
    }
    let body = if hits.is_empty() {
        ctx.say("一致なし。", "No matches.")
    } else {
        cap(&hits.join("\n"), MAX_CHARS)
    };
    ToolOutput::ok(with_notes(body, &notes))
}

/// `read`: one section, up to the next heading of its level or above.
fn read(roots: &[WorkDir], args: &Value, ctx: &ToolContext) -> ToolOutput {
    let (Some(path), Some(section)) = (str_arg(args, "path"), str_arg(args, "section")) else {
        return ToolOutput::fail(ctx.say(
            "path と section が必要です。",
            "path and section are required.",
        ));
    };
    let Some(text) = read_source(roots, path) else {
        return ToolOutput::fail(ctx.say(
            "資料フォルダの外か、読めないファイルです。",
            "Outside the source folders, or unreadable.",
        ));
    };
    let mut out = Vec::new();
    let mut level_in = None;
    for line in text.lines() {
        match (heading(line), level_in) {
            (Some((level, title)), None) if title == section.trim() => {
                level_in = Some(level);
                out.push(line);
            }
            (Some((level, _)), Some(open)) if level <= open => break,
            (_, Some(_)) => out.push(line),
            _ => {}
        }
    }
    if out.is_empty() {
        ToolOutput::fail(ctx.say("その見出しはありません。", "No such heading."))
    } else {
        ToolOutput::ok(cap(&out.join("\n"), MAX_CHARS))
    }
}

/// `rag`'s description and schema.
pub(crate) fn spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
            l.pick("登録された資料フォルダの Markdown を見出しで引きます（outline / search / read）。",
                "Look up the Markdown of the declared source folders by heading (outline / search / read).",
            ),
            schema(
                &[],
                json!({
                    "op": {"type": "string", "enum": ["outline", "search", "read"], "description": l.pick("操作。", "Operation.")},
                    "path": prop("string", l.pick("ファイル。", "File.")),
                    "pattern": prop("string", l.pick("search の正規表現。", "Regular expression for search.")),
                    "section": prop("string", l.pick("read する見出し。", "Heading to read.")),
                    "case_insensitive": prop("boolean", l.pick("大文字と小文字を区別しない。", "Ignore case."))
                }),
                l,
            ),
        )
}
