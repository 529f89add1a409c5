//! The audit log's writer: one thread takes every append, drains what is waiting, chains the
//! lines, writes them with one `write`, fsyncs the file once (group commit), stores the new
//! head in `sessions.redb`, then answers each caller — so an append that returned is on disk.
//! With the audit key each line is marked (`mac`) and so is the head, which is also recorded
//! on the shelf (`DATA_DIR/audit-head.json`, atomically) at each durable commit.
//!
//! Detached lines ([`AuditLog::append_detached`]: a person's decision — an approval mode, the
//! plan-review switch, a plan dispatched or discarded —, a budget stop, a line written by a
//! command on a stopped village) are written at once but synced with the next sync of the
//! file: the next awaited batch, a rotation, or the close. The chain is ordered, so no later
//! line is durable without them, and every effect's line is awaited: an effect that followed a
//! decision carries the decision's line to disk before its own result reaches a model. What a
//! power loss can take is a detached line after which nothing was synced — a decision that had
//! no effect yet (an approval mode is in memory only and goes with the process) — never an
//! effect's line (docs/threat-model.md "Durable points"). A SIGKILL loses nothing written.
//!
//! The file's fsync is what makes a line durable; the head only detects truncation, and a head
//! BEHIND the file is harmless (`verify` reports it as `Ahead`), so the head is committed
//! non-durably per batch and durably at most every [`HEAD_DURABLE_EVERY`]; a head is never
//! stored past the synced lines (it would read as truncation after a power loss). At close
//! the head commit stays non-durable too: redb's clean close makes a pending non-durable commit
//! durable, in its own closing commit. A crash loses at most that long of head, never a line.
//! The shelf is rewritten at a durable commit or the close only when its head changed.
//! Rotation: past [`AuditLog::max_bytes`] the file is renamed `audit-<last seq>.jsonl` (and
//! the folder fsynced) and the next line of the new file chains on the last of the old.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::audit::{AuditEntry, AuditEvent, GENESIS};
use super::audit_error::AuditError;
use super::head::{RecordedHead, read_session_heads, read_shelf_head, write_shelf_head};
use super::key::AuditKey;
use super::verify::AUDIT_FILE;
use crate::sessions::SessionStore;
use crate::sync::LockOrRecover;

/// Most lines written in one batch.
const MAX_BATCH: usize = 512;
/// The size at which the file is rotated.
pub const DEFAULT_MAX_BYTES: u64 = 16 * 1024 * 1024;
/// The longest the head in `sessions.redb` stays only in non-durable commits.
pub(super) const HEAD_DURABLE_EVERY: Duration = Duration::from_secs(1);
/// The longest a batch waits for callers of the batch before it (a fraction of one fsync).
const GATHER_WAIT: Duration = Duration::from_micros(500);
/// How much of the file's end is read to find the last line at open.
const TAIL_BYTES: u64 = 64 * 1024;

type Reply = Option<tokio::sync::oneshot::Sender<Result<u64, AuditError>>>;

struct Job {
    event: AuditEvent,
    reply: Reply,
}

/// How far the writer has come, shared with [`AuditLog`]'s callers.
#[derive(Debug, Default)]
struct Progress {
    /// The last seq written to the file (in the page cache at least).
    written_seq: AtomicU64,
    /// The last seq the file's fdatasync covers.
    synced_seq: AtomicU64,
}

/// Where the chain stands: the last line's seq and hash.
struct Chain {
    /// `workspace/audit.jsonl`.
    path: PathBuf,
    /// The last line written (its seq).
    written_seq: u64,
    /// The last line an fdatasync covers: the head is never stored past it.
    synced_seq: u64,
    hash: String,
    file: File,
    bytes: u64,
    /// When the head was last committed durably.
    head_durable_at: Instant,
    /// The seq of the last head stored in `sessions.redb` (durably or not), or of the chain
    /// at open: a close with no new line stores nothing.
    stored_seq: u64,
    /// The same for the shelf: its head is rewritten only when the seq moved past it.
    shelf_seq: u64,
    /// What the callers can see of `written_seq` and `synced_seq`.
    progress: Arc<Progress>,
    /// The key lines and heads are marked with.
    key: Option<AuditKey>,
    /// The first seq marked with the key (set when there is a key).
    keyed_from: Option<u64>,
    /// The data folder whose shelf records the head.
    shelf: Option<PathBuf>,
}

/// What the caller of a running village gives its audit log: the key (from the host's secret
/// store) and the data folder whose shelf records the head.
#[derive(Debug, Clone, Default)]
pub struct AuditSetup {
    /// The key that marks lines and heads (none: written unkeyed).
    pub key: Option<AuditKey>,
    /// The data folder (`DATA_DIR`) that holds `audit-head.json`.
    pub shelf: Option<PathBuf>,
}

/// How an audit log is opened.
pub struct AuditLogOptions {
    /// Where the head is committed (`sessions.redb`).
    pub head_store: Option<Arc<SessionStore>>,
    /// The data folder whose shelf records the head too (`audit-head.json`).
    pub shelf: Option<PathBuf>,
    /// The key that marks lines and heads (none: written unkeyed).
    pub key: Option<AuditKey>,
    /// The size at which the file is rotated.
    pub max_bytes: u64,
}

/// The audit log of one open village. Dropping it finishes the queue and joins the thread.
pub struct AuditLog {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    progress: Arc<Progress>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditLog")
    }
}

impl AuditLog {
    /// Opens (or creates, 0600) `workspace/audit.jsonl` and starts its writer. The chain
    /// continues from the later of the file's last line and the head stored in `head_store`
    /// (a head ahead of the file leaves the gap visible to `verify`). A torn last line (a
    /// crash mid-write, never acknowledged) is cut off.
    pub fn open(
        workspace: &Path,
        head_store: Option<Arc<SessionStore>>,
        max_bytes: u64,
    ) -> std::io::Result<Self> {
        Self::open_with(
            workspace,
            AuditLogOptions {
                head_store,
                shelf: None,
                key: None,
                max_bytes,
            },
        )
    }

    /// [`Self::open`] with the key and the shelf: lines and heads marked with the key, the
    /// head recorded on the shelf as well.
    pub fn open_with(workspace: &Path, options: AuditLogOptions) -> std::io::Result<Self> {
        let AuditLogOptions {
            head_store,
            shelf,
            key,
            max_bytes,
        } = options;
        let path = workspace.join(AUDIT_FILE);
        let (file, tail) = open_tail(&path)?;
        let heads = stored_heads(head_store.as_deref(), shelf.as_deref());
        let stored = heads.iter().max_by_key(|h| h.seq);
        let (seq, hash) = match (tail, stored) {
            (Some(t), Some(s)) if s.seq > t.0 => (s.seq, s.sha256.clone()),
            (Some(t), _) => t,
            (None, Some(s)) => (s.seq, s.sha256.clone()),
            (None, None) => (0, GENESIS.to_owned()),
        };
        let keyed_from = key.as_ref().map(|k| {
            heads
                .iter()
                .filter(|h| h.mac_holds(k))
                .max_by_key(|h| h.seq)
                .and_then(|h| h.keyed_from)
                .unwrap_or(seq + 1)
        });
        let bytes = file.metadata()?.len();
        let progress = Arc::new(Progress::default());
        let mut chain = Chain {
            path: path.clone(),
            written_seq: seq,
            synced_seq: seq,
            hash,
            file,
            bytes,
            head_durable_at: Instant::now(),
            stored_seq: seq,
            shelf_seq: seq,
            progress: Arc::clone(&progress),
            key,
            keyed_from,
            shelf,
        };
        chain.publish();
        let (sender, receiver) = mpsc::channel::<Job>();
        let workspace = workspace.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("fuseforks-audit".into())
            .spawn(move || {
                let mut last_batch = 1;
                while let Ok(first) = receiver.recv() {
                    let jobs = gather(&receiver, first, last_batch);
                    last_batch = jobs.len();
                    let done = commit(&mut chain, &jobs, head_store.as_deref());
                    if done.is_ok() {
                        // A failed rotation keeps appending to the current file.
                        let _ = rotate_if_full(
                            &mut chain,
                            &workspace,
                            max_bytes,
                            head_store.as_deref(),
                        );
                    }
                    answer(jobs, chain.written_seq, done);
                }
                close(&mut chain, head_store.as_deref());
            })?;
        Ok(Self {
            sender: Mutex::new(Some(sender)),
            thread: Mutex::new(Some(thread)),
            progress,
        })
    }

    /// The last seq written to the file (it may not be synced yet).
    pub fn written_seq(&self) -> u64 {
        self.progress.written_seq.load(Ordering::Acquire)
    }

    /// The last seq known to be on disk (covered by the file's fdatasync).
    pub fn synced_seq(&self) -> u64 {
        self.progress.synced_seq.load(Ordering::Acquire)
    }

    /// Appends a line and waits until it is on disk (with every line before it); returns its seq.
    pub async fn append(&self, event: AuditEvent) -> Result<u64, AuditError> {
        let (reply, done) = tokio::sync::oneshot::channel();
        if !self.send(Job {
            event,
            reply: Some(reply),
        }) {
            return Err(AuditError::Stopped);
        }
        done.await.unwrap_or(Err(AuditError::Stopped))
    }

    /// Appends a line without waiting (for places that cannot await; still written in order):
    /// written at once, synced with the next sync of the file (module doc).
    pub fn append_detached(&self, event: AuditEvent) {
        self.send(Job { event, reply: None });
    }

    fn send(&self, job: Job) -> bool {
        self.sender
            .lock_or_recover()
            .as_ref()
            .is_some_and(|s| s.send(job).is_ok())
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        self.sender.lock_or_recover().take();
        if let Some(thread) = self.thread.lock_or_recover().take() {
            let _ = thread.join();
        }
    }
}

/// The batch: `first` and what is waiting. When the last batch was bigger, the callers it
/// answered are likely still on their way: wait up to [`GATHER_WAIT`] for as many (so 64 calls
/// in flight share one fsync instead of splitting into 1 + 63); a lone caller never waits.
fn gather(receiver: &mpsc::Receiver<Job>, first: Job, last_batch: usize) -> Vec<Job> {
    let mut jobs = vec![first];
    while jobs.len() < MAX_BATCH {
        match receiver.try_recv() {
            Ok(job) => jobs.push(job),
            Err(_) => break,
        }
    }
    let deadline = Instant::now() + GATHER_WAIT;
    while jobs.len() < last_batch.min(MAX_BATCH) {
        let left = deadline.saturating_duration_since(Instant::now());
        match receiver.recv_timeout(left) {
            Ok(job) => jobs.push(job),
            Err(_) => break,
        }
    }
    jobs
}

/// Opens the file for appending and reads its last complete line's seq and hash (cutting a
/// torn tail).
fn open_tail(path: &Path) -> std::io::Result<(File, Option<(u64, String)>)> {
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let mut file = options.open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::new();
    Read::by_ref(&mut file)
        .take(TAIL_BYTES)
        .read_to_end(&mut tail)?;
    let clean = tail.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    if clean < tail.len() {
        // A torn last line: never acknowledged, so never part of the chain.
        file.set_len(start + clean as u64)?;
        file.sync_data()?;
    }
    let last = tail[..clean]
        .split(|b| *b == b'\n')
        .rfind(|l| !l.is_empty())
        .and_then(|l| serde_json::from_slice::<AuditEntry>(l).ok())
        .map(|e| (e.seq, e.sha256));
    Ok((file, last))
}

impl Chain {
    /// Lets the callers see how far the writer has come.
    fn publish(&self) {
        let progress = &self.progress;
        progress
            .written_seq
            .store(self.written_seq, Ordering::Release);
        progress
            .synced_seq
            .store(self.synced_seq, Ordering::Release);
    }

    fn write_error(&self, source: std::io::Error) -> AuditError {
        AuditError::Write {
            path: self.path.clone(),
            source,
        }
    }

    /// The head of the written lines, when an fdatasync covers them all (never one past it).
    fn synced_head(&self) -> Option<RecordedHead> {
        (self.synced_seq == self.written_seq).then(|| {
            let key = self.key.as_ref();
            RecordedHead::new(self.written_seq, &self.hash, self.keyed_from, key)
        })
    }
}

/// Writes the batch's lines with one `write`; when any caller waits on them (not only detached
/// lines), fsyncs the file (which covers the detached lines before them too) and stores the head.
fn commit(
    chain: &mut Chain,
    jobs: &[Job],
    head_store: Option<&SessionStore>,
) -> Result<(), AuditError> {
    let now = crate::clock::now_ms();
    let mut text = Vec::with_capacity(jobs.len() * 400);
    let (mut seq, mut hash) = (chain.written_seq, chain.hash.clone());
    for job in jobs {
        seq += 1;
        hash = AuditEntry::push_line(&job.event, seq, now, &hash, chain.key.as_ref(), &mut text);
    }
    chain
        .file
        .write_all(&text)
        .map_err(|e| chain.write_error(e))?;
    chain.bytes += text.len() as u64;
    chain.written_seq = seq;
    chain.hash = hash;
    chain.publish();
    if jobs.iter().all(|job| job.reply.is_none()) {
        // Only detached lines: synced with the next sync of the file (module doc).
        return Ok(());
    }
    let durable = chain.head_durable_at.elapsed() >= HEAD_DURABLE_EVERY;
    sync(chain, head_store, durable)
}

/// The heads recorded in `sessions.redb` and on the shelf (unreadable ones left out).
fn stored_heads(head_store: Option<&SessionStore>, shelf: Option<&Path>) -> Vec<RecordedHead> {
    let mut heads = head_store.map(read_session_heads).unwrap_or_default();
    heads.extend(shelf.and_then(|d| read_shelf_head(d).ok().flatten()));
    heads
}

/// Fsyncs the file through the last written line, then stores that head (`durable`: in a
/// durable commit and on the shelf).
fn sync(
    chain: &mut Chain,
    head_store: Option<&SessionStore>,
    durable: bool,
) -> Result<(), AuditError> {
    chain.file.sync_data().map_err(|e| chain.write_error(e))?;
    chain.synced_seq = chain.written_seq;
    chain.publish();
    store_head(chain, head_store, durable)?;
    if durable {
        write_shelf(chain)?;
        chain.head_durable_at = Instant::now();
    }
    Ok(())
}

/// Commits the synced head to `sessions.redb` (durably or not).
fn store_head(
    chain: &mut Chain,
    head_store: Option<&SessionStore>,
    durable: bool,
) -> Result<(), AuditError> {
    let (Some(store), Some(head)) = (head_store, chain.synced_head()) else {
        return Ok(());
    };
    store
        .set_audit_head_record(head.seq, &head.sha256, &head.to_json(), durable)
        .map_err(|source| AuditError::HeadStore { source })?;
    chain.stored_seq = head.seq;
    Ok(())
}

/// Writes the synced head on the shelf when its seq moved since the last shelf write.
fn write_shelf(chain: &mut Chain) -> Result<(), AuditError> {
    let (Some(shelf), Some(head)) = (&chain.shelf, chain.synced_head()) else {
        return Ok(());
    };
    if head.seq <= chain.shelf_seq {
        return Ok(());
    }
    write_shelf_head(shelf, &head).map_err(|source| AuditError::HeadShelf {
        path: shelf.join(super::head::AUDIT_HEAD_FILE),
        source,
    })?;
    chain.shelf_seq = head.seq;
    Ok(())
}

/// The close: unsynced (detached) lines are synced and their head stored; the head's commit
/// stays non-durable, since redb's clean close commits it durably (the last `Arc` of the store
/// dropped: `Database`'s close makes a pending non-durable commit durable). The shelf is
/// written when its head moved. Errors have no caller left: the next open sees the file.
fn close(chain: &mut Chain, head_store: Option<&SessionStore>) {
    if chain.synced_seq < chain.written_seq {
        let _ = sync(chain, head_store, false);
    } else if chain.stored_seq < chain.synced_seq {
        let _ = store_head(chain, head_store, false);
    }
    let _ = write_shelf(chain);
}

fn rotate_if_full(
    chain: &mut Chain,
    workspace: &Path,
    max_bytes: u64,
    head_store: Option<&SessionStore>,
) -> Result<(), AuditError> {
    if chain.bytes < max_bytes {
        return Ok(());
    }
    if chain.synced_seq < chain.written_seq {
        // Later syncs reach the new file only: the old one's detached lines are synced now.
        sync(chain, head_store, false)?;
    }
    let current = workspace.join(AUDIT_FILE);
    let rotated: PathBuf = workspace.join(format!("audit-{:020}.jsonl", chain.written_seq));
    let fail = |source: std::io::Error| AuditError::Rotate {
        path: current.clone(),
        source,
    };
    std::fs::rename(&current, &rotated).map_err(fail)?;
    File::open(workspace)
        .and_then(|d| d.sync_all())
        .map_err(fail)?;
    let (file, _) = open_tail(&current).map_err(fail)?;
    chain.file = file;
    chain.bytes = 0;
    Ok(())
}

fn answer(jobs: Vec<Job>, last_seq: u64, done: Result<(), AuditError>) {
    let first = (last_seq + 1).saturating_sub(jobs.len() as u64);
    let done = done.map_err(Arc::new);
    for (i, job) in jobs.into_iter().enumerate() {
        if let Some(reply) = job.reply {
            let answer = match &done {
                Ok(()) => Ok(first + i as u64),
                Err(e) => Err(AuditError::Batch(Arc::clone(e))),
            };
            let _ = reply.send(answer);
        }
    }
}
