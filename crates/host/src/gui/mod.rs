//! The local web GUI: an HTTP server on `127.0.0.1` in the process that holds the
//! village, serving the pages of `gui/` (embedded) and the API they use (docs/gui-api.md):
//! `guard.rs` (loopback Host, token → cookie, same Origin, security headers), `routes.rs` (the
//! route table), `views.rs` (reads), `commands.rs` (the one command type), `live.rs` (the
//! event stream and the live facts folded from it), `assets.rs` (the files), `error.rs`,
//! `contract/` (the type of every answer and event the page reads).
//!
//! # Parts
//!
//! The local web GUI (API in `docs/gui-api.md`):
//!
//! - `mod.rs`: `Gui::open` on `127.0.0.1:<port>`, `GuiState` — the orchestrator, the secret store,
//!   the paths, the live facts —, `close`
//! - `guard.rs`: middleware before every route: a loopback `Host` else 403, the launch token
//!   exchanged once for an `HttpOnly; SameSite=Strict` cookie of its own random value, the cookie
//!   on every request else 401, an `Origin` equal to `http://<Host>` on every `POST` else 403,
//!   SHA-256 digests compared in constant time; the security headers — CSP `default-src 'none';
//!   script-src 'self'; …` — on every answer
//! - `routes.rs`: **the one route table**
//! - `views.rs`: the reads: village with live facts, chat, approvals, conversations, export,
//!   settings with `hasKey` only, the log's tail read from its last 256 KiB
//! - `commands.rs`: **the one command type**, `Command`, one `match` calling the core as the CLI
//!   does: start/stop, send, interrupt, conversations, run approvals through
//!   `Orchestrator::decide_pending`, plans, the answer to a question a turn waits on
//!   (`answerQuestion`; `views.rs`' `GET /api/questions` lists them), modes, the kill switch
//!   through `control::apply`, keys into the secret store, `mcp_server.json`, limits through
//!   `Orchestrator::update_world`; file saves audited `file_save`
//! - `live.rs`: the agents' totals, last tool and typing folded from `CoreEvent`s; `GET
//!   /api/events` as Server-Sent Events ended at close
//! - `assets.rs`: the files of the workspace's `gui/`, embedded by `crates/host/build.rs`
//! - `error.rs`: `ApiError`: status + `{error: {code, message, fix[, field]}}` from any coded
//!   error, a typed body
//! - `decode.rs`: a command's JSON read with the path of a refused field: `GUI_FIELD_INVALID`
//! - `editing.rs`: the editors: the editable files read, checked and saved through the core's
//!   `EditableFile`, the `${secret:NAME}` fields of an `mcp.json`, the assistant's `assist`, and
//!   `/api/stats`
//! - `file_guard.rs`: what the editors protect: an `mcp.json`'s plain values masked on the way to
//!   the page and put back on save; a save refused over a file changed since it was opened, by the
//!   hash of its text
//! - `cast.rs` (`/api/cast`, the `cast` edits through `world_edit.rs` over the core's
//!   `orchestrator/cast.rs`, `tryJudge`)
//! - `contract/`: **the wire contract**: one `Serialize` type per read, per command's answer and
//!   per event body, by page; `Reply` writes one or answers `500 GUI_ANSWER_UNSERIALIZABLE`, never
//!   a `null`; its tests hold `docs/gui-api.md`'s shapes and the properties the pages' JavaScript
//!   reads to these types, and the tidy test forbids `json!` in the GUI server
//!
//! The page's script is ES modules, one per page (`gui/README.md` lists them): the shared state
//! in `gui/store.js` only, each read that a later one supersedes behind `gui/latest.js`; the
//! village page's modules load with it, and the pages beyond the first load come as modules of
//! their own: `gui/approvals.js`, `gui/conversations.js`, `gui/log.js`, `gui/settings.js`,
//! `gui/editors.js` (Files, Stats; with `gui/code.js`, the code editor — CodeMirror 6 from
//!   the vendored `gui/vendor/codemirror.js`, in a shadow root of its own with `gui/code.css`, set
//!   up per kind with folding, find and replace, multiple cursors and the server's problems at
//!   their place — and `gui/forms.js`, the forms over `schedules.json` and `world.json`'s templates
//!   that edit the same text) and `gui/cast.js` (Servants), imported when first opened, and
//!   `gui/question.js` (a question a turn waits on, as a chat row with its choices and an answer
//!   box), imported at the first question, with their styles in `gui/pages.css`. **Invariants: no
//!   secret value reaches a page (keys are write-only); nothing changes state without the cookie
//!   and a same-origin `POST`; the GUI binds loopback only.**

mod assets;
mod cast;
mod commands;
pub mod contract;
mod decode;
mod editing;
mod error;
mod file_guard;
mod guard;
mod live;
mod routes;
mod views;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use fuseforks_core::log::{LogSink, VillageLog};
use fuseforks_core::orchestrator::Orchestrator;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use assets::ASSETS;
pub use commands::{Command, Scope, TaskEdit, execute};
pub use error::ApiError;
pub use guard::{COOKIE, CSP, Keys, random_secret};
pub use routes::router;

use crate::boot::Host;
use crate::paths::HostPaths;
use crate::secrets::SecretStore;

/// The secret key of the GUI's token under `serve --gui-port`.
pub const GUI_TOKEN_KEY: &str = "gui_token";
/// The shortest token accepted.
pub const MIN_TOKEN_CHARS: usize = 32;
/// How long closing waits for requests in flight.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// What the GUI's handlers share.
pub struct GuiState {
    /// The village.
    pub orchestrator: Orchestrator,
    /// The secret store (keys are written, never read back to the page).
    pub secrets: Arc<dyn SecretStore>,
    /// The paths.
    pub paths: HostPaths,
    /// The village log.
    pub log: Arc<VillageLog>,
    /// The app version shown.
    pub version: String,
    /// The door's URL when it is open.
    pub door_url: Option<String>,
    /// The live facts.
    pub(crate) live: Arc<live::Live>,
    /// Cancelled when the GUI closes (ends the event streams).
    pub stop: CancellationToken,
}

impl GuiState {
    /// The state of a host's GUI.
    pub fn of(host: &Host, door_url: Option<String>) -> Arc<Self> {
        Self::new(
            host.orchestrator.clone(),
            Arc::clone(&host.secrets),
            host.paths.clone(),
            Arc::clone(&host.log),
            host.options.app_version.clone(),
            door_url,
        )
    }

    /// The state over these parts (the live facts start being folded now).
    pub fn new(
        orchestrator: Orchestrator,
        secrets: Arc<dyn SecretStore>,
        paths: HostPaths,
        log: Arc<VillageLog>,
        version: String,
        door_url: Option<String>,
    ) -> Arc<Self> {
        let stop = CancellationToken::new();
        Arc::new(Self {
            live: live::Live::spawn(&orchestrator, stop.clone()),
            orchestrator,
            secrets,
            paths,
            log,
            version,
            door_url,
            stop,
        })
    }
}

/// Why the GUI could not open.
#[derive(Debug, thiserror::Error)]
pub enum GuiError {
    /// `serve --gui-port` without the secret `gui_token`.
    #[error("the GUI has no token (secret gui_token)")]
    TokenMissing,
    /// The token is too short to stand against guessing.
    #[error("the GUI's token (secret gui_token) is shorter than {MIN_TOKEN_CHARS} characters")]
    TokenWeak,
    /// The port is taken or cannot be bound.
    #[error("cannot listen on 127.0.0.1:{port}: {reason}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// The OS's reason.
        reason: String,
    },
}

impl fuseforks_core::Coded for GuiError {
    fn code(&self) -> &'static str {
        match self {
            Self::TokenMissing => "GUI_TOKEN_MISSING",
            Self::TokenWeak => "GUI_TOKEN_WEAK",
            Self::Bind { .. } => "GUI_BIND_FAILED",
        }
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(match self {
            Self::TokenMissing => {
                "set the secret gui_token (FUSEFORKS_SECRET_GUI_TOKEN with --secrets env)".into()
            }
            Self::TokenWeak => {
                "set gui_token to 32 or more random characters (e.g. `openssl rand -hex 32`)".into()
            }
            Self::Bind { .. } => {
                "choose another port (--port / --gui-port) or stop what holds it".into()
            }
        })
    }
}

/// An open GUI. Close it with [`Gui::close`].
pub struct Gui {
    address: SocketAddr,
    token: String,
    state: Arc<GuiState>,
    server: JoinHandle<()>,
}

impl Gui {
    /// Opens the GUI on `127.0.0.1:port` (0: a free port) with the launch token `token`
    /// (`once`: it works for one exchange, as `gui`'s random token). A token shorter than
    /// [`MIN_TOKEN_CHARS`] is refused: it could be guessed.
    pub async fn open(
        state: Arc<GuiState>,
        port: u16,
        token: &str,
        once: bool,
    ) -> Result<Self, GuiError> {
        if token.trim().is_empty() {
            return Err(GuiError::TokenMissing);
        }
        if token.chars().count() < MIN_TOKEN_CHARS {
            return Err(GuiError::TokenWeak);
        }
        let bind = |e: std::io::Error| GuiError::Bind {
            port,
            reason: e.kind().to_string(),
        };
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .await
            .map_err(bind)?;
        let address = listener.local_addr().map_err(bind)?;
        let keys = guard::Keys::new(token, address.port(), once);
        let app = router(Arc::clone(&state), Arc::new(keys));
        let stopping = state.stop.clone();
        let log: Arc<dyn LogSink> = state.log.clone();
        let server = tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stopping.cancelled().await })
                .await;
            if let Err(e) = served {
                log.line(&format!("gui: stopped: {}", e.kind()));
            }
        });
        state.log.line(&format!("gui: http://{address}/"));
        Ok(Self {
            address,
            token: token.to_owned(),
            state,
            server,
        })
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The URL to open: with the launch token, exchanged for a cookie on the first visit.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.address, self.token)
    }

    /// Stops accepting, ends the event streams, gives requests in flight a short grace.
    pub async fn close(self) {
        self.state.stop.cancel();
        let mut server = self.server;
        if tokio::time::timeout(CLOSE_GRACE, &mut server)
            .await
            .is_err()
        {
            server.abort();
        }
        self.state
            .log
            .line(&format!("gui: closed http://{}/", self.address));
    }
}
