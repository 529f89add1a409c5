//! Ignore files of the walking tools (`grep`, `fd`, `rag`; docs/threat-model.md, "Ignore files"):
//! `.ignore` and `.gitignore` are read through the jail, at most 64 KiB each, never followed out
//! of the folder and never waited on; a file that cannot be read so is treated as absent and
//! said in the answer. The rules that can be read still hide what they should.
//!
//! Each hostile case runs the tool on a thread and waits for its answer at most 2 s: a
//! regression (an unbounded read of `/dev/zero`, a FIFO opened blocking) aborts the test
//! binary with a message instead of eating the machine's memory or hanging.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use fuseforks_core::tools::{ToolContext, ToolOutput, run_tool};
use serde_json::{Value, json};

use crate::tools_support::Agent;

/// The longest a walking tool may take to answer here.
const LIMIT: Duration = Duration::from_secs(2);
/// How much the process may grow while one call runs before the test stops everything.
const RSS_ABORT_KIB: u64 = 512 * 1024;

/// One of the process's memory figures from `/proc/self/status` (`VmRSS`, `VmHWM`), in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// `tool` called through the public entry on this thread's own runtime: the walk runs on its
/// blocking pool, as in a turn.
fn call(tool: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(run_tool(tool, args, ctx))
}

/// Runs `tool` on a thread; returns its answer and how long it took. No answer within
/// [`LIMIT`], or a process grown by [`RSS_ABORT_KIB`], aborts the test binary: the thread
/// cannot be stopped, and a runaway read would otherwise take the machine's memory.
fn answer_within(tool: &'static str, args: Value, ctx: &ToolContext) -> (ToolOutput, Duration) {
    answer_in(LIMIT, tool, args, ctx)
}

/// [`answer_within`] with another limit.
fn answer_in(
    limit: Duration,
    tool: &'static str,
    args: Value,
    ctx: &ToolContext,
) -> (ToolOutput, Duration) {
    let (tx, rx) = mpsc::channel();
    let ctx = ctx.clone();
    let before = status_kib("VmRSS");
    let started = Instant::now();
    std::thread::spawn(move || {
        let _ = tx.send(call(tool, &args, &ctx));
    });
    loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(out) => return (out, started.elapsed()),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => panic!("{tool} panicked"),
        }
        let grown = status_kib("VmRSS").saturating_sub(before);
        if started.elapsed() > limit || grown > RSS_ABORT_KIB {
            eprintln!(
                "{tool}: no answer after {:?}, the process grew by {} MiB; aborting the \
                 test binary (the call cannot be stopped)",
                started.elapsed(),
                grown / 1024
            );
            std::process::abort();
        }
    }
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// An agent whose `rag` source is `docs/` (outside the work folder) holding `guide.md`.
fn with_docs() -> (Agent, std::path::PathBuf) {
    let mut agent = Agent::new();
    let docs = agent.data.data_dir().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("guide.md"), "# Guide\nrun make\n").unwrap();
    agent.ctx.rag_sources = vec![docs.clone()];
    (agent, docs)
}

/// The three walking calls whose answers must list `notes.txt` (grep, fd) or `guide.md` (rag).
fn walking_calls() -> [(&'static str, Value, &'static str); 4] {
    [
        (
            "grep",
            json!({"pattern": "beta"}),
            "notes.txt:2: beta error",
        ),
        ("fd", json!({"pattern": "notes"}), "notes.txt"),
        ("rag", json!({"op": "outline"}), "guide.md"),
        (
            "rag",
            json!({"op": "search", "pattern": "make"}),
            "run make",
        ),
    ]
}

fn assert_note(out: &ToolOutput, file: &str, why: &str) {
    let line = format!("note: {file} ignored ({why})");
    assert!(out.body.contains(&line), "no `{line}` in:\n{}", out.body);
}

#[test]
fn an_ignore_linked_to_dev_zero_is_not_read() {
    let (agent, docs) = with_docs();
    symlink("/dev/zero", agent.work().join(".ignore")).unwrap();
    symlink("/dev/zero", docs.join(".ignore")).unwrap();
    for (tool, args, shown) in walking_calls() {
        let hwm_before = status_kib("VmHWM");
        let rss_before = status_kib("VmRSS");
        let (out, took) = answer_within(tool, args.clone(), &agent.ctx);
        eprintln!(
            "{tool} {args}: answered in {took:?}; RSS {} → {} MiB, peak {} → {} MiB",
            rss_before / 1024,
            status_kib("VmRSS") / 1024,
            hwm_before / 1024,
            status_kib("VmHWM") / 1024
        );
        assert!(out.ok && out.body.contains(shown), "{tool}: {}", out.body);
        assert_note(&out, ".ignore", "a link out of the folder");
    }
}

#[test]
fn an_ignore_linked_to_an_outside_file_is_not_obeyed() {
    let (agent, docs) = with_docs();
    let rules = agent.outside().join("rules");
    std::fs::write(&rules, "notes.txt\nguide.md\n").unwrap();
    symlink(&rules, agent.work().join(".ignore")).unwrap();
    symlink(&rules, docs.join(".gitignore")).unwrap();
    for (tool, args, shown) in walking_calls() {
        let (out, _) = answer_within(tool, args, &agent.ctx);
        assert!(out.ok && out.body.contains(shown), "{tool}: {}", out.body);
        let file = if tool == "rag" {
            ".gitignore"
        } else {
            ".ignore"
        };
        assert_note(&out, file, "a link out of the folder");
    }
}

#[test]
fn a_fifo_ignore_is_answered_at_once_and_said() {
    let (agent, docs) = with_docs();
    mkfifo(&agent.work().join(".ignore"));
    std::fs::create_dir_all(agent.work().join("sub")).unwrap();
    mkfifo(&agent.work().join("sub/.gitignore"));
    mkfifo(&docs.join(".ignore"));
    for (tool, args, shown) in walking_calls() {
        let (out, took) = answer_within(tool, args, &agent.ctx);
        eprintln!("{tool} with a FIFO .ignore: answered in {took:?}");
        assert!(out.ok && out.body.contains(shown), "{tool}: {}", out.body);
        assert_note(&out, ".ignore", "not a regular file");
        if tool != "rag" {
            assert_note(&out, "sub/.gitignore", "not a regular file");
        }
    }
}

#[test]
fn an_ignore_of_a_mebibyte_is_treated_as_absent_and_said() {
    let (agent, docs) = with_docs();
    let big = format!("notes.txt\nguide.md\n{}", "# padding\n".repeat(104_858));
    assert!(big.len() > 1 << 20);
    std::fs::write(agent.work().join(".ignore"), &big).unwrap();
    std::fs::write(docs.join(".ignore"), &big).unwrap();
    for (tool, args, shown) in walking_calls() {
        let (out, _) = answer_within(tool, args, &agent.ctx);
        assert!(out.ok && out.body.contains(shown), "{tool}: {}", out.body);
        assert_note(&out, ".ignore", "larger than 64 KiB");
    }
}

/// A work folder with rules at three depths:
/// - `.gitignore`: `*.log`, `build/`, `*.tmp`, `shadow.txt`;
/// - `.ignore`: `!shadow.txt` (beats the `.gitignore` of its folder);
/// - `sub/.gitignore`: `!keep.log` (a deeper folder wins), `private/`;
/// - `sub/deep/.ignore`: `secret*` then `!secret-ok.txt` (the last line wins).
fn ruled_folder(agent: &Agent) {
    let w = agent.work();
    let files = [
        (".gitignore", "*.log\nbuild/\n*.tmp\nshadow.txt\n"),
        (".ignore", "!shadow.txt\n"),
        ("shadow.txt", "needle shadow\n"),
        ("top.log", "needle top log\n"),
        ("build/out.txt", "needle build\n"),
        ("sub/.gitignore", "!keep.log\nprivate/\n"),
        ("sub/keep.log", "needle keep\n"),
        ("sub/drop.log", "needle drop\n"),
        ("sub/x.tmp", "needle tmp\n"),
        ("sub/private/p.txt", "needle private\n"),
        ("sub/deep/.ignore", "secret*\n!secret-ok.txt\n"),
        ("sub/deep/secret.txt", "needle secret\n"),
        ("sub/deep/secret-ok.txt", "needle secret ok\n"),
        ("sub/deep/plain.txt", "needle plain\n"),
    ];
    for (path, text) in files {
        let path = w.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

const SHOWN: [&str; 4] = [
    "shadow.txt",
    "sub/keep.log",
    "sub/deep/secret-ok.txt",
    "sub/deep/plain.txt",
];
const HIDDEN: [&str; 6] = [
    "top.log",
    "build/out.txt",
    "sub/drop.log",
    "sub/x.tmp",
    "sub/private/p.txt",
    "sub/deep/secret.txt",
];

fn assert_shown_and_hidden(out: &ToolOutput, shown: &[&str], hidden: &[&str]) {
    assert!(out.ok, "{}", out.body);
    let lines: Vec<&str> = out.body.lines().collect();
    let has = |f: &str| {
        lines
            .iter()
            .any(|l| *l == f || l.starts_with(&format!("{f}:")))
    };
    for f in shown {
        assert!(has(f), "{f} should show:\n{}", out.body);
    }
    for f in hidden {
        assert!(!has(f), "{f} should be hidden:\n{}", out.body);
    }
    assert!(!out.body.contains("note:"), "{}", out.body);
}

#[test]
fn gitignore_and_ignore_rules_still_hide_what_they_should() {
    let agent = Agent::new();
    ruled_folder(&agent);
    let (grep, _) = answer_within("grep", json!({"pattern": "needle"}), &agent.ctx);
    assert_shown_and_hidden(&grep, &SHOWN, &HIDDEN);
    let (fd, _) = answer_within("fd", json!({"pattern": "\\.(txt|log|tmp)$"}), &agent.ctx);
    assert_shown_and_hidden(&fd, &SHOWN, &HIDDEN);
    // Hidden files are still shown, `.git` still skipped.
    std::fs::create_dir_all(agent.work().join(".git")).unwrap();
    std::fs::write(agent.work().join(".git/config"), "needle git\n").unwrap();
    let (fd, _) = answer_within("fd", json!({"pattern": "ignore|config"}), &agent.ctx);
    assert_shown_and_hidden(
        &fd,
        &[".gitignore", ".ignore", "sub/deep/.ignore"],
        &[".git/config"],
    );
}

#[test]
fn rules_of_the_folders_above_the_start_apply() {
    let agent = Agent::new();
    ruled_folder(&agent);
    let (grep, _) = answer_within(
        "grep",
        json!({"pattern": "needle", "path": "sub/deep"}),
        &agent.ctx,
    );
    assert_shown_and_hidden(
        &grep,
        &["sub/deep/secret-ok.txt", "sub/deep/plain.txt"],
        &["sub/deep/secret.txt"],
    );
    let (fd, _) = answer_within("fd", json!({"pattern": ".", "path": "sub"}), &agent.ctx);
    assert_shown_and_hidden(
        &fd,
        &["sub/keep.log", "sub/deep/plain.txt"],
        &[
            "sub/drop.log",
            "sub/x.tmp",
            "sub/private",
            "sub/private/p.txt",
        ],
    );
    // A folder named as the start is searched even when a rule above would hide it.
    let (grep, _) = answer_within(
        "grep",
        json!({"pattern": "needle", "path": "build"}),
        &agent.ctx,
    );
    assert_shown_and_hidden(&grep, &["build/out.txt"], &[]);
}

#[test]
fn rag_obeys_the_rules_of_its_source() {
    let (agent, docs) = with_docs();
    std::fs::create_dir_all(docs.join("drafts")).unwrap();
    std::fs::write(docs.join("drafts/wip.md"), "# Wip\nrun make later\n").unwrap();
    std::fs::write(docs.join("old.md"), "# Old\nrun make old\n").unwrap();
    std::fs::write(docs.join(".gitignore"), "drafts/\n").unwrap();
    std::fs::write(docs.join(".ignore"), "old.md\n").unwrap();
    let (out, _) = answer_within("rag", json!({"op": "outline"}), &agent.ctx);
    assert!(out.body.contains("guide.md"), "{}", out.body);
    assert!(
        !out.body.contains("wip.md") && !out.body.contains("old.md"),
        "{}",
        out.body
    );
    let (out, _) = answer_within(
        "rag",
        json!({"op": "search", "pattern": "make"}),
        &agent.ctx,
    );
    assert!(out.body.contains("run make"), "{}", out.body);
    assert!(
        !out.body.contains("make later") && !out.body.contains("make old"),
        "{}",
        out.body
    );
}

/// Just under the 64 KiB bound, of globs as costly as a line can make them: still read, and
/// answered in time (≈ 0.7 s in a debug build; 10 s allowed, for a loaded machine).
#[test]
fn an_ignore_full_of_costly_globs_is_answered_in_time() {
    let agent = Agent::new();
    let mut rules = String::new();
    for i in 0.. {
        let line = format!("**/a{i}*b*c?d[x-z]*e*/**/f*g{i}*\n");
        if rules.len() + line.len() > 64 * 1024 {
            break;
        }
        rules.push_str(&line);
    }
    std::fs::write(agent.work().join(".ignore"), &rules).unwrap();
    let limit = Duration::from_secs(10);
    let (out, took) = answer_in(limit, "grep", json!({"pattern": "beta"}), &agent.ctx);
    eprintln!(
        "grep with {} lines of globs in .ignore: answered in {took:?}, peak RSS {} MiB",
        rules.lines().count(),
        status_kib("VmHWM") / 1024
    );
    assert!(out.body.contains("notes.txt:2: beta error"), "{}", out.body);
}

/// One walk reads at most 256 KiB of ignore files in all: of five folders with 60 KiB each,
/// four are obeyed and the fifth is treated as absent and said.
#[test]
fn a_walk_reads_at_most_256_kib_of_ignore_files() {
    let agent = Agent::new();
    let rules = format!("hide.txt\n{}", "# padding\n".repeat(6_000));
    for i in 0..5 {
        let folder = agent.work().join(format!("d{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(".ignore"), &rules).unwrap();
        std::fs::write(folder.join("hide.txt"), "needle\n").unwrap();
    }
    let (out, _) = answer_within("grep", json!({"pattern": "needle"}), &agent.ctx);
    let shown = out
        .body
        .lines()
        .filter(|l| l.contains("hide.txt:1:"))
        .count();
    let said = out.body.matches("ignored (past the 256 KiB").count();
    assert_eq!((shown, said), (1, 1), "{}", out.body);
}
