//! What every stream assembler does first with an event's `data`: blank data and `[DONE]` (the
//! OpenAI wire's end mark, which a proxy may add to others) are nothing; anything else must be
//! JSON, or it is an error naming the event's place; and the error an answer ends with.

use serde_json::Value;

use crate::llm::error::LlmError;

/// The event as JSON (`None`: nothing to fold), counting it in `seen`; `what` names it in the
/// error (`chunk`, `event`, `line`).
pub(crate) fn parse(data: &str, seen: &mut usize, what: &str) -> Result<Option<Value>, LlmError> {
    let data = data.trim();
    if data.is_empty() || data == "[DONE]" {
        return Ok(None);
    }
    let value = serde_json::from_str(data)
        .map_err(|e| LlmError::Decode(format!("stream {what} {} is not JSON: {e}", *seen + 1)))?;
    *seen += 1;
    Ok(Some(value))
}

/// The stream ended with the provider's error (its message, never more).
pub(crate) fn ended_with(message: Option<&str>) -> LlmError {
    LlmError::Decode(format!(
        "the stream ended with an error: {}",
        message.unwrap_or("an error")
    ))
}
