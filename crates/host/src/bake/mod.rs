//! `bake`: a path-rewritten copy of a GUI village for a container.
//!
//! # Parts
//!
//! `fuseforks-cli bake`:
//!
//! - `table.rs`: **the file table**: every file with its place — design / mixed / runtime / shelf —
//!   and rule; a file not in it is not copied
//! - `map.rs`: `--map`: longest whole-component prefix, Windows sources case-insensitive with `\` →
//!   `/`
//! - `plan.rs`: reads the source through the core's stores, rewrites the three path fields —
//!   `agents[].workDir`, `agents[].ragSources[]`, probe `cwd` —, checks headers, plans every write
//!   before any
//! - `merge.rs`: `schedules.json` keeps the copy's `lastConsumedDueMs` per id; `run.json` keeps the
//!   copy's `pending`, minus what the new rules settle
//! - `scan.rs`: credential-like header names, free-text Windows paths
//! - `apply.rs`: a staging folder beside `--out`; a first bake is one rename into place, `--update`
//!   one rename per file; runtime files are never in the plan
//! - `env_out.rs`: `--env-out`: the container's `.env` from the secret store, 0600, never printed
//! - `source.rs` (regular files only, 16 MiB each). Probe approvals are re-keyed with the core's
//!   `probe_key` and written only through `probe::approve_probe`. **Invariant: a bake that stops
//!   (exit 2, 3, 4, 5, 10, 11) has written nothing; a copy at `--out` is whole or absent.**

mod apply;
mod env_out;
mod error;
mod map;
mod merge;
mod plan;
mod scan;
mod source;
mod table;

use std::path::{Path, PathBuf};

use fuseforks_core::schedule::{ZoneSource, resolve_process_zone};
use fuseforks_core::village::BakeRecord;

pub use env_out::EnvPlan;
pub use error::{BakeError, BakeFailure};
pub use map::{Map, is_absolute, parse_maps};
pub use scan::credential_like;
pub use table::{FileRule, Place, Rule, Scope, TABLE};

use crate::HostPaths;
use crate::lock::VillageLock;
use crate::secrets::SecretStore;

/// A warning of a bake that went through (exit 0): a code and a message (names and places,
/// never a value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// `FREE_TEXT_WINDOWS_PATH`, `PLAINTEXT_HEADER_COPIED`, `CONSUMED_RECORD_DROPPED`,
    /// `ALLOW_LINE_DROPPED`, or an `ENV_*` code.
    pub code: &'static str,
    /// What and where.
    pub message: String,
}

impl Warning {
    pub(crate) fn new(code: &'static str, message: String) -> Self {
        Self { code, message }
    }
}

/// What `bake` is asked to do.
pub struct BakeOptions<'a> {
    /// The GUI's `data_dir`.
    pub source: PathBuf,
    /// The copy's `data_dir`.
    pub out: PathBuf,
    /// The `--map` arguments as given (empty with `--update`: the copy's maps are kept).
    pub maps: Vec<String>,
    /// `--update`.
    pub update: bool,
    /// `--source-time-zone`.
    pub source_time_zone: Option<String>,
    /// `--allow-plaintext-headers`.
    pub allow_plaintext_headers: bool,
    /// `--env-out` and the store its values come from.
    pub env_out: Option<(PathBuf, &'a dyn SecretStore)>,
    /// The binary's version, for `bake.json`.
    pub app_version: String,
    /// Now, ms since the epoch.
    pub now_ms: i64,
    /// The value of `TZ` of this process (`None` when unset).
    pub tz_var: Option<String>,
}

/// What a bake did.
#[derive(Debug)]
pub struct BakeReport {
    /// Files written, relative to the copy's `data_dir`.
    pub written: Vec<String>,
    /// Files removed from the copy (design files the source no longer has).
    pub removed: Vec<String>,
    /// Path fields rewritten.
    pub rewritten_fields: usize,
    /// Probe approvals carried (re-keyed).
    pub approvals_carried: usize,
    /// Warnings, in the order found.
    pub warnings: Vec<Warning>,
    /// `bake.json` as written.
    pub record: BakeRecord,
    /// `--update` with new `--map`s: the maps added and removed, as `FROM=TO`.
    pub maps_added: Vec<String>,
    /// See `maps_added`.
    pub maps_removed: Vec<String>,
    /// The `.env` written, when `--env-out` was given.
    pub env: Option<EnvPlan>,
}

/// Bakes `opts.source` into `opts.out`. On an error nothing has been written.
pub fn bake(opts: &BakeOptions<'_>) -> Result<BakeReport, BakeError> {
    let given = parse_maps(&opts.maps)?;
    let src = HostPaths::new(&opts.source);
    // The village first: a mistyped --data-dir says so, as every other command does.
    if let Some(missing) = src.village_missing() {
        return Err(BakeError::Source(
            fuseforks_core::village::VillageError::Missing { file: missing.file },
        ));
    }
    check_out(&opts.source, &opts.out, opts.update)?;
    if let Some((path, _)) = &opts.env_out {
        env_out::check_path(path, opts.update)?;
        env_out::check_place(path, &opts.source, &opts.out)?;
    }
    let (time_zone, zone_warning) = time_zone(opts)?;
    let _source_lock = VillageLock::acquire(&src.workspace())?;
    let out = HostPaths::new(&opts.out);
    let (_out_lock, previous) = if opts.update {
        let previous = previous_record(&out)?;
        (
            Some(VillageLock::acquire(&out.workspace())?),
            Some(previous),
        )
    } else {
        (None, None)
    };
    let maps = match (&previous, given.is_empty()) {
        (Some(prev), true) => map::maps_from_record(&prev.maps)?,
        _ => given,
    };
    let record = BakeRecord {
        baked_at_ms: opts.now_ms,
        app_version: opts.app_version.clone(),
        source_village_id: src
            .village()
            .read_village_id()
            .map_err(BakeError::Source)?
            .unwrap_or_default(),
        source_time_zone: Some(time_zone.clone()),
        maps: maps.iter().map(Map::record).collect(),
        extra: previous
            .as_ref()
            .map(|p| p.extra.clone())
            .unwrap_or_default(),
    };
    let (maps_added, maps_removed) = map_changes(previous.as_ref(), &record);
    let ctx = plan::Context {
        maps: &maps,
        update: opts.update,
        allow_plaintext_headers: opts.allow_plaintext_headers,
        record,
    };
    let mut plan = plan::plan(&src, &out, &ctx)?;
    plan.warnings.extend(zone_warning);
    let env = match &opts.env_out {
        Some((path, store)) => Some(env_out::plan(
            path,
            &src,
            *store,
            &time_zone,
            opts.update,
            &mut plan.warnings,
        )?),
        None => None,
    };
    // The `.env` first (beside its place), so that a failure to write it leaves no copy.
    let staged_env = env.as_ref().map(env_out::stage).transpose()?;
    let staging = apply::Staging::beside(&opts.out)?;
    apply::write_all(staging.dir(), &plan)?;
    if opts.update {
        apply::replace_files(&staging, &opts.out, &plan)?;
    } else {
        apply::put_in_place(staging, &opts.out)?;
    }
    if let Some(staged) = staged_env {
        staged.commit()?;
    }
    Ok(BakeReport {
        written: plan
            .writes
            .iter()
            .map(|w| w.rel.display().to_string())
            .collect(),
        removed: plan
            .removes
            .iter()
            .map(|r| r.display().to_string())
            .collect(),
        rewritten_fields: plan.rewritten_fields,
        approvals_carried: plan.approvals_carried,
        warnings: plan.warnings,
        record: ctx.record,
        maps_added,
        maps_removed,
        env,
    })
}

/// `--out`: not a file, not inside the source, its folder present; without `--update` absent or
/// an empty folder (else 11); with it, a bake copy (checked by [`previous_record`]).
fn check_out(source: &Path, out: &Path, update: bool) -> Result<(), BakeError> {
    let usage = |message: String| BakeError::Usage {
        code: "BAKE_OUT_INVALID",
        message,
        fix:
            "name a folder outside the source village, in an existing folder (e.g. deploy/village)"
                .into(),
    };
    if out.exists() && !out.is_dir() {
        return Err(usage(format!(
            "--out {} is a file, not a folder",
            out.display()
        )));
    }
    let parent = match out.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => {
            return Err(usage(format!(
                "--out {} has no parent folder",
                out.display()
            )));
        }
    };
    let (Ok(parent_real), Ok(source_real)) = (parent.canonicalize(), source.canonicalize()) else {
        return Err(usage(format!(
            "--out {}: its folder does not exist",
            out.display()
        )));
    };
    let out_real = match out.file_name() {
        Some(name) => parent_real.join(name),
        None => return Err(usage(format!("--out {} names no folder", out.display()))),
    };
    if out_real.starts_with(&source_real) || source_real.starts_with(&out_real) {
        return Err(usage(format!(
            "--out {} is inside the source village {} (or holds it)",
            out.display(),
            source.display()
        )));
    }
    if !update && out.is_dir() {
        let empty = std::fs::read_dir(out)
            .map(|mut entries| entries.next().is_none())
            .unwrap_or(false);
        if !empty {
            return Err(BakeError::OutState {
                code: "BAKE_OUT_NOT_EMPTY",
                message: format!(
                    "--out {} exists and is not empty; a first bake never writes over anything",
                    out.display()
                ),
                fix: "pass --update to re-bake a copy bake made, or name a new folder".into(),
            });
        }
    }
    Ok(())
}

/// `--update`: the copy's `bake.json` (its absence or a broken one is a state mismatch, 11).
fn previous_record(out: &HostPaths) -> Result<BakeRecord, BakeError> {
    let state = |message: String| BakeError::OutState {
        code: "BAKE_OUT_NOT_A_COPY",
        message,
        fix: "--update re-bakes only a copy bake made; bake without --update into a new folder"
            .into(),
    };
    match out.shelf().load_bake_record() {
        Ok(Some(loaded)) if out.workspace().is_dir() => Ok(loaded.value),
        Ok(_) => Err(state(format!(
            "--out {}: no bake.json (or no workspace): not a copy bake made",
            out.data_dir().display()
        ))),
        Err(e) => Err(state(format!(
            "--out {}: bake.json does not read: {e}",
            out.data_dir().display()
        ))),
    }
}

/// The source's time zone: `--source-time-zone` when given; else the machine's zone (its
/// `/etc/localtime`, what a GUI started from the desktop fires schedules in), with `TZ` as
/// the override it is: when this shell sets `TZ`, its zone is recorded (a GUI started from
/// this shell fires in it) and, when it differs from the machine's, a warning names both. A
/// zone that cannot be read (or only the UTC fallback) is a usage error (2): `bake.json`
/// never records a guess.
fn time_zone(opts: &BakeOptions<'_>) -> Result<(String, Option<Warning>), BakeError> {
    let usage = |message: String| BakeError::Usage {
        code: "BAKE_TIME_ZONE_UNREADABLE",
        message,
        fix:
            "pass --source-time-zone with the IANA name of the GUI machine's zone (e.g. Asia/Tokyo)"
                .into(),
    };
    if let Some(given) = &opts.source_time_zone {
        return match resolve_process_zone(Some(given)) {
            Ok(zone) if !given.trim().is_empty() => Ok((zone.name().to_owned(), None)),
            _ => Err(usage(format!(
                "--source-time-zone {given:?} names no known time zone"
            ))),
        };
    }
    let machine = resolve_process_zone(None)
        .ok()
        .filter(|zone| zone.source() != ZoneSource::Fallback)
        .map(|zone| zone.name().to_owned());
    zone_of_machine(machine, opts.tz_var.as_deref()).map_err(usage)
}

/// [`time_zone`] without `--source-time-zone`: the machine's zone, `TZ` over it.
fn zone_of_machine(
    machine: Option<String>,
    tz: Option<&str>,
) -> Result<(String, Option<Warning>), String> {
    let Some(tz) = tz else {
        return machine
            .map(|name| (name, None))
            .ok_or_else(|| "this machine's time zone cannot be read".into());
    };
    let zone = resolve_process_zone(Some(tz))
        .map_err(|e| format!("TZ names no time zone this machine knows: {e}"))?;
    let name = zone.name().to_owned();
    let warning = machine.filter(|m| *m != name).map(|m| {
        Warning::new(
            "BAKE_TZ_OVERRIDES_MACHINE_ZONE",
            format!(
                "TZ={name} in this shell overrides the machine's zone {m}; {name} was recorded \
                 (pass --source-time-zone {m} if the GUI runs in the machine's zone)"
            ),
        )
    });
    Ok((name, warning))
}

/// The maps added and removed against the previous `bake.json`.
fn map_changes(previous: Option<&BakeRecord>, record: &BakeRecord) -> (Vec<String>, Vec<String>) {
    let Some(previous) = previous else {
        return (Vec::new(), Vec::new());
    };
    let text = |m: &fuseforks_core::village::PathMap| format!("{}={}", m.from, m.to);
    let old: Vec<String> = previous.maps.iter().map(text).collect();
    let new: Vec<String> = record.maps.iter().map(text).collect();
    (
        new.iter().filter(|m| !old.contains(m)).cloned().collect(),
        old.iter().filter(|m| !new.contains(m)).cloned().collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_zone_is_recorded_and_tz_overrides_it_aloud() {
        let machine = || Some("Europe/Berlin".to_owned());
        let (zone, warning) = zone_of_machine(machine(), None).unwrap();
        assert_eq!((zone.as_str(), warning), ("Europe/Berlin", None));
        let (zone, warning) = zone_of_machine(machine(), Some("Europe/Berlin")).unwrap();
        assert_eq!((zone.as_str(), warning), ("Europe/Berlin", None));
        let (zone, warning) = zone_of_machine(machine(), Some("Asia/Tokyo")).unwrap();
        assert_eq!(zone, "Asia/Tokyo");
        let warning = warning.expect("an override that differs is said");
        assert_eq!(warning.code, "BAKE_TZ_OVERRIDES_MACHINE_ZONE");
        assert!(
            warning.message.contains("Europe/Berlin") && warning.message.contains("Asia/Tokyo")
        );
        // No machine zone: TZ alone, without a warning; neither: refused.
        assert_eq!(
            zone_of_machine(None, Some("Asia/Tokyo")).unwrap(),
            ("Asia/Tokyo".to_owned(), None)
        );
        assert!(zone_of_machine(None, None).is_err());
        assert!(zone_of_machine(machine(), Some("Bogus/Zone")).is_err());
    }
}
