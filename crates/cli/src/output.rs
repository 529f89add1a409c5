//! Where the CLI writes: stdout carries results only (the answer, `check`'s report); stderr
//! carries diagnostics. Under `--events jsonl` every stderr line is one JSON object: a
//! `CoreEvent`, `{"type":"cli",level,code,message[,fix]}` or `{"type":"log",message}`.

use std::io::Write;
use std::sync::Arc;

use fuseforks_core::Coded;
use fuseforks_core::log::LogSink;

use crate::terminal::for_stderr;
use serde_json::json;

/// Set once stdout cannot be written: its reader has gone (`| head -1`) or it failed.
static STDOUT_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes to stdout. A reader that has gone (a closed pipe) is not an error of the command: the
/// rest of its output is dropped, quietly, and the command ends as it would have (its work is
/// done and recorded; only the reader stopped reading). Never panics, unlike `println!`.
pub(crate) fn stdout_write(bytes: &[u8]) {
    use std::sync::atomic::Ordering;
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        STDOUT_GONE.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            Out::default().cli(
                "warning",
                "STDOUT_UNWRITABLE",
                &format!(
                    "cannot write to stdout ({}); the rest of the output is dropped",
                    e.kind()
                ),
                None,
            );
        }
    }
}

/// `println!` for results: through [`stdout_write`], so a closed pipe ends quietly.
#[macro_export]
macro_rules! outln {
    () => { $crate::output::stdout_write(b"\n") };
    ($($arg:tt)*) => { $crate::output::stdout_write(format!("{}\n", format_args!($($arg)*)).as_bytes()) };
}

/// `print!` for results: through [`stdout_write`].
#[macro_export]
macro_rules! outp {
    ($($arg:tt)*) => { $crate::output::stdout_write(format!($($arg)*).as_bytes()) };
}

/// The stderr writer.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Out {
    /// `--events jsonl`.
    pub jsonl: bool,
    /// `--verbose`: echo log lines in human mode too.
    pub verbose: bool,
}

impl Out {
    /// A CLI line: an error, a finding, a note. Rendered once, the same way everywhere:
    /// `level: [CODE] message` then `Fix: …` on the next line (human), or
    /// `{"type":"cli",level,code,message[,fix]}` (jsonl). Nothing is parsed out of `message`:
    /// code and fix come in their own arguments (for an error, from its [`Coded`]).
    pub(crate) fn cli(&self, level: &str, code: &str, message: &str, fix: Option<&str>) {
        let mut err = std::io::stderr().lock();
        if self.jsonl {
            let mut line = json!({"type": "cli", "level": level, "code": code, "message": for_stderr(message)});
            if let Some(fix) = fix {
                line["fix"] = json!(for_stderr(fix));
            }
            let _ = writeln!(err, "{line}");
        } else {
            let _ = writeln!(err, "{}", human_line(level, code, message, fix));
        }
    }

    /// An error line from a typed error: its `code()`, its `Display` and its `fix()`.
    pub(crate) fn error(&self, err: &dyn Coded) {
        self.cli(
            "error",
            err.code(),
            &err.to_string(),
            crate::remedy::of(err).as_deref(),
        );
    }

    /// A command's result on stdout, as it is (`init`'s summary). Results never go to stderr.
    pub(crate) fn result(&self, text: &str) {
        stdout_write(text.as_bytes());
    }

    /// A prompt on the terminal (the value `secrets set` reads without echo): the text as it
    /// is, without a newline (human), or `{"type":"prompt",message}` (jsonl).
    pub(crate) fn prompt(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        if self.jsonl {
            let _ = writeln!(
                err,
                "{}",
                json!({"type": "prompt", "message": text.trim_end()})
            );
        } else {
            let _ = write!(err, "{text}");
            let _ = err.flush();
        }
    }

    /// The end of the line a [`Self::prompt`] left open (human only).
    pub(crate) fn prompt_done(&self) {
        if !self.jsonl {
            let _ = writeln!(std::io::stderr().lock());
        }
    }

    /// An argument error from the parser, rendered like every other error: `[USAGE]`, the
    /// parser's message on one line, and a fix made of its tips, the usage line and `--help`.
    pub(crate) fn usage_error(&self, parser_text: &str) {
        let (message, fix) = usage_parts(parser_text);
        self.cli("error", "USAGE", &message, Some(&fix));
    }

    /// A JSON event line (jsonl only).
    pub(crate) fn event(&self, event: &fuseforks_core::events::CoreEvent) {
        if self.jsonl
            && let Ok(text) = serde_json::to_string(event)
        {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    }

    /// The echo of the village log on stderr.
    pub(crate) fn log_echo(&self) -> Option<Arc<dyn LogSink>> {
        (self.jsonl || self.verbose)
            .then(|| Arc::new(StderrLog { jsonl: self.jsonl }) as Arc<dyn LogSink>)
    }

    /// `serve`'s echo: every log line under `--verbose` or `--events jsonl`, else one line per
    /// schedule firing (fired or skipped), so that an unattended village says what it does.
    pub(crate) fn serve_echo(&self) -> Arc<dyn LogSink> {
        self.log_echo()
            .unwrap_or_else(|| Arc::new(ScheduleLines) as Arc<dyn LogSink>)
    }
}

/// The schedule lines of the village log (`schedule fire:`, `schedule skip:`) on stderr.
#[derive(Debug)]
struct ScheduleLines;

impl LogSink for ScheduleLines {
    fn line(&self, line: &str) {
        if line.starts_with("schedule fire:") || line.starts_with("schedule skip:") {
            let _ = writeln!(std::io::stderr().lock(), "{}", for_stderr(line));
        }
    }
}

impl Out {
    /// Where MCP children's stderr goes: wrapped as JSON under `--events jsonl`, else one
    /// `mcp:<server>: ` line each, escape sequences and invisible controls stripped either way. Never inherited:
    /// a third-party server must not drive the user's terminal.
    pub(crate) fn child_output(&self) -> Option<Arc<dyn fuseforks_core::mcp::ChildOutput>> {
        Some(Arc::new(ChildLines { jsonl: self.jsonl }))
    }
}

/// The human rendering of a CLI line: `level: [CODE] message`, then `Fix: …` on its own line
/// (escape sequences and invisible controls stripped, whatever stderr is).
pub(crate) fn human_line(level: &str, code: &str, message: &str, fix: Option<&str>) -> String {
    let mut text = format!("{level}: [{code}] {}", for_stderr(message));
    if let Some(fix) = fix {
        text.push_str("\nFix: ");
        text.push_str(&for_stderr(fix));
    }
    text
}

/// The parser's text as one message line (before `Usage:`, tips left out) and a fix (the
/// tips, the usage line, `--help`).
pub(crate) fn usage_parts(text: &str) -> (String, String) {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let message: Vec<&str> = lines
        .iter()
        .take_while(|l| !l.starts_with("Usage:"))
        .filter(|l| !l.starts_with("tip:"))
        .copied()
        .collect();
    let mut fix: Vec<String> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("tip:"))
        .map(|t| t.trim().to_owned())
        .collect();
    if let Some(usage) = lines.iter().find_map(|l| l.strip_prefix("Usage:")) {
        fix.push(format!("usage: {}", usage.trim()));
    }
    fix.push("see --help".to_owned());
    let message = message.join(" ");
    (
        message.trim_start_matches("error: ").to_owned(),
        fix.join("; "),
    )
}

#[derive(Debug)]
struct ChildLines {
    jsonl: bool,
}

impl fuseforks_core::mcp::ChildOutput for ChildLines {
    fn line(&self, server: &str, line: &str) {
        let mut err = std::io::stderr().lock();
        if self.jsonl {
            let _ = writeln!(
                err,
                "{}",
                json!({"type": "log", "source": format!("mcp:{}", for_stderr(server)), "message": for_stderr(line)})
            );
        } else {
            let _ = writeln!(err, "mcp:{}: {}", for_stderr(server), for_stderr(line));
        }
    }
}

#[derive(Debug)]
struct StderrLog {
    jsonl: bool,
}

impl LogSink for StderrLog {
    fn line(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        if self.jsonl {
            let _ = writeln!(
                err,
                "{}",
                json!({"type": "log", "message": for_stderr(line)})
            );
        } else {
            let _ = writeln!(err, "{}", for_stderr(line));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::usage_parts;

    #[test]
    fn a_parser_error_is_one_message_line_and_a_fix() {
        let text = "error: unrecognized subcommand 'chek'\n\n  tip: a similar subcommand exists: 'check'\n\nUsage: fuseforks-cli [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            usage_parts(text),
            (
                "unrecognized subcommand 'chek'".to_owned(),
                "a similar subcommand exists: 'check'; usage: fuseforks-cli [OPTIONS] <COMMAND>; see --help".to_owned()
            )
        );
    }
}
