//! The shape a history must have before anything is sent: at most
//! [`super::MAX_HISTORY_MESSAGES`] messages of the user, the assistant or tools (no system
//! text: the core writes that), every tool result answering a call of the assistant message
//! just before it, and every call answered.

use super::{AssistError, MAX_HISTORY_MESSAGES};
use crate::llm::{ChatMessage, ContentBlock, Role};

const FIX: &str = "send back the history exactly as the replies' appended gave it";

/// Checks `history`; the error names the message and what is wrong.
pub(super) fn check(history: &[ChatMessage]) -> Result<(), AssistError> {
    if history.len() > MAX_HISTORY_MESSAGES {
        return Err(AssistError::invalid(
            "history",
            format!(
                "{} messages, over the limit of {MAX_HISTORY_MESSAGES}",
                history.len()
            ),
            "start a new assist conversation",
        ));
    }
    let mut open: Vec<&str> = Vec::new(); // call ids of the last assistant message not answered
    for (i, message) in history.iter().enumerate() {
        let bad = |problem: &str| {
            AssistError::invalid("history", format!("message {}: {problem}", i + 1), FIX)
        };
        match message.role {
            Role::System => return Err(bad("a system message (the core writes the system text)")),
            Role::Assistant => {
                if !open.is_empty() {
                    return Err(bad("a call before it has no result"));
                }
                open = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        ContentBlock::ToolUse(c) => Some(c.id.as_str()),
                        _ => None,
                    })
                    .collect();
            }
            Role::Tool | Role::User => {
                for block in &message.content {
                    if let ContentBlock::ToolResult(r) = block {
                        let Some(at) = open.iter().position(|id| *id == r.call_id) else {
                            return Err(bad("a tool result answers no call just before it"));
                        };
                        open.remove(at);
                    }
                }
                let results_only = message
                    .content
                    .iter()
                    .all(|b| matches!(b, ContentBlock::ToolResult(_)));
                if !open.is_empty() && !results_only {
                    return Err(bad("a call before it has no result"));
                }
            }
        }
    }
    if !open.is_empty() {
        return Err(AssistError::invalid(
            "history",
            "its last calls have no results",
            FIX,
        ));
    }
    Ok(())
}
