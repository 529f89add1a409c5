//! [`KeyringOpenError`]: why no Linux OS store could be opened (a forced store that cannot be
//! used, a force that names none, keyutils refused), typed with its source. A store's own error
//! is described in words (`describe`), never kept: some of its variants carry secret bytes.

use super::{FORCE_ENV, SecretError};

/// Why no OS store was opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyringOpenError {
    /// `FUSEFORKS_KEYRING` names no store.
    #[error(
        "{FORCE_ENV}={named:?} names no store: unset it, or set it to secret-service or keyutils"
    )]
    UnknownForce {
        /// The variable's value.
        named: String,
    },
    /// `FUSEFORKS_KEYRING=secret-service`, and the Secret Service cannot be used.
    #[error("{FORCE_ENV}=secret-service, but the Secret Service cannot be used: {0}")]
    ForcedSecretService(#[source] SecretServiceError),
    /// The kernel's user keyring cannot be found or made.
    #[error("the kernel keyutils store cannot be used: {0}")]
    Keyutils(#[source] linux_keyutils::KeyError),
}

/// Why the Secret Service cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretServiceError {
    /// The probe's thread did not start or the service did not answer in time.
    #[error("{0}")]
    Probe(#[source] Box<SecretError>),
    /// The service refused, in `describe`'s words.
    #[error("{0}")]
    Refused(String),
}

/// The fix of every open failure: the environment holds the secrets instead.
const ENV_INSTEAD: &str = "pass --secrets env and set FUSEFORKS_SECRET_* variables";

impl fuseforks_core::Coded for KeyringOpenError {
    fn code(&self) -> &'static str {
        "SECRET_STORE_UNAVAILABLE"
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(ENV_INSTEAD.into())
    }
}

impl fuseforks_core::Coded for SecretServiceError {
    fn code(&self) -> &'static str {
        "SECRET_STORE_UNAVAILABLE"
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(ENV_INSTEAD.into())
    }
}
