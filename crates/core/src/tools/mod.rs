//! The bundled tools (docs/formats/world.json.md#tools): `file`, `grep`, `fd`, `diff`, `sd`, `yq`,
//! `remember`, `run`, `rag`, `ask_user`, each behind its safety boundary, all named in one table (`table.rs`).
//! A tool never panics on model input; every failure is an `ok: false` body the model can read.
//!
//! # Parts
//!
//! The bundled tools (decision 0005):
//!
//! - `sandbox/`: the work-folder jail, decision 0008: `mod.rs` — `WorkDir`, an open handle on the
//!   folder, path rules, bounded text reads, fences, codes; `open.rs` — resolution beneath the
//!   handle, `openat2` on Linux or a no-link walk (a jail made `with_portable_resolver` always
//!   walks: the escape tests run against both resolvers, and once in a child whose seccomp filter
//!   answers `openat2` with `ENOSYS`; descriptors are always close-on-exec); `ops.rs` —
//!   create/replace/append, folders, listing, rename, copy, entries for the trash
//! - `file.rs`
//! - `blackboard.rs`: notes with ownership rules
//! - `search.rs`: grep, fd
//! - `walk.rs`: **the one folder walk** of `grep`, `fd` and `rag`: ripgrep's `ignore` walker with
//!   every ignore source of its own off — it read them by path, following links, unbounded —; each
//!   met folder's `.ignore` and `.gitignore` read through the jail instead, at most 64 KiB each and
//!   256 KiB a walk, gitignore rules with the deepest folder deciding and `.ignore` before
//!   `.gitignore`; `.gitignore` applies outside a git repository too; `.git/info/exclude`, the
//!   global gitignore and ignore files above the jail's root never read; one that cannot be read —
//!   a link out, not a regular file, too large, not UTF-8 — treated as absent and said in a `note:`
//!   line of the answer; `.git` skipped, links not followed
//! - `text_edit.rs`: diff, sd, yq
//! - `rag.rs`
//! - `remember.rs`
//! - `run.rs` (optional `stdin` text up to 1 MiB; on a timeout the output so far and `exit:
//!   timeout`; through `process/`, under Landlock: read-write in the work folder and a temp folder
//!   of the call, read/execute in the system folders, the `PATH` folders and their toolchains
//!   (`toolchains.rs`), optional TCP denial from `run.json`'s `network`) + `run_policy.rs`
//! - `run_output.rs`: what `run` keeps of a child's stdout and stderr: the first and last 32 KiB,
//!   shown as both ends around a line saying what was left out
//! - `toolchains.rs`: what `run`'s Landlock rules add for the toolchains on `PATH`: a version
//!   manager's root above `shims`, an installed version above its `bin`, rustup's home, the targets
//!   of links in a home `PATH` folder; never the home, its shared folders or its secrets —
//!   `docs/threat-model.md`
//! - `trash.rs`
//! - `ask_user.rs`: the question's spec, argument rules and fixed lines; the turn runs the call —
//!   runner `Person` —, docs/decisions/0014-ask-user.md
//! - `table.rs`: **the one bundled-tool table**: `name, needs_work_dir, default_enabled, offered,
//!   spec, run`; the name lists, the specs, the golden files, the offered set and the dispatch
//!   derive from it
//! - `specs.rs`: the schema helpers, `spec`, the golden text, pinned by
//!   `tests/fixtures/tool_specs_{en,ja}.txt`), and `mod.rs` (dispatch — synchronous tools on the
//!   blocking pool with a 60 s limit —, the offered set). Each tool's module holds its `run` and
//!   its bilingual `spec`. How to add a tool: (1) write `tools/<tool>.rs` with `run(args, ctx) ->
//!   ToolOutput` and `spec(language, approval) -> (description, schema)` (schema via
//!   `specs::schema`); (2) add one row to `TOOLS` in `table.rs`, keeping the names sorted; (3)
//!   `UPDATE_GOLDEN=1 cargo test -p fuseforks-core --test it tools_specs` and review the golden
//!   diff. Invariants of `tools/`: no tool opens a work-folder path except through `WorkDir`; a
//!   write never passes through a link; only regular files are read or written; no tool reads more
//!   of a file than it may return (plus a fixed cap for whole-file edits); no walk reads an ignore
//!   file except through the jail (`walk.rs`.

pub(crate) mod ask_user;
pub(crate) mod blackboard;
mod file;
mod rag;
mod remember;
pub(crate) mod run;
mod run_output;
pub(crate) mod run_policy;
mod sandbox;
mod search;
mod specs;
mod table;
mod text_edit;
mod toolchains;
mod trash;
mod walk;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde_json::Value;

use crate::llm::ToolSpec;
use crate::village::{AgentFiles, AgentSpec, Language};
pub use remember::MAX_NOTE_CHARS;
pub use run_policy::{Decision, decide};
pub use sandbox::{BoundedText, Entry, EntryKind, ReadError, SandboxError, WorkDir, WriteMode};
pub use specs::{RunApproval, golden, spec};
pub use table::{BUNDLED_TOOL_NAMES, DEFAULT_ENABLED_TOOLS, WORK_DIR_TOOL_NAMES};
use table::{Offered, Runner, TOOLS};
pub use trash::TrashTarget;
pub(crate) use trash::{TrashSource, move_to_trash};

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// Whether it succeeded.
    pub ok: bool,
    /// What the model reads.
    pub body: String,
    /// What a `run` call did about approval (audited as a `run_approval` line).
    pub approval: Option<ApprovalNote>,
}

/// What a `run` call did about approval, for the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalNote {
    /// An unknown command was recorded in `run.json`'s `pending` for a human.
    Pending,
    /// Under auto-approve, an unknown command's exact allow line was added to `run.json`.
    AutoApproved,
    /// An allow line of `run.json` let the command run (no decision to record).
    AllowedByRule,
}

impl ApprovalNote {
    /// The audit line's `outcome`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::AutoApproved => "auto_approved",
            Self::AllowedByRule => "allowed_by_rule",
        }
    }

    /// Whether the call made an approval decision of its own (audited as a `run_approval`
    /// line before the call's).
    pub fn is_decision(self) -> bool {
        matches!(self, Self::Pending | Self::AutoApproved)
    }

    /// Who let the call run (the audit line's `approvedBy`).
    pub fn approved_by(self) -> crate::safety::ApprovedBy {
        match self {
            Self::Pending => crate::safety::ApprovedBy::Nobody,
            Self::AutoApproved => crate::safety::ApprovedBy::AutoApproveMode,
            Self::AllowedByRule => crate::safety::ApprovedBy::RunRule,
        }
    }
}

impl ToolOutput {
    /// A success.
    pub fn ok(body: impl Into<String>) -> Self {
        Self {
            ok: true,
            body: body.into(),
            approval: None,
        }
    }

    /// A failure the model can read.
    pub fn fail(body: impl Into<String>) -> Self {
        Self {
            ok: false,
            body: body.into(),
            approval: None,
        }
    }

    /// The same output, noting what the call did about approval.
    #[must_use]
    pub fn with_approval(mut self, note: Option<ApprovalNote>) -> Self {
        self.approval = note;
        self
    }
}

/// Everything a tool may touch for one agent.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The agent.
    pub agent_id: String,
    /// The jail of its work folder, when it has one.
    pub work_dir: Option<WorkDir>,
    /// Its files (Memory.md, run.json).
    pub agent_files: AgentFiles,
    /// Folders `rag` may read.
    pub rag_sources: Vec<PathBuf>,
    /// The command-approval mode.
    pub approval: RunApproval,
    /// Language of model-facing text.
    pub language: Language,
    /// Where `file remove` puts things.
    pub trash: TrashTarget,
    /// Dry-run: a side-effecting call stops at its side effect and says what it would do.
    pub dry_run: bool,
}

impl ToolContext {
    /// Picks the Japanese or English text.
    pub fn say(&self, ja: &str, en: &str) -> String {
        self.language.pick(ja, en)
    }

    pub(crate) fn jail(&self) -> Result<&WorkDir, ToolOutput> {
        self.work_dir.as_ref().ok_or_else(|| {
            ToolOutput::fail(self.say(
                "作業フォルダが設定されていません。",
                "No work folder is set for this agent.",
            ))
        })
    }

    /// The one dry-run stop of every side-effecting tool, placed right at the side effect
    /// (after the validation, sandbox and policy checks): `Some(dry-run: would …)` under
    /// dry-run, `None` otherwise (go on).
    pub(crate) fn would(&self, what: impl FnOnce() -> String) -> Option<ToolOutput> {
        self.dry_run
            .then(|| ToolOutput::ok(format!("dry-run: would {}", what())))
    }

    pub(crate) fn refused(&self, error: &SandboxError) -> ToolOutput {
        ToolOutput::fail(format!(
            "{} [{}]: {error}",
            self.say("拒否しました", "Refused"),
            error.code()
        ))
    }
}

/// The tools an agent is offered, in a stable order (their specs sit in the cached prefix).
pub fn offered_tools(
    agent: &AgentSpec,
    has_work_dir: bool,
    approval: RunApproval,
    language: Language,
) -> Vec<ToolSpec> {
    let chosen = |offered: Offered, default_enabled: bool, name: &str| match offered {
        Offered::ByEnabledTools => match &agent.enabled_tools {
            Some(list) => list.iter().any(|e| e == name),
            None => default_enabled,
        },
        Offered::WithRagSources => !agent.rag_sources.is_empty(),
    };
    TOOLS
        .iter()
        .filter(|t| chosen(t.offered, t.default_enabled, t.name))
        .filter(|t| has_work_dir || !t.needs_work_dir)
        .filter_map(|t| specs::spec(t.name, language, approval))
        .collect()
}

/// Whether a person answers the tool (the turn runs it: `ask_user`).
pub(crate) fn answered_by_person(name: &str) -> bool {
    matches!(table::find(name).map(|t| t.run), Some(Runner::Person(_)))
}

/// Runs one bundled tool call.
pub async fn run_tool(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    if !args.is_object() {
        return ToolOutput::fail(ctx.say(
            "引数は JSON オブジェクトにしてください。",
            "Arguments must be a JSON object.",
        ));
    }
    match table::find(name).map(|t| t.run) {
        Some(Runner::Async(run)) => run(args, ctx).await,
        Some(Runner::Person(run)) => run(args, ctx),
        Some(Runner::Blocking(run)) => {
            let (args, ctx) = (args.clone(), ctx.clone());
            blocking(ctx.language, move || run(&args, &ctx))
                .await
                .unwrap_or_else(|failed| failed)
        }
        None => ToolOutput::fail(format!(
            "{} {name}",
            ctx.say("不明な道具です:", "Unknown tool:")
        )),
    }
}

/// Runs synchronous tool work on the blocking pool, so that file I/O never stalls the async
/// runtime; the turn stops waiting after [`BLOCKING_TOOL_TIMEOUT`].
pub(crate) async fn blocking<T: Send + 'static>(
    language: Language,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolOutput> {
    match tokio::time::timeout(BLOCKING_TOOL_TIMEOUT, tokio::task::spawn_blocking(work)).await {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(_)) => Err(ToolOutput::fail(
            language.pick("道具が異常終了しました。", "The tool failed unexpectedly."),
        )),
        Err(_) => Err(ToolOutput::fail(language.pick(
            "道具が時間内に終わりませんでした（60 秒）。",
            "The tool did not finish in time (60 s).",
        ))),
    }
}

/// How long a file tool may take (it runs on a blocking thread; the turn stops waiting then).
pub const BLOCKING_TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// A string argument.
/// Whether `name` is a bundled tool's.
pub(crate) fn is_bundled(name: &str) -> bool {
    table::find(name).is_some()
}

pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A boolean argument (absent = `default`).
pub(crate) fn bool_arg(args: &Value, key: &str, default: bool) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(default)
}

/// Cuts an owned text to `max` characters (no copy when it fits).
pub(crate) fn cap_chars(text: String, max: usize) -> String {
    if text.len() <= max {
        text
    } else {
        cap(&text, max)
    }
}

/// Cuts text to `max` characters, saying how much was left out.
pub(crate) fn cap(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push_str(&format!("\n… [{} more characters]", total - max));
    out
}
