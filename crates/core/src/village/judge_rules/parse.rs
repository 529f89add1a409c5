//! `judge.toml` → [`JudgeRules`] through `toml_edit` (spans kept), every problem a located
//! [`Finding`]. Reads all it can and reports every finding, not only the first.

use toml_edit::{Document, Item, TableLike};

use super::check::{Roster, check_expr};
use super::error::{Finding, Locator};
use super::expr::{is_reserved, parse_expr};
use super::model::{Action, JudgeRules, Outcome, Question, QuestionKind, Rule, is_name};

/// The largest `judge.toml` read (bytes).
pub const MAX_FILE_BYTES: usize = 256 * 1024;
/// The most rules a file may hold.
pub const MAX_RULES: usize = 1_000;
/// The most questions a file may hold.
pub const MAX_QUESTIONS: usize = 64;
/// The longest `note` (code points).
pub const MAX_NOTE_CHARS: usize = 200;

struct Ctx<'a> {
    text: &'a str,
    roster: Option<Roster<'a>>,
    loc: Locator<'a>,
    findings: Vec<Finding>,
}

impl Ctx<'_> {
    fn at(&mut self, offset: usize, message: impl Into<String>, fix: impl Into<String>) {
        let f = self.loc.finding(offset, message, fix);
        self.findings.push(f);
    }
}

fn start(item: &Item) -> Option<usize> {
    match item {
        Item::Value(v) => v.span().map(|s| s.start),
        Item::Table(t) => t.span().map(|s| s.start),
        Item::ArrayOfTables(a) => a.span().map(|s| s.start),
        Item::None => None,
    }
}

/// Where a key of a table is, else where the table is, else 0.
fn key_at(table: &dyn TableLike, key: &str, fallback: usize) -> usize {
    table
        .key(key)
        .and_then(|k| k.span())
        .map_or(fallback, |s| s.start)
}

fn value_at(table: &dyn TableLike, key: &str, fallback: usize) -> usize {
    table
        .get(key)
        .and_then(start)
        .unwrap_or_else(|| key_at(table, key, fallback))
}

/// Parses and checks a judge file (grammar, types, keys, levels, ranges; not the village's ids,
/// see [`super::check_targets`]).
pub fn parse_judge(text: &str) -> Result<JudgeRules, Vec<Finding>> {
    parse_with(text, None)
}

/// Parses and checks a judge file, `to` lists against the village's servants and judges
/// included: every finding, sorted by place.
pub fn validate_judge(text: &str, roster: Roster<'_>) -> Result<JudgeRules, Vec<Finding>> {
    parse_with(text, Some(roster))
}

fn parse_with<'a>(text: &'a str, roster: Option<Roster<'a>>) -> Result<JudgeRules, Vec<Finding>> {
    let loc = Locator::new(text);
    if text.len() > MAX_FILE_BYTES {
        return Err(vec![loc.finding(
            0,
            format!("the file is larger than {MAX_FILE_BYTES} bytes"),
            "keep judge.toml small: fewer or shorter rules",
        )]);
    }
    let doc = match Document::parse(text) {
        Ok(d) => d,
        Err(e) => {
            let at = e.span().map_or(0, |s| s.start);
            let first = e.message().lines().next().unwrap_or("invalid TOML").trim();
            return Err(vec![loc.finding(
                at,
                format!("TOML syntax: {first}"),
                "correct the TOML syntax at this place",
            )]);
        }
    };
    let mut cx = Ctx {
        text,
        roster,
        loc,
        findings: Vec::new(),
    };
    let root = doc.as_table();
    for (key, _) in root.iter() {
        if !matches!(key, "questions" | "rules" | "otherwise") {
            let at = key_at(root, key, 0);
            cx.at(
                at,
                format!("unknown top-level key {key:?}"),
                "a judge file has [questions.<name>], [[rules]] and [otherwise] only",
            );
        }
    }
    let questions = read_questions(&mut cx, root);
    let rules = read_rules(&mut cx, root, &questions);
    let otherwise = match root.get("otherwise") {
        Some(item) => match item.as_table_like() {
            Some(t) => read_outcome(&mut cx, t, start(item).unwrap_or(0), false),
            None => {
                let at = start(item).unwrap_or(0);
                cx.at(
                    at,
                    "otherwise is not a table",
                    "write [otherwise] with to = [...] or do = \"return\"",
                );
                None
            }
        },
        None => {
            cx.at(
                text.len(),
                "[otherwise] is missing",
                "add [otherwise] with do = \"return\" (or to = [\"servant\"]) at the end",
            );
            None
        }
    };
    match otherwise {
        Some(otherwise) if cx.findings.is_empty() => Ok(JudgeRules {
            questions,
            rules,
            otherwise,
        }),
        _ => {
            cx.findings.sort_by_key(|f| (f.line, f.col));
            Err(cx.findings)
        }
    }
}

fn read_questions(cx: &mut Ctx<'_>, root: &toml_edit::Table) -> Vec<Question> {
    let Some(item) = root.get("questions") else {
        cx.at(
            0,
            "no [questions.<name>] table",
            "add at least one question, e.g. [questions.kind]",
        );
        return Vec::new();
    };
    let Some(table) = item.as_table_like() else {
        let at = start(item).unwrap_or(0);
        cx.at(
            at,
            "questions is not a table",
            "write each question as [questions.<name>]",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    if table.is_empty() {
        let at = key_at(root, "questions", 0);
        cx.at(
            at,
            "no questions",
            "add at least one question, e.g. [questions.kind]",
        );
    }
    for (name, q) in table.iter() {
        let at = key_at(table, name, 0);
        if out.len() >= MAX_QUESTIONS {
            cx.at(
                at,
                format!("more than {MAX_QUESTIONS} questions"),
                "ask fewer questions",
            );
            break;
        }
        if !is_name(name) || is_reserved(name) {
            cx.at(
                at,
                format!("question name {name:?} breaks the rule [a-z][a-z0-9_]* (and/or/not/in are reserved)"),
                "rename the question: lower-case letters, digits and _; start with a letter",
            );
            continue;
        }
        let Some(qt) = q.as_table_like() else {
            cx.at(
                at,
                format!("question {name:?} is not a table"),
                format!("write [questions.{name}] with type and ask"),
            );
            continue;
        };
        if let Some(kind) = read_question(cx, name, qt, at) {
            let ask = str_field(cx, qt, "ask", at, name).unwrap_or_default();
            out.push(Question {
                name: name.to_string(),
                ask,
                kind,
            });
        }
    }
    out
}

fn str_field(
    cx: &mut Ctx<'_>,
    t: &dyn TableLike,
    key: &str,
    at: usize,
    owner: &str,
) -> Option<String> {
    match t.get(key) {
        Some(item) => match item.as_str() {
            Some(s) if !s.trim().is_empty() => Some(s.to_string()),
            _ => {
                let vat = value_at(t, key, at);
                cx.at(
                    vat,
                    format!("{owner}: {key} must be a non-empty string"),
                    format!("write {key} = \"…\""),
                );
                None
            }
        },
        None => {
            cx.at(
                at,
                format!("{owner}: {key} is missing"),
                format!("add {key} = \"…\""),
            );
            None
        }
    }
}

fn read_question(
    cx: &mut Ctx<'_>,
    name: &str,
    t: &dyn TableLike,
    at: usize,
) -> Option<QuestionKind> {
    let allowed: &[&str] = match t.get("type").and_then(Item::as_str) {
        Some("choice") => &["type", "ask", "options"],
        Some("score") => &["type", "ask", "levels"],
        Some("noul") => &["type", "ask", "true_if", "false_if"],
        _ => {
            let vat = value_at(t, "type", at);
            cx.at(
                vat,
                format!("question {name:?}: type must be \"choice\", \"score\" or \"noul\""),
                "write type = \"choice\" (or \"score\", \"noul\")",
            );
            return None;
        }
    };
    for (key, _) in t.iter() {
        if !allowed.contains(&key) {
            let kat = key_at(t, key, at);
            cx.at(
                kat,
                format!("question {name:?}: unknown key {key:?}"),
                format!("keys of this type: {}", allowed.join(", ")),
            );
        }
    }
    match t.get("type").and_then(Item::as_str) {
        Some("choice") => read_options(cx, name, t, at),
        Some("score") => read_levels(cx, name, t, at),
        _ => {
            let true_if = str_field(cx, t, "true_if", at, name);
            let false_if = str_field(cx, t, "false_if", at, name);
            Some(QuestionKind::Noul {
                true_if: true_if?,
                false_if: false_if?,
            })
        }
    }
}

fn read_options(
    cx: &mut Ctx<'_>,
    name: &str,
    t: &dyn TableLike,
    at: usize,
) -> Option<QuestionKind> {
    let Some(opts) = t.get("options").and_then(Item::as_table_like) else {
        let vat = value_at(t, "options", at);
        cx.at(
            vat,
            format!("question {name:?}: options = {{key = \"description\", …}} is missing"),
            "add options with 2 to 255 keys",
        );
        return None;
    };
    let oat = value_at(t, "options", at);
    let mut options = Vec::new();
    let mut ok = true;
    for (key, desc) in opts.iter() {
        let kat = key_at(opts, key, oat);
        if !is_name(key) || is_reserved(key) {
            cx.at(kat, format!("option key {key:?} breaks the rule [a-z][a-z0-9_]* (and/or/not/in are reserved)"), "rename the key: lower-case letters, digits and _");
            ok = false;
        }
        match desc.as_str() {
            Some(d) => options.push((key.to_string(), d.to_string())),
            None => {
                cx.at(
                    kat,
                    format!("option {key:?}: the description must be a string"),
                    format!("write {key} = \"…\""),
                );
                ok = false;
            }
        }
    }
    if !(2..=255).contains(&options.len()) && ok {
        cx.at(
            oat,
            format!(
                "question {name:?} has {} options; 2 to 255 are needed",
                options.len()
            ),
            "give the question 2 to 255 options",
        );
        ok = false;
    }
    ok.then_some(QuestionKind::Choice { options })
}

fn read_levels(cx: &mut Ctx<'_>, name: &str, t: &dyn TableLike, at: usize) -> Option<QuestionKind> {
    let vat = value_at(t, "levels", at);
    let Some(arr) = t.get("levels").and_then(Item::as_array) else {
        cx.at(
            vat,
            format!("question {name:?}: levels = [\"low\", …, \"high\"] is missing"),
            "add levels with 2 to 10 descriptions, low to high",
        );
        return None;
    };
    let levels: Vec<String> = arr
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    if levels.len() != arr.len() {
        cx.at(
            vat,
            format!("question {name:?}: every level must be a string"),
            "write levels = [\"low\", \"high\"]",
        );
        return None;
    }
    if !(2..=10).contains(&levels.len()) {
        cx.at(
            vat,
            format!(
                "question {name:?} has {} levels; 2 to 10 are needed",
                levels.len()
            ),
            "give the question 2 to 10 levels",
        );
        return None;
    }
    Some(QuestionKind::Score { levels })
}

/// The byte offset in the file of an expression offset, when the string is written plainly.
fn expr_offset(text: &str, item: &Item, in_expr: usize) -> usize {
    let Some(span) = item.as_value().and_then(|v| v.span()) else {
        return 0;
    };
    let raw = text.get(span.clone()).unwrap_or("");
    if raw.starts_with("\"\"\"") || raw.starts_with("'''") || raw.contains('\\') {
        span.start
    } else {
        span.start + 1 + in_expr
    }
}

fn read_rules(cx: &mut Ctx<'_>, root: &toml_edit::Table, questions: &[Question]) -> Vec<Rule> {
    let Some(item) = root.get("rules") else {
        return Vec::new();
    };
    let Some(aot) = item.as_array_of_tables() else {
        let at = start(item).unwrap_or(0);
        cx.at(
            at,
            "rules must be written as [[rules]] tables",
            "write each rule as [[rules]] with when and to / do",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, t) in aot.iter().enumerate() {
        let at = t.span().map_or(0, |s| s.start);
        if i >= MAX_RULES {
            cx.at(at, format!("more than {MAX_RULES} rules"), "merge rules");
            break;
        }
        for (key, _) in t.iter() {
            if !matches!(key, "when" | "to" | "do" | "note") {
                let kat = key_at(t, key, at);
                cx.at(
                    kat,
                    format!("rule {}: unknown key {key:?}", i + 1),
                    "a rule has when, to or do, and note",
                );
            }
        }
        let when = read_when(cx, t, at, i, questions);
        let outcome = read_outcome(cx, t, at, true);
        if let (Some((when, when_text, line)), Some(outcome)) = (when, outcome) {
            out.push(Rule {
                when,
                when_text,
                outcome,
                line,
            });
        }
    }
    out
}

fn read_when(
    cx: &mut Ctx<'_>,
    t: &toml_edit::Table,
    at: usize,
    i: usize,
    questions: &[Question],
) -> Option<(super::expr::Expr, String, usize)> {
    let Some(item) = t.get("when") else {
        cx.at(
            at,
            format!("rule {}: when is missing", i + 1),
            "add when = \"<condition>\"",
        );
        return None;
    };
    let wat = value_at(t, "when", at);
    let Some(text) = item.as_str() else {
        cx.at(
            wat,
            format!("rule {}: when must be a string", i + 1),
            "write when = \"kind == other\"",
        );
        return None;
    };
    let line = cx.loc.at(wat).0;
    match parse_expr(text) {
        Ok(expr) => {
            let errors = check_expr(&expr, questions);
            if errors.is_empty() {
                return Some((expr, text.to_string(), line));
            }
            for e in errors {
                let off = expr_offset(cx.text, item, e.at);
                cx.at(off, format!("rule {}: {}", i + 1, e.message), e.fix);
            }
            None
        }
        Err(e) => {
            let off = expr_offset(cx.text, item, e.at);
            cx.at(off, format!("rule {}: {}", i + 1, e.message), e.fix);
            None
        }
    }
}

fn read_outcome(cx: &mut Ctx<'_>, t: &dyn TableLike, at: usize, is_rule: bool) -> Option<Outcome> {
    let owner = if is_rule { "rule" } else { "otherwise" };
    if !is_rule {
        for (key, _) in t.iter() {
            if !matches!(key, "to" | "do" | "note") {
                let kat = key_at(t, key, at);
                cx.at(
                    kat,
                    format!("otherwise: unknown key {key:?}"),
                    "[otherwise] has to or do, and note (no when)",
                );
            }
        }
    }
    let note = match t.get("note") {
        None => Some(None),
        Some(item) => match item.as_str() {
            Some(n) if n.chars().count() <= MAX_NOTE_CHARS => Some(Some(n.to_string())),
            Some(_) => {
                cx.at(
                    value_at(t, "note", at),
                    format!("{owner}: note is longer than {MAX_NOTE_CHARS} characters"),
                    "shorten the note",
                );
                None
            }
            None => {
                cx.at(
                    value_at(t, "note", at),
                    format!("{owner}: note must be a string"),
                    "write note = \"…\"",
                );
                None
            }
        },
    };
    let action = match (t.get("to"), t.get("do")) {
        (Some(_), Some(_)) => {
            cx.at(
                key_at(t, "do", at),
                format!("{owner}: both to and do are set"),
                "keep exactly one of to = [...] and do = \"return\"",
            );
            None
        }
        (None, None) => {
            cx.at(
                at,
                format!("{owner}: neither to nor do is set"),
                "add to = [\"servant\"] or do = \"return\"",
            );
            None
        }
        (None, Some(d)) => {
            if d.as_str() == Some("return") {
                Some((Action::Return, Vec::new()))
            } else {
                cx.at(
                    value_at(t, "do", at),
                    format!("{owner}: do must be \"return\""),
                    "write do = \"return\"",
                );
                None
            }
        }
        (Some(to), None) => read_to(cx, t, to, at, owner),
    };
    let (action, to_at) = action?;
    Some(Outcome {
        action,
        note: note?,
        to_at,
    })
}

fn read_to(
    cx: &mut Ctx<'_>,
    t: &dyn TableLike,
    to: &Item,
    at: usize,
    owner: &str,
) -> Option<(Action, Vec<(usize, usize)>)> {
    let vat = value_at(t, "to", at);
    let Some(arr) = to.as_array() else {
        cx.at(
            vat,
            format!("{owner}: to must be a list of servant ids"),
            "write to = [\"servant\"]",
        );
        return None;
    };
    let mut ids: Vec<String> = Vec::new();
    let mut to_at = Vec::new();
    for v in arr.iter() {
        let vat = v.span().map_or(vat, |s| s.start);
        to_at.push(cx.loc.at(vat));
        if let (Some(roster), Some(id)) = (cx.roster, v.as_str())
            && let Some((message, fix)) = roster.refuses(id)
        {
            cx.at(vat, message, fix);
        }
        match v.as_str() {
            Some(id) if ids.iter().any(|x| x == id) => {
                cx.at(
                    vat,
                    format!("{owner}: {id:?} appears twice in to"),
                    "name each servant once",
                );
                return None;
            }
            Some(id) => ids.push(id.to_string()),
            None => {
                cx.at(
                    vat,
                    format!("{owner}: every entry of to must be a string"),
                    "write to = [\"servant\"]",
                );
                return None;
            }
        }
    }
    if ids.is_empty() {
        cx.at(
            vat,
            format!("{owner}: to is empty"),
            "name at least one servant, or write do = \"return\"",
        );
        return None;
    }
    Some((Action::To(ids), to_at))
}
