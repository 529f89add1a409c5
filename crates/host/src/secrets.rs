//! Secret stores: the OS keyring (keys = template ids, `jev_api_token`,
//! `door_token`, `audit_key`, `mcp:NAME`) and the read-only environment store of `--secrets env`
//! (`FUSEFORKS_SECRET_*`, read once at start), plus the check that no two keys map to the same
//! variable. Values never reach logs, errors or `Debug`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::secret_names::{ENV_PREFIX, env_var_name};
pub use crate::secret_store::SecretError;
use crate::secret_store::{self, KeyringBackend, OsKeyring};

/// The keyring service name (one per app).
pub const SERVICE: &str = "jp.outcasts.fuseforks";
/// Fixed keys the code uses besides template ids and `mcp:NAME`.
pub const FIXED_KEYS: [&str; 3] = [
    "jev_api_token",
    "door_token",
    crate::secret_names::AUDIT_KEY,
];

/// Where secrets are read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretSource {
    /// The OS keyring (the GUI's only choice).
    Keyring,
    /// `FUSEFORKS_SECRET_*` variables, read once, read-only.
    Env,
}

/// Opens the secret store of a source.
pub fn secret_store(source: SecretSource) -> Result<Arc<dyn SecretStore>, SecretError> {
    Ok(match source {
        SecretSource::Keyring => Arc::new(KeyringSecretStore::open()?),
        SecretSource::Env => Arc::new(EnvSecretStore::from_env()),
    })
}

/// Where secrets come from.
pub trait SecretStore: Send + Sync + std::fmt::Debug {
    /// The secret under `key`, if any.
    fn get(&self, key: &str) -> Result<Option<String>, SecretError>;
    /// Stores a secret.
    fn set(&self, key: &str, value: &str) -> Result<(), SecretError>;
    /// Removes a secret.
    fn delete(&self, key: &str) -> Result<(), SecretError>;
    /// A short name for messages (`keyring`, `env`).
    fn name(&self) -> &'static str;
    /// What the user should hear about this store (keys lost at a reboot), if anything.
    fn notice(&self) -> Option<&str> {
        None
    }
}

/// `--secrets env`: every `FUSEFORKS_SECRET_*` variable, read once. Read-only.
pub struct EnvSecretStore {
    values: HashMap<String, String>,
}

impl std::fmt::Debug for EnvSecretStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.values.keys().collect();
        names.sort();
        f.debug_struct("EnvSecretStore")
            .field("variables", &names)
            .finish()
    }
}

impl EnvSecretStore {
    /// Reads the process environment now.
    pub fn from_env() -> Self {
        Self::from_vars(std::env::vars())
    }

    /// Reads the given variables (tests, or an environment snapshot).
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Self {
            values: vars
                .into_iter()
                .filter(|(k, _)| k.starts_with(ENV_PREFIX))
                .collect(),
        }
    }
}

impl SecretStore for EnvSecretStore {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        let var = env_var_name(key);
        match self.values.get(&var).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(value) => usable(var, value.clone()).map(Some),
        }
    }
    fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
        Err(SecretError::ReadOnly)
    }
    fn delete(&self, _: &str) -> Result<(), SecretError> {
        Err(SecretError::ReadOnly)
    }
    fn name(&self) -> &'static str {
        "env"
    }
}

/// The OS keyring: the store `secret_store::open` chooses (Keychain, Credential Manager, the
/// Secret Service, or kernel keyutils). Each call runs on a thread of its own with a time limit.
#[derive(Debug)]
pub struct KeyringSecretStore {
    keyring: OsKeyring,
}

impl KeyringSecretStore {
    /// Opens the OS keyring, or says clearly why it cannot be used.
    pub fn open() -> Result<Self, SecretError> {
        Ok(Self {
            keyring: secret_store::open()?,
        })
    }

    /// The store in use.
    pub fn backend(&self) -> KeyringBackend {
        self.keyring.backend
    }
}

impl SecretStore for KeyringSecretStore {
    fn get(&self, key: &str) -> Result<Option<String>, SecretError> {
        match self.keyring.get(SERVICE, key)? {
            None => Ok(None),
            Some(value) => usable(key.to_owned(), value).map(Some),
        }
    }
    fn set(&self, key: &str, value: &str) -> Result<(), SecretError> {
        if let Some(why) = value_problem(value) {
            return Err(SecretError::Invalid {
                key: key.to_owned(),
                why,
            });
        }
        self.keyring.set(SERVICE, key, value)
    }
    fn delete(&self, key: &str) -> Result<(), SecretError> {
        self.keyring.delete(SERVICE, key)
    }
    fn name(&self) -> &'static str {
        "keyring"
    }
    fn notice(&self) -> Option<&str> {
        self.keyring.notice.as_deref()
    }
}

/// Two or more keys that map to one environment variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(.0))]
pub struct SecretNameCollision(pub BTreeMap<String, Vec<String>>);

impl SecretNameCollision {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        "SECRET_NAME_COLLISION"
    }
}

impl fuseforks_core::Coded for SecretNameCollision {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(
            "rename the template ids (or MCP secret names) so that each maps to its own variable"
                .into(),
        )
    }
}

fn describe(collisions: &BTreeMap<String, Vec<String>>) -> String {
    collisions
        .iter()
        .map(|(var, keys)| format!("{var} would hold the keys {}", keys.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `value` when it can be a secret, else why not (named by `key`, never the value).
fn usable(key: String, value: String) -> Result<String, SecretError> {
    match value_problem(&value) {
        None => Ok(value),
        Some(why) => Err(SecretError::Invalid { key, why }),
    }
}

/// Every key a village can read from a secret store: its templates' ids, the fixed keys
/// (`door_token`, `jev_api_token`) and the `mcp:NAME` keys of its enabled http servers.
pub fn village_keys(
    world: &fuseforks_core::village::World,
    paths: &crate::HostPaths,
) -> Vec<String> {
    let mut keys: Vec<String> = world
        .model_templates
        .iter()
        .map(|t| t.id.to_string())
        .collect();
    keys.extend(FIXED_KEYS.iter().map(|k| (*k).to_owned()));
    keys.extend(crate::secret_names::mcp_secret_keys(paths));
    keys
}

/// The longest value a store takes: far above any API key, and within every OS store (kernel
/// keyutils takes 32,767 bytes at most).
pub const MAX_VALUE_BYTES: usize = 4096;

/// Why `value` cannot be a secret, if it cannot: empty or blank, a control character (a
/// pasted newline would split the HTTP header it goes into), or too long.
pub fn value_problem(value: &str) -> Option<&'static str> {
    if value.trim().is_empty() {
        Some("the value is empty or blank")
    } else if value.chars().any(char::is_control) {
        Some("the value holds a control character (a pasted line break or tab?)")
    } else if value.len() > MAX_VALUE_BYTES {
        Some("the value is longer than 4096 bytes")
    } else {
        None
    }
}

/// Refuses key sets where two keys map to the same variable (names only, never values).
pub fn check_secret_names<'a>(
    keys: impl IntoIterator<Item = &'a str>,
) -> Result<(), SecretNameCollision> {
    let mut by_var: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for key in keys {
        let keys = by_var.entry(env_var_name(key)).or_default();
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_owned());
        }
    }
    let collisions: BTreeMap<String, Vec<String>> =
        by_var.into_iter().filter(|(_, k)| k.len() > 1).collect();
    if collisions.is_empty() {
        Ok(())
    } else {
        Err(SecretNameCollision(collisions))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_store_reads_once_and_is_read_only() {
        let store = EnvSecretStore::from_vars([
            (
                "FUSEFORKS_SECRET_CLAUDE_SONNET".to_owned(),
                "sk-value-1".to_owned(),
            ),
            ("FUSEFORKS_SECRET_MCP_OUTCASTS".to_owned(), "v2".to_owned()),
            ("OTHER".to_owned(), "x".to_owned()),
        ]);
        assert_eq!(
            store.get("claude_sonnet").unwrap().as_deref(),
            Some("sk-value-1")
        );
        assert_eq!(store.get("mcp:OUTCASTS").unwrap().as_deref(), Some("v2"));
        assert_eq!(store.get("nope").unwrap(), None);
        assert_eq!(store.set("a", "b").unwrap_err(), SecretError::ReadOnly);
        assert!(
            !format!("{store:?}").contains("sk-value-1"),
            "Debug names variables only"
        );
    }

    #[test]
    fn collisions_name_variables_and_keys_never_values() {
        assert!(check_secret_names(["claude", "gpt", "jev_api_token"]).is_ok());
        let err = check_secret_names(["gpt-5", "gpt_5", "door_token"]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("FUSEFORKS_SECRET_GPT_5")
                && text.contains("gpt-5")
                && text.contains("gpt_5"),
            "{text}"
        );
    }
}
