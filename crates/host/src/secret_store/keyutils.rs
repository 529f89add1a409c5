//! The kernel keyutils store, written against `linux-keyutils` directly: keys are `user` keys
//! named `keyring:<key>@<service>` in the user keyring (`_uid.<uid>`), readable and writable by
//! the same uid only. Not the `linux-keyutils-keyring-store` crate: it asks for the persistent
//! keyring through `KEY_SPEC_SESSION_KEYRING`, which gives a process without a session keyring
//! (a container, an SSH login without `pam_keyinit`) a fresh anonymous one, and from then on
//! its own keys are no longer "possessed" and every read and link is `EACCES`.

use linux_keyutils::{KeyError, KeyPermissionsBuilder, KeyRing, KeyRingIdentifier, Permission};

use super::SecretError;

/// The user keyring of this uid.
#[derive(Debug, Clone, Copy)]
pub struct KeyutilsStore {
    ring: KeyRing,
}

impl KeyutilsStore {
    /// Finds the user keyring (the kernel creates it on first use).
    pub fn open() -> Result<Self, KeyError> {
        KeyRing::from_special_id(KeyRingIdentifier::User, true).map(|ring| Self { ring })
    }

    /// The value of `key` of `service`, if set.
    pub fn get(&self, service: &str, key: &str) -> Result<Option<String>, SecretError> {
        let found = match self.ring.search(&name(service, key)) {
            Ok(k) => k,
            Err(KeyError::KeyDoesNotExist | KeyError::KeyExpired | KeyError::KeyRevoked) => {
                return Ok(None);
            }
            Err(e) => return Err(failed(&e)),
        };
        let bytes = found.read_to_vec().map_err(|e| failed(&e))?;
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| SecretError::Failed("the stored value is not UTF-8".into()))
    }

    /// Stores `value` (replacing the old one), readable by this uid only.
    pub fn set(&self, service: &str, key: &str, value: &str) -> Result<(), SecretError> {
        let added = self
            .ring
            .add_key(&name(service, key), value.as_bytes())
            .map_err(|e| failed(&e))?;
        let perms = KeyPermissionsBuilder::builder()
            .posessor(Permission::ALL)
            .user(Permission::ALL)
            .build();
        added.set_perms(perms).map_err(|e| failed(&e))
    }

    /// Removes `key` (nothing when absent).
    pub fn delete(&self, service: &str, key: &str) -> Result<(), SecretError> {
        match self.ring.search(&name(service, key)) {
            Ok(k) => k.invalidate().map_err(|e| failed(&e)),
            Err(KeyError::KeyDoesNotExist | KeyError::KeyExpired | KeyError::KeyRevoked) => Ok(()),
            Err(e) => Err(failed(&e)),
        }
    }
}

/// The key's description (the spelling of the keyring ecosystem's keyutils store).
fn name(service: &str, key: &str) -> String {
    format!("keyring:{key}@{service}")
}

fn failed(e: &KeyError) -> SecretError {
    match e {
        KeyError::AccessDenied => SecretError::Unavailable(format!("kernel keyutils: {e}")),
        _ => SecretError::Failed(format!("kernel keyutils: {e}")),
    }
}
