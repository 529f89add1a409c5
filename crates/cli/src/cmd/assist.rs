//! `fuseforks-cli assist`: the drafting assistant from a terminal. Interactive: the
//! model's questions on stdout, the answers from stdin (`/draft` asks for the draft now, an
//! empty line or end of input stops), the draft on stdout or in `--out FILE`; with `--input TEXT`
//! one exchange for scripts (`--json`: `{type, text|content, notes, validation, attempts, usage,
//! appended}`; `--history FILE` continues from an earlier `appended`). The editor's text is the
//! file as saved. The village is written only with `--save` and a yes (or `--yes`), and a judge
//! draft only when it passed the parser. Under the village lock (exit 4 while a process runs).

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use fuseforks_core::Coded;
use fuseforks_core::assist::{
    AssistError, AssistOutcome, AssistReply, AssistRequest, AssistTarget, DraftKind, total_usage,
};
use fuseforks_core::llm::ChatMessage;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::village::{AgentId, VillageStore};
use fuseforks_host::{HostBootOptions, HostPaths, build_host};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::headless::SecretsArg;
use crate::exit;
use crate::output::Out;
use crate::signals::{SignalCount, reached};
use crate::terminal::for_stdout;

/// What is drafted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum KindArg {
    /// An agent's SKILL.md.
    Skill,
    /// An agent's Construct.md.
    Construct,
    /// A judge's judge.toml.
    Judge,
}

/// Arguments of `assist`.
#[derive(Debug, Args)]
pub(crate) struct AssistArgs {
    /// The data folder; the village is DATA_DIR/workspace.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
    /// What is drafted.
    #[arg(long, value_enum)]
    pub kind: KindArg,
    /// The agent's (skill, construct) or judge's id.
    #[arg(long, value_name = "ID")]
    pub id: String,
    /// The model template (one with useTools).
    #[arg(long, value_name = "TEMPLATE")]
    pub template: String,
    /// Where API keys come from.
    #[arg(long, value_enum, default_value = "keyring")]
    pub secrets: SecretsArg,
    /// One exchange with this message (for scripts), instead of the terminal Q&A.
    #[arg(long, value_name = "TEXT")]
    pub input: Option<String>,
    /// Ask for the draft now.
    #[arg(long)]
    pub force_draft: bool,
    /// The `appended` messages of earlier exchanges (a JSON array), to continue from.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// One JSON object on stdout (with --input).
    #[arg(long)]
    pub json: bool,
    /// Write the draft to this new file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Save the draft into the village file (asks first).
    #[arg(long)]
    pub save: bool,
    /// With --save: do not ask.
    #[arg(long)]
    pub yes: bool,
}

impl KindArg {
    fn kind(self) -> DraftKind {
        match self {
            Self::Skill => DraftKind::Skill,
            Self::Construct => DraftKind::Construct,
            Self::Judge => DraftKind::Judge,
        }
    }
}

/// Runs `assist`.
pub(crate) async fn run(args: &AssistArgs, out: &Out, mut signals: SignalCount) -> u8 {
    let options = HostBootOptions {
        app_version: env!("FUSEFORKS_VERSION").to_owned(),
        secrets: match args.secrets {
            SecretsArg::Keyring => fuseforks_host::SecretSource::Keyring,
            SecretsArg::Env => fuseforks_host::SecretSource::Env,
        },
        open_door: false,
        door_port: None,
        log_echo: out.log_echo(),
        os_locale: super::headless::os_locale(),
        mcp_child_output: out.child_output(),
        run_schedules: false,
    };
    let paths = HostPaths::new(&args.data_dir);
    let host = match build_host(&paths, options).await {
        Ok(h) => h,
        Err(e) => {
            out.error(&e);
            return exit::for_host_error(&e);
        }
    };
    let orchestrator = &host.orchestrator;
    open_latest_conversation(orchestrator);
    let store = VillageStore::new(paths.workspace());
    let mut request = match first_request(args, &store, out) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let cancel = CancellationToken::new();
    let exchange = async {
        if args.input.is_some() {
            one_exchange(orchestrator, &request, &cancel, args, out).await
        } else {
            conversation(orchestrator, &mut request, &cancel, args, out).await
        }
    };
    tokio::select! {
        code = exchange => code,
        () = reached(&mut signals, 1) => {
            cancel.cancel();
            out.cli("error", "INTERRUPTED", "assist was interrupted; nothing was written", None);
            exit::INTERRUPTED
        }
    }
}

/// The records go to the most recent conversation (a new one when there is none), so that
/// `stats` counts CLI drafting too.
fn open_latest_conversation(orchestrator: &Orchestrator) {
    let Some(store) = orchestrator.sessions() else {
        return;
    };
    let latest = store.list().ok().and_then(|l| l.into_iter().next());
    let id = match latest {
        Some((id, _)) => id,
        None => match store.create("assist", now_ms()) {
            Ok(id) => id,
            Err(_) => return,
        },
    };
    let _ = orchestrator.continue_conversation(&id);
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(0))
}

/// The request of the first exchange: the target, the saved text, the history given.
fn first_request(args: &AssistArgs, store: &VillageStore, out: &Out) -> Result<AssistRequest, u8> {
    let history = match &args.history {
        None => Vec::new(),
        Some(path) => read_history(path, out)?,
    };
    Ok(AssistRequest {
        target: AssistTarget {
            kind: args.kind.kind(),
            id: args.id.clone(),
        },
        template_id: args.template.clone(),
        history,
        input: args.input.clone(),
        force_draft: args.force_draft,
        current: saved_text(store, args.kind.kind(), &args.id).unwrap_or_default(),
    })
}

fn read_history(path: &Path, out: &Out) -> Result<Vec<ChatMessage>, u8> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        out.cli(
            "error",
            "INVALID_ASSIST_REQUEST",
            &format!("--history {}: {e}", path.display()),
            None,
        );
        exit::USAGE
    })?;
    serde_json::from_str(&text).map_err(|e| {
        let fix = "pass the appended array of an earlier --json reply";
        out.cli(
            "error",
            "INVALID_ASSIST_REQUEST",
            &format!("--history {}: {e}", path.display()),
            Some(fix),
        );
        exit::USAGE
    })
}

/// The target's file as saved (the editor's text of the terminal).
fn saved_text(store: &VillageStore, kind: DraftKind, id: &str) -> Option<String> {
    let id = AgentId::new(id).ok()?;
    match kind {
        DraftKind::Skill => store.agent_files(&id).ok()?.read_skill().ok(),
        DraftKind::Construct => store.agent_files(&id).ok()?.read_construct().ok(),
        DraftKind::Judge => store.judge_file(&id).ok()?.read_text().ok().flatten(),
    }
}

async fn exchange(
    orchestrator: &Orchestrator,
    request: &AssistRequest,
    cancel: &CancellationToken,
    out: &Out,
) -> Result<AssistOutcome, u8> {
    orchestrator
        .assist_draft(request, cancel.clone())
        .await
        .map_err(|e| {
            out.error(&e);
            exit_code(&e)
        })
}

fn exit_code(e: &AssistError) -> u8 {
    match e.code() {
        "INVALID_ASSIST_REQUEST" => exit::USAGE,
        "SECRET_MISSING" => exit::REJECTED,
        _ => exit::NO_ANSWER,
    }
}

/// `--input`: one exchange, printed as JSON or text.
async fn one_exchange(
    orchestrator: &Orchestrator,
    request: &AssistRequest,
    cancel: &CancellationToken,
    args: &AssistArgs,
    out: &Out,
) -> u8 {
    let outcome = match exchange(orchestrator, request, cancel, out).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let reply = outcome.reply;
    if args.json {
        out.result(&format!("{}\n", reply_json(&reply, &outcome.calls)));
        return match &reply {
            AssistReply::Draft { .. } => deliver(&reply, args, out, true),
            _ => exit::OK,
        };
    }
    match &reply {
        AssistReply::Question { text, .. } => {
            out.result(&format!("{}\n", for_stdout(text)));
            exit::OK
        }
        AssistReply::Draft { .. } => deliver(&reply, args, out, false),
    }
}

/// The terminal Q&A until a draft (or the user stops).
async fn conversation(
    orchestrator: &Orchestrator,
    request: &mut AssistRequest,
    cancel: &CancellationToken,
    args: &AssistArgs,
    out: &Out,
) -> u8 {
    let first = ask_line(
        "What should the draft do? (/draft: draft now; empty line: stop)",
        out,
    )
    .await;
    let Some(first) = first else {
        return stopped(out);
    };
    set_input(request, &first);
    loop {
        let reply = orchestrator.assist_draft(request, cancel.clone()).await;
        match reply.map(|r| r.reply) {
            Ok(AssistReply::Question { appended, text }) => {
                let _ = writeln!(std::io::stdout().lock(), "{}", for_stdout(&text));
                request.history.extend(appended);
            }
            Ok(reply @ AssistReply::Draft { .. }) => return deliver(&reply, args, out, false),
            // Nothing came back: the message is not in the history; say it again, or /draft.
            Err(AssistError::Empty) => {
                let fix = "say it again, or /draft for the draft now";
                let said = "no question and no draft";
                out.cli("warning", "ASSIST_EMPTY", said, Some(fix));
            }
            Err(e) => {
                out.error(&e);
                return exit_code(&e);
            }
        }
        match ask_line(">", out).await {
            Some(line) => set_input(request, &line),
            None => return stopped(out),
        }
    }
}

fn stopped(out: &Out) -> u8 {
    out.cli(
        "info",
        "ASSIST_STOPPED",
        "stopped before a draft; nothing was written",
        None,
    );
    exit::INTERRUPTED
}

fn set_input(request: &mut AssistRequest, line: &str) {
    request.force_draft = line.trim() == "/draft";
    request.input = (!request.force_draft).then(|| line.to_owned());
}

/// One line from stdin after a prompt on stderr; `None` at an empty line or end of input.
async fn ask_line(prompt: &str, out: &Out) -> Option<String> {
    if std::io::stdin().is_terminal() {
        out.prompt(&format!("{prompt} "));
    }
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .ok()
            .map(|_| line)
    })
    .await
    .ok()
    .flatten()?;
    let line = line.trim_end_matches(['\n', '\r']).to_owned();
    (!line.trim().is_empty()).then_some(line)
}

/// The `--json` object: the reply as the core gives it, plus the exchange's usage.
fn reply_json(reply: &AssistReply, calls: &[fuseforks_core::assist::AssistCall]) -> Value {
    let mut value = serde_json::to_value(reply).unwrap_or(Value::Null);
    let u = total_usage(calls);
    value["usage"] = json!({"prompt": u.prompt, "cached": u.cache_read,
        "completion": u.completion, "reasoning": u.reasoning, "calls": calls.len()});
    value
}

/// The draft: to `--out`, else stdout (unless JSON already printed it); then `--save`.
fn deliver(reply: &AssistReply, args: &AssistArgs, out: &Out, printed: bool) -> u8 {
    let AssistReply::Draft {
        content,
        notes,
        validation,
        attempts,
        ..
    } = reply
    else {
        return exit::OK;
    };
    if let Some(v) = validation.as_ref().filter(|v| !v.valid) {
        let at = v.location.as_deref().unwrap_or("-");
        let what = v.message.as_deref().unwrap_or("");
        out.cli(
            "warning",
            "INVALID_JUDGE_FILE",
            &format!("the draft still fails the parser after {attempts} round(s) at {at}: {what}"),
            Some("correct it by hand, or ask again"),
        );
    }
    if let Some(notes) = notes.as_deref().filter(|_| !args.json) {
        out.cli("info", "ASSIST_NOTES", &for_stdout(notes), None);
    }
    match &args.out {
        Some(path) => {
            if let Err(code) = write_new(path, content, out) {
                return code;
            }
        }
        None if !printed => out.result(&format!(
            "{}{}",
            for_stdout(content),
            if content.ends_with('\n') { "" } else { "\n" }
        )),
        None => {}
    }
    if !args.save {
        return exit::OK;
    }
    save(
        args,
        content,
        validation.as_ref().is_none_or(|v| v.valid),
        out,
    )
}

fn write_new(path: &Path, content: &str, out: &Out) -> Result<(), u8> {
    use std::fs::OpenOptions;
    let file = OpenOptions::new().write(true).create_new(true).open(path);
    let mut file = file.map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::AlreadyExists {
            exit::OUTPUT_EXISTS
        } else {
            exit::BOOT_FAILED
        };
        out.cli(
            "error",
            "ASSIST_OUT_FAILED",
            &format!("--out {}: {e}; nothing was written", path.display()),
            Some("name a new file"),
        );
        code
    })?;
    file.write_all(content.as_bytes()).map_err(|e| {
        out.cli(
            "error",
            "ASSIST_OUT_FAILED",
            &format!("--out {}: {e}", path.display()),
            None,
        );
        exit::BOOT_FAILED
    })
}

/// `--save`: asks (unless `--yes`), then writes the village file atomically through the store.
fn save(args: &AssistArgs, content: &str, valid: bool, out: &Out) -> u8 {
    if !valid {
        out.cli(
            "error",
            "ASSIST_NOT_SAVED",
            "a judge draft that fails the parser is never saved",
            Some("correct it and save by hand"),
        );
        return exit::REJECTED;
    }
    let store = VillageStore::new(HostPaths::new(&args.data_dir).workspace());
    let file = match args.kind {
        KindArg::Skill => "SKILL.md",
        KindArg::Construct => "Construct.md",
        KindArg::Judge => "judge.toml",
    };
    if !args.yes
        && !confirmed(
            &format!("Save the draft as {}'s {file}? [y/N] ", args.id),
            out,
        )
    {
        out.cli("info", "ASSIST_NOT_SAVED", "not saved", None);
        return exit::INTERRUPTED;
    }
    let written = AgentId::new(&args.id)
        .map_err(|e| e.to_string())
        .and_then(|id| {
            write_village(&store, args.kind.kind(), &id, content).map_err(|e| e.to_string())
        });
    match written {
        Ok(()) => {
            out.cli(
                "info",
                "ASSIST_SAVED",
                &format!("saved {file} of {}", args.id),
                None,
            );
            exit::OK
        }
        Err(e) => {
            out.cli("error", "ASSIST_NOT_SAVED", &e, None);
            exit::BOOT_FAILED
        }
    }
}

fn write_village(
    store: &VillageStore,
    kind: DraftKind,
    id: &AgentId,
    content: &str,
) -> Result<(), fuseforks_core::village::VillageError> {
    match kind {
        DraftKind::Skill => store.agent_files(id)?.write_skill(content),
        DraftKind::Construct => store.agent_files(id)?.write_construct(content),
        DraftKind::Judge => store.judge_file(id)?.write_text(content),
    }
}

fn confirmed(question: &str, out: &Out) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    out.prompt(question);
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    matches!(line.trim(), "y" | "Y" | "yes")
}
