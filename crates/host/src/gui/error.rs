//! The API's error answer: an HTTP status and `{"error": {code, message, fix, field}}`, made
//! from any coded error of the core or the host (words chosen here, at the edge; never a secret
//! value). `field` is the JSON path of the refused value in the request, when one is known.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use fuseforks_core::{Coded, Fix, Remedy};
use serde::Serialize;

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
    /// The JSON path of the refused value in the request (`tokenBudget`, `edit.settings.workDir`).
    pub field: Option<String>,
}

impl ApiError {
    /// A refusal with a status, a code and a message.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            code: code.to_owned(),
            message: message.into(),
            fix: None,
            field: None,
        }
    }

    /// The same refusal with what to change.
    #[must_use]
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// The same refusal, about the request's field at `path`.
    #[must_use]
    pub fn at(mut self, path: impl Into<String>) -> Self {
        self.field = Some(path.into());
        self
    }

    /// The same refusal under another code.
    #[must_use]
    pub fn coded_as(mut self, code: &str) -> Self {
        code.clone_into(&mut self.code);
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
            fix: e.fix().as_ref().map(fix_words),
            field: None,
        }
    }
}

/// A fix in the page's words: where to click for the remedy, then the fix's own words.
fn fix_words(fix: &Fix) -> String {
    let Some(remedy) = &fix.remedy else {
        return fix.change.clone();
    };
    let place = place_of(remedy);
    if fix.change.is_empty() {
        place
    } else {
        format!("{place} {}", fix.change)
    }
}

/// Where the page offers a remedy (a short phrase).
fn place_of(remedy: &Remedy) -> String {
    match remedy {
        Remedy::StoreSecret { name, .. } => format!("store the secret {name} (Settings)"),
        Remedy::ApproveProbe { schedule, .. } => {
            format!("approve the probe of schedule {schedule} (Approvals)")
        }
        Remedy::MakeReception => "make a servant the reception (Servants)".into(),
        Remedy::ValidateJudge => "open the judge's file (Files) to see every finding".into(),
        Remedy::FoundVillage => "found a village".into(),
        Remedy::RunDemo => "make a new demo village".into(),
        Remedy::Resume => "press Resume".into(),
        Remedy::ListServants => "see the ids on the Servants page".into(),
        Remedy::AddTemplate { id } => match id {
            Some(id) => format!("add the template {id} (Settings)"),
            None => "add a model template (Settings)".into(),
        },
        Remedy::RetemplateServant => "point those servants at another template (Servants)".into(),
        Remedy::CloseOtherProcess => "close the other Fuseforks using this village".into(),
        Remedy::DataDir => "the village folder".into(),
    }
}

/// The status of a code: not found, a state that forbids it, a value a file refuses, a price
/// table that did not come (502, 504), or 500.
fn status_of(code: &str) -> StatusCode {
    match code {
        "AGENT_NOT_FOUND"
        | "RUN_PENDING_NOT_FOUND"
        | "SESSION_NOT_FOUND"
        | "TEMPLATE_NOT_FOUND" => StatusCode::NOT_FOUND,
        "NOT_RUNNING"
        | "PLAN_WAVE_NOT_PENDING"
        | "QUESTION_NOT_PENDING"
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
        "PRICING_SOURCE_INSECURE" | "PRICING_SOURCE_INVALID" => StatusCode::UNPROCESSABLE_ENTITY,
        // What the person can fix in the template or its key.
        "LLM_KEY_MISSING" | "LLM_REQUEST_INVALID" | "CAPABILITY_UNSUPPORTED" => {
            StatusCode::UNPROCESSABLE_ENTITY
        }
        // The model's side failed, or answered nothing usable: not this server's fault.
        "ASSIST_EMPTY" => StatusCode::BAD_GATEWAY,
        c if c.starts_with("LLM_") => StatusCode::BAD_GATEWAY,
        "PRICING_TIMED_OUT" => StatusCode::GATEWAY_TIMEOUT,
        c if c.starts_with("PRICING_") => StatusCode::BAD_GATEWAY,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The answer's body: `{"error": {…}}`.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorFields<'a>,
}

/// An error as the page reads it (docs/gui-api.md "Errors").
#[derive(Serialize)]
struct ErrorFields<'a> {
    code: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorFields {
                code: &self.code,
                message: &self.message,
                fix: self.fix.as_deref(),
                field: self.field.as_deref(),
            },
        };
        (self.status, axum::Json(body)).into_response()
    }
}

impl<E: Coded> From<E> for ApiError {
    fn from(e: E) -> Self {
        Self::coded(&e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_failure_is_a_bad_gateway_and_a_template_problem_is_unprocessable() {
        for code in [
            "ASSIST_EMPTY",
            "LLM_HTTP",
            "LLM_DECODE",
            "LLM_STREAM_INTERRUPTED",
        ] {
            assert_eq!(status_of(code), StatusCode::BAD_GATEWAY, "{code}");
        }
        for code in [
            "LLM_KEY_MISSING",
            "CAPABILITY_UNSUPPORTED",
            "SECRET_MISSING",
        ] {
            assert_eq!(status_of(code), StatusCode::UNPROCESSABLE_ENTITY, "{code}");
        }
        assert_eq!(
            status_of("SOMETHING_NEW"),
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }
}
