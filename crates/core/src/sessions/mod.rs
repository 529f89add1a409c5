//! Conversations in `sessions.redb`: a sessions table and a records table,
//! atomic appends, history restore, fork, JSONL export, delete; `intent` records before paid
//! calls.
//!
//! # Parts
//!
//! `sessions/` — conversations in `sessions.redb` (redb): `records.rs` (the record kinds, in the
//! original's spellings, plus `intent`: a paid model call about to be sent, committed before it and
//! completed by the `turn` record of the same agent's turn that sent it — one that started at or
//! before the intent; a turn marked `usageUnknown` (a call cut at the close, or refused after it
//! was sent) leaves its last intent open; a turn of an agent whose `SKILL.md` front matter asks
//! anything carries `skill` — its terms and `roundCap` —, ours, absent otherwise; and `question`,
//! ours too: a turn that asked the person (`ask_user`) and ended waiting — the question and what
//! the turn needs to go on in another process —, open until a later `turn` record of its agent),
//! `store.rs` (atomic appends — a new conversation's row in the commit of its first records, a
//! `SessionTarget::New` —, history, fork, export, delete; unknown kinds skipped with one
//! warning; `SESSION_STORE_LOCKED` when another process holds the file) and `fork_point.rs` (a fork
//! only before a request, never inside an exchange: `SESSION_FORK_SPLITS_EXCHANGE`,
//! `SESSION_FORK_PAST_END`; `stats` skips a fork's copied records, counted where they were paid).

mod fork_point;
pub(crate) mod records;
pub(crate) mod store;
pub(crate) mod writer;

pub use records::{
    AgentMessage, AssistRecord, Endpoint, IntentRecord, QuestionRecord, Record, SessionMeta,
    TurnRecord, TurnSkill, TurnStop,
};
pub use store::{SessionError, SessionStore, SessionTarget, StoreOp, StoredRecord};
pub use writer::SessionWriter;
