//! The sections an abort may not cut (docs/threat-model.md, "Sections an abort waits for"): a
//! side effect already under way — a file write, a `run` child, an MCP call already sent — and
//! the record of a paid model call. Code inside one holds a [`Section`]; an abort waits (with a
//! bound) until none is held, a halt does not wait. Each kind has its own bound: once an abort
//! has cut, a section still running after [`SectionKind::grace`] is cut like any other call.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// What a section protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    /// A `file`, `sd`/`yq` apply, `remember` or `blackboard` write (quick, local).
    FileWrite,
    /// A `run` child already started.
    RunChild,
    /// An MCP tool call already sent to its server.
    McpCall,
    /// A turn that paid for a model call, until its record is on disk.
    PaidCallRecord,
}

/// How long a `run` child may go on after an abort before it is killed.
pub const RUN_ABORT_GRACE: Duration = Duration::from_secs(10);
/// How long an MCP call already sent is awaited after an abort (the call's timeout then).
pub const MCP_ABORT_GRACE: Duration = Duration::from_secs(30);
/// How long a file write may go on after an abort.
pub(super) const FILE_ABORT_GRACE: Duration = Duration::from_secs(10);
/// The most an abort waits for every section to end: the longest grace and a margin for the
/// records written after it.
pub const ABORT_WAIT_BOUND: Duration = Duration::from_secs(35);

impl SectionKind {
    /// How long the section may go on after an abort's cut (the paid call's record is not cut
    /// at all: it is bounded by the abort's own wait).
    pub fn grace(self) -> Duration {
        match self {
            Self::FileWrite => FILE_ABORT_GRACE,
            Self::RunChild => RUN_ABORT_GRACE,
            Self::McpCall => MCP_ABORT_GRACE,
            Self::PaidCallRecord => ABORT_WAIT_BOUND,
        }
    }

    /// The kind of a side-effecting tool call.
    pub fn of_tool(tool: &str, is_mcp: bool) -> Self {
        match (is_mcp, tool) {
            (true, _) => Self::McpCall,
            (false, "run") => Self::RunChild,
            _ => Self::FileWrite,
        }
    }
}

/// The count of sections held now, shared by every turn of a village.
#[derive(Debug, Clone)]
pub struct Sections {
    held: Arc<watch::Sender<usize>>,
}

impl Default for Sections {
    fn default() -> Self {
        Self {
            held: Arc::new(watch::channel(0).0),
        }
    }
}

impl Sections {
    /// Enters a section; it ends when the guard drops.
    pub fn enter(&self, kind: SectionKind) -> Section {
        self.held.send_modify(|n| *n += 1);
        Section {
            held: Arc::clone(&self.held),
            kind,
        }
    }

    /// How many sections are held now.
    pub fn held(&self) -> usize {
        *self.held.borrow()
    }

    /// Waits until no section is held, at most `bound`; `Err(n)`: `n` were still held.
    pub async fn drained(&self, bound: Duration) -> Result<(), usize> {
        let mut rx = self.held.subscribe();
        match tokio::time::timeout(bound, rx.wait_for(|n| *n == 0)).await {
            Ok(_) => Ok(()),
            Err(_) => Err(self.held()),
        }
    }
}

/// Held while inside a section.
#[derive(Debug)]
pub struct Section {
    held: Arc<watch::Sender<usize>>,
    kind: SectionKind,
}

impl Section {
    /// What the section protects.
    pub fn kind(&self) -> SectionKind {
        self.kind
    }
}

impl Drop for Section {
    fn drop(&mut self) {
        self.held.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drained_waits_for_the_last_guard_and_is_bounded() {
        let sections = Sections::default();
        assert_eq!(sections.drained(Duration::ZERO).await, Ok(()));
        let a = sections.enter(SectionKind::RunChild);
        let b = sections.enter(SectionKind::McpCall);
        assert_eq!(sections.held(), 2);
        assert_eq!(
            sections.drained(Duration::from_millis(20)).await,
            Err(2),
            "bounded"
        );
        drop(a);
        let waiter = tokio::spawn({
            let sections = sections.clone();
            async move { sections.drained(Duration::from_secs(10)).await }
        });
        drop(b);
        assert_eq!(waiter.await.unwrap(), Ok(()));
    }
}
