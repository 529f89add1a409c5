//! The GUI's static files, embedded at build time (`build.rs` over `gui/`), served by path with
//! their content type; `/` is `index.html`. Nothing is read from disk at run time.

use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

include!(concat!(env!("OUT_DIR"), "/gui_assets.rs"));

/// The file at `path`, if the GUI has one.
pub(super) fn find(path: &str) -> Option<(&'static str, &'static [u8])> {
    ASSETS
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|(_, kind, bytes)| (*kind, *bytes))
}

fn serve(path: &str) -> Response {
    match find(path) {
        Some((kind, bytes)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, kind),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            bytes,
        )
            .into_response(),
        None => ApiError::not_found("such page").into_response(),
    }
}

/// `GET /`: the page shell.
pub(super) async fn index() -> Response {
    serve("/index.html")
}

/// Any other `GET`: a static file, or 404.
pub(super) async fn file(uri: Uri) -> Response {
    serve(uri.path())
}
