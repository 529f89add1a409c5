//! Where the CLI writes: stdout carries results only (the answer, `check`'s report); stderr
//! carries diagnostics. Under `--events jsonl` every stderr line is one JSON object: a
//! `CoreEvent`, `{"type":"cli",level,code,message[,fix]}` or `{"type":"log",message}`.

use std::io::Write;
use std::sync::Arc;

use fuseforks_core::log::LogSink;

use crate::terminal::for_stderr;
use serde_json::json;

/// The stderr writer.
#[derive(Debug, Clone, Copy)]
pub struct Out {
    /// `--events jsonl`.
    pub jsonl: bool,
    /// `--verbose`: echo log lines in human mode too.
    pub verbose: bool,
}

impl Out {
    /// A CLI line: an error, a finding, a note.
    pub fn cli(&self, level: &str, code: &str, message: &str, fix: Option<&str>) {
        let mut err = std::io::stderr().lock();
        if self.jsonl {
            let mut line = json!({"type": "cli", "level": level, "code": code, "message": message});
            if let Some(fix) = fix {
                line["fix"] = json!(fix);
            }
            let _ = writeln!(err, "{line}");
        } else {
            let message = for_stderr(message);
            let _ = writeln!(err, "{level}: [{code}] {message}");
            if let Some(fix) = fix {
                let _ = writeln!(err, "  fix: {}", for_stderr(fix));
            }
        }
    }

    /// A JSON event line (jsonl only).
    pub fn event(&self, event: &fuseforks_core::events::CoreEvent) {
        if self.jsonl
            && let Ok(text) = serde_json::to_string(event)
        {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        }
    }

    /// The echo of the village log on stderr.
    pub fn log_echo(&self) -> Option<Arc<dyn LogSink>> {
        (self.jsonl || self.verbose)
            .then(|| Arc::new(StderrLog { jsonl: self.jsonl }) as Arc<dyn LogSink>)
    }
}

impl Out {
    /// Where MCP children's stderr goes: wrapped as JSON under `--events jsonl`, else one
    /// `mcp:<server>: ` line each, escape sequences stripped on a terminal. Never inherited:
    /// a third-party server must not drive the user's terminal.
    pub fn child_output(&self) -> Option<Arc<dyn fuseforks_core::mcp::ChildOutput>> {
        Some(Arc::new(ChildLines { jsonl: self.jsonl }))
    }
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
                json!({"type": "log", "source": format!("mcp:{server}"), "message": line})
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
            let _ = writeln!(err, "{}", json!({"type": "log", "message": line}));
        } else {
            let _ = writeln!(err, "{}", for_stderr(line));
        }
    }
}
