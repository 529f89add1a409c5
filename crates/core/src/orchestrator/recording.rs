//! Where conversations are recorded: the conversation store and its writer, the current
//! conversation together with the one the last `session:` log line named and the agents that
//! re-read their history of it (one lock: a record that creates the current conversation names
//! it in the same step), and the conversations apart (`conversation.rs`). A new conversation is
//! named (its id made) by its first record and created in the same commit as that record: the
//! conversations named but not yet written keep their row here until a commit carries it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::conversation::{self, ConversationBook};
use super::now_ms;
use crate::CoreError;
use crate::log::LogSink;
use crate::sessions::{
    Record, SessionError, SessionMeta, SessionStore, SessionTarget, SessionWriter,
};
use crate::sync::LockOrRecover;
use crate::village::Language;

/// The current conversation, the one last named by a `session:` log line, and the agents that
/// re-read their history of it from the store before their next turn (a summary was stored:
/// `summary.rs`).
#[derive(Default)]
struct Current {
    id: Option<String>,
    named: Option<String>,
    reload: HashSet<String>,
}

/// The stored conversations, the current one, and those apart.
pub(super) struct Recording {
    sessions: Option<Arc<SessionStore>>,
    writer: Option<SessionWriter>,
    current: Mutex<Current>,
    /// Conversations named but not yet written, with the row their next append creates (an
    /// append fails as a whole, so the row stays until one succeeds).
    unwritten: Mutex<HashMap<String, SessionMeta>>,
    conversations: Arc<ConversationBook>,
}

impl Recording {
    /// Opens `sessions.redb` under `workspace` (another process holding it is an error; any
    /// other failure is logged and nothing is saved), says which conversation continues, and
    /// starts the writer.
    pub(super) fn open(
        workspace: &std::path::Path,
        language: Language,
        log: &dyn LogSink,
    ) -> Result<Self, CoreError> {
        let sessions = match SessionStore::open(&workspace.join("sessions.redb")) {
            Ok(s) => Some(s),
            Err(e @ SessionError::Locked(_)) => return Err(e.into()),
            Err(e) => {
                log.line(&format!(
                    "session store unavailable: code={} (conversations are not saved)",
                    e.code()
                ));
                None
            }
        };
        let latest = sessions
            .as_ref()
            .and_then(|s| s.list().ok())
            .and_then(|l| l.into_iter().next());
        log.line(&opened_session_line(language, latest.as_ref()));
        let id = latest.map(|(id, _)| id);
        let sessions = sessions.map(Arc::new);
        let writer = match &sessions {
            Some(store) => match SessionWriter::spawn(Arc::clone(store)) {
                Ok(w) => Some(w),
                Err(e) => {
                    log.line(&format!(
                        "session writer unavailable: {} (conversations are not saved)",
                        e.kind()
                    ));
                    None
                }
            },
            None => None,
        };
        Ok(Self {
            sessions,
            writer,
            current: Mutex::new(Current {
                named: id.clone(),
                id,
                reload: HashSet::new(),
            }),
            unwritten: Mutex::default(),
            conversations: Arc::default(),
        })
    }

    /// The conversation store, when open.
    pub(super) fn store(&self) -> Option<&Arc<SessionStore>> {
        self.sessions.as_ref()
    }

    /// The current conversation.
    pub(super) fn current(&self) -> Option<String> {
        self.current.lock_or_recover().id.clone()
    }

    /// Makes `session` current (`None`: a new one, created on its first record).
    pub(super) fn set_current(&self, session: Option<String>) {
        self.current.lock_or_recover().id = session;
    }

    /// Says that `agent_id` must re-read its history of the current conversation.
    pub(super) fn reload_history(&self, agent_id: &str) {
        self.current
            .lock_or_recover()
            .reload
            .insert(agent_id.to_owned());
    }

    /// Whether `agent_id` must re-read its history (asked once: the flag is cleared).
    pub(super) fn take_reload(&self, agent_id: &str) -> bool {
        self.current.lock_or_recover().reload.remove(agent_id)
    }

    /// The conversations apart.
    pub(super) fn conversations(&self) -> &Arc<ConversationBook> {
        &self.conversations
    }

    /// Appends to the current conversation (creating one if none is open, in the same commit),
    /// in one commit shared with whatever else is waiting. A store failure is logged and the
    /// turn goes on: losing a record must not lose the answer. A turn in a conversation apart
    /// (see `conversation.rs`, set around the turn by the agent's task) records into that
    /// conversation's own. `None`: nothing names a stored conversation (no store, no records,
    /// or the commit that was to create it failed).
    pub(super) async fn record(&self, records: Vec<Record>, log: &dyn LogSink) -> Option<String> {
        let writer = self.writer.as_ref()?;
        let first = records.first()?;
        let now = now_ms();
        let created = std::cell::Cell::new(false);
        let create = || {
            created.set(true);
            let id = uuid::Uuid::new_v4().to_string();
            let meta = SessionMeta::fresh(&title_of(first), now);
            self.unwritten.lock_or_recover().insert(id.clone(), meta);
            Some(id)
        };
        // The locks end with this statement, before the append is awaited.
        let id = match conversation::current() {
            Some(slot) => {
                let id = slot.session(create)?;
                if created.get() {
                    log.line(&format!("session: {id} new apart"));
                }
                id
            }
            None => self.current_or_new(create, &created, log)?,
        };
        let target = match self.unwritten.lock_or_recover().get(&id) {
            Some(meta) => SessionTarget::New {
                id: id.clone(),
                meta: meta.clone(),
            },
            None => SessionTarget::Existing(id.clone()),
        };
        let kinds: Vec<&str> = records.iter().map(Record::kind).collect();
        let kinds = kinds.join(",");
        let creates = matches!(target, SessionTarget::New { .. });
        match writer.append(target, records, now).await {
            Ok(_) if creates => {
                self.unwritten.lock_or_recover().remove(&id);
            }
            Ok(_) => {}
            Err(e) => {
                log.line(&format!(
                    "session append failed: session={id} kinds={kinds} code={}",
                    e.code()
                ));
                if creates {
                    return None;
                }
            }
        }
        Some(id)
    }

    /// The current conversation, made by `create` when there is none, and its `session:` log
    /// line: it names the stored conversation turns are recorded under, when it is created
    /// (`new`) or first recorded into by this process.
    fn current_or_new(
        &self,
        create: impl FnOnce() -> Option<String>,
        created: &std::cell::Cell<bool>,
        log: &dyn LogSink,
    ) -> Option<String> {
        let mut current = self.current.lock_or_recover();
        if current.id.is_none() {
            current.id = create();
        }
        let id = current.id.clone()?;
        if current.named.as_deref() != Some(id.as_str()) {
            current.named = Some(id.clone());
            log.line(&format!(
                "session: {id}{}",
                if created.get() { " new" } else { "" }
            ));
        }
        Some(id)
    }
}

/// The startup block's `session:` line: the conversation the village continues (the most
/// recent one), with its record count, or that the first record will create one
/// (`docs/formats/log-lines.md`).
fn opened_session_line(language: Language, latest: Option<&(String, SessionMeta)>) -> String {
    match latest {
        Some((id, meta)) => language.pick(
            format!(
                "session: {id} を開きました（記録 {} 件）",
                meta.record_count
            ),
            format!("session: {id} opened ({} records)", meta.record_count),
        ),
        None => language.pick(
            "session: なし（最初の記録で作ります）",
            "session: none (the first record creates one)",
        ),
    }
}

fn title_of(record: &Record) -> String {
    match record {
        Record::Message(m) => m.content.chars().take(30).collect(),
        _ => "conversation".into(),
    }
}
