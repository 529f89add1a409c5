//! The redb store of conversations. Every append is one write transaction (the record and the
//! session's metadata together), so a crash keeps both or neither. A record kind this version
//! does not know is kept on disk and skipped on read with one warning.

use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde_json::Value;

use super::records::{Record, SessionMeta};
use crate::error::{Fix, Remedy};

const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("sessions");
const RECORDS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("records");
/// The audit log's chain head (`seq` → `sha256`), one row under [`AUDIT_HEAD_KEY`].
const AUDIT_HEAD: TableDefinition<&str, (u64, &str)> = TableDefinition::new("audit_head");
const AUDIT_HEAD_KEY: &str = "head";
/// The audit chain's recorded head as the writer keyed it (its JSON, `safety::RecordedHead`),
/// one row under [`AUDIT_HEAD_KEY`], written in the same commit as [`AUDIT_HEAD`].
const AUDIT_HEAD_RECORD: TableDefinition<&str, &str> = TableDefinition::new("audit_head_record");

/// The longest title, in characters.
pub(crate) const MAX_TITLE_CHARS: usize = 30;

/// Errors of the session store.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Another process has `sessions.redb` open (the second net behind the village lock).
    #[error("{0}: another process has the conversation store open")]
    Locked(PathBuf),
    /// The database failed: the operation, the file and redb's own error.
    #[error("{}: the conversation store could not {op}", path.display())]
    Storage {
        /// What the store was doing.
        op: StoreOp,
        /// `sessions.redb`.
        path: PathBuf,
        /// redb's error (boxed: some of its variants are large).
        #[source]
        source: Box<redb::Error>,
    },
    /// A record or a conversation's metadata could not be encoded or decoded.
    #[error("a conversation record could not be {op}")]
    Encoding {
        /// Encode or decode.
        op: StoreOp,
        /// serde's error (names the field, never its value).
        #[source]
        source: serde_json::Error,
    },
    /// The writer thread is gone (the store was closed), so nothing more is written.
    #[error("the session writer has stopped")]
    WriterStopped,
    /// One failed commit of the writer, shared by every request it held.
    #[error(transparent)]
    Batch(std::sync::Arc<SessionError>),
    /// No such conversation.
    #[error("no conversation {0}")]
    NotFound(String),
    /// Writing an export failed: the file (or its folder) and the io error.
    #[error("{}: the export could not be written ({})", path.display(), source.kind())]
    Export {
        /// The export file, or the `exports` folder.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
    /// A fork point past the conversation's last record.
    #[error("conversation {session} has no record {at} to fork before ({})", last_words(*.last))]
    ForkPastEnd {
        /// The conversation.
        session: String,
        /// The asked point.
        at: u64,
        /// Its last record's seq.
        last: Option<u64>,
        /// The fork points it has (the first few).
        points: Vec<u64>,
    },
    /// A fork point inside an exchange (not a request, or between a paid call and the record
    /// of its usage).
    #[error(
        "record {at} of conversation {session} is inside an exchange, not the start of a request"
    )]
    ForkSplitsExchange {
        /// The conversation.
        session: String,
        /// The asked point.
        at: u64,
        /// The nearest whole-exchange points around it.
        nearest: (Option<u64>, Option<u64>),
    },
}

fn last_words(last: Option<u64>) -> String {
    match last {
        Some(last) => format!("its last record is {last}"),
        None => "it has no records".into(),
    }
}

impl SessionError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Locked(_) => "SESSION_STORE_LOCKED",
            Self::Storage { .. } | Self::Encoding { .. } | Self::WriterStopped => {
                "SESSION_STORE_FAILED"
            }
            Self::Batch(e) => e.code(),
            Self::NotFound(_) => "SESSION_NOT_FOUND",
            Self::Export { .. } => "SESSION_EXPORT_FAILED",
            Self::ForkPastEnd { .. } => "SESSION_FORK_PAST_END",
            Self::ForkSplitsExchange { .. } => "SESSION_FORK_SPLITS_EXCHANGE",
        }
    }
}

impl crate::error::Coded for SessionError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        match self {
            Self::Locked(_) => Some(Fix::remedy(Remedy::CloseOtherProcess, "")),
            Self::Batch(e) => crate::error::Coded::fix(&**e),
            Self::ForkPastEnd { points, .. } => Some(match points.as_slice() {
                [] => "this conversation has no request to fork before".into(),
                points => format!(
                    "fork before a request: {} (`sessions show` numbers the records)",
                    points
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
                .into(),
            }),
            Self::ForkSplitsExchange { nearest, .. } => Some(match nearest {
                (Some(a), Some(b)) => {
                    format!("fork before request {a} or {b} (`sessions show` numbers them)").into()
                }
                (Some(a), None) | (None, Some(a)) => {
                    format!("fork before request {a} (`sessions show` numbers the records)").into()
                }
                (None, None) => "this conversation has no request to fork before".into(),
            }),
            _ => None,
        }
    }
}

/// What the conversation store was doing when it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreOp {
    /// Opening (or creating) the file and its tables.
    Open,
    /// Reading in a transaction.
    Read,
    /// Writing in a transaction.
    Write,
    /// Committing a write.
    Commit,
    /// Encoding a record as JSON.
    Encode,
    /// Decoding a record's JSON.
    Decode,
}

impl std::fmt::Display for StoreOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Open => "open",
            Self::Read => "read",
            Self::Write => "write",
            Self::Commit => "commit",
            Self::Encode => "encoded",
            Self::Decode => "decoded",
        })
    }
}

/// A redb failure of `op` on `path`, keeping redb's error as the source.
fn failed<E: Into<redb::Error>>(path: &Path, op: StoreOp) -> impl FnOnce(E) -> SessionError + '_ {
    move |e| SessionError::Storage {
        op,
        path: path.to_path_buf(),
        source: Box::new(e.into()),
    }
}

/// A record read back: one this version knows, or one it skips.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // read in batches for display; boxing buys nothing here
pub enum StoredRecord {
    /// A known record.
    Known(Record),
    /// A record of a kind this version does not know (kept on disk, skipped here).
    Unknown {
        /// Its `kind`.
        kind: String,
    },
}

/// The conversation store of one village.
pub struct SessionStore {
    db: Database,
    path: PathBuf,
}

impl std::fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStore")
            .field("path", &self.path)
            .finish()
    }
}

impl SessionStore {
    /// A write transaction; redb's refusal keeps its source, with this file.
    fn write_txn(&self) -> Result<redb::WriteTransaction, SessionError> {
        self.db
            .begin_write()
            .map_err(failed(&self.path, StoreOp::Write))
    }

    /// A read transaction; redb's refusal keeps its source, with this file.
    fn read_txn(&self) -> Result<redb::ReadTransaction, SessionError> {
        self.db
            .begin_read()
            .map_err(failed(&self.path, StoreOp::Read))
    }

    /// Opens (or creates) `sessions.redb`. Another process holding it is
    /// [`SessionError::Locked`]. The tables are created by a commit only when one is missing (a
    /// new file): an open of a store that has them writes nothing, so it costs no fsync.
    pub fn open(path: &Path) -> Result<Self, SessionError> {
        let db = match Database::create(path) {
            Ok(db) => db,
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                return Err(SessionError::Locked(path.to_path_buf()));
            }
            Err(e) => return Err(failed(path, StoreOp::Open)(e)),
        };
        if !has_tables(&db, path)? {
            let txn = db.begin_write().map_err(failed(path, StoreOp::Open))?;
            txn.open_table(SESSIONS)
                .map_err(failed(path, StoreOp::Open))?;
            txn.open_table(RECORDS)
                .map_err(failed(path, StoreOp::Open))?;
            txn.commit().map_err(failed(path, StoreOp::Open))?;
        }
        Ok(Self {
            db,
            path: path.to_path_buf(),
        })
    }

    /// Starts a new conversation; returns its id.
    pub fn create(&self, title: &str, now_ms: i64) -> Result<String, SessionError> {
        let id = uuid::Uuid::new_v4().to_string();
        let meta = SessionMeta::fresh(title, now_ms);
        let txn = self.write_txn()?;
        {
            let mut sessions = txn
                .open_table(SESSIONS)
                .map_err(failed(&self.path, StoreOp::Write))?;
            sessions
                .insert(id.as_str(), to_bytes(&meta)?.as_slice())
                .map_err(failed(&self.path, StoreOp::Write))?;
        }
        txn.commit().map_err(failed(&self.path, StoreOp::Commit))?;
        Ok(id)
    }

    /// Appends a record and updates the session's metadata in one transaction; returns the
    /// record's sequence number.
    pub fn append(&self, session: &str, record: &Record, now_ms: i64) -> Result<u64, SessionError> {
        self.append_many(&[(session, record)], now_ms)?
            .pop()
            .unwrap_or_else(|| Err(SessionError::NotFound(session.to_owned())))
    }

    /// Appends several records (to one or more conversations) in one transaction: one commit,
    /// one fsync. A record for a conversation that does not exist gets `NotFound` and the others
    /// are still written; a storage failure fails them all and writes none.
    pub fn append_many(
        &self,
        items: &[(&str, &Record)],
        now_ms: i64,
    ) -> Result<Vec<Result<u64, SessionError>>, SessionError> {
        self.append_creating(&[], items, now_ms)
    }

    /// As [`Self::append_many`], first creating each conversation of `new` that does not exist
    /// yet, in the same transaction: a conversation and its first records are stored together
    /// or not at all (one fsync where a separate create would cost two).
    pub fn append_creating(
        &self,
        new: &[(&str, &SessionMeta)],
        items: &[(&str, &Record)],
        now_ms: i64,
    ) -> Result<Vec<Result<u64, SessionError>>, SessionError> {
        let txn = self.write_txn()?;
        let mut results = Vec::with_capacity(items.len());
        {
            let mut sessions = txn
                .open_table(SESSIONS)
                .map_err(failed(&self.path, StoreOp::Write))?;
            for (id, meta) in new {
                let exists = sessions
                    .get(*id)
                    .map_err(failed(&self.path, StoreOp::Read))?
                    .is_some();
                if !exists {
                    sessions
                        .insert(*id, to_bytes(*meta)?.as_slice())
                        .map_err(failed(&self.path, StoreOp::Write))?;
                }
            }
            let mut records = txn
                .open_table(RECORDS)
                .map_err(failed(&self.path, StoreOp::Write))?;
            for (session, record) in items {
                let meta = sessions
                    .get(*session)
                    .map_err(failed(&self.path, StoreOp::Read))?
                    .map(|v| from_bytes::<SessionMeta>(v.value()));
                let mut meta = match meta {
                    Some(m) => m?,
                    None => {
                        results.push(Err(SessionError::NotFound((*session).to_owned())));
                        continue;
                    }
                };
                let seq = {
                    let last = records
                        .range((*session, 0)..=(*session, u64::MAX))
                        .map_err(failed(&self.path, StoreOp::Read))?
                        .next_back();
                    match last {
                        Some(entry) => {
                            entry
                                .map_err(failed(&self.path, StoreOp::Read))?
                                .0
                                .value()
                                .1
                                + 1
                        }
                        None => 0,
                    }
                };
                records
                    .insert((*session, seq), to_bytes(*record)?.as_slice())
                    .map_err(failed(&self.path, StoreOp::Write))?;
                meta.record_count += 1;
                meta.updated_at = now_ms;
                sessions
                    .insert(*session, to_bytes(&meta)?.as_slice())
                    .map_err(failed(&self.path, StoreOp::Write))?;
                results.push(Ok(seq));
            }
        }
        txn.commit().map_err(failed(&self.path, StoreOp::Commit))?;
        Ok(results)
    }

    /// The audit log's chain head (seq and hash of its last line), when one was stored.
    pub fn audit_head(&self) -> Result<Option<(u64, String)>, SessionError> {
        let txn = self.read_txn()?;
        let table = match txn.open_table(AUDIT_HEAD) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(failed(&self.path, StoreOp::Read)(e)),
        };
        let head = table
            .get(AUDIT_HEAD_KEY)
            .map_err(failed(&self.path, StoreOp::Read))?;
        Ok(head.map(|v| {
            let (seq, hash) = v.value();
            (seq, hash.to_owned())
        }))
    }

    /// Stores the audit log's chain head: durable when this returns if `durable`, else in a
    /// non-durable commit that the next durable commit of this store (any table) persists.
    pub fn set_audit_head(
        &self,
        seq: u64,
        sha256: &str,
        durable: bool,
    ) -> Result<(), SessionError> {
        self.write_audit_head(seq, sha256, None, durable)
    }

    /// The audit chain's recorded head (its JSON), when one was stored with
    /// [`Self::set_audit_head_record`].
    pub fn audit_head_record(&self) -> Result<Option<String>, SessionError> {
        let txn = self.read_txn()?;
        let table = match txn.open_table(AUDIT_HEAD_RECORD) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(failed(&self.path, StoreOp::Read)(e)),
        };
        let record = table
            .get(AUDIT_HEAD_KEY)
            .map_err(failed(&self.path, StoreOp::Read))?;
        Ok(record.map(|v| v.value().to_owned()))
    }

    /// Stores the audit chain's head (as [`Self::set_audit_head`]) and its keyed record (the
    /// JSON the safety layer reads back) in one commit.
    pub fn set_audit_head_record(
        &self,
        seq: u64,
        sha256: &str,
        record: &str,
        durable: bool,
    ) -> Result<(), SessionError> {
        self.write_audit_head(seq, sha256, Some(record), durable)
    }

    /// One commit of the head, and of its keyed record when there is one.
    fn write_audit_head(
        &self,
        seq: u64,
        sha256: &str,
        record: Option<&str>,
        durable: bool,
    ) -> Result<(), SessionError> {
        let mut txn = self.write_txn()?;
        if !durable {
            txn.set_durability(redb::Durability::None)
                .map_err(failed(&self.path, StoreOp::Write))?;
        }
        {
            let mut table = txn
                .open_table(AUDIT_HEAD)
                .map_err(failed(&self.path, StoreOp::Write))?;
            table
                .insert(AUDIT_HEAD_KEY, (seq, sha256))
                .map_err(failed(&self.path, StoreOp::Write))?;
            if let Some(record) = record {
                let mut table = txn
                    .open_table(AUDIT_HEAD_RECORD)
                    .map_err(failed(&self.path, StoreOp::Write))?;
                table
                    .insert(AUDIT_HEAD_KEY, record)
                    .map_err(failed(&self.path, StoreOp::Write))?;
            }
        }
        txn.commit().map_err(failed(&self.path, StoreOp::Commit))
    }

    /// Every conversation, most recently updated first.
    pub fn list(&self) -> Result<Vec<(String, SessionMeta)>, SessionError> {
        let txn = self.read_txn()?;
        let sessions = txn
            .open_table(SESSIONS)
            .map_err(failed(&self.path, StoreOp::Read))?;
        let mut out = Vec::new();
        for entry in sessions.iter().map_err(failed(&self.path, StoreOp::Read))? {
            let (k, v) = entry.map_err(failed(&self.path, StoreOp::Read))?;
            out.push((k.value().to_owned(), from_bytes::<SessionMeta>(v.value())?));
        }
        out.sort_by(|a, b| {
            b.1.updated_at
                .cmp(&a.1.updated_at)
                .then_with(|| a.0.cmp(&b.0))
        });
        Ok(out)
    }

    /// A conversation's metadata.
    pub fn meta(&self, session: &str) -> Result<SessionMeta, SessionError> {
        let txn = self.read_txn()?;
        let sessions = txn
            .open_table(SESSIONS)
            .map_err(failed(&self.path, StoreOp::Read))?;
        let value = sessions
            .get(session)
            .map_err(failed(&self.path, StoreOp::Read))?
            .ok_or_else(|| SessionError::NotFound(session.to_owned()))?;
        from_bytes(value.value())
    }

    /// Every record of a conversation, in order, with its sequence number.
    pub fn records(&self, session: &str) -> Result<Vec<(u64, StoredRecord)>, SessionError> {
        self.meta(session)?;
        let txn = self.read_txn()?;
        let records = txn
            .open_table(RECORDS)
            .map_err(failed(&self.path, StoreOp::Read))?;
        let mut out = Vec::new();
        let mut warned = false;
        for entry in records
            .range((session, 0)..=(session, u64::MAX))
            .map_err(failed(&self.path, StoreOp::Read))?
        {
            let (k, v) = entry.map_err(failed(&self.path, StoreOp::Read))?;
            let seq = k.value().1;
            match serde_json::from_slice::<Record>(v.value()) {
                Ok(record) => out.push((seq, StoredRecord::Known(record))),
                Err(_) => {
                    let kind = serde_json::from_slice::<Value>(v.value())
                        .ok()
                        .and_then(|j| j.get("kind").and_then(Value::as_str).map(str::to_owned))
                        .unwrap_or_else(|| "?".into());
                    if !warned {
                        tracing::warn!(
                            "session record skipped: session={session} seq={seq} kind={kind} (unknown to this version)"
                        );
                        warned = true;
                    }
                    out.push((seq, StoredRecord::Unknown { kind }));
                }
            }
        }
        Ok(out)
    }

    /// The records that restore history: message, exchange and summary only.
    pub fn history(&self, session: &str) -> Result<Vec<(u64, Record)>, SessionError> {
        Ok(self
            .records(session)?
            .into_iter()
            .filter_map(|(seq, r)| match r {
                StoredRecord::Known(record) if record.restores_history() => Some((seq, record)),
                _ => None,
            })
            .collect())
    }

    /// A new conversation holding the records before `at_seq` ("back to just before a
    /// request"); returns its id.
    pub fn fork(&self, session: &str, at_seq: u64, now_ms: i64) -> Result<String, SessionError> {
        let source = self.meta(session)?;
        let held = self.records(session)?;
        super::fork_point::check(&held, at_seq).map_err(|refusal| match refusal {
            super::fork_point::ForkRefusal::PastEnd { last, points } => SessionError::ForkPastEnd {
                session: session.to_owned(),
                at: at_seq,
                last,
                points,
            },
            super::fork_point::ForkRefusal::SplitsExchange { before, after } => {
                SessionError::ForkSplitsExchange {
                    session: session.to_owned(),
                    at: at_seq,
                    nearest: (before, after),
                }
            }
        })?;
        let id = uuid::Uuid::new_v4().to_string();
        let txn = self.write_txn()?;
        {
            let mut records = txn
                .open_table(RECORDS)
                .map_err(failed(&self.path, StoreOp::Write))?;
            let copied: Vec<(u64, Vec<u8>)> = records
                .range((session, 0)..(session, at_seq))
                .map_err(failed(&self.path, StoreOp::Read))?
                .map(|e| e.map(|(k, v)| (k.value().1, v.value().to_vec())))
                .collect::<Result<_, _>>()
                .map_err(failed(&self.path, StoreOp::Read))?;
            for (seq, bytes) in &copied {
                records
                    .insert((id.as_str(), *seq), bytes.as_slice())
                    .map_err(failed(&self.path, StoreOp::Write))?;
            }
            let meta = SessionMeta {
                title: source.title.clone(),
                created_at: now_ms,
                updated_at: now_ms,
                parent_id: Some(session.to_owned()),
                forked_at_seq: Some(at_seq),
                record_count: copied.len() as u64,
            };
            let mut sessions = txn
                .open_table(SESSIONS)
                .map_err(failed(&self.path, StoreOp::Write))?;
            sessions
                .insert(id.as_str(), to_bytes(&meta)?.as_slice())
                .map_err(failed(&self.path, StoreOp::Write))?;
        }
        txn.commit().map_err(failed(&self.path, StoreOp::Commit))?;
        Ok(id)
    }

    /// Deletes a conversation and its records.
    pub fn delete(&self, session: &str) -> Result<(), SessionError> {
        self.meta(session)?;
        let txn = self.write_txn()?;
        {
            let mut records = txn
                .open_table(RECORDS)
                .map_err(failed(&self.path, StoreOp::Write))?;
            let seqs: Vec<u64> = records
                .range((session, 0)..=(session, u64::MAX))
                .map_err(failed(&self.path, StoreOp::Read))?
                .map(|e| e.map(|(k, _)| k.value().1))
                .collect::<Result<_, _>>()
                .map_err(failed(&self.path, StoreOp::Read))?;
            for seq in seqs {
                records
                    .remove((session, seq))
                    .map_err(failed(&self.path, StoreOp::Write))?;
            }
            let mut sessions = txn
                .open_table(SESSIONS)
                .map_err(failed(&self.path, StoreOp::Write))?;
            sessions
                .remove(session)
                .map_err(failed(&self.path, StoreOp::Write))?;
        }
        txn.commit().map_err(failed(&self.path, StoreOp::Commit))
    }

    /// Writes a conversation as JSON Lines (one record per line, as stored, unknown kinds
    /// included) to `exports/{id}.jsonl` under `dir`, atomically; returns the file.
    pub fn export_jsonl(&self, session: &str, dir: &Path) -> Result<PathBuf, SessionError> {
        self.meta(session)?;
        let txn = self.read_txn()?;
        let records = txn
            .open_table(RECORDS)
            .map_err(failed(&self.path, StoreOp::Read))?;
        let mut out = Vec::new();
        for entry in records
            .range((session, 0)..=(session, u64::MAX))
            .map_err(failed(&self.path, StoreOp::Read))?
        {
            let (_, v) = entry.map_err(failed(&self.path, StoreOp::Read))?;
            out.extend_from_slice(v.value());
            out.push(b'\n');
        }
        let file = dir.join("exports").join(format!("{session}.jsonl"));
        let folder = dir.join("exports");
        std::fs::create_dir_all(&folder).map_err(|source| SessionError::Export {
            path: folder,
            source,
        })?;
        crate::village::write_file_atomically(&file, &out).map_err(|source| {
            SessionError::Export {
                path: file.clone(),
                source,
            }
        })?;
        Ok(file)
    }
}

/// Whether the file has both tables (a read: no commit, no fsync).
fn has_tables(db: &Database, path: &Path) -> Result<bool, SessionError> {
    let txn = db.begin_read().map_err(failed(path, StoreOp::Open))?;
    let present = |table: Result<(), redb::TableError>| match table {
        Ok(()) => Ok(true),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(false),
        Err(e) => Err(failed(path, StoreOp::Open)(e)),
    };
    Ok(present(txn.open_table(SESSIONS).map(drop))? && present(txn.open_table(RECORDS).map(drop))?)
}

impl SessionMeta {
    /// A new conversation's metadata: its title (cut to 30 characters), created now, no
    /// records yet.
    pub fn fresh(title: &str, now_ms: i64) -> Self {
        Self {
            title: title.chars().take(MAX_TITLE_CHARS).collect(),
            created_at: now_ms,
            updated_at: now_ms,
            parent_id: None,
            forked_at_seq: None,
            record_count: 0,
        }
    }
}

/// Where appended records go: a conversation that exists, or one the same commit creates.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionTarget {
    /// A stored conversation.
    Existing(String),
    /// A conversation created, when it does not exist yet, in the transaction that writes the
    /// records (an existing one is appended to and its row kept).
    New {
        /// Its id (the caller makes it, so it can name the conversation before the commit).
        id: String,
        /// Its row when created.
        meta: SessionMeta,
    },
}

impl SessionTarget {
    /// The conversation's id.
    pub fn id(&self) -> &str {
        match self {
            Self::Existing(id) | Self::New { id, .. } => id,
        }
    }
}

fn to_bytes<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, SessionError> {
    serde_json::to_vec(value).map_err(|source| SessionError::Encoding {
        op: StoreOp::Encode,
        source,
    })
}

fn from_bytes<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, SessionError> {
    serde_json::from_slice(bytes).map_err(|source| SessionError::Encoding {
        op: StoreOp::Decode,
        source,
    })
}
