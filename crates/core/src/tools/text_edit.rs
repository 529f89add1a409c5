//! `diff`, `sd` and `yq`: read two files and diff them; replace with a regular expression;
//! get / set / remove a value in TOML (format kept, through `toml_edit`) or JSON. `sd` and `yq`
//! preview (a diff) unless `apply` is true, and then write one file.
//! Its helpers fail with `String`: that string IS the tool result the model reads, not an error
//! an edge renders, so it stays words.

use std::io::Write;

use serde_json::{Value, json};

use super::sandbox::WriteMode;
use super::specs::{prop, schema};
use super::{RunApproval, ToolContext, ToolOutput, WorkDir, bool_arg, cap, str_arg};
use crate::village::Language;

const MAX_CHARS: usize = 12_000;
/// The most files `sd` previews at once.
pub(super) const MAX_SD_PATHS: usize = 20;

/// A unified diff of two texts, labelled with the file name.
pub(super) fn unified_diff(before: &str, after: &str, label: &str) -> String {
    if before == after {
        return "(no change)".into();
    }
    similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(before, after)
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{label}"), &format!("b/{label}"))
        .to_string()
}

/// The largest file `diff`, `sd` and `yq` read (they hold the whole text and its rewrite).
pub(super) const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// The largest text `sd` may produce from one file.
const MAX_REPLACED_BYTES: usize = 4 * 1024 * 1024;

fn read_in_jail(jail: &WorkDir, path: &str) -> Result<String, String> {
    let read = jail
        .read_text(path, MAX_FILE_BYTES)
        .map_err(|e| e.to_string())?;
    if read.truncated {
        return Err(format!(
            "the file is larger than {} KiB ({} bytes)",
            MAX_FILE_BYTES / 1024,
            read.size
        ));
    }
    Ok(read.text)
}

fn write_in_jail(jail: &WorkDir, path: &str, text: &str) -> Result<(), String> {
    let mut file = jail
        .create_file(path, WriteMode::Replace)
        .map_err(|e| e.to_string())?;
    file.write_all(text.as_bytes()).map_err(|e| e.to_string())
}

/// `regex.replace_all`, refusing to build more than `MAX_REPLACED_BYTES`.
fn replace_bounded(regex: &regex::Regex, text: &str, replacement: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    // Each `$` reference expands to at most the whole match; refuse before expanding.
    let references = replacement.matches('$').count();
    for caps in regex.captures_iter(text) {
        let Some(m) = caps.get(0) else { continue };
        let worst = replacement
            .len()
            .saturating_add(references.saturating_mul(m.len()));
        if out.len() + (m.start() - last) + worst > MAX_REPLACED_BYTES {
            return None;
        }
        out.push_str(&text[last..m.start()]);
        caps.expand(replacement, &mut out);
        last = m.end();
        if out.len() > MAX_REPLACED_BYTES {
            return None;
        }
    }
    out.push_str(&text[last..]);
    (out.len() <= MAX_REPLACED_BYTES).then_some(out)
}

/// Runs one `diff` call.
pub(super) fn diff(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let jail = match ctx.jail() {
        Ok(j) => j,
        Err(out) => return out,
    };
    let (Some(old), Some(new)) = (str_arg(args, "old_path"), str_arg(args, "new_path")) else {
        return ToolOutput::fail(ctx.say(
            "old_path と new_path が必要です。",
            "old_path and new_path are required.",
        ));
    };
    match (read_in_jail(jail, old), read_in_jail(jail, new)) {
        (Ok(a), Ok(b)) => ToolOutput::ok(cap(&unified_diff(&a, &b, new), MAX_CHARS)),
        (Err(e), _) | (_, Err(e)) => ToolOutput::fail(e),
    }
}

/// Runs one `sd` call.
pub(super) fn sd(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let jail = match ctx.jail() {
        Ok(j) => j,
        Err(out) => return out,
    };
    let (Some(pattern), Some(replacement)) =
        (str_arg(args, "pattern"), str_arg(args, "replacement"))
    else {
        return ToolOutput::fail(ctx.say(
            "pattern と replacement が必要です。",
            "pattern and replacement are required.",
        ));
    };
    let regex = match regex::RegexBuilder::new(pattern)
        .case_insensitive(bool_arg(args, "case_insensitive", false))
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
    let apply = bool_arg(args, "apply", false);
    let paths: Vec<String> = match (
        str_arg(args, "path"),
        args.get("paths").and_then(Value::as_array),
    ) {
        (Some(p), None) => vec![p.to_owned()],
        (None, Some(list)) => {
            if apply {
                return ToolOutput::fail(ctx.say(
                    "paths はプレビュー専用です。書き換えは path で 1 ファイルずつ。",
                    "paths is preview-only; apply one file at a time with path.",
                ));
            }
            if list.len() > MAX_SD_PATHS {
                return ToolOutput::fail(
                    ctx.say("paths は 20 件までです。", "paths holds at most 20 files."),
                );
            }
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        }
        _ => {
            return ToolOutput::fail(ctx.say(
                "path か paths のどちらか一方を渡してください。",
                "Pass either path or paths.",
            ));
        }
    };
    let mut paths = paths;
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    let mut out = Vec::new();
    let mut shown = 0;
    for path in &paths {
        if shown >= MAX_CHARS {
            out.push(ctx.say("（残りのファイルは省略）", "(the other files are left out)"));
            break;
        }
        let text = match read_in_jail(jail, path) {
            Ok(t) => t,
            Err(e) => return ToolOutput::fail(format!("{path}: {e}")),
        };
        let Some(replaced) = replace_bounded(&regex, &text, replacement) else {
            return ToolOutput::fail(format!(
                "{path}: {}",
                ctx.say(
                    "置き換えた結果が大きすぎます（4 MiB まで）。",
                    "The result of the replacement is too large (4 MiB at most).",
                )
            ));
        };
        let diff = cap(&unified_diff(&text, &replaced, path), MAX_CHARS);
        shown += diff.chars().count();
        if apply && let Some(out) = ctx.would(|| format!("rewrite {path}:\n{diff}")) {
            return out;
        }
        out.push(diff);
        if apply && let Err(e) = write_in_jail(jail, path, &replaced) {
            return ToolOutput::fail(format!("{path}: {e}"));
        }
    }
    let head = if apply {
        ctx.say("書き換えました:", "Applied:")
    } else {
        ctx.say(
            "プレビュー（apply:true で書き換え）:",
            "Preview (apply:true to write):",
        )
    };
    ToolOutput::ok(cap(&format!("{head}\n{}", out.join("\n")), MAX_CHARS))
}

/// One step of a `yq` key.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// The deepest key `yq` takes (deeper nesting would recurse without bound).
const MAX_KEY_STEPS: usize = 64;

fn parse_key(key: &str) -> Option<Vec<Step>> {
    if key.split('.').count() > MAX_KEY_STEPS || key.matches('[').count() > MAX_KEY_STEPS {
        return None;
    }
    let mut steps = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            steps.push(Step::Key(name.to_owned()));
        } else if rest.is_empty() {
            return None;
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            steps.push(Step::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    (!steps.is_empty()).then_some(steps)
}

/// Runs one `yq` call.
pub(super) fn yq(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let jail = match ctx.jail() {
        Ok(j) => j,
        Err(out) => return out,
    };
    let (Some(path), Some(op), Some(key)) = (
        str_arg(args, "path"),
        str_arg(args, "op"),
        str_arg(args, "key"),
    ) else {
        return ToolOutput::fail(ctx.say(
            "path / op / key が必要です。",
            "path, op and key are required.",
        ));
    };
    let Some(steps) = parse_key(key) else {
        return ToolOutput::fail(ctx.say(
            "key の形が不正です（例 a.b[0].c）。",
            "Malformed key (example: a.b[0].c).",
        ));
    };
    let text = match read_in_jail(jail, path) {
        Ok(t) => t,
        Err(e) => return ToolOutput::fail(e),
    };
    let is_toml = path.to_ascii_lowercase().ends_with(".toml");
    let result = if is_toml {
        toml_op(&text, op, &steps, args.get("value"))
    } else {
        json_op(&text, op, &steps, args.get("value"))
    };
    let (shown, updated) = match result {
        Ok(r) => r,
        Err(e) => return ToolOutput::fail(e),
    };
    let Some(updated) = updated else {
        return ToolOutput::ok(shown);
    };
    let diff = unified_diff(&text, &updated, path);
    if bool_arg(args, "apply", false) {
        if let Some(out) = ctx.would(|| format!("rewrite {path}:\n{}", cap(&diff, MAX_CHARS))) {
            return out;
        }
        if let Err(e) = write_in_jail(jail, path, &updated) {
            return ToolOutput::fail(e);
        }
        ToolOutput::ok(cap(
            &format!("{}\n{diff}", ctx.say("書き換えました:", "Applied:")),
            MAX_CHARS,
        ))
    } else {
        ToolOutput::ok(cap(
            &format!(
                "{}\n{diff}",
                ctx.say(
                    "プレビュー（apply:true で書き換え）:",
                    "Preview (apply:true to write):"
                )
            ),
            MAX_CHARS,
        ))
    }
}

type OpResult = Result<(String, Option<String>), String>;

fn json_op(text: &str, op: &str, steps: &[Step], value: Option<&Value>) -> OpResult {
    let mut doc: Value = serde_json::from_str(text).map_err(|e| cap(&format!("JSON: {e}"), 500))?;
    match op {
        "get" => {
            let mut cur = &doc;
            for s in steps {
                cur = match s {
                    Step::Key(k) => cur.get(k),
                    Step::Index(i) => cur.get(i),
                }
                .ok_or("no such key")?;
            }
            Ok((serde_json::to_string_pretty(cur).unwrap_or_default(), None))
        }
        "set" | "remove" => {
            let (last, parents) = steps.split_last().ok_or("empty key")?;
            let mut cur = &mut doc;
            for s in parents {
                cur = match s {
                    Step::Key(k) => {
                        let obj = cur.as_object_mut().ok_or("not an object")?;
                        obj.entry(k.clone())
                            .or_insert_with(|| Value::Object(serde_json::Map::new()))
                    }
                    Step::Index(i) => cur.get_mut(*i).ok_or("no such index")?,
                };
            }
            match (op, last) {
                ("set", Step::Key(k)) => {
                    let v = value.ok_or("value is required for set")?.clone();
                    cur.as_object_mut()
                        .ok_or("not an object")?
                        .insert(k.clone(), v);
                }
                ("set", Step::Index(i)) => {
                    let v = value.ok_or("value is required for set")?.clone();
                    *cur.get_mut(*i).ok_or("no such index")? = v;
                }
                (_, Step::Key(k)) => {
                    cur.as_object_mut()
                        .ok_or("not an object")?
                        .shift_remove(k)
                        .ok_or("no such key")?;
                }
                (_, Step::Index(i)) => {
                    let arr = cur.as_array_mut().ok_or("not an array")?;
                    if *i >= arr.len() {
                        return Err("no such index".into());
                    }
                    arr.remove(*i);
                }
            }
            let mut updated = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
            updated.push('\n');
            Ok((String::new(), Some(updated)))
        }
        _ => Err("op is get, set or remove".into()),
    }
}

fn toml_op(text: &str, op: &str, steps: &[Step], value: Option<&Value>) -> OpResult {
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e| cap(&format!("TOML: {e}"), 500))?;
    match op {
        "get" => {
            let mut cur: &toml_edit::Item = doc.as_item();
            for s in steps {
                cur = match s {
                    Step::Key(k) => cur.get(k.as_str()),
                    Step::Index(i) => cur.get(*i),
                }
                .ok_or("no such key")?;
            }
            let mut item = cur.clone();
            if let Some(value) = item.as_value_mut() {
                value.decor_mut().clear();
            }
            Ok((item.to_string().trim().to_owned(), None))
        }
        "set" | "remove" => {
            let (last, parents) = steps.split_last().ok_or("empty key")?;
            let mut cur: &mut toml_edit::Item = doc.as_item_mut();
            for s in parents {
                cur = match s {
                    Step::Key(k) => {
                        if cur.get(k.as_str()).is_none() {
                            cur.as_table_like_mut()
                                .ok_or("not a table")?
                                .insert(k, toml_edit::table());
                        }
                        cur.get_mut(k.as_str()).ok_or("no such key")?
                    }
                    Step::Index(i) => cur.get_mut(*i).ok_or("no such index")?,
                };
            }
            match (op, last) {
                ("set", Step::Key(k)) => {
                    let v = to_toml(value.ok_or("value is required for set")?)?;
                    cur.as_table_like_mut()
                        .ok_or("not a table")?
                        .insert(k, toml_edit::Item::Value(v));
                }
                ("set", Step::Index(i)) => {
                    let v = to_toml(value.ok_or("value is required for set")?)?;
                    let arr = cur.as_array_mut().ok_or("not an array")?;
                    if *i >= arr.len() {
                        return Err("no such index".into());
                    }
                    arr.replace(*i, v);
                }
                (_, Step::Key(k)) => {
                    cur.as_table_like_mut()
                        .ok_or("not a table")?
                        .remove(k)
                        .ok_or("no such key")?;
                }
                (_, Step::Index(i)) => {
                    let arr = cur.as_array_mut().ok_or("not an array")?;
                    if *i >= arr.len() {
                        return Err("no such index".into());
                    }
                    arr.remove(*i);
                }
            }
            Ok((String::new(), Some(doc.to_string())))
        }
        _ => Err("op is get, set or remove".into()),
    }
}

fn to_toml(value: &Value) -> Result<toml_edit::Value, String> {
    Ok(match value {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.into(),
            (None, Some(f)) => f.into(),
            _ => return Err("number out of range".into()),
        },
        Value::Array(items) => {
            let mut arr = toml_edit::Array::new();
            for item in items {
                arr.push(to_toml(item)?);
            }
            toml_edit::Value::Array(arr)
        }
        Value::Object(map) => {
            let mut table = toml_edit::InlineTable::new();
            for (k, v) in map {
                table.insert(k, to_toml(v)?);
            }
            toml_edit::Value::InlineTable(table)
        }
        Value::Null => return Err("TOML has no null".into()),
    })
}

/// `diff`'s description and schema.
pub(crate) fn diff_spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
        l.pick(
            "2 つのファイルの差分を unified 形式で返します。",
            "Return the unified diff of two files.",
        ),
        schema(
            &["old_path", "new_path"],
            json!({
                "old_path": prop("string", l.pick("元のファイル。", "The original file.")),
                "new_path": prop("string", l.pick("新しいファイル。", "The new file."))
            }),
            l,
        ),
    )
}

/// `sd`'s description and schema.
pub(crate) fn sd_spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
            l.pick("正規表現で置換します。既定はプレビューで、apply:true のときだけ 1 ファイルを書き換えます。paths は最大 20 件で、プレビュー専用です。",
                "Replace with a regular expression. Previews by default; only apply:true rewrites one file. paths takes up to 20 files and is preview-only.",
            ),
            schema(
                &["pattern", "replacement"],
                json!({
                    "path": prop("string", l.pick("対象ファイル。", "The file.")),
                    "paths": {"type": "array", "items": {"type": "string"}, "maxItems": 20, "description": l.pick("プレビューする複数のファイル。", "Several files to preview.")},
                    "pattern": prop("string", l.pick("正規表現。", "Regular expression.")),
                    "replacement": prop("string", l.pick("置換後の文字列（$1 で捕獲を参照）。", "Replacement ($1 refers to captures).")),
                    "apply": prop("boolean", l.pick("true で書き換える。", "true to rewrite the file.")),
                    "case_insensitive": prop("boolean", l.pick("大文字と小文字を区別しない。", "Ignore case."))
                }),
                l,
            ),
        )
}

/// `yq`'s description and schema.
pub(crate) fn yq_spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
            l.pick("TOML か JSON の値を取得・設定・削除します（書式は保たれます）。set と remove は既定でプレビューです。",
                "Get, set or remove a value in TOML or JSON, keeping the format. set and remove preview by default.",
            ),
            schema(
                &["path", "op", "key"],
                json!({
                    "path": prop("string", l.pick("対象ファイル（.toml か .json）。", "The file (.toml or .json).")),
                    "op": {"type": "string", "enum": ["get", "set", "remove"], "description": l.pick("操作。", "Operation.")},
                    "key": prop("string", l.pick("キー（例 a.b[0].c）。", "Key, e.g. a.b[0].c.")),
                    "value": {"description": l.pick("set する値（JSON の値）。", "Value to set (a JSON value).")},
                    "apply": prop("boolean", l.pick("true で書き換える。", "true to rewrite the file."))
                }),
                l,
            ),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(
            parse_key("a.b[0].c"),
            Some(vec![
                Step::Key("a".into()),
                Step::Key("b".into()),
                Step::Index(0),
                Step::Key("c".into())
            ])
        );
        assert_eq!(
            parse_key("a[1][2]"),
            Some(vec![Step::Key("a".into()), Step::Index(1), Step::Index(2)])
        );
        assert_eq!(parse_key("a..b"), None);
        assert_eq!(parse_key("a[x]"), None);
        assert_eq!(parse_key(""), None);
    }

    #[test]
    fn toml_keeps_comments() {
        let text = "# keep me\n[server]\nport = 80 # the port\nname = \"x\"\n";
        let (_, updated) = toml_op(
            text,
            "set",
            &parse_key("server.port").unwrap(),
            Some(&serde_json::json!(8080)),
        )
        .unwrap();
        let updated = updated.unwrap();
        assert!(
            updated.contains("# keep me") && updated.contains("8080"),
            "{updated}"
        );
        let (got, none) =
            toml_op(&updated, "get", &parse_key("server.name").unwrap(), None).unwrap();
        assert_eq!((got.as_str(), none), ("\"x\"", None));
    }
}
