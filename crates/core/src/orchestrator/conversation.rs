//! Conversations apart from the current one: each door MCP session opens one. A request in it is
//! still a new causal root, but every agent that takes part keeps a prompt history of its own for
//! that conversation, and its records go to a `sessions.redb` conversation of its own. Closing
//! the handle forgets the histories (the records stay).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::agent::Exchange;
use crate::sync::LockOrRecover;

/// Identifies an open conversation inside one orchestrator.
pub(crate) type ConversationKey = u64;

/// The stored conversation of a conversation apart, created with its first record. Shared by
/// the book's entry and every turn running in it, so a turn that outlives the conversation's
/// close still records into the same stored conversation.
#[derive(Debug, Default)]
pub(crate) struct SessionSlot(Mutex<Option<String>>);

impl SessionSlot {
    /// The stored conversation, created by `create` on first use. Only this conversation's
    /// slot is held while `create` commits: other conversations and the book are not blocked.
    pub(crate) fn session(&self, create: impl FnOnce() -> Option<String>) -> Option<String> {
        let mut session = self.0.lock_or_recover();
        if session.is_none() {
            *session = create();
        }
        session.clone()
    }
}

tokio::task_local! {
    /// The conversation of the turn this task runs (set by the agent's task around each turn),
    /// so that the records it writes land in that conversation.
    pub(crate) static TURN_CONVERSATION: Option<Arc<SessionSlot>>;
}

/// The stored conversation slot of the running turn, if it is in a conversation apart.
pub(crate) fn current() -> Option<Arc<SessionSlot>> {
    TURN_CONVERSATION.try_with(Clone::clone).ok().flatten()
}

#[derive(Debug, Default)]
struct Entry {
    /// The `sessions.redb` conversation, created with its first record.
    session: Arc<SessionSlot>,
    /// Each agent's recent exchanges in this conversation.
    histories: HashMap<String, VecDeque<Exchange>>,
    /// Turns running in this conversation.
    turns: usize,
    /// Closed while turns still ran: kept (without histories) until the last one ends.
    closed: bool,
}

/// The open conversations of one orchestrator.
#[derive(Debug, Default)]
pub(crate) struct ConversationBook {
    next: AtomicU64,
    open: Mutex<HashMap<ConversationKey, Entry>>,
}

/// A turn running in a conversation apart (see [`ConversationBook::enter`]); dropping it says
/// the turn ended.
pub(crate) struct TurnIn {
    book: Arc<ConversationBook>,
    key: ConversationKey,
    /// Where the turn's records go.
    pub session: Arc<SessionSlot>,
}

impl Drop for TurnIn {
    fn drop(&mut self) {
        let mut open = self.book.open.lock_or_recover();
        if let Some(entry) = open.get_mut(&self.key) {
            entry.turns = entry.turns.saturating_sub(1);
            if entry.closed && entry.turns == 0 {
                open.remove(&self.key);
            }
        }
    }
}

impl ConversationBook {
    fn open(&self) -> ConversationKey {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.open.lock_or_recover().insert(key, Entry::default());
        key
    }

    /// Forgets the histories; the entry itself stays while turns still run in it, so that they
    /// keep recording into its stored conversation.
    fn close(&self, key: ConversationKey) {
        let mut open = self.open.lock_or_recover();
        if let Some(entry) = open.get_mut(&key) {
            if entry.turns == 0 {
                open.remove(&key);
            } else {
                entry.closed = true;
                entry.histories.clear();
            }
        }
    }

    /// A turn starts in `key`: its records go to the conversation's stored one, even if the
    /// conversation closes before the turn ends. A conversation already closed and gone gets
    /// one stored conversation for the turn (never one per record).
    pub(crate) fn enter(self: &Arc<Self>, key: ConversationKey) -> TurnIn {
        let session = match self.open.lock_or_recover().get_mut(&key) {
            Some(entry) => {
                entry.turns += 1;
                Arc::clone(&entry.session)
            }
            None => Arc::default(),
        };
        TurnIn {
            book: Arc::clone(self),
            key,
            session,
        }
    }

    /// Takes an agent's history in `key` out for a turn (empty the first time).
    pub(crate) fn take_history(&self, key: ConversationKey, agent_id: &str) -> VecDeque<Exchange> {
        self.open
            .lock_or_recover()
            .get_mut(&key)
            .and_then(|entry| entry.histories.remove(agent_id))
            .unwrap_or_default()
    }

    /// Puts it back after the turn; dropped when the conversation has closed meanwhile.
    pub(crate) fn put_history(
        &self,
        key: ConversationKey,
        agent_id: &str,
        history: VecDeque<Exchange>,
    ) {
        let mut open = self.open.lock_or_recover();
        if let Some(entry) = open.get_mut(&key).filter(|e| !e.closed) {
            entry.histories.insert(agent_id.to_owned(), history);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.open.lock_or_recover().len()
    }
}

/// An open conversation (see the module doc). Dropping it closes the conversation.
#[derive(Debug)]
pub struct Conversation {
    key: ConversationKey,
    book: Arc<ConversationBook>,
}

impl Conversation {
    pub(crate) fn open(book: &Arc<ConversationBook>) -> Self {
        Self {
            key: book.open(),
            book: Arc::clone(book),
        }
    }

    pub(crate) fn key(&self) -> ConversationKey {
        self.key
    }
}

impl Drop for Conversation {
    fn drop(&mut self) {
        self.book.close(self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(text: &str) -> Exchange {
        Exchange {
            sent: text.into(),
            replied: text.into(),
        }
    }

    #[test]
    fn histories_are_kept_per_conversation_and_per_agent_and_forgotten_on_close() {
        let book = Arc::new(ConversationBook::default());
        let (a, b) = (Conversation::open(&book), Conversation::open(&book));
        assert_ne!(a.key(), b.key());
        book.put_history(a.key(), "rec", VecDeque::from([exchange("a1")]));
        assert!(book.take_history(b.key(), "rec").is_empty());
        assert!(book.take_history(a.key(), "other").is_empty());
        assert_eq!(
            book.take_history(a.key(), "rec"),
            VecDeque::from([exchange("a1")])
        );
        let key = a.key();
        drop(a);
        book.put_history(key, "rec", VecDeque::from([exchange("late")]));
        assert!(
            book.take_history(key, "rec").is_empty(),
            "closed: nothing kept"
        );
        assert_eq!(book.len(), 1);
    }

    #[test]
    fn the_stored_conversation_is_created_once_and_outside_the_books_lock() {
        let book = Arc::new(ConversationBook::default());
        let a = Conversation::open(&book);
        let turn = book.enter(a.key());
        let create = || {
            assert!(
                book.open.try_lock().is_ok(),
                "created under the book's lock"
            );
            Some("s1".to_owned())
        };
        assert_eq!(turn.session.session(create), Some("s1".into()));
        assert_eq!(
            book.enter(a.key()).session.session(|| Some("s2".into())),
            Some("s1".into())
        );
        assert!(
            current().is_none(),
            "outside a turn: the current conversation"
        );
    }

    #[test]
    fn a_turn_that_outlives_its_conversation_keeps_its_stored_one() {
        let book = Arc::new(ConversationBook::default());
        let a = Conversation::open(&book);
        let key = a.key();
        let turn = book.enter(key);
        assert_eq!(
            turn.session.session(|| Some("s1".into())),
            Some("s1".into())
        );
        drop(a);
        book.put_history(key, "rec", VecDeque::from([exchange("late")]));
        assert!(
            book.take_history(key, "rec").is_empty(),
            "closed: no history"
        );
        let peer = book.enter(key);
        assert_eq!(
            peer.session.session(|| Some("junk".into())),
            Some("s1".into()),
            "a turn it caused meanwhile records there too"
        );
        assert_eq!(
            turn.session.session(|| Some("junk".into())),
            Some("s1".into())
        );
        drop((turn, peer));
        assert_eq!(book.len(), 0, "gone with its last turn");
        let late = book.enter(key);
        assert_eq!(
            late.session.session(|| Some("s2".into())),
            Some("s2".into())
        );
        assert_eq!(
            late.session.session(|| Some("s3".into())),
            Some("s2".into()),
            "one stored conversation per late turn, not per record"
        );
    }
}
