//! Conversations in `sessions.redb`: a sessions table and a records table,
//! atomic appends, history restore, fork, JSONL export, delete; `intent` records before paid
//! calls.

mod fork_point;
pub(crate) mod records;
pub(crate) mod store;
pub(crate) mod writer;

pub use records::{
    AgentMessage, AssistRecord, Endpoint, IntentRecord, QuestionRecord, Record, SessionMeta,
    TurnRecord, TurnSkill, TurnStop,
};
pub use store::{SessionError, SessionStore, StoredRecord};
pub use writer::SessionWriter;
