//! `fuseforks-cli demo`: a village working in one command, with no key and no network. Founds
//! the demo village (host `demo/village.rs`) in a temporary folder or `--keep DIR`, then calls
//! the host's `lifecycle::demo` once: the boot starts the embedded demo model (scripted, not an
//! AI) on 127.0.0.1, one request goes to the reception through the real engine (a plan wave to
//! two servants: one writes a file with `file`, one answers with `grep`; the reception bundles
//! the answers), and this module prints what happened. The wait, the signals and the close are
//! `ask`'s (the lifecycle's): Ctrl+C gives exit 8 with the turn recorded. `--gui` then opens the village in the web GUI
//! until the next Ctrl+C.
//! `--keep DIR` is a new path or an empty plain folder (else exit 11, nothing touched); the
//! demo model's port is bound before anything is written; a failed set-up removes what the
//! demo made; an answer without the writer's file exits 6 (the demo is a smoke test).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use std::sync::Arc;

use fuseforks_core::orchestrator::{ExternalOutcome, PlanTaskState};
use fuseforks_core::village::Language;
use fuseforks_core::village::{FoundingReport, VillageError};
use fuseforks_host::demo::model::{MAX_PACE_MS, reserve};
use fuseforks_host::demo::village::{GREETING_FILE, SEARCHER_ID, TEMPLATE_ID, WRITER_ID};
use fuseforks_host::demo::{DEMO_MARK_EN, DEMO_MARK_JA, DemoLayout, found_demo_village};
use fuseforks_host::door::DoorAsked;
use fuseforks_host::lifecycle::{self, AskRequest, Asked, ConversationChoice, RunFacts};
use fuseforks_host::paths::shell_word;
use fuseforks_host::{HostPaths, SecretSource};
use serde_json::json;

use super::ask::report_outcome;
use super::headless::{open_options, os_locale};
use super::render::Renderer;
use crate::exit;
use crate::output::Out;
use crate::signals::SignalCount;

/// The client name the reception sees.
const CLIENT: &str = "fuseforks-cli demo";

/// Arguments of `demo`.
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Found the demo in DIR and keep it: DIR/village is then a village for `ask`, `check` and
    /// `serve` (its demo model starts with it), DIR/work holds the servants' work folders
    /// [default: a temporary folder, removed at the end].
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Language of the agents and of the summary [default: from LANG / LC_ALL, else en].
    #[arg(long, value_enum)]
    pub language: Option<DemoLanguage>,
    /// Then open the village in the web GUI (and the desktop's browser) until Ctrl+C; without
    /// `--keep` it is removed afterwards.
    #[arg(long)]
    pub gui: bool,
    /// The port of the demo model on 127.0.0.1 [default: a free one].
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub port: u16,
    /// The demo model waits MS milliseconds before each answer (to watch the village work, or
    /// to try Ctrl+C), 0 to 20000 (below the demo template's 30 s request timeout).
    #[arg(long, value_name = "MS", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=MAX_PACE_MS))]
    pub pace_ms: u64,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `--language`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum DemoLanguage {
    Ja,
    En,
}

/// Runs `demo`.
pub(crate) async fn run(args: &DemoArgs, out: &Out, signals: SignalCount) -> u8 {
    let started = Instant::now();
    let language = match args.language {
        Some(DemoLanguage::Ja) => Language::Ja,
        Some(DemoLanguage::En) => Language::En,
        None => Language::from_locale(os_locale().as_deref()),
    };
    let root = match DemoRoot::make(args.keep.as_deref()) {
        Ok(root) => root,
        Err(refusal) => return refusal.report(out),
    };
    let layout = DemoLayout::under(&root.path);
    let demo = Demo {
        args,
        out,
        layout: &layout,
        language,
        started,
        temporary: root.temporary,
    };
    let (mut code, stage) = demo.run(signals.clone()).await;
    if args.gui && code == exit::OK {
        // The same village in the web GUI (its demo model started again) until Ctrl+C.
        let opening = super::gui::Opening {
            port: 0,
            open: true,
            url_on_stdout: !args.json,
        };
        code =
            super::gui::serve_gui(&layout.data_dir, SecretSource::Env, opening, out, signals).await;
    }
    root.finish(&layout, stage, out);
    code
}

/// How far a demo got, for what is removed at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The set-up failed: what the demo made is removed (a `--keep` folder too).
    SetUpFailed,
    /// The set-up failed before the demo wrote anything of its own (someone else's village
    /// appeared in the folder): nothing of a `--keep` folder is removed.
    Untouched,
    /// The request was sent (or the set-up done): a `--keep` village stays.
    Asked,
}

/// The demo's root folder: `--keep DIR` (absent, or an empty plain folder), else a new
/// temporary folder.
struct DemoRoot {
    /// The folder, canonical (work folders must be absolute).
    path: PathBuf,
    temporary: bool,
    /// The topmost folder `--keep` made (removed whole when the set-up fails); `None` when DIR
    /// was an empty folder already (then only what the demo made in it is removed).
    made: Option<PathBuf>,
}

/// Why the demo's folder was refused or could not be made; nothing was written.
enum FolderRefusal {
    /// A village is already at `--keep DIR` (its data folder).
    Village { dir: PathBuf, data_dir: PathBuf },
    /// `--keep DIR` holds something: the demo would write among the user's files.
    NotEmpty(PathBuf),
    /// `--keep DIR` is a symbolic link or not a folder.
    NotFolder(PathBuf),
    /// The folder could not be made or read.
    Failed {
        path: PathBuf,
        kind: std::io::ErrorKind,
        keep: bool,
    },
}

impl DemoRoot {
    fn make(keep: Option<&Path>) -> Result<Self, FolderRefusal> {
        let Some(dir) = keep else {
            return Self::temporary();
        };
        let failed = |path: &Path, e: std::io::Error| FolderRefusal::Failed {
            path: path.to_path_buf(),
            kind: e.kind(),
            keep: true,
        };
        match std::fs::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
                Err(FolderRefusal::NotFolder(dir.to_path_buf()))
            }
            Ok(_) => {
                let mut entries = std::fs::read_dir(dir).map_err(|e| failed(dir, e))?;
                if entries.next().is_some() {
                    return Err(village_at(dir).map_or_else(
                        || FolderRefusal::NotEmpty(dir.to_path_buf()),
                        |data_dir| FolderRefusal::Village {
                            dir: dir.to_path_buf(),
                            data_dir,
                        },
                    ));
                }
                let path = std::fs::canonicalize(dir).map_err(|e| failed(dir, e))?;
                Ok(Self {
                    path,
                    temporary: false,
                    made: None,
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let absolute = std::path::absolute(dir).map_err(|e| failed(dir, e))?;
                let top = absolute
                    .ancestors()
                    .take_while(|a| std::fs::symlink_metadata(a).is_err())
                    .last()
                    .map(Path::to_path_buf);
                std::fs::create_dir_all(&absolute).map_err(|e| failed(dir, e))?;
                let path = std::fs::canonicalize(&absolute).map_err(|e| failed(dir, e))?;
                let made = top.and_then(|t| std::fs::canonicalize(t).ok());
                Ok(Self {
                    path,
                    temporary: false,
                    made,
                })
            }
            Err(e) => Err(failed(dir, e)),
        }
    }

    fn temporary() -> Result<Self, FolderRefusal> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("fuseforks-demo-{}-{nanos:09}", std::process::id()));
        let failed = |e: std::io::Error| FolderRefusal::Failed {
            path: dir.clone(),
            kind: e.kind(),
            keep: false,
        };
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(failed)?;
        let path = std::fs::canonicalize(&dir).map_err(failed)?;
        Ok(Self {
            path,
            temporary: true,
            made: Some(dir),
        })
    }

    /// Removes a temporary demo, and what a `--keep` demo made when its set-up failed (saying
    /// what could not be removed).
    fn finish(&self, layout: &DemoLayout, stage: Stage, out: &Out) {
        let remove: Vec<&Path> = match (self.temporary, stage, &self.made) {
            (true, _, _) => vec![&self.path],
            (false, Stage::SetUpFailed, Some(made)) => vec![made],
            (false, Stage::SetUpFailed, None) => vec![&layout.data_dir, layout.work_dir()],
            (false, Stage::Untouched | Stage::Asked, _) => Vec::new(),
        };
        for path in remove {
            match std::fs::remove_dir_all(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => out.cli(
                    "warn",
                    "DEMO_LEFT_BEHIND",
                    &format!(
                        "could not remove {} that the demo made: {}",
                        path.display(),
                        e.kind()
                    ),
                    Some(&format!(
                        "remove {} by hand",
                        shell_word(&path.display().to_string())
                    )),
                ),
            }
        }
    }
}

/// The data folder of a village at `dir`: `dir` itself, its parent (`dir` is a workspace),
/// or `dir/village` (a kept demo's root).
fn village_at(dir: &Path) -> Option<PathBuf> {
    [
        (HostPaths::new(dir).workspace(), dir.to_path_buf()),
        (dir.to_path_buf(), dir.parent().unwrap_or(dir).to_path_buf()),
        (
            HostPaths::new(dir.join("village")).workspace(),
            dir.join("village"),
        ),
    ]
    .into_iter()
    .find(|(workspace, _)| workspace.join("world.json").exists())
    .map(|(_, data_dir)| data_dir)
}

impl FolderRefusal {
    /// Says why on stderr; the exit code.
    fn report(&self, out: &Out) -> u8 {
        let shown = |p: &Path| p.display().to_string();
        match self {
            Self::Village { dir, data_dir } => {
                out.cli(
                    "error",
                    "VILLAGE_EXISTS",
                    &format!("a village is already in {} (data folder {}); the demo founds only in a new or empty folder; nothing was changed", shown(dir), shown(data_dir)),
                    Some(&format!("choose another --keep folder (a new or empty one); to use this village: fuseforks-cli ask --data-dir {} --start batch --secrets env \"Hello\"", shell_word(&shown(data_dir)))),
                );
                exit::OUTPUT_EXISTS
            }
            Self::NotEmpty(dir) => {
                out.cli(
                    "error",
                    "DEMO_KEEP_NOT_EMPTY",
                    &format!("--keep {} is a folder with content; the demo writes only into a new or empty folder, so that nothing of yours is overwritten; nothing was changed", shown(dir)),
                    Some(&format!("choose another --keep folder (a new or empty one), or empty {} first", shown(dir))),
                );
                exit::OUTPUT_EXISTS
            }
            Self::NotFolder(dir) => {
                out.cli(
                    "error",
                    "DEMO_KEEP_NOT_FOLDER",
                    &format!("--keep {} is a symbolic link or not a folder; the demo writes only into a plain folder; nothing was changed", shown(dir)),
                    Some("give --keep a new path, or an empty folder that is not a symbolic link"),
                );
                exit::OUTPUT_EXISTS
            }
            Self::Failed { path, kind, keep } => {
                let fix = if *keep {
                    format!(
                        "give --keep a folder you can write (a new or empty one) instead of {}",
                        shown(path)
                    )
                } else {
                    "the temporary folder must be writable with space free: set TMPDIR to another folder, or keep the demo in a folder of yours with --keep DIR".to_owned()
                };
                out.cli(
                    "error",
                    "DEMO_FOLDER_FAILED",
                    &format!(
                        "cannot make the demo's folder {}: {kind}; nothing was founded",
                        shown(path)
                    ),
                    Some(&fix),
                );
                exit::BOOT_FAILED
            }
        }
    }
}

/// One demo run.
struct Demo<'a> {
    args: &'a DemoArgs,
    out: &'a Out,
    layout: &'a DemoLayout,
    language: Language,
    started: Instant,
    temporary: bool,
}

impl Demo<'_> {
    /// Binds the demo model's port (before anything is written) and founds the village; the
    /// boot is the host's (`lifecycle::demo`), once the port is let go.
    fn set_up(&self, signals: &SignalCount) -> Result<(FoundingReport, u16), (u8, Stage)> {
        let out = self.out;
        // Held until the boot binds it again, so that nothing else takes it meanwhile.
        let reserved = reserve(TEMPLATE_ID, self.args.port).map_err(|e| {
            out.error(&e);
            (exit::BOOT_FAILED, Stage::SetUpFailed)
        })?;
        let port = reserved.local_addr().map(|a| a.port()).map_err(|e| {
            out.cli(
                "error",
                "DEMO_PORT_UNAVAILABLE",
                &format!("no port on 127.0.0.1 for the demo model: {}", e.kind()),
                Some("free a port, or give one with --port"),
            );
            (exit::BOOT_FAILED, Stage::SetUpFailed)
        })?;
        let report = found_demo_village(self.layout, self.language, port).map_err(|e| {
            let stage = match e {
                VillageError::AlreadyExists { .. } => Stage::Untouched,
                _ => Stage::SetUpFailed,
            };
            out.error(&e);
            (exit::for_village_error(&e), stage)
        })?;
        if *signals.borrow() > 0 {
            self.interrupted_early();
            return Err((exit::INTERRUPTED, Stage::Asked));
        }
        // Held until now, so that nothing else took it meanwhile; the boot binds it again.
        drop(reserved);
        Ok((report, port))
    }

    /// Ctrl+C after the founding, before the request: said on stdout (JSON with `--json`),
    /// with where the village is.
    fn interrupted_early(&self) {
        self.out.cli(
            "info",
            "INTERRUPTED",
            "interrupted before anything was sent",
            None,
        );
        if self.args.json {
            self.outcome_json("interrupted", exit::INTERRUPTED, None);
        } else {
            self.say_where(&Facts::default());
        }
    }

    async fn run(&self, signals: SignalCount) -> (u8, Stage) {
        let out = self.out;
        let (report, port) = match self.set_up(&signals) {
            Ok(ready) => ready,
            Err(failed) => return failed,
        };
        let options = open_options(
            &self.layout.data_dir,
            SecretSource::Env,
            DoorAsked::default(),
            out.log_echo(),
            out,
        );
        let agents = [
            report.reception.to_string(),
            WRITER_ID.into(),
            SEARCHER_ID.into(),
        ];
        let request = AskRequest {
            client: CLIENT.to_owned(),
            message: request_text(self.language),
            conversation: ConversationChoice::New,
            answer: false,
            goal: None,
            stream: false,
        };
        let pace = Duration::from_millis(self.args.pace_ms);
        let watcher = Arc::new(Renderer::new(*out, &self.layout.data_dir));
        let mut outcome = None;
        let ran = lifecycle::demo(
            options,
            &agents,
            pace,
            request,
            watcher,
            signals,
            |answer| match answer.asked {
                Asked::Plain(o) => {
                    let code = exit::for_outcome(o.state);
                    outcome = Some(o);
                    code
                }
                Asked::Goal(_) => exit::CORE_ERROR,
            },
        )
        .await;
        let (code, run_facts) = match ran {
            Ok(ran) => ran,
            Err(failure) => return (super::render::exit_code(&failure), Stage::SetUpFailed),
        };
        let facts = Facts::of(run_facts, self.layout);
        let code = match outcome {
            Some(o) if o.state == PlanTaskState::Answered => self.summary(&o, &facts, port, code),
            Some(o) => {
                if self.args.json {
                    let state = serde_json::to_value(o.state).unwrap_or_default();
                    self.outcome_json(
                        state.as_str().unwrap_or("-"),
                        code,
                        facts.session.as_deref(),
                    );
                } else {
                    crate::outln!("{}", o.state.no_answer_line(self.language));
                    self.say_where(&facts);
                }
                report_outcome(&o, out);
                code
            }
            None if self.args.json => {
                self.outcome_json("interrupted", code, facts.session.as_deref());
                code
            }
            None => {
                self.say_where(&facts);
                code
            }
        };
        (code, Stage::Asked)
    }

    /// `--json` when the demo ended without an answer: one object with the outcome.
    fn outcome_json(&self, outcome: &str, code: u8, session: Option<&str>) {
        let body = json!({
            "outcome": outcome, "exitCode": code, "answer": null, "session": session,
            "dataDir": self.layout.data_dir, "kept": !self.temporary,
        });
        self.out.result(&format!("{body}\n"));
    }

    /// The summary, as a person reads it (or one JSON object with `--json`).
    /// The demo is a smoke test: an answer without the writer's file is not a demo that did
    /// its job (exit 6, the reason on stderr). Gives the exit code.
    fn summary(&self, outcome: &ExternalOutcome, facts: &Facts, port: u16, code: u8) -> u8 {
        let code = if facts.file.is_none() && code == exit::OK {
            self.out.cli(
                "error",
                "DEMO_WORK_NOT_DONE",
                &format!(
                    "the reception answered, but {WRITER_ID}'s file {} was not written: the demo did not do its job",
                    self.layout.greeting().display()
                ),
                Some("see the writer's answer below (or the village's log); run the demo again in a new or empty --keep folder, or without --keep"),
            );
            exit::NO_ANSWER
        } else {
            code
        };
        self.tell(outcome, facts, port, code);
        code
    }

    fn tell(&self, outcome: &ExternalOutcome, facts: &Facts, port: u16, code: u8) {
        let l = self.language;
        let answer = outcome.answer.as_deref().unwrap_or_default();
        let elapsed_ms = self.started.elapsed().as_millis();
        if self.args.json {
            let body = json!({
                "model": DEMO_MARK_EN, "modelAddress": format!("127.0.0.1:{port}"),
                "request": request_text(l), "asked": facts.asked.iter().map(|(from, to)| json!({"from": from, "to": to})).collect::<Vec<_>>(),
                "tools": facts.tools, "fileWritten": facts.file, "turns": facts.turns,
                "tokens": {"prompt": facts.prompt, "completion": facts.completion, "total": facts.prompt + facts.completion},
                "elapsedMs": elapsed_ms, "answer": answer, "session": outcome.session_id,
                "dataDir": self.layout.data_dir, "kept": !self.temporary,
                "outcome": "answered", "exitCode": code,
            });
            self.out.result(&format!("{body}\n"));
            return;
        }
        let mark = l.pick(DEMO_MARK_JA, DEMO_MARK_EN);
        let mut text = l.pick(
            format!("Fuseforks のデモ: 答えはすべて 127.0.0.1:{port} の組み込みデモモデルから（{mark}）\n\n"),
            format!("Fuseforks demo: every answer came from the embedded demo model on 127.0.0.1:{port} ({mark})\n\n"),
        );
        text.push_str(&l.pick("誰が誰に頼んだか:\n", "Who asked whom:\n"));
        text.push_str(&format!("  {CLIENT} → reception\n"));
        for (from, to) in &facts.asked {
            text.push_str(&format!("  {from} → {} (plan)\n", to.join(", ")));
        }
        text.push_str(&l.pick("使った道具:\n", "Tools used:\n"));
        for (agent, tools) in &facts.tools {
            text.push_str(&format!("  {agent}: {}\n", tools.join(", ")));
        }
        let file = match &facts.file {
            None => l.pick("（なし）", "(none)"),
            Some(_) if self.temporary => l.pick(
                format!("{WRITER_ID} の作業フォルダの {GREETING_FILE}（一時的な村の中。終了時に消しました）"),
                format!("{GREETING_FILE} in {WRITER_ID}'s work folder of the temporary village (removed on exit)"),
            ),
            Some(f) => f.display().to_string(),
        };
        text.push_str(&l.pick(
            format!("書かれたファイル: {file}\n"),
            format!("File written: {file}\n"),
        ));
        text.push_str(&l.pick("受付の答え:\n", "The reception's answer:\n"));
        for line in answer.lines() {
            text.push_str(&format!("  {line}\n"));
        }
        let tokens = facts.prompt + facts.completion;
        text.push_str(&l.pick(
            format!("ターン {} 回、トークン {tokens}（入力 {}、出力 {}。デモモデルの数え方）、経過 {elapsed_ms} ms\n", facts.turns, facts.prompt, facts.completion),
            format!("Turns: {}  Tokens: {tokens} (prompt {}, output {}; as the demo model counts)  Elapsed: {elapsed_ms} ms\n", facts.turns, facts.prompt, facts.completion),
        ));
        self.out.result(&crate::terminal::for_stdout(&text));
        self.say_where(facts);
    }

    /// Where the village is (or was), and what to do next.
    fn say_where(&self, facts: &Facts) {
        if self.args.json {
            return;
        }
        let l = self.language;
        let data_dir = self.layout.data_dir.display().to_string();
        let text = if self.temporary {
            l.pick(
                format!("村: 一時フォルダ {data_dir}（終了時に消しました）。残すには --keep DIR を付けてください。\n本物の村を作るには: fuseforks-cli init --data-dir <DIR>\n"),
                format!("Village: a temporary folder, {data_dir} (removed on exit). Pass --keep DIR to keep it.\nFor a real village: fuseforks-cli init --data-dir <DIR>\n"),
            )
        } else {
            let dir = shell_word(&data_dir);
            let session = facts.session.as_deref().unwrap_or("-");
            l.pick(
                format!("村: {data_dir}（会話 {session}）\n続けるには: fuseforks-cli ask --data-dir {dir} --start batch --secrets env \"こんにちは\"\n確かめるには: fuseforks-cli check --for ask --data-dir {dir} --start batch --secrets env\n本物の村を作るには: fuseforks-cli init --data-dir <DIR>\n"),
                format!("Village: {data_dir} (conversation {session})\nGo on: fuseforks-cli ask --data-dir {dir} --start batch --secrets env \"Hello\"\nCheck it: fuseforks-cli check --for ask --data-dir {dir} --start batch --secrets env\nFor a real village: fuseforks-cli init --data-dir <DIR>\n"),
            )
        };
        self.out.result(&crate::terminal::for_stdout(&text));
    }
}

/// The request the demo sends to the reception.
fn request_text(language: Language) -> String {
    language.pick(
        "この村に何ができるか見せてください。一人にあいさつのファイルを書かせ、もう一人にメモを探させて、答えをまとめてください。",
        "Show me what this village can do: have one servant write a greeting file and the other search the notes, then bundle their answers.",
    )
}

/// Whether `file` is a plain file (not a link) holding the writer's text, which carries the
/// demo model's mark: the demo did its job. Reads at most 64 KiB.
fn holds_the_demos_text(file: &Path) -> bool {
    use std::io::Read;
    if !std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_file()) {
        return false;
    }
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(64 * 1024).read_to_string(&mut text))
        .is_ok()
        && (text.contains(DEMO_MARK_EN) || text.contains(DEMO_MARK_JA))
}

/// What happened, from the events and the stored conversation.
#[derive(Debug, Default)]
struct Facts {
    /// Plan waves: who sent to whom.
    asked: Vec<(String, Vec<String>)>,
    /// The tools each agent called, in first-use order.
    tools: BTreeMap<String, Vec<String>>,
    /// The writer's file, when it is there.
    file: Option<PathBuf>,
    /// Turn records of the conversation.
    turns: usize,
    prompt: u64,
    completion: u64,
    session: Option<String>,
}

impl Facts {
    /// What the host gathered, with the writer's file when it holds the demo's text.
    fn of(run: RunFacts, layout: &DemoLayout) -> Self {
        Self {
            asked: run.asked,
            tools: run.tools,
            file: Some(layout.greeting()).filter(|f| holds_the_demos_text(f)),
            turns: run.turns,
            prompt: run.prompt,
            completion: run.completion,
            session: run.session,
        }
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;

    #[test]
    fn only_the_writers_own_text_counts_as_the_demos_file() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ours = tmp.path().join("ours.md");
        let theirs = tmp.path().join("theirs.md");
        let link = tmp.path().join("link.md");
        let dir = tmp.path().join("dir.md");
        let write =
            |p: &Path, text: &str| std::fs::write(p, text).unwrap_or_else(|e| panic!("{e}"));
        write(
            &ours,
            &format!("# Hello\n\ndriven by the {DEMO_MARK_EN}.\n"),
        );
        write(&theirs, "mine");
        std::os::unix::fs::symlink(&ours, &link).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
        assert!(holds_the_demos_text(&ours));
        for not in [&theirs, &link, &dir, &tmp.path().join("missing.md")] {
            assert!(!holds_the_demos_text(not), "{}", not.display());
        }
    }
}
