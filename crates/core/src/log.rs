//! The village log (`workspace/fuseforks.log`): one line per event in the original's forms
//! (docs/formats/log-lines.md), timestamped `YYYY-MM-DD HH:MM:SS.mmm [fuseforks] …` in local time,
//! rotated to `fuseforks.log.old` at 8 MB. Callers write counts and ids only — never a message,
//! a tool argument or result, or a secret.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::sync::LockOrRecover;

/// Where log lines go.
pub trait LogSink: Send + Sync + std::fmt::Debug {
    /// Writes one line (without timestamp; the sink adds its own framing).
    fn line(&self, line: &str);
}

/// A sink that emits lines as `tracing` events (for processes without a village log).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TracingSink;

impl LogSink for TracingSink {
    fn line(&self, line: &str) {
        tracing::info!("{}", escape_untrusted(line));
    }
}

/// Whether a character must not reach a log line or a terminal as itself: controls (a newline
/// would forge a line, ESC starts a terminal sequence), line and paragraph separators, and
/// bidirectional overrides and isolates (which reorder what a reader sees).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Escapes what an untrusted string (a tool name from a model, a server's name, a file name)
/// could do to a log line: every unsafe character becomes `\u{…}`; the rest is kept.
pub(crate) fn escape_untrusted(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The size at which the log rotates.
pub(crate) const ROTATE_BYTES: u64 = 8 * 1024 * 1024;

/// The rotating log file of a village, with an optional echo (the CLI's stderr).
#[derive(Debug)]
pub struct VillageLog {
    path: PathBuf,
    state: Mutex<Option<(File, u64)>>,
    echo: Option<Arc<dyn LogSink>>,
    rotate_at: u64,
}

impl VillageLog {
    /// Opens (appends to) the log at `path`.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        Self::open_rotating_at(path, ROTATE_BYTES)
    }

    /// Opens the log with another rotation size (tests).
    pub fn open_rotating_at(path: &Path, rotate_at: u64) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let size = file.metadata()?.len();
        Ok(Self {
            path: path.to_path_buf(),
            state: Mutex::new(Some((file, size))),
            echo: None,
            rotate_at,
        })
    }

    /// Also sends every line to `echo`.
    pub fn with_echo(mut self, echo: Arc<dyn LogSink>) -> Self {
        self.echo = Some(echo);
        self
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn rotate(&self, state: &mut Option<(File, u64)>) {
        *state = None;
        let old = self.path.with_extension("log.old");
        let _ = std::fs::rename(&self.path, old);
        if let Ok(file) = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
        {
            *state = Some((file, 0));
        }
    }
}

impl LogSink for VillageLog {
    fn line(&self, line: &str) {
        let line = &*escape_untrusted(line);
        let stamp = jiff::ZonedDateTime::now()
            .strftime("%Y-%m-%d %H:%M:%S%.3f")
            .to_string();
        let framed = format!("{stamp} [fuseforks] {line}\n");
        {
            let mut state = self.state.lock_or_recover();
            let full = state
                .as_ref()
                .is_some_and(|(_, size)| size + framed.len() as u64 > self.rotate_at);
            if full {
                self.rotate(&mut state);
            }
            if let Some((file, size)) = state.as_mut()
                && file.write_all(framed.as_bytes()).is_ok()
            {
                *size += framed.len() as u64;
            }
        }
        if let Some(echo) = &self.echo {
            echo.line(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_cannot_forge_a_line_or_reach_a_terminal() {
        assert_eq!(escape_untrusted("name=grep ok"), "name=grep ok");
        assert_eq!(
            escape_untrusted("x\nturn: forged\r\u{1b}[31m\u{202e}é"),
            "x\\u{a}turn: forged\\u{d}\\u{1b}[31m\\u{202e}é"
        );
    }

    #[test]
    fn lines_are_framed_and_the_log_rotates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fuseforks.log");
        let log = VillageLog::open_rotating_at(&path, 200).unwrap();
        log.line("turn start: agent=a1 hop=0 from=user chars=5");
        let text = std::fs::read_to_string(&path).unwrap();
        let line = text.lines().next().unwrap();
        assert!(
            line.ends_with(" [fuseforks] turn start: agent=a1 hop=0 from=user chars=5"),
            "{line}"
        );
        assert_eq!(line.as_bytes()[4], b'-');
        assert_eq!(&line[10..11], " ");
        assert_eq!(line[..23].len(), 23, "YYYY-MM-DD HH:MM:SS.mmm");
        for i in 0..5 {
            log.line(&format!("tool: agent=a1 round={i} name=grep ok=true"));
        }
        assert!(
            dir.path().join("fuseforks.log.old").exists(),
            "rotated at the size"
        );
        assert!(std::fs::metadata(&path).unwrap().len() <= 200);
    }
}
