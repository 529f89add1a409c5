//! `fuseforks-cli demo`: a village working in one command, with no key and no network. Founds
//! the demo village (host `demo/village.rs`) in a temporary folder or `--keep DIR`, boots it —
//! the boot starts the embedded demo model (scripted, not an AI) on 127.0.0.1 —, sends one
//! request to the reception through the real engine (a plan wave to two servants: one writes a
//! file with `file`, one answers with `grep`; the reception bundles the answers), and prints
//! what happened. The wait, the signals and the close are `ask`'s (`ask::answer_then_close`):
//! Ctrl+C gives exit 8 with the turn recorded. `--gui` is refused up front (exit 2).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use fuseforks_core::events::CoreEvent;
use fuseforks_core::orchestrator::{ExternalOutcome, Orchestrator, PlanTaskState};
use fuseforks_core::sessions::{Record, StoredRecord};
use fuseforks_core::village::Language;
use fuseforks_host::demo::village::{SEARCHER_ID, WRITER_ID};
use fuseforks_host::demo::{DEMO_MARK_EN, DEMO_MARK_JA, DemoLayout, found_demo_village};
use fuseforks_host::paths::shell_word;
use fuseforks_host::{HostBootOptions, HostPaths, SecretSource, build_host};
use serde_json::json;

use super::ask::{Asked, answer_then_close, report_outcome};
use super::headless::{forward_events, os_locale};
use crate::exit;
use crate::output::Out;
use crate::signals::SignalCount;

/// The client name the reception sees.
const CLIENT: &str = "fuseforks-cli demo";

/// Arguments of `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Found the demo in DIR and keep it: DIR/village is then a village for `ask`, `check` and
    /// `serve` (its demo model starts with it), DIR/work holds the servants' work folders
    /// [default: a temporary folder, removed at the end].
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Language of the agents and of the summary [default: from LANG / LC_ALL, else en].
    #[arg(long, value_enum)]
    pub language: Option<DemoLanguage>,
    /// Open the village in the web GUI afterwards. The GUI is not built yet: refused with
    /// GUI_NOT_AVAILABLE (exit 2) before anything is done.
    #[arg(long)]
    pub gui: bool,
    /// The port of the demo model on 127.0.0.1 [default: a free one].
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub port: u16,
    /// The demo model waits MS milliseconds before each answer (to watch the village work, or
    /// to try Ctrl+C), 0 to 60000.
    #[arg(long, value_name = "MS", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub pace_ms: u64,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `--language`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DemoLanguage {
    Ja,
    En,
}

/// Runs `demo`.
pub async fn run(args: &DemoArgs, out: &Out, signals: SignalCount) -> u8 {
    if args.gui {
        out.cli(
            "error",
            "GUI_NOT_AVAILABLE",
            "the web GUI is not built yet, so `demo --gui` cannot open it; nothing was done",
            Some("run `fuseforks-cli demo` without --gui"),
        );
        return exit::USAGE;
    }
    let started = Instant::now();
    let language = match args.language {
        Some(DemoLanguage::Ja) => Language::Ja,
        Some(DemoLanguage::En) => Language::En,
        None => Language::from_locale(os_locale().as_deref()),
    };
    let (layout, temporary) = match root(args.keep.as_deref()) {
        Ok(root) => (DemoLayout::under(&root), args.keep.is_none()),
        Err(e) => {
            out.cli(
                "error",
                "DEMO_FOLDER_FAILED",
                &format!("cannot make the demo's folder: {}", e.kind()),
                Some("give --keep a folder you can write, or free space in the temporary folder"),
            );
            return exit::BOOT_FAILED;
        }
    };
    let demo = Demo {
        args,
        out,
        layout: &layout,
        language,
        started,
        temporary,
    };
    let code = demo.run(signals).await;
    if temporary {
        let _ = std::fs::remove_dir_all(&layout.root);
    }
    code
}

/// The demo's root folder: `--keep DIR` (made when missing), else a new temporary folder.
fn root(keep: Option<&Path>) -> std::io::Result<PathBuf> {
    let dir = match keep {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            dir.to_path_buf()
        }
        None => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let dir = std::env::temp_dir()
                .join(format!("fuseforks-demo-{}-{nanos:09}", std::process::id()));
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(&dir)?;
            dir
        }
    };
    // Work folders must be absolute.
    std::fs::canonicalize(dir)
}

/// A free port on 127.0.0.1 (the boot binds it again right after: the demo model listens on
/// the port its template names).
fn free_port(asked: u16) -> std::io::Result<u16> {
    if asked != 0 {
        return Ok(asked);
    }
    let probe = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
    Ok(probe.local_addr()?.port())
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
    async fn run(&self, signals: SignalCount) -> u8 {
        let out = self.out;
        let port = match free_port(self.args.port) {
            Ok(p) => p,
            Err(e) => {
                out.cli(
                    "error",
                    "DEMO_PORT_UNAVAILABLE",
                    &format!("no free port on 127.0.0.1 for the demo model: {}", e.kind()),
                    Some("free a port, or give one with --port"),
                );
                return exit::BOOT_FAILED;
            }
        };
        let report = match found_demo_village(self.layout, self.language, port) {
            Ok(r) => r,
            Err(e) => {
                out.error(&e);
                return exit::for_village_error(&e);
            }
        };
        if *signals.borrow() > 0 {
            out.cli(
                "info",
                "INTERRUPTED",
                "interrupted before anything was sent",
                None,
            );
            return exit::INTERRUPTED;
        }
        let options = HostBootOptions {
            app_version: env!("FUSEFORKS_VERSION").to_owned(),
            secrets: SecretSource::Env,
            open_door: false,
            door_port: None,
            log_echo: out.log_echo(),
            os_locale: os_locale(),
            mcp_child_output: out.child_output(),
            run_schedules: false,
        };
        let host = match build_host(&HostPaths::new(&self.layout.data_dir), options) {
            Ok(h) => h,
            Err(e) => {
                out.error(&e);
                return exit::for_host_error(&e);
            }
        };
        host.set_demo_pace(Duration::from_millis(self.args.pace_ms));
        let orchestrator = host.orchestrator.clone();
        forward_events(&orchestrator, *out);
        let mut events = orchestrator.events();
        orchestrator.new_conversation();
        for id in [report.reception.as_str(), WRITER_ID, SEARCHER_ID] {
            if let Err(e) = orchestrator.start_agent(id) {
                out.error(&e);
                return exit::CORE_ERROR;
            }
        }
        let request = request_text(self.language);
        let asking =
            async { Asked::Plain(orchestrator.ask_external_detailed(CLIENT, &request).await) };
        let mut outcome = None;
        let code = answer_then_close(&orchestrator, asking, signals, out, |asked| match asked {
            Asked::Plain(o) => {
                let code = exit::for_outcome(o.state);
                outcome = Some(o);
                code
            }
            Asked::Goal(_) => exit::CORE_ERROR,
        })
        .await;
        let facts = Facts::gather(&orchestrator, &mut events, self.layout);
        drop(host);
        match outcome {
            Some(o) if o.state == PlanTaskState::Answered => self.summary(&o, &facts, port),
            Some(o) => {
                println!("{}", o.state.no_answer_line(self.language));
                report_outcome(&o, out);
                self.say_where(&facts);
            }
            None => self.say_where(&facts),
        }
        code
    }

    /// The summary, as a person reads it (or one JSON object with `--json`).
    fn summary(&self, outcome: &ExternalOutcome, facts: &Facts, port: u16) {
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
        let file = facts
            .file
            .as_ref()
            .map_or_else(|| l.pick("（なし）", "(none)"), |f| f.display().to_string());
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
    fn gather(
        orchestrator: &Orchestrator,
        events: &mut tokio::sync::broadcast::Receiver<CoreEvent>,
        layout: &DemoLayout,
    ) -> Self {
        let mut facts = Facts::default();
        while let Ok(event) = events.try_recv() {
            match event {
                CoreEvent::PlanWaveStarted {
                    agent_id, tasks, ..
                } => facts.asked.push((agent_id, tasks)),
                CoreEvent::ToolInvoked { agent_id, tool, .. } => {
                    let used = facts.tools.entry(agent_id).or_default();
                    if !used.contains(&tool) {
                        used.push(tool);
                    }
                }
                _ => {}
            }
        }
        facts.file = Some(layout.greeting()).filter(|f| f.is_file());
        facts.session = orchestrator.current_session();
        let records = facts
            .session
            .as_deref()
            .and_then(|s| orchestrator.sessions()?.records(s).ok())
            .unwrap_or_default();
        for (_, record) in records {
            if let StoredRecord::Known(Record::Turn(turn)) = record {
                facts.turns += 1;
                facts.prompt += turn.prompt;
                facts.completion += turn.completion;
            }
        }
        facts
    }
}
