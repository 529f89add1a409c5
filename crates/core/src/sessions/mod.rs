//! Conversations in `sessions.redb` (reference §3.8): a sessions table and a records table,
//! atomic appends, history restore, fork, JSONL export, delete; `intent` records before paid
//! calls.

pub mod records;
pub mod store;
pub mod writer;

pub use records::{
    AgentMessage, Endpoint, IntentRecord, Record, SessionMeta, TurnRecord, TurnStop,
};
pub use store::{SessionError, SessionStore, StoredRecord};
pub use writer::SessionWriter;
