//! The door's check of a POST body before rmcp reads it: at most [`MAX_BODY_BYTES`] (413
//! otherwise), and, when it says it is JSON, JSON that parses — malformed JSON is answered
//! 400 with the JSON-RPC parse error (−32700), where rmcp would answer 415 as if the media
//! type were wrong.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The largest request body the door reads (an `ask_fuseforks` message is far smaller).
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// JSON-RPC's code for a body that does not parse.
const PARSE_ERROR: i64 = -32_700;
/// JSON-RPC's code for a request that is not one.
const INVALID_REQUEST: i64 = -32_600;
/// The codes (docs/codes.md).
const DOOR_BODY_TOO_LARGE: &str = "DOOR_BODY_TOO_LARGE";
const DOOR_PARSE_ERROR: &str = "DOOR_PARSE_ERROR";

/// The request, its body read and checked; or the answer that refuses it.
pub(crate) async fn checked(request: Request) -> Result<Request, Response> {
    if request.method() != Method::POST {
        return Ok(request);
    }
    let says_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("application/json"));
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return Err(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            &format!("[{DOOR_BODY_TOO_LARGE}] a request body is at most {MAX_BODY_BYTES} bytes"),
        ));
    };
    if says_json && serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err() {
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            &format!("[{DOOR_PARSE_ERROR}] the body is not valid JSON"),
        ));
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// A JSON-RPC error answer with a null id (the request's could not be read).
#[derive(serde::Serialize)]
struct RpcRefusal<'a> {
    jsonrpc: &'static str,
    id: Option<u64>,
    error: RpcError<'a>,
}

/// The `error` member of [`RpcRefusal`].
#[derive(serde::Serialize)]
struct RpcError<'a> {
    code: i64,
    message: &'a str,
}

/// A JSON-RPC error without id, with `status`.
fn refusal(status: StatusCode, code: i64, message: &str) -> Response {
    let body = RpcRefusal {
        jsonrpc: "2.0",
        id: None,
        error: RpcError { code, message },
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string(&body).unwrap_or_default(),
    )
        .into_response()
}
