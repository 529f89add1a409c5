//! The audit chain's key in the secret store (`audit_key`, `FUSEFORKS_SECRET_AUDIT_KEY` under
//! `--secrets env`): 32 random bytes stored as 64 hex digits. The boot fetches it, and on a
//! writable store (the OS keyring) generates and stores one when there is none; `audit verify`
//! only fetches. Without a key the chain is written (or checked) unkeyed, and the line that says
//! so names the variable — never a value.

use fuseforks_core::safety::{AUDIT_KEY_BYTES, AuditKey};

use crate::secret_names::env_var_name;
use crate::secrets::{SecretError, SecretStore};

/// The key's name in the secret store.
pub use crate::secret_names::AUDIT_KEY;
/// The warn code of an unkeyed chain (the log line at boot, `audit verify`'s stderr).
pub const AUDIT_UNKEYED: &str = "AUDIT_UNKEYED";

/// Why there is no key to use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unkeyed {
    /// The store has none (and cannot take one: `--secrets env`).
    #[error("no audit key is stored: set {var} to 64 hex digits (`openssl rand -hex 32`)", var = env_var_name(AUDIT_KEY))]
    Missing,
    /// The stored value is not 64 hex digits.
    #[error("the stored audit key ({AUDIT_KEY}, {var}) is not 64 hex digits", var = env_var_name(AUDIT_KEY))]
    Invalid,
    /// The store failed (reading, or storing a new key).
    #[error("the secret store failed ({code}): {0}", code = .0.code())]
    Store(SecretError),
    /// No random bytes for a new key.
    #[error("no random bytes for a new audit key")]
    NoRandom,
    /// The chain is keyed already (its recorded head says so) and this run has no key that
    /// holds it: its lines carry no mark, and `audit verify` will refuse them.
    #[error(
        "this village's audit log is keyed, but this run has no audit key that holds it: its lines will carry no mark, and `audit verify` will refuse them as unkeyed"
    )]
    KeyedChain,
}

impl fuseforks_core::Coded for Unkeyed {
    fn code(&self) -> &'static str {
        AUDIT_UNKEYED
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        if *self == Self::KeyedChain {
            return Some(format!(
                "run it with --secrets keyring (the key this machine's keyring holds), or set {} to the village's key",
                env_var_name(AUDIT_KEY)
            ).into());
        }
        Some(format!(
            "store 64 hex digits under {AUDIT_KEY} (`fuseforks-cli secrets set {AUDIT_KEY}`), or set {} with --secrets env",
            env_var_name(AUDIT_KEY)
        ).into())
    }
}

/// The key in `store`, if any (never generated).
pub fn fetch_key(store: &dyn SecretStore) -> Result<AuditKey, Unkeyed> {
    match store.get(AUDIT_KEY).map_err(Unkeyed::Store)? {
        None => Err(Unkeyed::Missing),
        Some(value) => AuditKey::from_hex(&value).map_err(|_| Unkeyed::Invalid),
    }
}

/// The key in `store`; when there is none and the store is writable, a new one generated and
/// stored (then read back, so that two processes starting at once settle on the stored one).
pub fn boot_key(store: &dyn SecretStore) -> Result<AuditKey, Unkeyed> {
    match fetch_key(store) {
        Err(Unkeyed::Missing) => {}
        other => return other,
    }
    let mut bytes = [0u8; AUDIT_KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(|_| Unkeyed::NoRandom)?;
    match store.set(AUDIT_KEY, &AuditKey::from_bytes(bytes).to_hex()) {
        Ok(()) => fetch_key(store),
        Err(SecretError::ReadOnly) => Err(Unkeyed::Missing),
        Err(e) => Err(Unkeyed::Store(e)),
    }
}

/// The key a process writes the village's chain with: [`boot_key`] of its store. Under
/// `--secrets env` without the variable, a chain already keyed (the shelf's recorded head says
/// so) goes on with this machine's OS keyring key when that key holds the head's mark — read
/// only, never generated — so that a desktop village keeps one keyed chain whichever store a
/// command reads its model keys from; without such a key it is [`Unkeyed::KeyedChain`], which
/// the caller says where the person sees it.
pub fn writer_key(
    source: crate::secrets::SecretSource,
    store: &dyn SecretStore,
    data_dir: &std::path::Path,
) -> Result<AuditKey, Unkeyed> {
    let missing = match boot_key(store) {
        Err(Unkeyed::Missing) if source == crate::secrets::SecretSource::Env => Unkeyed::Missing,
        other => return other,
    };
    let Ok(Some(head)) = fuseforks_core::safety::read_shelf_head(data_dir) else {
        return Err(missing);
    };
    if head.keyed_from.is_none() {
        return Err(missing);
    }
    crate::secrets::KeyringSecretStore::open()
        .ok()
        .and_then(|keyring| fetch_key(&keyring).ok())
        .filter(|key| head.mac_holds(key))
        .ok_or(Unkeyed::KeyedChain)
}

/// The village log's line for an unkeyed chain.
pub fn unkeyed_line(why: &Unkeyed) -> String {
    format!(
        "audit: the chain is not keyed code={AUDIT_UNKEYED} ({why}); lines written now carry no mark, and `audit verify` with the key refuses unmarked lines after marked ones"
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::HashMap;
    use std::sync::Mutex;

    use super::*;
    use crate::secrets::EnvSecretStore;

    /// A writable store in memory.
    #[derive(Debug, Default)]
    struct Memory(Mutex<HashMap<String, String>>);

    impl SecretStore for Memory {
        fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
            Ok(self.0.lock().unwrap().get(key).cloned())
        }
        fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
            self.0.lock().unwrap().insert(key.into(), value.into());
            Ok(())
        }
        fn delete(&self, key: &str) -> Result<(), SecretError> {
            self.0.lock().unwrap().remove(key);
            Ok(())
        }
        fn name(&self) -> &'static str {
            "memory"
        }
    }

    #[test]
    fn a_writable_store_gets_a_key_once_and_keeps_it() {
        let store = Memory::default();
        assert_eq!(fetch_key(&store), Err(Unkeyed::Missing));
        let key = boot_key(&store).unwrap();
        let stored = store.get(AUDIT_KEY).unwrap().unwrap();
        assert_eq!(stored.len(), 64);
        assert_eq!(boot_key(&store).unwrap(), key, "not generated again");
        assert_eq!(fetch_key(&store).unwrap(), key);
        let other = Memory::default();
        assert_ne!(boot_key(&other).unwrap(), key, "random");
    }

    #[test]
    fn the_env_store_is_never_written_and_names_the_variable_not_the_value() {
        let empty = EnvSecretStore::from_vars([]);
        let why = boot_key(&empty).unwrap_err();
        assert_eq!(why, Unkeyed::Missing);
        let line = unkeyed_line(&why);
        assert!(
            line.starts_with("audit: the chain is not keyed")
                && line.contains("FUSEFORKS_SECRET_AUDIT_KEY"),
            "{line}"
        );
        let value = "0123456789abcdef".repeat(4);
        let set = EnvSecretStore::from_vars([("FUSEFORKS_SECRET_AUDIT_KEY".into(), value.clone())]);
        assert_eq!(boot_key(&set).unwrap().to_hex(), value);
        let bad = EnvSecretStore::from_vars([(
            "FUSEFORKS_SECRET_AUDIT_KEY".into(),
            "nothex-secret".into(),
        )]);
        let why = boot_key(&bad).unwrap_err();
        assert_eq!(why, Unkeyed::Invalid);
        assert!(!unkeyed_line(&why).contains("nothex-secret"));
    }
}
