//! The startup block: the lines a boot writes first, in the village's language where the line
//! has words (`docs/formats/log-lines.md`, "The startup block"). `build_host` writes them in
//! its order; the `session:` line comes from the orchestrator's open, the `mcp server:` line
//! from the door.

use std::path::Path;

use fuseforks_core::log::{LogSink, VillageLog};
use fuseforks_core::village::{Language, ShelfStore, VillageStore};

use crate::secrets::SecretStore;

/// The build profile of this binary, as the `version:` line says it.
pub const PROFILE: &str = if cfg!(debug_assertions) {
    "debug"
} else {
    "release"
};

/// The village language for the lines written before the orchestrator has read the village
/// (the lock is held, so the read is safe): the language of `world.json`, else the OS
/// locale's. A file that cannot be read gives the locale's; the boot's own read reports it.
pub fn peek_language(workspace: &Path, os_locale: Option<&str>) -> Language {
    VillageStore::new(workspace)
        .load_world()
        .map(|loaded| loaded.value.effective_language(os_locale))
        .unwrap_or_else(|_| Language::from_locale(os_locale))
}

/// The block's first two lines: that the village started, and the version with the profile.
pub fn opening_lines(log: &VillageLog, language: Language, app_version: &str) {
    log.line(&language.pick("起動しました", "started"));
    log.line(&format!("version: app={app_version} profile={PROFILE}"));
}

/// The block's last line: `jev: enabled=<pruning switched on in jev.json> active=<the Jev
/// token is in the secret store> blocked=<jev.json could not be read, so Jev stays off>`.
pub fn jev_line(log: &VillageLog, data_dir: &Path, secrets: &dyn SecretStore) {
    let (enabled, blocked) = match ShelfStore::new(data_dir).load_jev() {
        Ok(loaded) => (loaded.value.enabled, false),
        Err(_) => (false, true),
    };
    let active = !blocked && secrets.get("jev_api_token").ok().flatten().is_some();
    log.line(&format!(
        "jev: enabled={enabled} active={active} blocked={blocked}"
    ));
}

/// The `mcp server:` line's words after the address.
pub fn door_words(language: Language) -> String {
    language.pick("で待ち受けます", "listening")
}
