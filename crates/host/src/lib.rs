//! `fuseforks-host`: a running Fuseforks process around the core — the one boot wiring
//! (`build_host`), the village lock, the secret stores (OS keyring or environment), the host's
//! side of the headless preflight, and the door (the village's MCP server), the web GUI (`gui/`).
//!
//! # Parts
//!
//! A running process around the core:
//!
//! - `boot.rs`: `build_host`, async: village present → data folder writable → lock → log (`started`, `version:`) → secret
//!   store → the audit key (`audit_key.rs`: fetched; generated and stored when a writable store has
//!   none; else the chain is unkeyed and the log says so once, after the startup block, naming
//!   `FUSEFORKS_SECRET_AUDIT_KEY`) → bootstrap (`session:`) → secret-name collision check →
//!   `attachment gc:` → demo models → the door (`mcp server:`; opened here, before any agent
//!   starts; `Host::take_door` hands it, or why it could not open, to the caller: `serve` stops,
//!   the GUI goes on without it) → `jev:`; `Host`
//! - `startup.rs`: the startup block's own lines, in the village's language:
//!   `docs/formats/log-lines.md`
//! - `lifecycle/`: what `ask`, `serve`, `gui` and `demo` do with a host, each one call: the halt
//!   marker and the preflight, `build_host`, the switches, the kill switch's channels, the start
//!   set, the request or the wait, the close with one deadline — the first stop request closes
//!   with a 30 s grace, a second ends the wait —; every line it says is a typed `Notice` to the
//!   caller's `Watcher`, every core event too under `--events jsonl`
//! - `lock.rs`: the village lock; `writable.rs`: `DATA_DIR_READ_ONLY` / `DATA_DIR_NOT_WRITABLE`,
//!   asked of the kernel (`access(2)`) before the lock, by the preflight and the boot
//! - `paths.rs`: `HostPaths`; `VILLAGE_MISSING`, whose fix says "use its parent" when `--data-dir`
//!   is a workspace
//! - `secrets.rs`: `SecretStore`, `EnvSecretStore`, `KeyringSecretStore`, the collision check
//! - `secret_store/`: which OS store `KeyringSecretStore` uses — Keychain, Credential Manager, on
//!   Linux the Secret Service over D-Bus (zbus) when a session bus answers, else our own
//!   kernel-keyutils store in the user keyring, `linux.rs`, `keyutils.rs`; every store call on a
//!   thread of its own with a time limit
//! - `preflight_view.rs`: resolve `--start` — an agent's id beats the keyword, an id named twice is
//!   refused —, gather the facts, run the core's pure preflight without the lock;
//!   `bake_required.rs`: `FUSEFORKS_REQUIRE_BAKE=1`, under which a data folder without
//!   `bake.json` is the preflight's one finding, `NOT_A_BAKE_COPY`, before anything is read
//! - `secret_names.rs`
//! - `control.rs` (the kill switch's channels into a running `ask`/`serve`: the control folder
//!   `DATA_DIR/control/` polled every 200 ms — a regular file named `pause`, `resume`, `abort` or
//!   `halt` is consumed and applied; a folder, link or unreadable file under such a name is
//!   reported once (`CONTROL_FILE_IGNORED`) and changes nothing —, and the socket
//!   `control/fuseforks.sock` (folder 0700, socket 0600, the peer's uid from `SO_PEERCRED` through
//!   tokio's `peer_cred` compared with the socket file's owner, and on Linux a peer whose parent
//!   chain reaches this process — a `run` command, an MCP server, what they started — refused
//!   unanswered, `CONTROL_PEER_REFUSED reason=own_child peer_pid=N`; each connection answered in a
//!   task of its own, so that a halt is never held up by an abort waiting for its sections; one
//!   line in (512 bytes, 2 s), one JSON line out — or `probe-approved <key> <kind> <schedule id>`,
//!   an approval the CLI made, written into this process's audit chain; anything else gets an error
//!   line, never a crash); `world_edit.rs` (the one path of the cast and template edits the GUI's
//!   `cast` command and the CLI's `servants`/`templates` share: the core's edit, then its
//!   `file_save` audit line marked with the surface; `open_for_edit`, a village no process runs
//!   opened under its lock for one CLI edit); `pricing.rs` (`fetch_prices`, the one path of the
//!   CLI's `pricing fetch` and the GUI's `fetchPrices`: the core's fetch and parse, then one
//!   `update_world` only when a template changes, its `file_save` audit line and a `pricing fetch:`
//!   log line either way); `surface_audit.rs` (the audit line of what the CLI did from outside the
//!   running process — `schedules approve` —: over the socket when a process runs, else written by
//!   the CLI itself under the village lock with the key of its `--secrets`, so the chain has one
//!   writer); `apply`, what every channel calls: the halt marker written first on halt, then
//!   `Orchestrator::control`, then the marker removed on resume; `send`, the CLI's client), and
//!   `door.rs` (the village as an MCP server: rmcp's Streamable HTTP service under axum on
//!   `127.0.0.1:<port>/mcp`, a guard in front of it — loopback `Host` and an absent or loopback
//!   `Origin` else 403, bearer compared as SHA-256 digests in constant time else 401, session
//!   DELETE 204 / unknown 404; `door_body.rs`: a POST body over 4 MiB 413, malformed JSON 400 with
//!   the JSON-RPC parse error −32700 — and one tool, `ask_fuseforks {message, dryRun?}`, through
//!   `ask_external_mode_in`, one conversation per MCP session, a dry-run's answer carrying
//!   `{dryRun, effects}` as structured content; opened from `serve --door-port` + secret
//!   `door_token` without reading `mcp_server.json`, else from `mcp_server.json` when the host may
//!   open it; closed first on shutdown). `Host::start_schedules` starts the core's scheduler when
//!   `HostBootOptions.run_schedules` (`serve` only; `ask` and `check` never), after the start set
//!   runs, on the system clock in the process zone (`preflight_view::process_zone`; an unknown
//!   zone: not started, logged with its code); `serve` stops it with the door.

pub mod audit_key;
pub mod bake;
pub mod bake_required;
pub mod boot;
pub mod control;
pub mod demo;
pub mod door;
mod door_body;
pub mod gui;
pub mod lifecycle;
pub mod lock;
pub mod paths;
pub mod preflight_view;
pub mod pricing;
pub mod secret_names;
pub mod secret_store;
pub mod secrets;
pub mod startup;
pub mod surface_audit;
pub mod telemetry;
pub mod world_edit;
pub mod writable;

pub use boot::{Host, HostBootOptions, HostError, ScheduleLoop, SecretSource, build_host};
pub use paths::HostPaths;
