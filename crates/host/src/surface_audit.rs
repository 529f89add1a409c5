//! Audit lines for what a command-line surface did to a village from outside its running
//! process (a probe approved with `schedules approve`): sent to the running process over the
//! control socket, which writes it into its chain; with nothing running, written here under
//! the village lock (so that no process starts writing the chain meanwhile), marked with the
//! audit key of the secret store named (generated into the keyring when absent, as a boot does).

use std::path::Path;

use fuseforks_core::safety::{AuditEvent, AuditLog, AuditLogOptions, DEFAULT_MAX_BYTES};
use fuseforks_core::sessions::SessionStore;

use crate::audit_key;
use crate::control::{PROBE_APPROVED, SendError, probe_approval_event, send};
use crate::lock::VillageLock;
use crate::paths::HostPaths;
use crate::secrets::SecretSource;

/// Why an audit line could not be written (the approval itself stands).
#[derive(Debug, thiserror::Error)]
pub enum SurfaceAuditError {
    /// The running process did not take it.
    #[error("the running process did not write the audit line: {0}")]
    Process(String),
    /// Writing it here failed (the lock, `sessions.redb` or the file).
    #[error("the audit line could not be written: {0}")]
    Local(String),
}

impl fuseforks_core::Coded for SurfaceAuditError {
    fn code(&self) -> &'static str {
        "AUDIT_NOT_WRITTEN"
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some("check that the village's folder is writable; `fuseforks-cli audit verify` shows the chain".into())
    }
}

/// Records a probe approval in the village's audit log; `true` when the running process
/// wrote it, `false` when it was written here (marked with the key from `secrets`). Async: the
/// caller's runtime carries the socket exchange (a command-line caller builds one for it).
pub async fn record_probe_approval(
    paths: &HostPaths,
    schedule_id: &str,
    kind: &str,
    key: &str,
    secrets: SecretSource,
) -> Result<bool, SurfaceAuditError> {
    let request = format!("{PROBE_APPROVED} {key} {kind} {schedule_id}");
    match send(paths.data_dir(), &request).await {
        Ok(_) => Ok(true),
        Err(SendError::Failed(why)) => Err(SurfaceAuditError::Process(why)),
        Err(SendError::NotRunning) => {
            write_here(paths, probe_approval_event(schedule_id, kind, key), secrets).map(|()| false)
        }
    }
}

/// Appends one line with the village lock held, the chain's head recorded in `sessions.redb`
/// and on the shelf; unmarked when no key can be had (the line says so on the village log).
fn write_here(
    paths: &HostPaths,
    event: AuditEvent,
    secrets: SecretSource,
) -> Result<(), SurfaceAuditError> {
    let workspace: &Path = &paths.workspace();
    let local = |e: String| SurfaceAuditError::Local(e);
    let _lock = VillageLock::acquire(workspace).map_err(|e| local(e.to_string()))?;
    let store =
        SessionStore::open(&workspace.join("sessions.redb")).map_err(|e| local(e.to_string()))?;
    let key = crate::secrets::secret_store(secrets)
        .map_err(audit_key::Unkeyed::Store)
        .and_then(|s| audit_key::writer_key(secrets, &*s, paths.data_dir()));
    let options = AuditLogOptions {
        head_store: Some(std::sync::Arc::new(store)),
        shelf: Some(paths.data_dir().to_path_buf()),
        key: key.ok(),
        max_bytes: DEFAULT_MAX_BYTES,
    };
    let audit = AuditLog::open_with(workspace, options).map_err(|e| local(e.kind().to_string()))?;
    audit.append_detached(event);
    // Dropping the log finishes its queue (the line fsynced, the head committed).
    drop(audit);
    Ok(())
}
