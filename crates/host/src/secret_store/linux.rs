//! The Linux choice: the Secret Service over the D-Bus session bus when one is set and the
//! service answers, else kernel keyutils with a notice that its keys do not survive a reboot.

use std::sync::Arc;
use std::time::Duration;

use keyring_core::CredentialStore;

use super::SecretError;
use super::keyutils::KeyutilsStore;
use super::open_error::{KeyringOpenError, SecretServiceError};
use super::{Backing, KeyringBackend, OsKeyring, describe, on_own_thread};

/// How long the Secret Service may take to answer when it is first asked.
const PROBE_LIMIT: Duration = Duration::from_secs(5);

/// Opens the store `force` names (`FUSEFORKS_KEYRING`), or chooses one.
pub(super) fn open(force: Option<&str>) -> Result<OsKeyring, SecretError> {
    match force.map(str::trim) {
        None | Some("") => choose(),
        Some("secret-service") => secret_service().map_err(KeyringOpenError::ForcedSecretService),
        Some("keyutils") => keyutils(None),
        Some(other) => Err(KeyringOpenError::UnknownForce {
            named: other.to_owned(),
        }),
    }
    .map_err(SecretError::Open)
}

/// The Secret Service when the session bus has one that answers, else keyutils.
fn choose() -> Result<OsKeyring, KeyringOpenError> {
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").filter(|v| !v.is_empty());
    if bus.is_none() {
        return keyutils(Some(
            "no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set",
        ));
    }
    match secret_service() {
        Ok(k) => Ok(k),
        Err(why) => keyutils(Some(&format!("the Secret Service did not answer: {why}"))),
    }
}

fn secret_service() -> Result<OsKeyring, SecretServiceError> {
    let store = on_own_thread(
        "Secret Service",
        PROBE_LIMIT,
        zbus_secret_service_keyring_store::Store::new,
    )
    .map_err(|e| SecretServiceError::Probe(Box::new(e)))?
    .map_err(|e| SecretServiceError::Refused(describe(&e)))?;
    let store: Arc<CredentialStore> = store;
    Ok(OsKeyring {
        store: Backing::Core(store),
        backend: KeyringBackend::SecretService,
        notice: None,
    })
}

fn keyutils(why: Option<&str>) -> Result<OsKeyring, KeyringOpenError> {
    let store = Backing::Keyutils(KeyutilsStore::open().map_err(KeyringOpenError::Keyutils)?);
    let mut notice = String::from(
        "keys are kept in the kernel keyutils store: they do not survive a reboot. For a persistent store, run a Secret Service (e.g. gnome-keyring) on a D-Bus session bus, or pass --secrets env",
    );
    if let Some(why) = why {
        notice = format!("{why}; {notice}");
    }
    Ok(OsKeyring {
        store,
        backend: KeyringBackend::Keyutils,
        notice: Some(notice),
    })
}
