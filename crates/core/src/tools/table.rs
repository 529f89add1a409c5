//! The one table of bundled tools: each row gives a tool's name, whether it needs a work
//! folder, whether it is on by default, how an agent comes to be offered it, its spec and how it
//! runs. The name lists, the specs (and their golden files), the offered set and the dispatch
//! all derive from it. Adding a tool = one row here + its module (`run` and `spec`).

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{RunApproval, ToolContext, ToolOutput};
use super::{ask_user, file, rag, remember, run, search, text_edit};
use crate::village::Language;

/// How a tool runs.
#[derive(Clone, Copy)]
pub(crate) enum Runner {
    /// Synchronous file work: on the blocking pool, within [`super::BLOCKING_TOOL_TIMEOUT`].
    Blocking(fn(&Value, &ToolContext) -> ToolOutput),
    /// Async work with its own limits (`run`: a child process and its timeout).
    Async(for<'a> fn(&'a Value, &'a ToolContext) -> BoxFuture<'a, ToolOutput>),
    /// A person answers it: the turn runs the call (`orchestrator/question.rs`); this runs
    /// only where no turn does (no person is present).
    Person(fn(&Value, &ToolContext) -> ToolOutput),
}

/// How an agent comes to be offered a tool.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offered {
    /// Chosen by the agent's `enabledTools` (or the default set when it has none).
    ByEnabledTools,
    /// Offered whenever the agent declares `ragSources`.
    WithRagSources,
}

/// One bundled tool.
pub(crate) struct BundledTool {
    /// The name the model calls.
    pub name: &'static str,
    /// Hidden from an agent without a work folder.
    pub needs_work_dir: bool,
    /// In the default set (an agent without `enabledTools`).
    pub default_enabled: bool,
    /// How an agent comes to be offered it.
    pub offered: Offered,
    /// Its description and parameter schema, in a language, for an approval mode.
    pub spec: fn(Language, RunApproval) -> (String, Value),
    /// How it runs.
    pub run: Runner,
}

/// Every bundled tool, sorted by name (the order of the offered specs and the golden files).
pub(crate) const TOOLS: &[BundledTool] = &[
    BundledTool {
        name: ask_user::NAME,
        needs_work_dir: false,
        default_enabled: false,
        offered: Offered::ByEnabledTools,
        spec: ask_user::spec,
        run: Runner::Person(ask_user::run),
    },
    file_tool("diff", true, text_edit::diff_spec, text_edit::diff),
    file_tool("fd", true, search::fd_spec, search::fd),
    file_tool("file", true, file::spec, file::run),
    file_tool("grep", true, search::grep_spec, search::grep),
    BundledTool {
        name: "rag",
        needs_work_dir: false,
        default_enabled: false,
        offered: Offered::WithRagSources,
        spec: rag::spec,
        run: Runner::Blocking(rag::run),
    },
    file_tool("remember", false, remember::spec, remember::run),
    BundledTool {
        name: "run",
        needs_work_dir: false,
        default_enabled: false,
        offered: Offered::ByEnabledTools,
        spec: run::spec,
        run: Runner::Async(run_async),
    },
    file_tool("sd", true, text_edit::sd_spec, text_edit::sd),
    file_tool("yq", true, text_edit::yq_spec, text_edit::yq),
];

/// A synchronous tool of the default set, chosen by `enabledTools`.
const fn file_tool(
    name: &'static str,
    needs_work_dir: bool,
    spec: fn(Language, RunApproval) -> (String, Value),
    run: fn(&Value, &ToolContext) -> ToolOutput,
) -> BundledTool {
    BundledTool {
        name,
        needs_work_dir,
        default_enabled: true,
        offered: Offered::ByEnabledTools,
        spec,
        run: Runner::Blocking(run),
    }
}

fn run_async<'a>(args: &'a Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
    Box::pin(run::run(args, ctx))
}

/// The row of a tool.
pub(crate) fn find(name: &str) -> Option<&'static BundledTool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The bundled tools that `enabledTools` chooses from.
pub const BUNDLED_TOOL_NAMES: [&str; count(Set::Choosable)] = names(Set::Choosable);
/// The default set.
pub const DEFAULT_ENABLED_TOOLS: [&str; count(Set::Default)] = names(Set::Default);
/// The tools that need a work folder (hidden without one).
pub const WORK_DIR_TOOL_NAMES: [&str; count(Set::WorkDir)] = names(Set::WorkDir);

/// A name list derived from the table.
#[derive(Clone, Copy)]
enum Set {
    Choosable,
    Default,
    WorkDir,
}

const fn member(tool: &BundledTool, set: Set) -> bool {
    let choosable = matches!(tool.offered, Offered::ByEnabledTools);
    match set {
        Set::Choosable => choosable,
        Set::Default => choosable && tool.default_enabled,
        Set::WorkDir => tool.needs_work_dir,
    }
}

const fn count(set: Set) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < TOOLS.len() {
        if member(&TOOLS[i], set) {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn names<const N: usize>(set: Set) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut n, mut i) = (0, 0);
    while i < TOOLS.len() {
        if member(&TOOLS[i], set) {
            out[n] = TOOLS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{BUNDLED_TOOL_NAMES, DEFAULT_ENABLED_TOOLS, TOOLS, WORK_DIR_TOOL_NAMES};

    #[test]
    fn the_table_is_sorted_and_the_lists_derive_from_it() {
        assert!(
            TOOLS.windows(2).all(|w| w[0].name < w[1].name),
            "sorted, unique"
        );
        let names = |list: &[&str]| list.join(" ");
        assert_eq!(
            names(&BUNDLED_TOOL_NAMES),
            "ask_user diff fd file grep remember run sd yq"
        );
        assert_eq!(
            names(&DEFAULT_ENABLED_TOOLS),
            "diff fd file grep remember sd yq"
        );
        assert_eq!(names(&WORK_DIR_TOOL_NAMES), "diff fd file grep sd yq");
    }
}
