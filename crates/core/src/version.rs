//! The one version Fuseforks says everywhere: `--version`, the User-Agent of model calls, the
//! MCP client's and the door's `serverInfo`, the traces' `service.version`. The binary sets it
//! once at start from its build (the workspace's version plus the commit); a library user that
//! sets nothing gets the workspace's version.

use std::sync::OnceLock;

static VERSION: OnceLock<String> = OnceLock::new();

/// Sets the version once; a later call changes nothing.
pub fn set(version: &str) {
    let _ = VERSION.set(version.to_owned());
}

/// The version.
pub fn get() -> &'static str {
    VERSION
        .get()
        .map_or(env!("CARGO_PKG_VERSION"), String::as_str)
}

/// `fuseforks/VERSION`, the User-Agent of every HTTP call.
pub fn user_agent() -> String {
    format!("fuseforks/{}", get())
}
