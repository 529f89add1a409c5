//! The API's error answer: an HTTP status and `{"error": {code, message, fix}}`, made from any
//! coded error of the core or the host (words chosen here, at the edge; never a secret value).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use fuseforks_core::Coded;
use serde_json::json;

/// An API refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable code.
    pub code: String,
    /// What happened.
    pub message: String,
    /// What to change.
    pub fix: Option<String>,
}

impl ApiError {
    /// A refusal with a status, a code and a message.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            code: code.to_owned(),
            message: message.into(),
            fix: None,
        }
    }

    /// The same refusal with what to change.
    #[must_use]
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// 400 `GUI_BAD_REQUEST`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "GUI_BAD_REQUEST", message)
    }

    /// 404 `GUI_NOT_FOUND`.
    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "GUI_NOT_FOUND", format!("no {what}"))
    }

    /// A coded error of the core or the host, with the status its code calls for.
    pub fn coded(e: &dyn Coded) -> Self {
        let code = e.code();
        Self {
            status: status_of(code),
            code: code.to_owned(),
            message: e.to_string(),
            fix: e.fix(),
        }
    }
}

/// The status of a code: not found, a state that forbids it, a value a file refuses, or 500.
fn status_of(code: &str) -> StatusCode {
    match code {
        "AGENT_NOT_FOUND"
        | "RUN_PENDING_NOT_FOUND"
        | "SESSION_NOT_FOUND"
        | "TEMPLATE_NOT_FOUND" => StatusCode::NOT_FOUND,
        "NOT_RUNNING"
        | "PLAN_WAVE_NOT_PENDING"
        | "SESSION_IS_CURRENT"
        | "EXTERNAL_RECEPTION_UNSET"
        | "VILLAGE_HALTED"
        | "AGENT_RUNNING"
        | "TEMPLATE_IN_USE" => StatusCode::CONFLICT,
        c if c.starts_with("INVALID_")
            || c.starts_with("VILLAGE_")
            || c.starts_with("SECRET_")
            || c == "RUN_PENDING_UNREPRESENTABLE"
            || c == "PLAN_DISPATCH_INVALID"
            || c == "MODEL_TEMPLATE_MISSING"
            || c == "DUPLICATE_AGENT"
            || c.starts_with("SESSION_FORK_") =>
        {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(fix) = self.fix {
            error["fix"] = json!(fix);
        }
        (self.status, axum::Json(json!({ "error": error }))).into_response()
    }
}

impl<E: Coded> From<E> for ApiError {
    fn from(e: E) -> Self {
        Self::coded(&e)
    }
}
