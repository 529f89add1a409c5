//! The bundled tools (reference §4): `file`, `grep`, `fd`, `diff`, `sd`, `yq`, `remember`,
//! `run`, `rag`, each behind its safety boundary. A tool never panics on model input; every
//! failure is an `ok: false` body the model can read.

pub mod blackboard;
pub mod file;
pub mod rag;
pub mod run;
pub mod run_policy;
pub mod sandbox;
pub mod search;
pub mod specs;
pub mod text_edit;
pub mod trash;

use std::path::PathBuf;

use serde_json::Value;

use crate::llm::ToolSpec;
use crate::village::{AgentFiles, AgentSpec, Language};
pub use sandbox::{BoundedText, Entry, EntryKind, ReadError, SandboxError, WorkDir, WriteMode};
pub use specs::{BUNDLED_TOOL_NAMES, DEFAULT_ENABLED_TOOLS, RunApproval, WORK_DIR_TOOL_NAMES};
pub use trash::TrashTarget;

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// Whether it succeeded.
    pub ok: bool,
    /// What the model reads.
    pub body: String,
}

impl ToolOutput {
    /// A success.
    pub fn ok(body: impl Into<String>) -> Self {
        Self {
            ok: true,
            body: body.into(),
        }
    }

    /// A failure the model can read.
    pub fn fail(body: impl Into<String>) -> Self {
        Self {
            ok: false,
            body: body.into(),
        }
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
    let enabled: Vec<&str> = match &agent.enabled_tools {
        Some(list) => BUNDLED_TOOL_NAMES
            .iter()
            .copied()
            .filter(|n| list.iter().any(|e| e == n))
            .collect(),
        None => DEFAULT_ENABLED_TOOLS.to_vec(),
    };
    let mut names: Vec<&str> = enabled
        .into_iter()
        .filter(|n| has_work_dir || !WORK_DIR_TOOL_NAMES.contains(n))
        .collect();
    if !agent.rag_sources.is_empty() {
        names.push("rag");
    }
    names.sort_unstable();
    names
        .into_iter()
        .filter_map(|n| specs::spec(n, language, approval))
        .collect()
}

/// Runs one bundled tool call.
pub async fn run_tool(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    if !args.is_object() {
        return ToolOutput::fail(ctx.say(
            "引数は JSON オブジェクトにしてください。",
            "Arguments must be a JSON object.",
        ));
    }
    if name == "run" {
        return run::run(args, ctx).await;
    }
    let (name, args, ctx) = (name.to_owned(), args.clone(), ctx.clone());
    let language = ctx.language;
    blocking(language, move || run_blocking(&name, &args, &ctx))
        .await
        .unwrap_or_else(|failed| failed)
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

/// The tools that do synchronous file I/O (run on a blocking thread).
fn run_blocking(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    match name {
        "file" => file::run(args, ctx),
        "grep" => search::grep(args, ctx),
        "fd" => search::fd(args, ctx),
        "diff" => text_edit::diff(args, ctx),
        "sd" => text_edit::sd(args, ctx),
        "yq" => text_edit::yq(args, ctx),
        "remember" => remember(args, ctx),
        "rag" => rag::run(args, ctx),
        other => ToolOutput::fail(format!(
            "{} {other}",
            ctx.say("不明な道具です:", "Unknown tool:")
        )),
    }
}

/// The longest `remember` note, in characters.
pub const MAX_NOTE_CHARS: usize = 500;

fn remember(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let Some(note) = str_arg(args, "note")
        .map(str::trim)
        .filter(|n| !n.is_empty())
    else {
        return ToolOutput::fail(ctx.say("note が必要です。", "note is required."));
    };
    if note.chars().count() > MAX_NOTE_CHARS {
        return ToolOutput::fail(ctx.say(
            "note は 500 字までです。",
            "A note holds at most 500 characters.",
        ));
    }
    let memory = match ctx.agent_files.read_memory() {
        Ok(m) => m,
        Err(e) => return ToolOutput::fail(e.code().to_owned()),
    };
    let mut next = memory;
    if !next.is_empty() && !next.ends_with('\n') {
        next.push('\n');
    }
    next.push_str("- ");
    next.push_str(&note.replace('\n', " "));
    next.push('\n');
    match ctx.agent_files.write_memory(&next) {
        Ok(()) => ToolOutput::ok(ctx.say("Memory.md に追記しました。", "Added to Memory.md.")),
        Err(e) => ToolOutput::fail(e.code().to_owned()),
    }
}

/// A string argument.
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
