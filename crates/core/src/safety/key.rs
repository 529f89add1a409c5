//! The audit chain's key (`AuditKey`): 32 bytes the caller (the host's secret store) hands
//! over, never read by the core from anywhere; the HMAC-SHA256 marks it puts on a line
//! (over the line's `sha256`) and on a recorded head (over its seq, hash and first keyed seq).
//! Its value is never printed: `Debug` hides it.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The key's length in bytes.
pub const AUDIT_KEY_BYTES: usize = 32;

/// What a line's mark covers before its `sha256` (kept apart from a head's marks).
const LINE_DOMAIN: &[u8] = b"fuseforks-audit-line-v1\n";
/// What a head's mark covers before its fields.
const HEAD_DOMAIN: &[u8] = b"fuseforks-audit-head-v1\n";

/// The key of the audit chain.
#[derive(Clone, PartialEq, Eq)]
pub struct AuditKey([u8; AUDIT_KEY_BYTES]);

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditKey(hidden)")
    }
}

/// A stored key that is not 64 hex digits (the value is never named).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the audit key is not 64 hexadecimal digits")]
pub struct AuditKeyInvalid;

impl crate::error::Coded for AuditKeyInvalid {
    fn code(&self) -> &'static str {
        "AUDIT_UNKEYED"
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some("store 64 hex digits under audit_key (FUSEFORKS_SECRET_AUDIT_KEY), e.g. `openssl rand -hex 32`".into())
    }
}

impl AuditKey {
    /// A key from its bytes (freshly generated ones).
    pub fn from_bytes(bytes: [u8; AUDIT_KEY_BYTES]) -> Self {
        Self(bytes)
    }

    /// A key from its stored form, 64 hex digits (either case, surrounding blanks ignored).
    pub fn from_hex(text: &str) -> Result<Self, AuditKeyInvalid> {
        let bytes = decode_hex(text.trim()).ok_or(AuditKeyInvalid)?;
        <[u8; AUDIT_KEY_BYTES]>::try_from(bytes.as_slice())
            .map(Self)
            .map_err(|_| AuditKeyInvalid)
    }

    /// The stored form (64 lower-case hex digits): only for the secret store.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    fn hmac(&self) -> Hmac<Sha256> {
        // HMAC pads a key shorter than the block with zeros: the same, and infallible.
        let mut block = [0u8; 64];
        block[..AUDIT_KEY_BYTES].copy_from_slice(&self.0);
        <Hmac<Sha256> as KeyInit>::new(&block.into())
    }

    fn line_hmac(&self, sha256: &str) -> Hmac<Sha256> {
        let mut mac = self.hmac();
        mac.update(LINE_DOMAIN);
        mac.update(sha256.as_bytes());
        mac
    }

    fn head_hmac(&self, seq: u64, sha256: &str, keyed_from: Option<u64>) -> Hmac<Sha256> {
        let mut mac = self.hmac();
        mac.update(HEAD_DOMAIN);
        let from = keyed_from.map_or_else(|| "-".to_owned(), |s| s.to_string());
        mac.update(format!("{seq}\n{sha256}\n{from}").as_bytes());
        mac
    }

    /// The mark of a line whose hash is `sha256` (64 lower-case hex digits).
    pub fn line_mac(&self, sha256: &str) -> String {
        hex(&self.line_hmac(sha256).finalize().into_bytes())
    }

    /// Whether `mac` is the mark of a line whose hash is `sha256` (compared in constant time).
    pub fn line_mac_holds(&self, sha256: &str, mac: &str) -> bool {
        decode_hex(mac).is_some_and(|tag| self.line_hmac(sha256).verify_slice(&tag).is_ok())
    }

    /// The mark of a recorded head.
    pub fn head_mac(&self, seq: u64, sha256: &str, keyed_from: Option<u64>) -> String {
        hex(&self
            .head_hmac(seq, sha256, keyed_from)
            .finalize()
            .into_bytes())
    }

    /// Whether `mac` is the mark of this head (compared in constant time).
    pub fn head_mac_holds(
        &self,
        seq: u64,
        sha256: &str,
        keyed_from: Option<u64>,
        mac: &str,
    ) -> bool {
        decode_hex(mac).is_some_and(|tag| {
            self.head_hmac(seq, sha256, keyed_from)
                .verify_slice(&tag)
                .is_ok()
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.as_bytes()
        .chunks(2)
        .map(|pair| {
            let digit = |c: u8| char::from(c).to_digit(16);
            let (hi, lo) = (digit(pair[0])?, digit(pair[1])?);
            u8::try_from(hi * 16 + lo).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "00112233445566778899aabbccddeeff0123456789abcdef0f1e2d3c4b5a6978";

    #[test]
    fn the_key_reads_from_hex_and_never_shows_in_debug() {
        let key = AuditKey::from_hex(HEX).unwrap();
        assert_eq!(key.to_hex(), HEX);
        assert_eq!(AuditKey::from_hex(&HEX.to_uppercase()).unwrap(), key);
        assert_eq!(format!("{key:?}"), "AuditKey(hidden)");
        for bad in [
            "",
            "00",
            &HEX[1..],
            &format!("{HEX}00"),
            &HEX.replace('a', "g"),
        ] {
            assert_eq!(AuditKey::from_hex(bad), Err(AuditKeyInvalid), "{bad}");
        }
        assert!(!AuditKeyInvalid.to_string().contains(HEX));
    }

    #[test]
    fn a_mark_holds_only_for_its_key_and_its_text() {
        let key = AuditKey::from_hex(HEX).unwrap();
        let other = AuditKey::from_bytes([7; AUDIT_KEY_BYTES]);
        let sha = "ab".repeat(32);
        let mac = key.line_mac(&sha);
        assert_eq!(mac.len(), 64);
        assert!(key.line_mac_holds(&sha, &mac));
        assert!(!other.line_mac_holds(&sha, &mac), "another key");
        assert!(!key.line_mac_holds(&"cd".repeat(32), &mac), "another line");
        assert!(!key.line_mac_holds(&sha, &mac[..62]), "cut");
        assert!(!key.line_mac_holds(&sha, "zz"), "not hex");
        let head = key.head_mac(3, &sha, Some(1));
        assert_ne!(head, mac, "a head's mark is not a line's");
        assert!(key.head_mac_holds(3, &sha, Some(1), &head));
        assert!(!key.head_mac_holds(4, &sha, Some(1), &head));
        assert!(!key.head_mac_holds(3, &sha, None, &head));
        assert!(!other.head_mac_holds(3, &sha, Some(1), &head));
    }
}
