//! Conversations apart from the current one: each door MCP session opens one. A request in it is
//! still a new causal root, but every agent that takes part keeps a prompt history of its own for
//! that conversation, and its records go to a `sessions.redb` conversation of its own. Closing
//! the handle forgets the histories (the records stay).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::agent::Exchange;

/// Identifies an open conversation inside one orchestrator.
pub(crate) type ConversationKey = u64;

tokio::task_local! {
    /// The conversation of the turn this task runs (set by the agent's task around each turn),
    /// so that the records it writes land in that conversation.
    pub(crate) static TURN_CONVERSATION: Option<ConversationKey>;
}

/// The conversation of the running turn, if it is one apart.
pub(crate) fn current() -> Option<ConversationKey> {
    TURN_CONVERSATION.try_with(|c| *c).ok().flatten()
}

#[derive(Debug, Default)]
struct Entry {
    /// The `sessions.redb` conversation, created with its first record.
    session: Option<String>,
    /// Each agent's recent exchanges in this conversation.
    histories: HashMap<String, VecDeque<Exchange>>,
}

/// The open conversations of one orchestrator.
#[derive(Debug, Default)]
pub(crate) struct ConversationBook {
    next: AtomicU64,
    open: Mutex<HashMap<ConversationKey, Entry>>,
}

impl ConversationBook {
    fn open(&self) -> ConversationKey {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut open) = self.open.lock() {
            open.insert(key, Entry::default());
        }
        key
    }

    fn close(&self, key: ConversationKey) {
        if let Ok(mut open) = self.open.lock() {
            open.remove(&key);
        }
    }

    /// Takes an agent's history in `key` out for a turn (empty the first time).
    pub fn take_history(&self, key: ConversationKey, agent_id: &str) -> VecDeque<Exchange> {
        self.open
            .lock()
            .ok()
            .and_then(|mut open| open.get_mut(&key)?.histories.remove(agent_id))
            .unwrap_or_default()
    }

    /// Puts it back after the turn; dropped when the conversation has closed meanwhile.
    pub fn put_history(&self, key: ConversationKey, agent_id: &str, history: VecDeque<Exchange>) {
        if let Ok(mut open) = self.open.lock()
            && let Some(entry) = open.get_mut(&key)
        {
            entry.histories.insert(agent_id.to_owned(), history);
        }
    }

    /// The stored conversation of `key`, created by `create` on first use (and not kept when
    /// the conversation has closed meanwhile).
    pub fn session(
        &self,
        key: ConversationKey,
        create: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        let mut open = self.open.lock().ok()?;
        let Some(entry) = open.get_mut(&key) else {
            drop(open);
            return create();
        };
        if entry.session.is_none() {
            entry.session = create();
        }
        entry.session.clone()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.open.lock().map(|o| o.len()).unwrap_or(0)
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
    fn the_stored_conversation_is_created_once() {
        let book = Arc::new(ConversationBook::default());
        let a = Conversation::open(&book);
        assert_eq!(
            book.session(a.key(), || Some("s1".into())),
            Some("s1".into())
        );
        assert_eq!(
            book.session(a.key(), || Some("s2".into())),
            Some("s1".into())
        );
        assert_eq!(current(), None, "outside a turn: the current conversation");
    }
}
