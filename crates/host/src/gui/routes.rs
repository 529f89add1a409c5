//! The GUI's one route table: every path and method, each one line, then the layers every
//! request passes (security headers outermost, then the guard, then the body limit).

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::{get, post};

use super::guard::{self, Keys};
use super::{GuiState, assets, cast, commands, editing, live, views};

/// The largest request body read.
const MAX_BODY_BYTES: usize = 256 * 1024;

/// The router over `state`, guarded by `keys`.
pub fn router(state: Arc<GuiState>, keys: Arc<Keys>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/api/village", get(views::village))
        .route("/api/chat/{agent}", get(views::chat))
        .route("/api/approvals", get(views::approvals))
        .route("/api/questions", get(views::questions))
        .route("/api/conversations", get(views::conversations))
        .route("/api/conversations/{id}", get(views::conversation))
        .route("/api/conversations/{id}/export", get(views::export))
        .route("/api/settings", get(views::settings))
        .route("/api/log", get(views::log))
        .route("/api/tools/{agent}/{call}", get(views::tool_call))
        .route("/api/files", get(editing::files))
        .route("/api/files/{*path}", get(editing::file))
        .route("/api/stats", get(editing::stats))
        .route("/api/cast", get(cast::cast))
        .route("/api/events", get(live::events))
        .route("/api/commands", post(commands::handle))
        .fallback(get(assets::file))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(from_fn_with_state(keys, guard::admit))
        .layer(from_fn(guard::secure_headers))
        .with_state(state)
}
