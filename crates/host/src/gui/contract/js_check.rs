//! The page reads only fields the contract sends. Every `gui/**/*.js` (not `vendor/`) is read:
//! each `getJson('/api/…')` and `command('type', …)` answer is followed from the name it is
//! given (`const r = await …`, `.then((r) => …)`, `Promise.all`), through the names and paths
//! it flows into (`E.files = list.files`, `for (const a of v.agents)`, `.map((m) => …)`, a
//! declared function's parameter), and every property read along the way (`r.checkMicros`,
//! `f.line`) must be a field of that answer's type at that place. A field renamed in the
//! contract and not in the page is a failure here.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::js_lex::{Kind, Src};
use super::samples::{COMMANDS, READS};
use super::shape::Shape;

/// A list's own members (not fields of the answer).
const LIST_MEMBERS: &[&str] = &[
    "length",
    "map",
    "forEach",
    "filter",
    "find",
    "findIndex",
    "some",
    "every",
    "slice",
    "join",
    "includes",
    "indexOf",
    "concat",
    "reduce",
    "sort",
    "flatMap",
    "at",
    "entries",
    "keys",
    "values",
];
/// List members whose callback takes an item.
const ITEM_CALLBACKS: &[&str] = &[
    "map",
    "forEach",
    "filter",
    "find",
    "findIndex",
    "some",
    "every",
    "flatMap",
];
const DECLARE: &[&str] = &["const", "let", "var"];
const NOT_CALLS: &[&str] = &[
    "if", "for", "while", "switch", "catch", "function", "return",
];

/// A name (or a path such as `E.files`) holding a part of an answer over a range of tokens;
/// `shape: None` is a declaration that hides an outer one of the same name; `map`: a `Map`
/// whose values (`.get(k)`, `.values()`) have the shape.
#[derive(Debug, Clone, PartialEq)]
struct Binding {
    file: Option<usize>,
    key: Vec<String>,
    shape: Option<Shape>,
    map: bool,
    from: usize,
    to: usize,
    origin: String,
}

/// What the check found.
#[derive(Default)]
pub(super) struct Report {
    pub(super) problems: BTreeSet<String>,
    /// Field reads checked against a type.
    pub(super) checked: usize,
    /// The routes and commands whose answers the page reads.
    pub(super) answers: BTreeSet<String>,
}

/// The answer a `getJson`/`command` literal names.
fn answer_of(call: &str, literal: &str) -> Option<Option<(String, Shape)>> {
    if call == "command" {
        let found = COMMANDS.iter().find(|(name, _)| *name == literal);
        return Some(found.map(|(name, s)| (format!("`{name}`'s answer"), Shape::of(&s()))));
    }
    if !literal.starts_with("/api/") {
        return None;
    }
    let path = literal.split('?').next().unwrap_or(literal);
    let found = READS.iter().find(|(key, _)| {
        let route = key.split('?').next().unwrap_or(key);
        match route.find('{') {
            Some(at) => path == &route[..at],
            None => path == route,
        }
    });
    Some(found.map(|(key, s)| (format!("{key}'s answer"), Shape::of(&s()))))
}

/// Checks `files` (name, text).
pub(super) fn check(files: &[(String, String)]) -> Report {
    let srcs: Vec<Src> = files.iter().map(|(n, t)| Src::new(n.clone(), t)).collect();
    let mut report = Report::default();
    let mut bindings = Vec::new();
    for (f, src) in srcs.iter().enumerate() {
        seeds(f, src, &mut bindings, &mut report);
        shadows(f, src, &mut bindings);
    }
    for _ in 0..24 {
        let before = bindings.len();
        let mut found = Vec::new();
        for b in bindings.iter().filter(|b| b.shape.is_some()) {
            for (f, src) in srcs.iter().enumerate() {
                if b.file.is_none_or(|bf| bf == f) {
                    follow(
                        f,
                        src,
                        b,
                        &bindings,
                        &srcs,
                        &mut found,
                        &mut Report::default(),
                    );
                }
            }
        }
        for b in found {
            if !bindings.contains(&b) {
                bindings.push(b);
            }
        }
        if bindings.len() == before {
            break;
        }
    }
    for b in bindings.iter().filter(|b| b.shape.is_some()) {
        for (f, src) in srcs.iter().enumerate() {
            if b.file.is_none_or(|bf| bf == f) {
                follow(f, src, b, &bindings, &srcs, &mut Vec::new(), &mut report);
            }
        }
    }
    report
}

/// The answers bound where they arrive.
fn seeds(f: usize, src: &Src, out: &mut Vec<Binding>, report: &mut Report) {
    for i in 0..src.toks.len() {
        let Some(call @ ("getJson" | "command")) = src.ident(i) else {
            continue;
        };
        let Some(lit) = src.toks.get(i + 2).filter(|t| t.kind == Kind::Str) else {
            continue;
        };
        if !src.is(i + 1, "(") {
            continue;
        }
        let Some(answer) = answer_of(call, &lit.text) else {
            continue;
        };
        let Some((origin, shape)) = answer else {
            report.problems.insert(format!(
                "{}:{}: the page asks {call}({:?}), which the contract has no type for",
                src.name, lit.line, lit.text
            ));
            continue;
        };
        report.answers.insert(origin.clone());
        let end = src.close[i + 1];
        let mut start = i;
        while start >= 2 && src.is(start - 1, ".") && src.ident(start - 2).is_some() {
            start -= 2;
        }
        let mut add = |b: Option<Binding>| out.extend(b);
        if src.is(end + 1, ".") && src.ident(end + 2) == Some("then") && src.is(end + 3, "(") {
            add(callback(f, src, end + 4, &shape, &origin));
        }
        if start >= 1 && src.is(start - 1, "await") {
            start -= 1;
        }
        add(assigned(f, src, start, &shape, &origin, false));
        add(promise_all(f, src, start, &shape, &origin));
    }
}

/// The binding of the value at `start` when `X = <value>` or `const X = <value>` precedes it.
fn assigned(
    f: usize,
    src: &Src,
    start: usize,
    shape: &Shape,
    origin: &str,
    map: bool,
) -> Option<Binding> {
    if start < 2 || !src.is(start - 1, "=") {
        return None;
    }
    target(f, src, start - 2, shape, origin, map)
}

/// The binding of the name or path that ends at `last` (`x`, `E.files`) to `shape`.
fn target(
    f: usize,
    src: &Src,
    last: usize,
    shape: &Shape,
    origin: &str,
    map: bool,
) -> Option<Binding> {
    let mut first = last;
    src.ident(first)?;
    while first >= 2 && src.is(first - 1, ".") && src.ident(first - 2).is_some() {
        first -= 2;
    }
    let key: Vec<String> = (first..=last)
        .step_by(2)
        .map(|i| src.toks[i].text.clone())
        .collect();
    let (file, from, to) = if key.len() > 1 {
        (None, 0, usize::MAX)
    } else if first >= 1 && DECLARE.contains(&src.toks[first - 1].text.as_str()) {
        (Some(f), first, src.block_end[first])
    } else {
        let declared = (0..first).rev().find(|d| {
            DECLARE.contains(&src.toks[*d].text.as_str())
                && src.toks[d + 1].text == key[0]
                && src.block_end[*d] >= first
        });
        declared.map_or((Some(f), 0, src.toks.len()), |d| {
            (Some(f), d + 1, src.block_end[d])
        })
    };
    Some(Binding {
        file,
        key,
        shape: Some(shape.clone()),
        map,
        from,
        to,
        origin: origin.to_owned(),
    })
}

/// `const [a, b] = await Promise.all([getJson(…), getJson(…)])`: the name at the call's place.
fn promise_all(f: usize, src: &Src, at: usize, shape: &Shape, origin: &str) -> Option<Binding> {
    let mut depth = 0usize;
    let mut commas = 0usize;
    let mut i = at;
    let open = loop {
        i = i.checked_sub(1)?;
        match src.toks[i].text.as_str() {
            ")" | "]" | "}" => depth += 1,
            "(" | "{" if depth == 0 => return None,
            "[" if depth == 0 => break i,
            "(" | "[" | "{" => depth -= 1,
            "," if depth == 0 => commas += 1,
            _ => {}
        }
    };
    let all = open >= 4
        && src.is(open - 1, "(")
        && src.ident(open - 2) == Some("all")
        && src.ident(open - 4) == Some("Promise");
    let mut eq = open.checked_sub(5)?;
    if src.is(eq, "await") {
        eq = eq.checked_sub(1)?;
    }
    if !all || !src.is(eq, "=") || !src.is(eq - 1, "]") {
        return None;
    }
    let pattern = src.open[eq - 1];
    let (at, name) = src.params(pattern).into_iter().nth(commas)?;
    Some(Binding {
        file: Some(f),
        key: vec![name],
        shape: Some(shape.clone()),
        map: false,
        from: at,
        to: src.block_end[at],
        origin: origin.to_owned(),
    })
}

/// The first parameter of a callback written at `at` (`(x) => …`, `x => …`).
fn callback(f: usize, src: &Src, at: usize, shape: &Shape, origin: &str) -> Option<Binding> {
    let (param, arrow) = if src.is(at, "(") {
        let close = src.close[at];
        (src.params(at).into_iter().next()?, close + 1)
    } else {
        ((at, src.ident(at)?.to_owned()), at + 1)
    };
    if !src.is(arrow, "=>") {
        return None;
    }
    Some(Binding {
        file: Some(f),
        key: vec![param.1],
        shape: Some(shape.clone()),
        map: false,
        from: param.0,
        to: src.arrow_end(arrow),
        origin: origin.to_owned(),
    })
}

/// The declarations of a file: each hides an outer binding of its name over its range.
fn shadows(f: usize, src: &Src, out: &mut Vec<Binding>) {
    let hide = |key: String, from: usize, to: usize| Binding {
        file: Some(f),
        key: vec![key],
        shape: None,
        map: false,
        from,
        to,
        origin: String::new(),
    };
    for i in 0..src.toks.len() {
        let t = &src.toks[i];
        if DECLARE.contains(&t.text.as_str())
            && let Some(name) = src.ident(i + 1)
        {
            out.push(hide(name.to_owned(), i + 1, src.block_end[i]));
        } else if t.text == "function" || t.text == "catch" {
            let open = if src.is(i + 1, "(") { i + 1 } else { i + 2 };
            if src.is(open, "(") {
                let body = src.close[open] + 1;
                let end = if src.is(body, "{") {
                    src.close[body]
                } else {
                    body
                };
                for (at, name) in src.params(open) {
                    out.push(hide(name, at, end));
                }
            }
        } else if t.text == "=>" && t.kind == Kind::Punct && i > 0 {
            let end = src.arrow_end(i);
            if src.is(i - 1, ")") {
                for (at, name) in src.params(src.open[i - 1]) {
                    out.push(hide(name, at, end));
                }
            } else if let Some(name) = src.ident(i - 1) {
                out.push(hide(name.to_owned(), i - 1, end));
            }
        }
    }
}

/// Whether `b` is the binding that a name at `p` of file `f` refers to.
fn innermost(b: &Binding, f: usize, p: usize, all: &[Binding]) -> bool {
    if b.key.len() > 1 {
        return true;
    }
    let size = |x: &Binding| x.to.saturating_sub(x.from);
    let best = all
        .iter()
        .filter(|x| x.key == b.key && x.file.is_none_or(|xf| xf == f) && x.from <= p && p <= x.to)
        .min_by_key(|x| (size(x), x.shape.is_none()));
    best.is_some_and(|x| std::ptr::eq(x, b) || x == b)
}

/// Every read of `b` in `src`: checked (into `report`) and followed (into `found`).
fn follow(
    f: usize,
    src: &Src,
    b: &Binding,
    all: &[Binding],
    srcs: &[Src],
    found: &mut Vec<Binding>,
    report: &mut Report,
) {
    let Some(shape) = &b.shape else { return };
    let n = src.toks.len();
    for p in b.from..b.to.min(n) {
        let matches = b.key.iter().enumerate().all(|(k, part)| {
            src.ident(p + 2 * k) == Some(part.as_str())
                && (k == 0 || src.is(p + 2 * k - 1, ".") || src.is(p + 2 * k - 1, "?."))
        });
        if !matches
            || (p > 0 && (src.is(p - 1, ".") || src.is(p - 1, "?.")))
            || (b.key.len() == 1 && src.is(p + 1, ":") && !src.is(p - 1, "?"))
            || !innermost(b, f, p, all)
        {
            continue;
        }
        let after = p + 2 * b.key.len() - 1;
        if b.map {
            map_read(Cx { f, src, srcs }, p, after, b, found, report);
            continue;
        }
        let (q, cur) = chain(src, after, shape, b, report);
        let (p, q) = guarded(src, p, q);
        derive(Cx { f, src, srcs }, p, q, &cur, &b.origin, found);
    }
}

/// Where a read is: the file's index, the file, and every file (for declared functions).
#[derive(Clone, Copy)]
struct Cx<'a> {
    f: usize,
    src: &'a Src,
    srcs: &'a [Src],
}

/// `(x && x.list)` is `x.list` where `x` is set: the bounds of the whole group.
fn guarded(src: &Src, p: usize, q: usize) -> (usize, usize) {
    let widen = p >= 3
        && src.is(p - 1, "&&")
        && src.is(p - 3, "(")
        && src.ident(p - 2) == src.ident(p)
        && src.is(q, ")");
    if widen { (p - 3, q + 1) } else { (p, q) }
}

/// A read of a `Map` of answers at `p` (its name ends before `after`): `m.get(k).field`,
/// `[...m.values()]`, or the map handed on whole (`S.agents = next`).
fn map_read(
    cx: Cx<'_>,
    p: usize,
    after: usize,
    b: &Binding,
    found: &mut Vec<Binding>,
    report: &mut Report,
) {
    let Cx { f, src, .. } = cx;
    let Some(item) = &b.shape else { return };
    let member = if src.is(after, ".") && src.is(after + 2, "(") {
        src.ident(after + 1)
    } else {
        None
    };
    match member {
        Some("get") => {
            let (q, cur) = chain(src, src.close[after + 2] + 1, item, b, report);
            derive(cx, p, q, &cur, &b.origin, found);
        }
        Some("values") if p >= 2 && src.is(p - 1, "...") && src.is(p - 2, "[") => {
            let list = Shape::List(Box::new(item.clone()));
            let end = src.close[p - 2] + 1;
            derive(cx, p - 2, end, &list, &b.origin, found);
        }
        Some(_) => {}
        None if ends_expression(src, after) => {
            found.extend(assigned(f, src, p, item, &b.origin, true));
        }
        None => {}
    }
}

/// Reads the property chain from `q`; gives where it ends and the shape reached.
fn chain(
    src: &Src,
    mut q: usize,
    shape: &Shape,
    b: &Binding,
    report: &mut Report,
) -> (usize, Shape) {
    let mut cur = shape.clone();
    while (src.is(q, ".") || src.is(q, "?.")) && src.ident(q + 1).is_some() {
        let name = src.toks[q + 1].text.as_str();
        let next = match &cur {
            Shape::Object(fields) => fields.get(name).cloned(),
            Shape::List(_) if LIST_MEMBERS.contains(&name) => return (q, cur),
            Shape::List(_) => None,
            Shape::Any => return (q, cur),
        };
        match next {
            Some(s) => {
                report.checked += 1;
                cur = s;
                q += 2;
            }
            None => {
                // A write of a page-side field (`x.local = true`) is not a read.
                if !src.is(q + 2, "=") {
                    let t = &src.toks[q + 1];
                    report.problems.insert(format!(
                        "{}:{}: reads `{}` off {} ({}), which has no such field",
                        src.name,
                        t.line,
                        name,
                        b.key.join("."),
                        b.origin
                    ));
                }
                return (q, Shape::Any);
            }
        }
    }
    (q, cur)
}

/// The names a value read at `p..q` flows into.
fn derive(cx: Cx<'_>, p: usize, q: usize, cur: &Shape, origin: &str, found: &mut Vec<Binding>) {
    let Cx { f, src, srcs } = cx;
    if matches!(cur, Shape::Any) {
        return;
    }
    if ends_expression(src, q) {
        found.extend(assigned(f, src, p, cur, origin, false));
    }
    let Shape::List(item) = cur else {
        found.extend(map_set(f, src, p, q, cur, origin));
        found.extend(argument(f, src, p, q, cur, origin, srcs));
        return;
    };
    // `(r.list || []).map(…)`
    let q = if p > 0
        && src.is(p - 1, "(")
        && src.is(q, "||")
        && src.is(q + 1, "[")
        && src.is(q + 2, "]")
        && src.is(q + 3, ")")
    {
        q + 4
    } else {
        q
    };
    if src.is(q, ".") && src.is(q + 2, "(") {
        let method = src.ident(q + 1).unwrap_or("");
        if method == "find" {
            found.extend(assigned(f, src, p, item, origin, false));
        }
        if ITEM_CALLBACKS.contains(&method) {
            found.extend(callback(f, src, q + 3, item, origin));
            if src.ident(q + 3).is_some() && src.is(q + 4, ")") {
                let name = src.ident(q + 3).unwrap_or("");
                found.extend(function_param(name, 0, item, origin, srcs, f));
            }
        }
    }
    if p >= 5
        && src.ident(p - 1) == Some("of")
        && src.is(p - 4, "(")
        && src.ident(p - 5) == Some("for")
        && let Some(name) = src.ident(p - 2)
    {
        let body = src.close[p - 4] + 1;
        let end = if src.is(body, "{") {
            src.close[body]
        } else {
            src.block_end[body]
        };
        found.push(Binding {
            file: Some(f),
            key: vec![name.to_owned()],
            shape: Some((**item).clone()),
            map: false,
            from: p - 2,
            to: end,
            origin: origin.to_owned(),
        });
    }
    found.extend(argument(f, src, p, q, cur, origin, srcs));
}

/// `m.set(key, value)`: `m` becomes a `Map` of values of this shape.
fn map_set(f: usize, src: &Src, p: usize, q: usize, cur: &Shape, origin: &str) -> Option<Binding> {
    if !src.is(p.checked_sub(1)?, ",") || !src.is(q, ")") {
        return None;
    }
    let open = src.open[q];
    let is_set = open >= 3 && src.ident(open - 1) == Some("set") && src.is(open - 2, ".");
    if !is_set {
        return None;
    }
    target(f, src, open - 3, cur, origin, true)
}

/// Whether the value read before `q` is the whole right-hand side (`x = r.list || []`), not a
/// part of it (`x = r.a && r.b`, `x = r.list.find(…)`).
fn ends_expression(src: &Src, q: usize) -> bool {
    let Some(t) = src.toks.get(q) else {
        return true;
    };
    t.line > src.toks[q - 1].line
        || (t.kind == Kind::Punct
            && matches!(t.text.as_str(), ";" | "," | ")" | "}" | "]" | "||" | "??"))
}

/// A value passed whole as an argument of a declared function: that parameter.
fn argument(
    f: usize,
    src: &Src,
    p: usize,
    q: usize,
    cur: &Shape,
    origin: &str,
    srcs: &[Src],
) -> Option<Binding> {
    if !(src.is(p.checked_sub(1)?, "(") || src.is(p - 1, ","))
        || !(src.is(q, ",") || src.is(q, ")"))
    {
        return None;
    }
    let (mut i, mut depth, mut index) = (p, 0usize, 0usize);
    let open = loop {
        i = i.checked_sub(1)?;
        match src.toks[i].text.as_str() {
            ")" | "]" | "}" => depth += 1,
            "(" if depth == 0 => break i,
            "[" | "{" if depth == 0 => return None,
            "(" | "[" | "{" => depth -= 1,
            "," if depth == 0 => index += 1,
            _ => {}
        }
    };
    let name = src.ident(open.checked_sub(1)?)?;
    if NOT_CALLS.contains(&name) || (open >= 2 && src.is(open - 2, ".")) {
        return None;
    }
    function_param(name, index, cur, origin, srcs, f)
}

/// Parameter `index` of the function declared `function name(…)` in one of `srcs`.
fn function_param(
    name: &str,
    index: usize,
    shape: &Shape,
    origin: &str,
    srcs: &[Src],
    caller: usize,
) -> Option<Binding> {
    // The caller's own file first: each file is a module with its own names.
    let order = std::iter::once(caller).chain((0..srcs.len()).filter(|f| *f != caller));
    order.map(|f| (f, &srcs[f])).find_map(|(f, src)| {
        let at = (1..src.toks.len()).find(|i| {
            src.ident(*i) == Some(name)
                && src.ident(i - 1) == Some("function")
                && src.is(i + 1, "(")
        })?;
        let body = src.close[at + 1] + 1;
        let (param_at, param) = src.params(at + 1).into_iter().nth(index)?;
        Some(Binding {
            file: Some(f),
            key: vec![param],
            shape: Some(shape.clone()),
            map: false,
            from: param_at,
            to: if src.is(body, "{") {
                src.close[body]
            } else {
                body
            },
            origin: origin.to_owned(),
        })
    })
}

/// The page's JavaScript: `gui/**/*.js` but `gui/vendor/`.
fn page_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../gui");
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && path.file_name().is_some_and(|n| n != "vendor") {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "js") {
                let name = path.strip_prefix(&root).unwrap().display().to_string();
                out.push((
                    format!("gui/{name}"),
                    std::fs::read_to_string(&path).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_page_reads_only_fields_the_contract_sends() {
    let files = page_files();
    assert!(!files.is_empty(), "no gui/*.js found");
    let report = check(&files);
    assert!(
        report.problems.is_empty(),
        "the page reads fields no contract type sends (rename it in the page or in crates/host/src/gui/contract/):\n  {}",
        report
            .problems
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  ")
    );
    // The check follows the answers it claims to: a page it could no longer follow would
    // pass without checking anything.
    assert!(
        report.checked >= 250,
        "only {} reads checked",
        report.checked
    );
    assert!(
        report.answers.len() >= 18,
        "only {:?} followed",
        report.answers
    );
}

#[test]
fn a_field_the_answer_does_not_have_is_found_wherever_it_flows() {
    let page = "async function load() {\n  const r = await getJson('/api/files/' + p);\n  E.found = r.findings;\n  show(r);\n}\nfunction show(x) { return x.hash + x.hsah; }\nconst g = () => E.found.map((f) => f.line + f.lien);\nfunction other(r) { return r.hsah; }\n";
    let report = check(&[("gui/t.js".into(), page.into())]);
    let problems: Vec<&str> = report.problems.iter().map(String::as_str).collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].starts_with("gui/t.js:6: reads `hsah`"),
        "{problems:?}"
    );
    assert!(
        problems[1].starts_with("gui/t.js:7: reads `lien`"),
        "{problems:?}"
    );
}
