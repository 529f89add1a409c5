//! Group commit for conversation records: one writer thread takes every append, drains what
//! is waiting, and commits it in one redb transaction (one fsync), then answers each caller.
//! Async callers never block a runtime thread on a commit, and many agents finishing at once
//! share fsyncs instead of queueing for them. A conversation the caller has just named
//! ([`SessionTarget::New`]) is created in the same commit as its first records.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::records::{Record, SessionMeta};
use super::store::{SessionError, SessionStore, SessionTarget};
use crate::sync::LockOrRecover;

/// Most appends committed in one transaction.
const MAX_BATCH: usize = 512;

type Reply = tokio::sync::oneshot::Sender<Result<Vec<u64>, SessionError>>;

struct Job {
    target: SessionTarget,
    records: Vec<Record>,
    now_ms: i64,
    reply: Reply,
}

/// The writer thread of one store. Dropping it finishes the queue and joins the thread (so the
/// database file is closed when it returns).
pub struct SessionWriter {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for SessionWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionWriter")
    }
}

impl SessionWriter {
    /// Starts the writer thread.
    pub fn spawn(store: Arc<SessionStore>) -> std::io::Result<Self> {
        let (sender, receiver) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("fuseforks-sessions".into())
            .spawn(move || {
                while let Ok(first) = receiver.recv() {
                    let mut jobs = vec![first];
                    while jobs.len() < MAX_BATCH {
                        match receiver.try_recv() {
                            Ok(job) => jobs.push(job),
                            Err(_) => break,
                        }
                    }
                    commit(&store, jobs);
                }
            })?;
        Ok(Self {
            sender: Mutex::new(Some(sender)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Appends records (in order) to `target` and waits until they are committed; returns their
    /// sequence numbers.
    pub async fn append(
        &self,
        target: SessionTarget,
        records: Vec<Record>,
        now_ms: i64,
    ) -> Result<Vec<u64>, SessionError> {
        let (reply, done) = tokio::sync::oneshot::channel();
        let job = Job {
            target,
            records,
            now_ms,
            reply,
        };
        let sent = self
            .sender
            .lock_or_recover()
            .as_ref()
            .is_some_and(|s| s.send(job).is_ok());
        if !sent {
            return Err(SessionError::WriterStopped);
        }
        done.await
            .unwrap_or_else(|_| Err(SessionError::WriterStopped))
    }
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        self.sender.lock_or_recover().take();
        let thread = self.thread.lock_or_recover().take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }
}

fn commit(store: &SessionStore, jobs: Vec<Job>) {
    let now = jobs.iter().map(|j| j.now_ms).max().unwrap_or(0);
    let new: Vec<(&str, &SessionMeta)> = jobs
        .iter()
        .filter_map(|j| match &j.target {
            SessionTarget::New { id, meta } => Some((id.as_str(), meta)),
            SessionTarget::Existing(_) => None,
        })
        .collect();
    let flat: Vec<(&str, &Record)> = jobs
        .iter()
        .flat_map(|j| j.records.iter().map(|r| (j.target.id(), r)))
        .collect();
    match store.append_creating(&new, &flat, now) {
        Ok(results) => {
            let mut results = results.into_iter();
            for job in jobs {
                let mine: Result<Vec<u64>, SessionError> =
                    results.by_ref().take(job.records.len()).collect();
                let _ = job.reply.send(mine);
            }
        }
        Err(e) => {
            let shared = std::sync::Arc::new(e);
            for job in jobs {
                let _ = job.reply.send(Err(SessionError::Batch(shared.clone())));
            }
        }
    }
}
