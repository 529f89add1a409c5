//! The wall clock as the core stamps records and events with it: milliseconds since the Unix
//! epoch. A leaf, so that every floor can read the time without reaching up (ARCHITECTURE.md,
//! "Core's floors").

/// Milliseconds since the Unix epoch (0 before it, `i64::MAX` past the range).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
