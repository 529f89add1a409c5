//! The tidy test (rust-analyzer style): reads the workspace's sources and enforces the written
//! invariants of `ARCHITECTURE.md` and the standards. Each failure names the rule and the file.
//! Allowlists hold the known offenders of a rule being worked off; they only shrink.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

mod cli_words;
mod gui;
mod module_graph;
mod waits;

/// The longest production function, in lines (signature to closing brace).
const MAX_FN_LINES: usize = 120;
/// The longest source file, in lines.
const MAX_FILE_LINES: usize = 800;

/// Production functions over [`MAX_FN_LINES`] (`path::name`).
const LONG_FN_ALLOWED: &[&str] = &[];

/// Files over [`MAX_FILE_LINES`].
const LONG_FILE_ALLOWED: &[&str] = &[];

/// Files that still carry `#[allow(clippy::too_many_arguments)]`.
const TOO_MANY_ARGUMENTS_ALLOWED: &[&str] = &[];

/// UPPER_SNAKE string literals of production code that are not codes (environment variables,
/// test keys).
const NOT_CODES: &[&str] = &[
    "ALL_PROXY",
    "API_MODE",
    "CARGO_MANIFEST_DIR",
    "CARGO_PKG_VERSION",
    "DATA_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "FUSEFORKS_KEYRING",
    "FUSEFORKS_REQUIRE_BAKE",
    "FUSEFORKS_VERSION",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "LC_ALL",
    "LC_MESSAGES",
    "NO_PROXY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_SDK_DISABLED",
    "OUT_DIR",
    "RUSTUP_HOME",
    "XDG_DATA_HOME",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `crates/` (sources, tests, benches, build scripts), relative to the
/// root, sorted.
fn rust_files() -> Vec<String> {
    let mut out = Vec::new();
    walk(&root().join("crates"), &mut out);
    let root = root();
    let mut files: Vec<String> = out
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| rel(&root, &p))
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || ["target", "fixtures", "node_modules"].contains(&name.as_ref())
        {
            continue;
        }
        if path.is_dir() {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn rel(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Whether `path` is production code of a product crate (not testkit, not tests: a `tests.rs`
/// or a file of a `tests/` folder beside the code).
fn production(path: &str) -> bool {
    ["crates/core/src/", "crates/host/src/", "crates/cli/src/"]
        .iter()
        .any(|p| path.starts_with(p))
        && !path.ends_with("/tests.rs")
        && !path.contains("/tests/")
}

/// A source split into code (comments removed, string and char literals emptied; lines kept)
/// and the string literals with their 1-based line.
struct Lexed {
    code: String,
    strings: Vec<(usize, String)>,
}

fn lex(text: &str) -> Lexed {
    let chars: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut strings = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let newline = |c: char, code: &mut String, line: &mut usize| {
        if c == '\n' {
            code.push('\n');
            *line += 1;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    newline(chars[i], &mut code, &mut line);
                    i += 1;
                }
            }
            continue;
        }
        // Raw strings: r"…", r#"…"#, br"…".
        let raw_start = if c == 'r' && matches!(next, Some('"' | '#')) {
            Some(i + 1)
        } else if c == 'b' && next == Some('r') && matches!(chars.get(i + 2), Some('"' | '#')) {
            Some(i + 2)
        } else {
            None
        };
        let ident_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if let (Some(mut j), false) = (raw_start, ident_before) {
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) == Some(&'"') {
                let start_line = line;
                let mut literal = String::new();
                j += 1;
                while j < chars.len() {
                    if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    literal.push(chars[j]);
                    newline(chars[j], &mut code, &mut line);
                    j += 1;
                }
                code.push_str("\"\"");
                strings.push((start_line, literal));
                i = j;
                continue;
            }
        }
        if c == '"' {
            let start_line = line;
            let mut literal = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    literal.push(chars[i]);
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    literal.push(ch);
                    newline(ch, &mut code, &mut line);
                }
                i += 1;
            }
            i += 1;
            code.push_str("\"\"");
            strings.push((start_line, literal));
            continue;
        }
        if c == '\'' {
            // A char literal ('x', '\n', '\u{…}'), not a lifetime ('a).
            let end = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&ch| ch == '\'')
                    .map(|p| i + 2 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            if let Some(end) = end {
                code.push_str("' '");
                i = end + 1;
                continue;
            }
        }
        code.push(c);
        if c == '\n' {
            line += 1;
        }
        i += 1;
    }
    Lexed { code, strings }
}

/// The code of a file up to its inline `#[cfg(test)] mod … {` (by convention the last item).
fn without_tests(code: &str) -> &str {
    let mut at = 0;
    let mut lines = code.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let inline_module = lines.peek().is_some_and(|next| {
            let next = next.trim();
            next.starts_with("mod ") && next.ends_with('{')
        });
        if line.trim_start().starts_with("#[cfg(test)]") && inline_module {
            return &code[..at];
        }
        at += line.len();
    }
    code
}

/// The functions of some code: name, first line (1-based) and length in lines.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let signature =
        regex::Regex::new(r"^\s*(pub(\([a-z:]+\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\S+\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")
            .unwrap();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(caps) = signature.captures(line) else {
            continue;
        };
        let mut depth = 0i64;
        let mut opened = false;
        'scan: for (offset, body) in lines[start..].iter().enumerate() {
            for ch in body.chars() {
                match ch {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    ';' if !opened && depth == 0 => break 'scan,
                    _ => {}
                }
                if opened && depth == 0 {
                    found.push((caps[7].to_owned(), start + 1, offset + 1));
                    break 'scan;
                }
            }
        }
    }
    found
}

fn fail(problems: &[String], rule: &str) {
    assert!(
        problems.is_empty(),
        "tidy rule `{rule}` broken:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_source_file_starts_with_a_module_doc() {
    let problems: Vec<String> = rust_files()
        .into_iter()
        .filter(|f| !read(f).starts_with("//!"))
        .map(|f| format!("{f}: does not start with a `//!` line"))
        .collect();
    fail(&problems, "every source file starts with `//!`");
}

#[test]
fn core_never_prints() {
    let lib = read("crates/core/src/lib.rs");
    let mut problems = Vec::new();
    if !lib.contains("#![deny(clippy::print_stdout, clippy::print_stderr)]") {
        problems.push(
            "crates/core/src/lib.rs: lacks `#![deny(clippy::print_stdout, clippy::print_stderr)]`"
                .to_owned(),
        );
    }
    let print = regex::Regex::new(r"\b(e?print(ln)?|dbg)!").unwrap();
    for file in rust_files()
        .iter()
        .filter(|f| f.starts_with("crates/core/src/"))
    {
        let lexed = lex(&read(file));
        for (n, line) in lexed.code.lines().enumerate() {
            if print.is_match(line)
                || line.contains("io::stdout()")
                || line.contains("io::stderr()")
            {
                problems.push(format!("{file}:{}: prints: {}", n + 1, line.trim()));
            }
        }
    }
    fail(&problems, "core never prints");
}

#[test]
fn core_never_names_axum_clap_or_keyring() {
    let mut problems = Vec::new();
    let manifest: toml_edit::DocumentMut = read("crates/core/Cargo.toml").parse().unwrap();
    for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(deps) = manifest.get(table).and_then(|t| t.as_table_like()) {
            for (name, _) in deps.iter() {
                if ["axum", "clap", "keyring", "keyutils"]
                    .iter()
                    .any(|w| name.contains(w))
                {
                    problems.push(format!("crates/core/Cargo.toml: [{table}] names {name}"));
                }
            }
        }
    }
    let named = regex::Regex::new(
        r"\b(axum|clap|keyring_core|keyring|linux_keyutils|[a-z_]*keyring_store)\s*::",
    )
    .unwrap();
    for file in rust_files()
        .iter()
        .filter(|f| f.starts_with("crates/core/"))
    {
        let lexed = lex(&read(file));
        for (n, line) in lexed.code.lines().enumerate() {
            if named.is_match(line) || line.contains("use axum") || line.contains("use clap") {
                problems.push(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    fail(&problems, "core never names axum, clap or keyring");
}

#[test]
fn nothing_outside_the_adapters_reads_the_raw_response() {
    // The kernel never reads `ChatResponse::raw`; it is for logs only.
    let field = regex::Regex::new(r"\.raw\b\s*[^(\s]|\.raw\s*$|\braw\s*[:,}]").unwrap();
    let mut problems = Vec::new();
    for file in rust_files().iter().filter(|f| {
        !f.starts_with("crates/core/src/llm/adapters/") && *f != "crates/core/src/llm/canonical.rs"
    }) {
        let lexed = lex(&read(file));
        for (n, line) in lexed.code.lines().enumerate() {
            let hit = field.find_iter(line).any(|m| {
                let before = &line[..m.start()];
                // `&raw const`/`&raw mut` (raw pointers) are not the field.
                !before.trim_end().ends_with('&')
                    && (m.as_str().starts_with('.') || line.contains("ChatResponse"))
            });
            if hit {
                problems.push(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    fail(
        &problems,
        "nothing outside llm/adapters reads ChatResponse::raw",
    );
}

#[test]
fn exit_codes_live_only_in_exit_rs() {
    let number =
        regex::Regex::new(r"ExitCode::from\(\s*\d|ExitCode::(SUCCESS|FAILURE)|process::exit\(")
            .unwrap();
    let mut problems = Vec::new();
    for file in rust_files()
        .iter()
        .filter(|f| f.starts_with("crates/cli/src/") && *f != "crates/cli/src/exit.rs")
    {
        let text = read(file);
        let lexed = lex(&text);
        for (n, line) in lexed.code.lines().enumerate() {
            if number.is_match(line) {
                problems.push(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
        for (n, literal) in &lexed.strings {
            if literal.contains("Exit codes") || literal.contains("exit code") {
                problems.push(format!("{file}:{n}: a table of exit codes outside exit.rs"));
            }
        }
    }
    fail(&problems, "exit codes only in crates/cli/src/exit.rs");
}

#[test]
fn events_jsonl_covers_all_output() {
    // Only `output.rs` writes to stderr, and nothing builds an `Out` that ignores `--events`.
    let mut problems = Vec::new();
    let stderr =
        regex::Regex::new(r"\beprint(ln)?!|io::stderr\(\)\s*\.\s*lock|io::stderr\(\)\s*\.\s*write")
            .unwrap();
    for file in rust_files()
        .iter()
        .filter(|f| f.starts_with("crates/cli/src/") && *f != "crates/cli/src/output.rs")
    {
        let lexed = lex(&read(file));
        for (n, line) in lexed.code.lines().enumerate() {
            if stderr.is_match(line) {
                problems.push(format!(
                    "{file}:{}: writes stderr past `Out`: {}",
                    n + 1,
                    line.trim()
                ));
            }
            if line.contains("Out::default()") || line.contains("jsonl: false") {
                problems.push(format!(
                    "{file}:{}: an `Out` that ignores --events: {}",
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    fail(&problems, "--events jsonl covers all output");
}

#[test]
fn one_test_binary_per_crate() {
    let mut problems = Vec::new();
    let crates = root().join("crates");
    for entry in fs::read_dir(&crates).unwrap().flatten() {
        let krate = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(tests) = fs::read_dir(krate.join("tests")) else {
            continue;
        };
        let mut binaries = Vec::new();
        for test in tests.flatten() {
            let path = test.path();
            let file = test.file_name().to_string_lossy().into_owned();
            if path.is_file() && file.ends_with(".rs") {
                binaries.push(file);
            } else if path.join("main.rs").is_file() {
                binaries.push(format!("{file}/main.rs"));
            }
        }
        if binaries.len() > 1 {
            problems.push(format!(
                "crates/{name}/tests: {} test binaries ({})",
                binaries.len(),
                binaries.join(", ")
            ));
        }
        let manifest = fs::read_to_string(krate.join("Cargo.toml")).unwrap_or_default();
        if manifest.matches("[[test]]").count() > 1 {
            problems.push(format!("crates/{name}/Cargo.toml: more than one [[test]]"));
        }
    }
    fail(&problems, "one test binary per crate");
}

/// The one file that reads `FUSEFORKS_SHARED`: `shared_reference`, the optional cross-check.
const SHARED_HELPER: &str = "crates/testkit/src/lib.rs";

/// Whether a string of code or script reaches for a `shared/` folder beside the repository.
fn reaches_for_shared(s: &str) -> bool {
    s.contains("../shared")
        || s.contains("shared/reference")
        || s.contains("\"..\", \"shared\"")
        || s.trim_matches('/') == "shared"
}

/// The README's commands run on a clone with nothing beside it: no Rust source builds a path to
/// an outside `shared/` folder, only the testkit helper reads `FUSEFORKS_SHARED`, and no script
/// of `scripts/` or `.cargo/` defaults to such a folder (`.ci/run` names it for its optional
/// cross-check run only).
#[test]
fn nothing_needs_a_shared_folder_beside_the_repository() {
    let this = "crates/core/tests/it/tidy.rs";
    let mut problems = Vec::new();
    for file in rust_files().into_iter().filter(|f| f != this) {
        for (line, s) in lex(&read(&file)).strings {
            let names_var = s.contains("FUSEFORKS_SHARED") && file != SHARED_HELPER;
            if reaches_for_shared(&s) || names_var {
                problems.push(format!("{file}:{line}: {s:?}"));
            }
        }
    }
    let mut scripts = Vec::new();
    walk(&root().join("scripts"), &mut scripts);
    walk(&root().join(".cargo"), &mut scripts);
    for path in scripts {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if reaches_for_shared(line) || line.contains("FUSEFORKS_SHARED") {
                problems.push(format!(
                    "{}:{}: {}",
                    rel(&root(), &path),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    fail(
        &problems,
        "nothing needs a shared folder beside the repository",
    );
}

#[test]
fn no_file_over_800_lines() {
    let problems: Vec<String> = rust_files()
        .into_iter()
        .filter(|f| !LONG_FILE_ALLOWED.contains(&f.as_str()))
        .filter_map(|f| {
            let n = read(&f).lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{f}: {n} lines"))
        })
        .collect();
    fail(&problems, "no file over 800 lines");
}

/// A comment gives its reason itself or cites the repository's `docs/`: an issue, a seed or a
/// spec of the original by number is a document a reader of the repository does not have.
#[test]
fn no_comment_cites_an_issue_a_seed_or_a_spec_by_number() {
    let citation = regex::Regex::new(r"//.*\b(?:[Ii]ssue|[Ss]eed|Spec) [0-9]+").unwrap();
    let problems: Vec<String> = rust_files()
        .into_iter()
        .flat_map(|f| {
            read(&f)
                .lines()
                .enumerate()
                .filter(|(_, line)| citation.is_match(line))
                .map(|(i, _)| format!("{f}:{}", i + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    fail(
        &problems,
        "no comment cites an issue, a seed or a spec by number",
    );
}

#[test]
fn no_production_function_over_120_lines() {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for file in rust_files().iter().filter(|f| production(f)) {
        let lexed = lex(&read(file));
        for (name, line, len) in functions(without_tests(&lexed.code)) {
            let key = format!("{file}::{name}");
            if len > MAX_FN_LINES {
                seen.insert(key.clone());
                if !LONG_FN_ALLOWED.contains(&key.as_str()) {
                    problems.push(format!("{file}:{line}: fn {name} is {len} lines"));
                }
            }
        }
    }
    for allowed in LONG_FN_ALLOWED {
        if !seen.contains(*allowed) {
            problems.push(format!(
                "{allowed}: now within {MAX_FN_LINES} lines; take it off LONG_FN_ALLOWED"
            ));
        }
    }
    fail(&problems, "no production function over 120 lines");
}

#[test]
fn no_too_many_arguments_allowance() {
    let problems: Vec<String> = rust_files()
        .into_iter()
        .filter(|f| !TOO_MANY_ARGUMENTS_ALLOWED.contains(&f.as_str()))
        .filter(|f| {
            lex(&read(f))
                .code
                .contains("allow(clippy::too_many_arguments)")
        })
        .map(|f| format!("{f}: allows clippy::too_many_arguments"))
        .collect();
    fail(&problems, "no #[allow(clippy::too_many_arguments)]");
}

#[test]
fn every_error_type_is_coded() {
    // An error gives its code and fix through `fuseforks_core::Coded`; an edge never
    // parses its Display text.
    let derive = regex::Regex::new(
        r"#\[derive\([^)]*\bError\b[^)]*\)\]\s*(#\[[^\]]*\]\s*)*pub(\([a-z]+\))?\s+(enum|struct)\s+([A-Za-z0-9_]+)",
    )
    .unwrap();
    let coded = regex::Regex::new(r"Coded\s+for\s+([A-Za-z0-9_]+)").unwrap();
    let mut types = Vec::new();
    let mut impls = BTreeSet::new();
    for file in rust_files()
        .iter()
        .filter(|f| f.starts_with("crates/core/src/") || f.starts_with("crates/host/src/"))
    {
        let code = lex(&read(file)).code;
        for caps in derive.captures_iter(&code) {
            types.push((file.clone(), caps[4].to_owned()));
        }
        for caps in coded.captures_iter(&code) {
            impls.insert(caps[1].to_owned());
        }
    }
    assert!(
        types.len() > 10,
        "the derive pattern finds the error types: {types:?}"
    );
    let problems: Vec<String> = types
        .into_iter()
        .filter(|(_, name)| !impls.contains(name))
        .map(|(file, name)| {
            format!("{file}: {name} derives Error but has no `impl Coded for {name}`")
        })
        .collect();
    fail(&problems, "every error type implements Coded");
}

#[test]
fn architecture_names_every_module_folder() {
    let architecture = read("ARCHITECTURE.md");
    let mut dirs = Vec::new();
    for krate in ["core", "host", "cli", "testkit"] {
        let mut files = Vec::new();
        walk(&root().join("crates").join(krate).join("src"), &mut files);
        for file in files {
            if let Some(parent) = file.parent() {
                let name = parent.file_name().unwrap().to_string_lossy().into_owned();
                if name != "src" {
                    dirs.push((rel(&root(), parent), name));
                }
            }
        }
    }
    dirs.sort();
    dirs.dedup();
    let problems: Vec<String> = dirs
        .into_iter()
        // Named as a folder: in backticks (`` `sandbox/` ``) or as a path under `src/`; a
        // bare `/bin/sh` does not name `bin/`.
        .filter(|(dir, name)| {
            let under_src = dir.split_once("/src/").map_or(name.as_str(), |(_, r)| r);
            !architecture.contains(&format!("`{name}/"))
                && !architecture.contains(&format!("src/{under_src}/"))
        })
        .map(|(dir, name)| format!("{dir}: ARCHITECTURE.md never names `{name}/`"))
        .collect();
    fail(&problems, "ARCHITECTURE.md names every module folder");
}

/// The codes of the production code: UPPER_SNAKE string literals (minus [`NOT_CODES`] and the
/// providers' own vocabulary in `llm/adapters/`), and the single-word codes handed to the
/// CLI's `Out::cli`.
fn codes_in_code() -> BTreeSet<String> {
    let snake = regex::Regex::new(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$").unwrap();
    let word = regex::Regex::new(r"^[A-Z]{3,}$").unwrap();
    let cli_call = regex::Regex::new(r#"\.cli\(\s*"[a-z]+",\s*"([A-Z_]+)""#).unwrap();
    let mut codes = BTreeSet::new();
    for file in rust_files().iter().filter(|f| production(f)) {
        if file.starts_with("crates/core/src/llm/adapters/") {
            continue;
        }
        let text = read(file);
        let lexed = lex(&text);
        let test_from = without_tests(&lexed.code).lines().count();
        for (line, literal) in &lexed.strings {
            if *line <= test_from
                && snake.is_match(literal)
                && !NOT_CODES.contains(&literal.as_str())
                && !literal.starts_with("FUSEFORKS_SECRET_")
            {
                codes.insert(literal.clone());
            }
        }
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for caps in cli_call.captures_iter(&flat) {
            if word.is_match(&caps[1]) || snake.is_match(&caps[1]) {
                codes.insert(caps[1].to_owned());
            }
        }
        if text.contains("=> \"USAGE\"") || text.contains("\"USAGE\"") {
            codes.insert("USAGE".into());
        }
    }
    codes
}

/// The codes of `docs/codes.md`'s table and the README's code tables (first column).
fn codes_documented() -> (BTreeSet<String>, BTreeSet<String>) {
    let cell = regex::Regex::new(r"^\|\s*`([A-Za-z_]+)`\s*\|").unwrap();
    let pick = |text: &str| -> BTreeSet<String> {
        text.lines()
            .filter_map(|l| cell.captures(l).map(|c| c[1].to_owned()))
            .collect()
    };
    (pick(&read("docs/codes.md")), pick(&read("README.md")))
}

#[test]
fn every_error_code_is_documented_and_every_documented_code_exists() {
    let in_code = codes_in_code();
    let (table, readme) = codes_documented();
    let mut problems: Vec<String> = in_code
        .iter()
        .filter(|c| !table.contains(*c) && !readme.contains(*c))
        .map(|c| format!("{c}: in the code, in no table of docs/codes.md or README.md"))
        .collect();
    problems.extend(
        table
            .iter()
            .filter(|c| !in_code.contains(*c))
            .map(|c| format!("docs/codes.md: {c} is in no production source")),
    );
    fail(
        &problems,
        "every error code appears in docs/codes.md or README",
    );
}

#[test]
fn the_lexer_keeps_lines_and_drops_comments_and_strings() {
    let lexed =
        lex("//! doc\nfn a() { let s = \"}{\"; // }\n let c = '{'; }\nfn b<'a>(x: &'a str) {}\n");
    assert_eq!(lexed.code.lines().count(), 4);
    assert!(!lexed.code.contains("doc"));
    let fns = functions(&lexed.code);
    assert_eq!(
        fns,
        [("a".to_owned(), 2, 2), ("b".to_owned(), 4, 1)],
        "{}",
        lexed.code
    );
    assert_eq!(lexed.strings, [(2, "}{".to_owned())]);
}

/// Core speaks no CLI: a fix carries a `Remedy` that the CLI and the host word.
#[test]
fn core_names_no_cli_command_or_flag() {
    fail(&cli_words::problems(), cli_words::RULE);
}
