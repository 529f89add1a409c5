//! The GUI's wire contract: one `Serialize` type per route answer, per command answer and per
//! event the server sends, named as the page reads them (docs/gui-api.md). Handlers build these
//! values and nothing else; [`Reply`] writes one, and a value that does not serialise is a
//! coded `500 GUI_ANSWER_UNSERIALIZABLE`, never a `null` the page would take for an answer.

mod cast;
mod commands;
mod editing;
mod views;

#[cfg(test)]
mod docs_check;
#[cfg(test)]
mod js_check;
#[cfg(test)]
mod js_lex;
#[cfg(test)]
mod samples;
#[cfg(test)]
mod shape;

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

pub use cast::{CastDone, CastJudge, CastView, NamedItem, Servant, TryJudge, TryTokens};
pub use commands::{
    CommandAnswer, Done, DoorSaved, Forked, InGrace, KeyStored, PendingLeft, Started, SwitchMoved,
};
pub use editing::{
    AgentCost, AssistAnswer, AssistReplyView, AssistSlice, AssistSliceRow, AssistTable,
    AssistUsage, Checked, DayTokens, FileEntry, FileList, FileText, NextDue, OwnedFile, SecretRef,
    SecretStored, Stats, StatsRowView, StatsTotalsView, VillageFile, Written,
};
pub use views::{
    AgentStatsView, Approvals, Chat, Conversation, ConversationList, DoorLink, DoorProblem,
    DoorSettingsRow, DoorView, ExportLine, LastTool, LogTail, MapEdge, MapNode, MapView, Message,
    PendingRun, ProblemWords, ProposedWave, Questions, SessionRow, SettingsView, TemplateRow,
    Village, VillageAgent, VillageGroup, WaveTask,
};

/// The stable code of an answer that could not be written as JSON.
pub const UNSERIALIZABLE: &str = "GUI_ANSWER_UNSERIALIZABLE";

/// A route's answer: `T` as JSON, or a coded 500 when it does not serialise.
#[derive(Debug)]
pub struct Reply<T>(pub T);

impl<T: Serialize> IntoResponse for Reply<T> {
    fn into_response(self) -> Response {
        match serde_json::to_vec(&self.0) {
            Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
            Err(e) => unserializable(&e).into_response(),
        }
    }
}

/// The refusal of an answer that does not serialise (serde's words name the type's problem,
/// never a value).
pub fn unserializable(e: &serde_json::Error) -> super::ApiError {
    super::ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        UNSERIALIZABLE,
        format!(
            "the answer could not be written as JSON ({})",
            e.classify_kind()
        ),
    )
    .with_fix("report it: the server's answer type cannot be sent; reloading will not help")
}

/// Serde's category of a JSON error, in words.
trait ClassifyKind {
    fn classify_kind(&self) -> &'static str;
}

impl ClassifyKind for serde_json::Error {
    fn classify_kind(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "an I/O error",
            serde_json::error::Category::Syntax => "a syntax error",
            serde_json::error::Category::Data => "a value JSON cannot hold",
            serde_json::error::Category::Eof => "an early end",
        }
    }
}

/// The body of the event stream's `lagged` event: empty (the page reloads its views).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Lagged {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A value serde refuses (as a map with a non-string key would be).
    struct Unwritable;

    impl Serialize for Unwritable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("refused"))
        }
    }

    async fn body(response: Response) -> serde_json::Value {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn an_answer_that_does_not_serialise_is_a_coded_500_not_a_null() {
        let response = Reply(Unwritable).into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = body(response).await;
        assert_eq!(body["error"]["code"], UNSERIALIZABLE, "{body}");
        assert!(body["error"]["fix"].is_string(), "{body}");
    }

    #[tokio::test]
    async fn an_answer_is_its_json_with_the_json_content_type() {
        let response = Reply(LogTail {
            lines: vec!["a".into()],
        })
        .into_response();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let expected: serde_json::Value = serde_json::from_str(r#"{"lines": ["a"]}"#).unwrap();
        assert_eq!(body(response).await, expected);
    }
}
