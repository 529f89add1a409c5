//! The turn's durable points: what a turn records waits here until the next point — before each
//! paid call, and at the end of the turn — and is committed there, in one transaction with that
//! point's own records (`ARCHITECTURE.md`, "Durable points"). Nothing staged has been
//! acknowledged to anyone: the incoming message sat in a mailbox, not on disk, before the turn.

use crate::orchestrator::Inner;
use crate::sessions::Record;

/// Records staged for the turn's next durable point.
#[derive(Default)]
pub(super) struct Pending {
    staged: Vec<Record>,
}

impl Pending {
    /// Keeps `record` for the next point (in order, before that point's own records).
    pub(super) fn stage(&mut self, record: Record) {
        self.staged.push(record);
    }

    /// A durable point: the staged records, then `records`, in one commit (which creates the
    /// conversation when this is its first); returns the conversation's id.
    pub(super) async fn point(&mut self, inner: &Inner, records: Vec<Record>) -> Option<String> {
        let mut all = std::mem::take(&mut self.staged);
        all.extend(records);
        inner.record(all).await
    }
}
