//! The tidy test's reader of the GUI's own JavaScript: finds each function and its length by
//! counting braces outside strings, template text, regular expressions and comments (enough
//! for our scripts; not a parser).

use std::path::{Path, PathBuf};

/// The GUI's own scripts: every `.js` under `gui/` except `gui/vendor/` (a bundle we do not
/// write), sorted.
fn scripts(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.flatten().map(|e| e.path()) {
        if path.is_dir() && !path.ends_with("vendor") {
            scripts(&path, out);
        } else if path.extension().is_some_and(|e| e == "js") {
            out.push(path);
        }
    }
}

/// Each script of `root`'s `gui/` over `max_file` lines, and each function over `max_fn`.
pub(crate) fn oversized(root: &Path, max_file: usize, max_fn: usize) -> Vec<String> {
    let mut files = Vec::new();
    scripts(&root.join("gui"), &mut files);
    files.sort();
    assert!(files.iter().any(|f| f.ends_with("gui/app.js")), "{files:?}");
    let mut problems = Vec::new();
    for path in &files {
        let file = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        let code = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let n = code.lines().count();
        if n > max_file {
            problems.push(format!("{file}: {n} lines"));
        }
        for (line, len) in functions(&code) {
            if len > max_fn {
                problems.push(format!("{file}:{line}: a function of {len} lines"));
            }
        }
    }
    problems
}

/// Where the scanner is inside a line of code.
#[derive(Clone, Copy, PartialEq)]
enum In {
    Code,
    Quote(char),
    Regex { class: bool },
    Block,
}

/// Whether a `/` after `prev` (the last character of code before it) starts a regular
/// expression rather than a division.
fn regex_may_start(prev: Option<char>) -> bool {
    prev.is_none_or(|p| "(,=:[!&|?{};+-*%<>~^".contains(p))
}

/// Per line: the brace depth at its start and at its end, and whether it starts a function
/// (`function` or `=>` in its code).
fn lines(code: &str) -> Vec<(usize, usize, bool)> {
    let (mut depth, mut state) = (0usize, In::Code);
    let mut out = Vec::new();
    for line in code.lines() {
        let start = depth;
        let mut text = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            let next = chars.peek().copied();
            state = match (state, c) {
                (In::Block, '*') if next == Some('/') => {
                    chars.next();
                    In::Code
                }
                (In::Quote(_) | In::Regex { .. }, '\\') => {
                    chars.next();
                    state
                }
                (In::Quote(q), c) if c == q => In::Code,
                (In::Regex { class: false }, '/') => In::Code,
                (In::Regex { .. }, '[') => In::Regex { class: true },
                (In::Regex { class: true }, ']') => In::Regex { class: false },
                (In::Code, '/') if next == Some('/') => break,
                (In::Code, '/') if next == Some('*') => In::Block,
                (In::Code, '/') if regex_may_start(text.trim_end().chars().last()) => {
                    In::Regex { class: false }
                }
                (In::Code, '\'' | '"' | '`') => In::Quote(c),
                (In::Code, c) => {
                    match c {
                        '{' => depth += 1,
                        '}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    text.push(c);
                    In::Code
                }
                (other, _) => other,
            };
        }
        // Only a template's text or a block comment goes on past its line.
        if !matches!(state, In::Quote('`') | In::Block) {
            state = In::Code;
        }
        let starts = text.contains("=>")
            || text
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w == "function");
        out.push((start, depth, starts));
    }
    out
}

/// Each function of a script as (first line, lines): from the line that opens it to the line
/// where the braces opened there close again.
fn functions(code: &str) -> Vec<(usize, usize)> {
    let lines = lines(code);
    let mut found = Vec::new();
    for (i, &(start, end, starts)) in lines.iter().enumerate() {
        if !starts || end <= start {
            continue;
        }
        let close = lines[i + 1..]
            .iter()
            .position(|&(_, e, _)| e <= start)
            .map_or(lines.len(), |k| i + 1 + k);
        found.push((i + 1, close - i + 1));
    }
    found
}

#[test]
fn tidy_js_counts_braces_outside_strings_regexes_and_comments() {
    let code = "function a() {\n  const s = '}{'; // }\n  /* { */ return `${s}` + /[{]/.exec(s);\n}\nconst b = () => 1;\nexport function c(x) {\n  if (x / 2) {\n    x();\n  }\n}\n";
    assert_eq!(functions(code), [(1, 4), (6, 5)]);
}
