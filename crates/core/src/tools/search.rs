//! `grep` and `fd`: read-only searches inside the work folder with ripgrep's own crates
//! (`ignore` for the walk, through `walk.rs`, and `grep-searcher` / `grep-regex` for the
//! search). Symlinks are not followed; hidden files are searched; `.ignore` and `.gitignore` are
//! honoured, read through the jail by `walk.rs` (one that cannot be read so is said in a `note:`
//! line). Every file is opened through the jail's handle and every
//! name found is checked to resolve beneath it (a folder swapped for a link mid-walk shows
//! nothing outside); a line longer than 1 MiB stops that file's search, and each shown line is
//! cut at 500 characters.

use std::path::{Path, PathBuf};

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use serde_json::{Value, json};

use super::sandbox::{EntryKind, WorkDir};
use super::specs::{prop, schema};
use super::walk::{Hidden, Walk, with_notes};
use super::{RunApproval, ToolContext, ToolOutput, bool_arg, cap, str_arg};
use crate::village::Language;

const MAX_LINES: usize = 500;
const MAX_CHARS: usize = 12_000;
/// The most characters of one line shown.
const LINE_MAX_CHARS: usize = 500;
/// The longest line the searcher holds in memory; a longer one ends that file's search.
const LINE_MAX_BYTES: usize = 1024 * 1024;

/// Runs one `grep` call.
pub(super) fn grep(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let (jail, pattern, start) = match search_inputs(args, ctx, true) {
        Ok(inputs) => inputs,
        Err(out) => return out,
    };
    let matcher = match RegexMatcherBuilder::new()
        .case_insensitive(bool_arg(args, "case_insensitive", false))
        .build(pattern)
    {
        Ok(m) => m,
        Err(e) => {
            return ToolOutput::fail(format!(
                "{}: {e}",
                ctx.say("正規表現が不正です", "Invalid regular expression")
            ));
        }
    };
    let include = match str_arg(args, "include").map(regex::Regex::new).transpose() {
        Ok(r) => r,
        Err(e) => return ToolOutput::fail(format!("include: {e}")),
    };
    let context = args
        .get("context")
        .and_then(Value::as_u64)
        .unwrap_or(0)
        .min(3) as usize;
    let count_only = bool_arg(args, "count_only", false);
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .heap_limit(Some(LINE_MAX_BYTES))
        .binary_detection(BinaryDetection::quit(0))
        .before_context(context)
        .after_context(context)
        .build();
    let mut out = Lines::default();
    let mut counts = Vec::new();
    let mut walk = Walk::new(jail, &start, Hidden::Shown);
    for entry in walk.by_ref() {
        let path = entry.path();
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if include.as_ref().is_some_and(|r| !r.is_match(&name)) {
            continue;
        }
        let shown = relative(jail.root(), path);
        let Ok(file) = jail.open_read(&shown) else {
            continue;
        };
        let mut sink = Collect {
            path: &shown,
            lines: &mut out,
            matches: 0,
        };
        if searcher.search_file(&matcher, &file, &mut sink).is_err() {
            continue;
        }
        let matches = sink.matches;
        if matches > 0 {
            counts.push(format!("{shown}: {matches}"));
        }
        if out.lines.len() >= MAX_LINES {
            out.truncated = true;
            break;
        }
    }
    let body = if count_only {
        if counts.is_empty() {
            ctx.say("一致なし。", "No matches.")
        } else {
            counts.join("\n")
        }
    } else {
        shown_lines(&out, ctx)
    };
    ToolOutput::ok(with_notes(body, &walk.notes()))
}

/// The matching lines as answered: cut at `MAX_CHARS`, saying when `MAX_LINES` stopped them.
fn shown_lines(out: &Lines, ctx: &ToolContext) -> String {
    if out.lines.is_empty() {
        return ctx.say("一致なし。", "No matches.");
    }
    let mut body = out.lines.join("\n");
    if out.truncated {
        body.push_str(&format!("\n… [{MAX_LINES}+ lines]"));
    }
    cap(&body, MAX_CHARS)
}

/// Runs one `fd` call.
pub(super) fn fd(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let (jail, pattern, start) = match search_inputs(args, ctx, false) {
        Ok(inputs) => inputs,
        Err(out) => return out,
    };
    let regex = match regex::RegexBuilder::new(pattern)
        .case_insensitive(bool_arg(args, "case_insensitive", true))
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            return ToolOutput::fail(format!(
                "{}: {e}",
                ctx.say("正規表現が不正です", "Invalid regular expression")
            ));
        }
    };
    let mut found = Vec::new();
    let mut walk = Walk::new(jail, &start, Hidden::Shown);
    for entry in walk.by_ref() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let shown = relative(jail.root(), entry.path());
        if entry.depth() > 0 && regex.is_match(&name) && jail.resolves_inside(&shown) {
            found.push(shown);
            if found.len() >= MAX_LINES {
                break;
            }
        }
    }
    let body = if found.is_empty() {
        ctx.say("見つかりません。", "Nothing found.")
    } else {
        cap(&found.join("\n"), MAX_CHARS)
    };
    ToolOutput::ok(with_notes(body, &walk.notes()))
}

/// What both searches start from: the work folder, the required `pattern`, and the existing
/// folder inside the work folder to search (`path`, default `.`; `grep` also takes a file).
fn search_inputs<'a>(
    args: &'a Value,
    ctx: &'a ToolContext,
    files_allowed: bool,
) -> Result<(&'a WorkDir, &'a str, PathBuf), ToolOutput> {
    let jail = ctx.jail()?;
    let Some(pattern) = str_arg(args, "pattern") else {
        return Err(ToolOutput::fail(
            ctx.say("pattern が必要です。", "pattern is required."),
        ));
    };
    let given = str_arg(args, "path").unwrap_or(".");
    // A regular file (not a link: `entry_kind` does not follow it) is searched alone; each file
    // the walk yields is still opened through the jail's handle.
    let is_file = matches!(jail.entry_kind(given), Ok(Some(EntryKind::File)));
    let start = jail
        .relative(given)
        .and_then(|rel| {
            if is_file && files_allowed {
                Ok(jail.root().join(rel))
            } else {
                jail.open_dir(&rel).map(|_| jail.root().join(rel))
            }
        })
        .map_err(|e| ctx.refused(&e))?;
    Ok((jail, pattern, start))
}

/// One line as shown: trailing space trimmed, cut at `LINE_MAX_CHARS`.
fn shown_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(LINE_MAX_CHARS * 4)]);
    let text = text.trim_end();
    if text.chars().count() > LINE_MAX_CHARS {
        let cut: String = text.chars().take(LINE_MAX_CHARS).collect();
        format!("{cut} …")
    } else {
        text.to_owned()
    }
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

#[derive(Default)]
struct Lines {
    lines: Vec<String>,
    truncated: bool,
}

struct Collect<'a> {
    path: &'a str,
    lines: &'a mut Lines,
    matches: u64,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matches += 1;
        self.lines.lines.push(format!(
            "{}:{}: {}",
            self.path,
            m.line_number().unwrap_or(0),
            shown_line(m.bytes())
        ));
        Ok(self.lines.lines.len() < MAX_LINES)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.lines.lines.push(format!(
            "{}-{}- {}",
            self.path,
            c.line_number().unwrap_or(0),
            shown_line(c.bytes())
        ));
        Ok(self.lines.lines.len() < MAX_LINES)
    }
}

/// `grep`'s description and schema.
pub(crate) fn grep_spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
            l.pick("作業フォルダ内のファイルを正規表現で検索し、一致した行を返します。",
                "Search files in the work folder with a regular expression and return the matching lines.",
            ),
            schema(
                &["pattern"],
                json!({
                    "pattern": prop("string", l.pick("正規表現。", "Regular expression.")),
                    "path": prop("string", l.pick("検索するファイルかフォルダ（作業フォルダからの相対パス）。省略時は作業フォルダ全体。", "File or folder to search, relative to the work folder. Default: the whole work folder.")),
                    "case_insensitive": prop("boolean", l.pick("大文字と小文字を区別しない。", "Ignore case.")),
                    "count_only": prop("boolean", l.pick("件数だけを返す。", "Return counts only.")),
                    "include": prop("string", l.pick("ファイル名に当てる正規表現（glob ではない）。", "Regular expression matched against file names (not a glob).")),
                    "context": {"type": "integer", "minimum": 0, "maximum": 3, "description": l.pick("前後に添える行数（0〜3）。", "Lines of context before and after (0-3).")}
                }),
                l,
            ),
        )
}

/// `fd`'s description and schema.
pub(crate) fn fd_spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
        l.pick(
            "作業フォルダ内のファイルを名前で探します。",
            "Find files in the work folder by name.",
        ),
        schema(
            &["pattern"],
            json!({
                "pattern": prop("string", l.pick("ファイル名に当てる正規表現。", "Regular expression matched against file names.")),
                "path": prop("string", l.pick("探し始めるフォルダ（相対パス）。", "Folder to search from, relative.")),
                "case_insensitive": prop("boolean", l.pick("大文字と小文字を区別しない（既定 true）。", "Ignore case (default true)."))
            }),
            l,
        ),
    )
}
