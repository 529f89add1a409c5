//! The audit chain's recorded head, kept outside the log in two places: `sessions.redb`
//! (committed with every synced batch, durably at most every second and by the store's clean
//! close) and the shelf file `DATA_DIR/audit-head.json` (written atomically at those durable
//! points, only when its seq moved). Never past the synced lines. Each is `{seq,
//! sha256, keyedFrom?, mac?}`: the last line's seq and hash, the first seq the writer marked
//! with the key, and the HMAC of the three under the key (absent when written without one).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::key::AuditKey;
use crate::sessions::SessionStore;

/// The shelf file of the recorded head (in the data folder, outside the workspace).
pub const AUDIT_HEAD_FILE: &str = "audit-head.json";

/// A recorded head of the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedHead {
    /// The last line's seq.
    pub seq: u64,
    /// The last line's `sha256`.
    pub sha256: String,
    /// The first seq written with the key (every line from it on carries a mark).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyed_from: Option<u64>,
    /// The HMAC of `seq`, `sha256` and `keyedFrom` under the key (none without the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

impl RecordedHead {
    /// A head, marked when `key` is given (`keyed_from` is dropped without a key: it would
    /// mean nothing unmarked).
    pub fn new(seq: u64, sha256: &str, keyed_from: Option<u64>, key: Option<&AuditKey>) -> Self {
        let keyed_from = key.and(keyed_from);
        Self {
            seq,
            sha256: sha256.to_owned(),
            keyed_from,
            mac: key.map(|k| k.head_mac(seq, sha256, keyed_from)),
        }
    }

    /// Whether its mark holds under `key`.
    pub fn mac_holds(&self, key: &AuditKey) -> bool {
        self.mac
            .as_deref()
            .is_some_and(|mac| key.head_mac_holds(self.seq, &self.sha256, self.keyed_from, mac))
    }

    /// Its JSON text.
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The head recorded on the shelf of `data_dir`: `None` when there is no file; an error of
/// kind `InvalidData` when it is not a head.
pub fn read_shelf_head(data_dir: &Path) -> std::io::Result<Option<RecordedHead>> {
    let bytes = match std::fs::read(data_dir.join(AUDIT_HEAD_FILE)) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|_| std::io::ErrorKind::InvalidData.into())
}

/// Writes the shelf's head atomically (temp file, fsync, rename, folder fsync), 0600.
pub(crate) fn write_shelf_head(data_dir: &Path, head: &RecordedHead) -> std::io::Result<()> {
    let mut text = head.to_json();
    text.push('\n');
    crate::village::write_secret_file_atomically(&data_dir.join(AUDIT_HEAD_FILE), text.as_bytes())
}

/// The heads recorded in `sessions.redb`: the keyed record, and the plain head when it is
/// another (a writer without records moved it on).
pub fn read_session_heads(store: &SessionStore) -> Vec<RecordedHead> {
    let record = store
        .audit_head_record()
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str::<RecordedHead>(&text).ok());
    let plain = store
        .audit_head()
        .ok()
        .flatten()
        .map(|(seq, sha256)| RecordedHead::new(seq, &sha256, None, None));
    match (record, plain) {
        (Some(r), Some(p)) if r.seq == p.seq && r.sha256 == p.sha256 => vec![r],
        (r, p) => r.into_iter().chain(p).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_reads_back_from_the_shelf_and_its_mark_holds_only_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_shelf_head(dir.path()).unwrap(), None);
        let key = AuditKey::from_bytes([3; 32]);
        let head = RecordedHead::new(7, &"ab".repeat(32), Some(2), Some(&key));
        write_shelf_head(dir.path(), &head).unwrap();
        let back = read_shelf_head(dir.path()).unwrap().unwrap();
        assert_eq!(back, head);
        assert!(back.mac_holds(&key));
        assert!(!back.mac_holds(&AuditKey::from_bytes([4; 32])));
        let moved = RecordedHead {
            seq: 6,
            ..back.clone()
        };
        assert!(!moved.mac_holds(&key));
        let unkeyed = RecordedHead {
            keyed_from: None,
            ..back
        };
        assert!(!unkeyed.mac_holds(&key));
        let plain = RecordedHead::new(7, "x", Some(2), None);
        assert_eq!((plain.keyed_from, plain.mac), (None, None));
        std::fs::write(dir.path().join(AUDIT_HEAD_FILE), "{").unwrap();
        let err = read_shelf_head(dir.path()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    }
}
