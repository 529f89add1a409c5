//! Which OS store the keyring uses: the macOS Keychain, the Windows Credential
//! Manager, and on Linux the Secret Service over D-Bus when a session bus answers, else the
//! kernel keyutils store (with a notice: its keys do not survive a reboot). There is no
//! plaintext file store. `FUSEFORKS_KEYRING=secret-service|keyutils` forces a Linux store (no
//! fallback). Every call into a store runs on a thread of its own with a time limit, so a
//! store that blocks (a locked collection waiting for a prompt no one sees) cannot hang the
//! caller, and a store with its own async runtime never runs inside ours.

#[cfg(target_os = "linux")]
mod keyutils;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod open_error;

use std::sync::Arc;
use std::time::Duration;

use keyring_core::CredentialStore;

#[cfg(target_os = "linux")]
pub use keyutils::KeyutilsStore;
#[cfg(target_os = "linux")]
pub use open_error::{KeyringOpenError, SecretServiceError};

/// Errors of a secret store (never holding a value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// The store cannot be used on this machine.
    #[error("the OS keyring is not available here ({0})")]
    Unavailable(String),
    /// No Linux OS store could be opened (the forced one, or keyutils).
    #[cfg(target_os = "linux")]
    #[error("the OS keyring is not available here ({0})")]
    Open(#[source] KeyringOpenError),
    /// The store is read-only.
    #[error("--secrets env is read-only; set the variable in the environment instead")]
    ReadOnly,
    /// The store failed.
    #[error("{0}")]
    Failed(String),
    /// A stored value cannot be used as a secret (never shows the value).
    #[error("the secret {key} cannot be used: {why}")]
    Invalid {
        /// Where it was read: the key, or its environment variable.
        key: String,
        /// What is wrong with it ([`value_problem`]).
        why: &'static str,
    },
}

impl SecretError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unavailable(_) => "SECRET_STORE_UNAVAILABLE",
            #[cfg(target_os = "linux")]
            Self::Open(_) => "SECRET_STORE_UNAVAILABLE",
            Self::ReadOnly => "SECRET_STORE_READ_ONLY",
            Self::Failed(_) => "SECRET_STORE_FAILED",
            Self::Invalid { .. } => "SECRET_VALUE_INVALID",
        }
    }
}

impl fuseforks_core::Coded for SecretError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        match self {
            Self::Unavailable(_) => {
                Some("pass --secrets env and set FUSEFORKS_SECRET_* variables".into())
            }
            #[cfg(target_os = "linux")]
            Self::Open(_) => Some("pass --secrets env and set FUSEFORKS_SECRET_* variables".into()),
            Self::Invalid { .. } => Some(
                "store the key again, alone on one line (`fuseforks-cli secrets set KEY --data-dir D`, or the FUSEFORKS_SECRET_* variable)".into(),
            ),
            Self::ReadOnly | Self::Failed(_) => None,
        }
    }
}

/// The variable that forces a Linux store: `secret-service` or `keyutils`.
pub const FORCE_ENV: &str = "FUSEFORKS_KEYRING";

/// How long one store call may take before it is given up.
pub const CALL_LIMIT: Duration = Duration::from_secs(10);

/// The OS store behind `--secrets keyring`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyringBackend {
    /// macOS Keychain.
    Keychain,
    /// Windows Credential Manager.
    CredentialManager,
    /// The freedesktop Secret Service (GNOME Keyring, KWallet) over the D-Bus session bus.
    SecretService,
    /// Linux kernel keyutils (session keyring): not persistent across a reboot.
    Keyutils,
}

impl KeyringBackend {
    /// The store's name in messages.
    pub fn label(self) -> &'static str {
        match self {
            Self::Keychain => "macOS Keychain",
            Self::CredentialManager => "Windows Credential Manager",
            Self::SecretService => "Secret Service (D-Bus)",
            Self::Keyutils => "kernel keyutils",
        }
    }

    /// A short machine name (`--json`, events).
    pub fn id(self) -> &'static str {
        match self {
            Self::Keychain => "keychain",
            Self::CredentialManager => "credential-manager",
            Self::SecretService => "secret-service",
            Self::Keyutils => "keyutils",
        }
    }

    /// Whether keys survive a reboot.
    pub fn persistent(self) -> bool {
        self != Self::Keyutils
    }
}

/// What holds the keys: a store of the keyring ecosystem, or our own keyutils store.
#[derive(Clone)]
pub enum Backing {
    /// A `keyring-core` store (Keychain, Credential Manager, Secret Service).
    Core(Arc<CredentialStore>),
    /// The kernel keyutils store.
    #[cfg(target_os = "linux")]
    Keyutils(keyutils::KeyutilsStore),
}

/// An opened OS store, the backend it is, and what the choice should tell the user.
#[derive(Clone)]
pub struct OsKeyring {
    /// The store.
    pub store: Backing,
    /// Which one.
    pub backend: KeyringBackend,
    /// Why a fallback was taken, or that keys do not survive a reboot (for stderr).
    pub notice: Option<String>,
}

impl std::fmt::Debug for OsKeyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OsKeyring")
            .field("backend", &self.backend)
            .finish()
    }
}

/// One operation on a key.
enum Op {
    Get,
    Set(String),
    Delete,
}

impl OsKeyring {
    /// The value of `key` of `service`, if set.
    pub fn get(&self, service: &str, key: &str) -> Result<Option<String>, SecretError> {
        self.call(service, key, Op::Get)
    }

    /// Stores `value` under `key` of `service`.
    pub fn set(&self, service: &str, key: &str, value: &str) -> Result<(), SecretError> {
        self.call(service, key, Op::Set(value.to_owned())).map(drop)
    }

    /// Removes `key` of `service` (nothing when absent).
    pub fn delete(&self, service: &str, key: &str) -> Result<(), SecretError> {
        self.call(service, key, Op::Delete).map(drop)
    }

    /// Runs one operation on a thread of its own, with [`CALL_LIMIT`].
    fn call(&self, service: &str, key: &str, op: Op) -> Result<Option<String>, SecretError> {
        let (service, key) = (service.to_owned(), key.to_owned());
        let store = self.store.clone();
        on_own_thread(self.backend.label(), CALL_LIMIT, move || match store {
            Backing::Core(store) => core_op(&store, &service, &key, op),
            #[cfg(target_os = "linux")]
            Backing::Keyutils(ring) => match op {
                Op::Get => ring.get(&service, &key),
                Op::Set(value) => ring.set(&service, &key, &value).map(|()| None),
                Op::Delete => ring.delete(&service, &key).map(|()| None),
            },
        })?
    }
}

/// One operation through a `keyring-core` store; a missing key is `None` (and no error for a
/// delete).
fn core_op(
    store: &Arc<CredentialStore>,
    service: &str,
    key: &str,
    op: Op,
) -> Result<Option<String>, SecretError> {
    let entry = keyring_core::Entry::new_in_store(store, service, key).map_err(|e| failed(&e))?;
    let done = match op {
        Op::Get => entry.get_password().map(Some),
        Op::Set(value) => entry.set_password(&value).map(|()| None),
        Op::Delete => entry.delete_credential().map(|()| None),
    };
    match done {
        Ok(v) => Ok(v),
        Err(keyring_core::Error::NoEntry) => Ok(None),
        Err(e) => Err(failed(&e)),
    }
}

fn failed(e: &keyring_core::Error) -> SecretError {
    match e {
        keyring_core::Error::NoStorageAccess(_) => SecretError::Unavailable(describe(e)),
        _ => SecretError::Failed(describe(e)),
    }
}

/// Opens the OS store of this platform (see the module's documentation for the choice).
pub fn open() -> Result<OsKeyring, SecretError> {
    #[cfg(target_os = "linux")]
    {
        linux::open(std::env::var(FORCE_ENV).ok().as_deref())
    }
    #[cfg(target_os = "macos")]
    {
        let store = apple_native_keyring_store::keychain::Store::new()
            .map_err(|e| SecretError::Unavailable(describe(&e)))?;
        Ok(OsKeyring {
            store: Backing::Core(store),
            backend: KeyringBackend::Keychain,
            notice: None,
        })
    }
    #[cfg(windows)]
    {
        let store = windows_native_keyring_store::Store::new()
            .map_err(|e| SecretError::Unavailable(describe(&e)))?;
        Ok(OsKeyring {
            store: Backing::Core(store),
            backend: KeyringBackend::CredentialManager,
            notice: None,
        })
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        Err(SecretError::Unavailable(
            "no OS keyring backend is built for this platform".into(),
        ))
    }
}

/// Runs `call` on a thread of its own, giving up after `limit` (the thread is left to end by
/// itself). `what` names the store in the timeout message.
pub fn on_own_thread<T: Send + 'static>(
    what: &str,
    limit: Duration,
    call: impl FnOnce() -> T + Send + 'static,
) -> Result<T, SecretError> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    std::thread::Builder::new()
        .name("fuseforks-keyring".into())
        .spawn(move || {
            let _ = tx.send(call());
        })
        .map_err(|e| SecretError::Failed(format!("could not start a thread: {e}")))?;
    rx.recv_timeout(limit).map_err(|_| {
        SecretError::Failed(format!(
            "the {what} did not answer within {} s (a locked keyring waiting for a password prompt?)",
            limit.as_secs()
        ))
    })
}

/// A store error in words that never hold a secret (the variants that carry secret bytes or
/// entries are described without them).
pub fn describe(err: &keyring_core::Error) -> String {
    use keyring_core::Error as E;
    match err {
        E::PlatformFailure(e) => format!("platform failure: {e}"),
        E::NoStorageAccess(e) => format!("no access to the store: {e}"),
        E::NoEntry => "no such key".into(),
        E::BadEncoding(_) => "the stored value is not UTF-8".into(),
        E::BadDataFormat(..) => "the stored value is malformed".into(),
        E::BadStoreFormat(reason) => format!("the store is malformed: {reason}"),
        E::TooLong(name, len) => format!("{name} is longer than the store's limit of {len}"),
        E::Invalid(attr, _) => format!("{attr} is not accepted by the store"),
        E::Ambiguous(items) => format!("{} entries match this key", items.len()),
        E::NoDefaultStore => "no store is set".into(),
        E::NotSupportedByStore(issue) => format!("not supported by the store: {issue}"),
        _ => "the store failed".into(),
    }
}
