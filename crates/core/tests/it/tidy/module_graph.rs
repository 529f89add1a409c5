//! The graph of a crate's top-level modules, read from its sources for the tidy rule on module
//! cycles and core's floors: which module's production code names which other module.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use super::{lex, read, rel, root, walk, without_tests};

/// The crates whose top-level modules may not use each other in a cycle.
const ACYCLIC_CRATES: &[&str] = &["core", "host", "cli", "testkit"];

/// Core's floors, lowest first (ARCHITECTURE.md, "Core's floors"): a top-level module of core
/// uses only modules of its own floor or of the floors below. Every module is on one floor.
const CORE_FLOORS: &[&[&str]] = &[
    &[
        "clock",
        "effort",
        "endpoint_rule",
        "error",
        "log",
        "sync",
        "version",
    ],
    &["village"],
    &["llm"],
    &[
        "budget",
        "events",
        "mcp",
        "model_endpoint",
        "pricing",
        "process",
        "prompt",
        "safety",
        "sessions",
        "stats",
        "tools",
        "trace",
    ],
    &["assist", "judge", "probe"],
    &["orchestrator"],
    &["goal", "preflight", "schedule"],
];

/// Pairs of core's modules where the first may not use the second, although its floor would
/// allow it. `llm` takes plain settings (its `Endpoint`, `Wire`; the effort and the endpoint rule
/// from the ground floor) and names nothing of the village: `model_endpoint`, above both, makes a
/// template into them.
const CORE_APART: &[(&str, &str)] = &[("llm", "village")];

/// What breaks [`CORE_APART`]: each use of a module kept apart, with the first file that uses it.
pub(super) fn apart_problems() -> Vec<String> {
    let graph = crate_graph("core");
    let mut problems = Vec::new();
    for (module, apart) in CORE_APART {
        assert!(
            graph.contains_key(*module),
            "crates/core/src/{module}: not read"
        );
        if let Some(file) = graph[*module].get(*apart) {
            problems.push(format!(
                "{file}: {module} uses {apart}, which it must not (CORE_APART in tidy/module_graph.rs): move the shared type down to the ground floor, or build {module}'s settings from {apart}'s in a module above both (as model_endpoint.rs does)"
            ));
        }
    }
    problems
}

/// What breaks the rule: each cycle of [`ACYCLIC_CRATES`] with the files that close it, each
/// module of core on no floor, each use of a floor above.
pub(super) fn problems() -> Vec<String> {
    let mut problems = Vec::new();
    for krate in ACYCLIC_CRATES {
        let graph = crate_graph(krate);
        assert!(graph.len() > 2, "crates/{krate}: no modules read");
        for cycle in cycles(&graph) {
            let uses: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} (in {})", w[1], graph[&w[0]][&w[1]]))
                .collect();
            problems.push(format!(
                "crates/{krate}: a module cycle {}: {} uses {}; move the shared type to a lower floor (ARCHITECTURE.md, \"Core's floors\") and point the imports there",
                cycle.join(" -> "),
                cycle[0],
                uses.join(", which uses "),
            ));
        }
    }
    // Floors are counted from 1, as ARCHITECTURE.md lists them.
    let floor_of = |m: &str| {
        CORE_FLOORS
            .iter()
            .position(|f| f.contains(&m))
            .map(|f| f + 1)
    };
    for (module, uses) in crate_graph("core") {
        let Some(floor) = floor_of(&module) else {
            problems.push(format!(
                "crates/core/src/{module}: on no floor: add it to CORE_FLOORS (tidy/module_graph.rs) and ARCHITECTURE.md's \"Core's floors\""
            ));
            continue;
        };
        for (used, file) in uses {
            if floor_of(&used).is_some_and(|f| f > floor) {
                problems.push(format!(
                    "{file}: {module} (floor {floor}) uses {used}, a floor above it; move the shared type down to floor {floor} or below"
                ));
            }
        }
    }
    problems
}

/// Module → (module it uses → the first file, relative to the root, that uses it).
pub(super) type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// The graph of `krate`'s top-level modules (files and folders of `src/`, not the crate root
/// nor `src/bin/`, whose files are crates of their own). An edge is a `crate::m` path, an item
/// of a `use crate::{m, n::x}` group, a `super::` path that climbs to the crate root, or a name
/// the crate root re-exports from `m` (`pub use m::{A, b::C}`), in code outside tests.
pub(super) fn crate_graph(krate: &str) -> Graph {
    let src = root().join("crates").join(krate).join("src");
    let modules = top_modules(&src);
    let reexports = root_reexports(&src, &modules);
    let mut graph: Graph = modules
        .iter()
        .map(|m| (m.clone(), BTreeMap::new()))
        .collect();
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    for file in files {
        let inside = rel(&src, &file);
        let Some(module) = module_of(&inside) else {
            continue;
        };
        let path = rel(&root(), &file);
        let lexed = lex(&read(&path));
        let depth = inside.matches('/').count() + usize::from(!inside.ends_with("/mod.rs"));
        for name in crate_names(without_tests(&lexed.code), depth) {
            let used = if modules.contains(&name) {
                Some(name)
            } else {
                reexports.get(&name).cloned()
            };
            if let Some(used) = used.filter(|u| *u != module) {
                let edges = graph.entry(module.clone()).or_default();
                edges.entry(used).or_insert_with(|| path.clone());
            }
        }
    }
    graph
}

/// The top-level module of a production file inside `src/` (`None`: the root, a binary, a
/// test file, not Rust).
fn module_of(inside: &str) -> Option<String> {
    let first = inside.split('/').next()?;
    if !inside.ends_with(".rs")
        || inside.ends_with("/tests.rs")
        || ["lib.rs", "main.rs", "bin"].contains(&first)
    {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_owned())
}

fn top_modules(src: &Path) -> BTreeSet<String> {
    let mut files = Vec::new();
    walk(src, &mut files);
    files
        .iter()
        .filter_map(|f| module_of(&rel(src, f)))
        .collect()
}

/// Names the crate root re-exports, with the module they come from.
fn root_reexports(src: &Path, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let root_file = ["lib.rs", "main.rs"]
        .into_iter()
        .map(|f| src.join(f))
        .find(|f| f.exists());
    let Some(root_file) = root_file else {
        return BTreeMap::new();
    };
    let code = lex(&read(&rel(&root(), &root_file))).code;
    let statement = regex::Regex::new(r"pub\s+use\s+([a-z_][a-z0-9_]*)::([^;]+);").unwrap();
    let ident = regex::Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").unwrap();
    let mut names = BTreeMap::new();
    for caps in statement.captures_iter(&code) {
        if !modules.contains(&caps[1]) {
            continue;
        }
        for name in ident.find_iter(&caps[2]) {
            if !modules.contains(name.as_str()) {
                names.insert(name.as_str().to_owned(), caps[1].to_owned());
            }
        }
    }
    names
}

/// The first segment of every path of `code` that starts at the crate root: `crate::m…`, each
/// item of `crate::{m, n::x}`, and `super::…` climbing `depth` levels or more (`depth`: how deep
/// the file's module sits, 1 for `src/m.rs` and `src/m/mod.rs`).
pub(super) fn crate_names(code: &str, depth: usize) -> Vec<String> {
    let path = regex::Regex::new(r"\b(crate|super)::((?:super::)*)").unwrap();
    let mut names = Vec::new();
    for caps in path.captures_iter(code) {
        let whole = caps.get(0).unwrap();
        if code[..whole.start()].ends_with('$') {
            continue; // `$crate` in a macro: the crate of the macro's caller.
        }
        let climbs = 1 + caps[2].matches("super::").count();
        if &caps[1] == "super" && climbs < depth {
            continue;
        }
        names.extend(first_segments(&code[whole.end()..]));
    }
    names
}

/// The first identifier of `rest`, or of each item of the `{…}` group it starts with.
fn first_segments(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> Option<String> {
        let s = s.trim_start();
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        (end > 0).then(|| s[..end].to_owned())
    };
    let Some(group) = rest.strip_prefix('{') else {
        return ident(rest).into_iter().collect();
    };
    let mut depth = 0usize;
    let mut items = vec![String::new()];
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(item) = items.last_mut() {
            item.push(c);
        }
    }
    items.iter().filter_map(|i| ident(i)).collect()
}

/// Every cycle of `graph`, each once, as its modules in order (the first repeated at the end),
/// shortest first.
pub(super) fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    for start in graph.keys() {
        let Some(cycle) = shortest_way_back(graph, start) else {
            continue;
        };
        let members: BTreeSet<String> = cycle.iter().cloned().collect();
        if seen.insert(members) {
            found.push(cycle);
        }
    }
    found.sort_by_key(Vec::len);
    found
}

/// The shortest path from `start` back to itself (breadth first).
fn shortest_way_back(graph: &Graph, start: &str) -> Option<Vec<String>> {
    let mut before: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue: VecDeque<&str> = VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        for next in graph.get(at).into_iter().flat_map(|e| e.keys()) {
            if next == start {
                let mut path = vec![start.to_owned()];
                let mut back = at;
                while back != start {
                    path.push(back.to_owned());
                    back = before[back];
                }
                path.push(start.to_owned());
                path.reverse();
                return Some(path);
            }
            if !before.contains_key(next.as_str()) {
                before.insert(next, at);
                queue.push_back(next);
            }
        }
    }
    None
}

/// No cycle among a crate's top-level modules, and core's modules keep to their floors: a
/// module that names another through `crate::` (outside tests) sits on its floor or above it.
#[test]
fn no_module_cycles_and_core_keeps_its_floors() {
    let names = crate_names("use crate::{a, b::{c, d}};\nsuper::super::e::f();", 2);
    assert_eq!(names, ["a", "b", "e"], "the reader of crate paths");
    super::fail(&problems(), "no module cycles; core keeps its floors");
}

/// `llm` names nothing of `village` (module_graph.rs `CORE_APART`): its endpoint is plain
/// settings that `model_endpoint` builds from a template, so the floors' rule alone (which lets
/// floor 3 use floor 2) is not enough.
#[test]
fn llm_names_nothing_of_the_village() {
    super::fail(&apart_problems(), "modules kept apart stay apart");
}
