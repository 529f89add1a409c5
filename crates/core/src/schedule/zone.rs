//! The process time zone, the one the schedules fire in: `TZ` first — a leading
//! `:` stripped, a `…/zoneinfo/NAME` path read as `NAME`, a POSIX rule such as
//! `EST5EDT,M3.2.0,M11.1.0` accepted — else the system's (`/etc/localtime`). Names are looked
//! up in jiff's database: the system's `/usr/share/zoneinfo` when it has one, else the copy
//! bundled in the binary (`tzdb-bundle-always`), so a container without tzdata still computes
//! right. A `TZ` that names nothing is a [`ZoneError`] for the caller to report; it never
//! falls back to UTC in silence (the original's `chrono` did).
//!
//! The function takes the variable's value, so tests never touch the process environment.

use jiff::tz::{self, TimeZone};

use crate::error::Coded;

/// Where the process zone came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneSource {
    /// The `TZ` variable (set and non-empty: an empty `TZ` means UTC, as in libc).
    Tz,
    /// The system's zone (`/etc/localtime`), `TZ` being unset.
    System,
    /// Neither: `TZ` is unset and the system names no zone; UTC.
    Fallback,
}

/// The resolved process time zone: the zone, the name it is known by, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessZone {
    zone: TimeZone,
    name: String,
    source: ZoneSource,
}

impl ProcessZone {
    /// The zone every wall-clock schedule is placed in.
    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }

    /// Its name: the IANA name when there is one, else what `TZ` said (a POSIX rule), else the
    /// file it was read from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it came from.
    pub fn source(&self) -> ZoneSource {
        self.source
    }

    /// Whether `other` (a zone name, such as `bake.json`'s `sourceTimeZone`) names this zone:
    /// equal names compared as the database knows them (case and `…/zoneinfo/` aside).
    pub fn is_named(&self, other: &str) -> bool {
        let other = other.trim();
        let canonical = name_in_tz(other)
            .and_then(|name| tz::db().get(name).ok())
            .and_then(|found| found.iana_name().map(str::to_owned));
        let other = canonical.as_deref().unwrap_or(other);
        other.eq_ignore_ascii_case(&self.name)
    }
}

/// `TZ` names a time zone that neither the system nor the bundled database knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("TZ={value:?} names no time zone known to this build (system or bundled database)")]
pub struct ZoneError {
    value: String,
}

impl ZoneError {
    /// The value of `TZ` as it was given.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl Coded for ZoneError {
    fn code(&self) -> &'static str {
        "TIMEZONE_UNKNOWN"
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some("set TZ to an IANA zone name such as Asia/Tokyo or Europe/Berlin, or unset it to use the system's zone".into())
    }
}

/// Resolves the process time zone from the value of `TZ` (`None` when it is unset).
pub fn resolve_process_zone(tz_var: Option<&str>) -> Result<ProcessZone, ZoneError> {
    match tz_var {
        None => Ok(system_zone()),
        Some(value) => zone_from_tz(value).ok_or_else(|| ZoneError {
            value: value.to_owned(),
        }),
    }
}

/// The zone a set `TZ` names, if any.
fn zone_from_tz(value: &str) -> Option<ProcessZone> {
    let stripped = value.strip_prefix(':').unwrap_or(value).trim();
    if stripped.is_empty() {
        // libc (and jiff) read an empty `TZ` as UTC.
        return Some(named(TimeZone::UTC, "UTC", ZoneSource::Tz));
    }
    let name = name_in_tz(stripped)?;
    if let Ok(zone) = tz::db().get(name) {
        return Some(named(zone, name, ZoneSource::Tz));
    }
    // A POSIX rule has digits (an offset); a bare word that the database lacks is a typo.
    if stripped.bytes().any(|b| b.is_ascii_digit())
        && let Ok(zone) = TimeZone::posix(stripped)
    {
        return Some(named(zone, stripped, ZoneSource::Tz));
    }
    None
}

/// The zone name within a `TZ` value: the part after the last `zoneinfo/` of a path, else the
/// value itself; `None` for another path (we look names up, we do not read arbitrary files).
fn name_in_tz(value: &str) -> Option<&str> {
    const NEEDLE: &str = "zoneinfo/";
    match value.rfind(NEEDLE) {
        Some(at) => Some(&value[at + NEEDLE.len()..]),
        None if value.starts_with('/') || value.starts_with('.') => None,
        None => Some(value),
    }
}

fn named(zone: TimeZone, fallback: &str, source: ZoneSource) -> ProcessZone {
    let name = zone.iana_name().unwrap_or(fallback).to_owned();
    ProcessZone { zone, name, source }
}

/// The system's zone: `/etc/localtime`, a link into a zoneinfo folder (named) or a TZif file
/// (unnamed); UTC when there is neither.
#[cfg(unix)]
fn system_zone() -> ProcessZone {
    const LOCALTIME: &str = "/etc/localtime";
    if let Ok(target) = std::fs::read_link(LOCALTIME)
        && let Some(name) = target
            .to_str()
            .and_then(|t| t.rfind("zoneinfo/").map(|at| &t[at + 9..]))
        && let Ok(zone) = tz::db().get(name)
    {
        return named(zone, name, ZoneSource::System);
    }
    if let Ok(data) = std::fs::read(LOCALTIME)
        && let Ok(zone) = TimeZone::tzif(LOCALTIME, &data)
    {
        return named(zone, LOCALTIME, ZoneSource::System);
    }
    named(TimeZone::UTC, "UTC", ZoneSource::Fallback)
}

/// The system's zone as jiff finds it (on Windows: the registry, mapped to an IANA name).
#[cfg(not(unix))]
fn system_zone() -> ProcessZone {
    match TimeZone::try_system() {
        Ok(zone) => named(zone, "system", ZoneSource::System),
        Err(_) => named(TimeZone::UTC, "UTC", ZoneSource::Fallback),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tz_names_a_zone_with_or_without_its_colon() {
        for value in [
            "Asia/Tokyo",
            ":Asia/Tokyo",
            "/usr/share/zoneinfo/Asia/Tokyo",
            ":asia/tokyo",
        ] {
            let zone = resolve_process_zone(Some(value)).unwrap();
            assert_eq!(zone.name(), "Asia/Tokyo", "{value}");
            assert_eq!(zone.source(), ZoneSource::Tz);
        }
    }

    #[test]
    fn a_zone_that_does_not_exist_is_an_error_not_utc() {
        for value in [
            "Mars/Olympus_Mons",
            ":Nowhere",
            "/etc/not-a-zone",
            "Asia/Tokio",
        ] {
            let err = resolve_process_zone(Some(value)).unwrap_err();
            assert_eq!(err.code(), "TIMEZONE_UNKNOWN");
            assert_eq!(err.value(), value);
            assert!(err.to_string().contains(value), "{err}");
        }
    }

    #[test]
    fn empty_tz_is_utc_and_posix_rules_are_zones() {
        assert_eq!(resolve_process_zone(Some("")).unwrap().name(), "UTC");
        assert_eq!(resolve_process_zone(Some(":")).unwrap().name(), "UTC");
        let rule = resolve_process_zone(Some("EST5EDT,M3.2.0,M11.1.0")).unwrap();
        assert_eq!(rule.name(), "EST5EDT,M3.2.0,M11.1.0");
    }

    #[test]
    fn the_system_zone_resolves_without_tz() {
        let zone = resolve_process_zone(None).unwrap();
        assert_ne!(zone.source(), ZoneSource::Tz);
        assert!(!zone.name().is_empty());
    }

    #[test]
    fn names_compare_as_the_database_knows_them() {
        let tokyo = resolve_process_zone(Some(":Asia/Tokyo")).unwrap();
        assert!(tokyo.is_named("Asia/Tokyo"));
        assert!(tokyo.is_named("asia/tokyo"));
        assert!(tokyo.is_named("/usr/share/zoneinfo/Asia/Tokyo"));
        assert!(!tokyo.is_named("Europe/Berlin"));
        assert!(!tokyo.is_named("Nowhere"));
    }

    #[test]
    fn the_bundled_database_knows_the_zones_without_the_system_one() {
        let bundled = tz::TimeZoneDatabase::bundled();
        for name in ["America/New_York", "Europe/Berlin", "Asia/Tokyo"] {
            assert!(bundled.get(name).is_ok(), "{name}");
        }
    }
}
