//! What the orchestrator was given to reach the outside, fixed for its life (no lock): the
//! village log and the event bus, the model client and its keys, the trash, where MCP
//! children's stderr and trace spans go.

use std::sync::Arc;

use super::SecretLookup;
use crate::events::{CoreEvent, EventBus};
use crate::llm::{ApiKey, LlmClient};
use crate::log::LogSink;
use crate::mcp::ChildOutput;
use crate::tools::TrashTarget;
use crate::trace::Tracer;

/// The orchestrator's outlets.
pub(super) struct Outlets {
    pub events: EventBus,
    pub log: Arc<dyn LogSink>,
    pub llm: LlmClient,
    pub secrets: SecretLookup,
    pub trash: TrashTarget,
    pub mcp_child_output: Option<Arc<dyn ChildOutput>>,
    pub tracer: Option<Arc<dyn Tracer>>,
}

impl Outlets {
    /// A template's API key.
    pub(super) fn secret(&self, template_id: &str) -> Option<ApiKey> {
        (self.secrets)(template_id)
    }

    /// The key lookup itself (for the MCP headers' `${secret:NAME}`).
    pub(super) fn secrets(&self) -> SecretLookup {
        Arc::clone(&self.secrets)
    }

    /// Writes a log line and sends the event that says the same, in that order.
    pub(super) fn emit(&self, line: &str, event: CoreEvent) {
        self.log.line(line);
        self.events.emit(event);
    }
}
