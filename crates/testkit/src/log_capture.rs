//! Captures the log lines (`tracing` events) a test's thread emits, so tests can assert what a
//! log says — and what it never says (bodies, secrets).
//!
//! One process-wide subscriber records every event with its thread; a test reads the lines of
//! its own thread (use a current-thread runtime). A thread-local subscriber is not used because
//! tracing caches callsite interest process-wide, which races with tests on other threads.

use std::fmt::Write as _;
use std::sync::{Mutex, OnceLock};
use std::thread::ThreadId;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

static LINES: OnceLock<Mutex<Vec<(ThreadId, String)>>> = OnceLock::new();

/// The lines of one thread.
#[derive(Debug, Clone)]
pub struct LogLines {
    thread: ThreadId,
    from: usize,
}

impl LogLines {
    /// Every line this thread emitted since [`capture`].
    pub fn lines(&self) -> Vec<String> {
        let Some(all) = LINES.get() else {
            return Vec::new();
        };
        let all = all
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        all.into_iter()
            .skip(self.from)
            .filter(|(t, _)| *t == self.thread)
            .map(|(_, l)| l)
            .collect()
    }
}

/// Starts capturing for the current thread (installs the process-wide subscriber once).
pub fn capture() -> LogLines {
    let lines = LINES.get_or_init(|| {
        let _ = tracing::subscriber::set_global_default(Capture);
        Mutex::new(Vec::new())
    });
    let from = lines
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .len();
    LogLines {
        thread: std::thread::current().id(),
        from,
    }
}

struct Capture;

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        if let Some(Ok(mut lines)) = LINES.get().map(Mutex::lock) {
            lines.push((std::thread::current().id(), message.0));
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
