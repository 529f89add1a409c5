//! `bake --env-out PATH`: the container's `.env` from this machine's secret store —
//! `TZ` from the source's time zone and one `FUSEFORKS_SECRET_*` line per key the village
//! uses — written owner-only (0600) through the core's atomic writer, never printed. Without
//! `--update` the file must not exist (11); with it, the file's other lines are kept and what
//! changes is named in `ENV_*` warnings (names only, never values).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use fuseforks_core::village::write_secret_file_atomically;

use super::Warning;
use super::error::BakeError;
use crate::HostPaths;
use crate::secret_names::{ENV_PREFIX, env_var_name, needed_keys};
use crate::secrets::SecretStore;

/// The largest `.env` read back with `--update`.
const MAX_ENV_BYTES: u64 = 1024 * 1024;

/// The planned `.env`: its text and what it says, ready to write.
#[derive(Debug)]
pub struct EnvPlan {
    path: PathBuf,
    text: String,
    /// The variables given a value (names only).
    pub variables: Vec<String>,
    /// The variables written commented out.
    pub commented: Vec<String>,
}

impl EnvPlan {
    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether a value can stand unquoted on a `.env` line that both `docker run --env-file` and
/// compose read the same way: printable, no space, no quote, `$`, `#` or backslash.
fn writable(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_graphic() && !matches!(c, '\'' | '"' | '$' | '#' | '\\' | '`'))
}

/// Checks the `--env-out` path before anything is written: not a folder, its folder exists,
/// absent unless `update`.
pub(super) fn check_path(path: &Path, update: bool) -> Result<(), BakeError> {
    let parent = match path.parent() {
        Some(p) if p.as_os_str().is_empty() => Path::new("."),
        Some(p) => p,
        None => Path::new("."),
    };
    if path.is_dir() || !parent.is_dir() {
        return Err(BakeError::Usage {
            code: "BAKE_ENV_OUT_INVALID",
            message: format!(
                "--env-out {}: {}",
                path.display(),
                if path.is_dir() {
                    "is a folder"
                } else {
                    "its folder does not exist"
                }
            ),
            fix: "name a file in an existing folder, e.g. deploy/.env".into(),
        });
    }
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !update || !meta.file_type().is_file() => Err(BakeError::OutState {
            code: "BAKE_ENV_OUT_EXISTS",
            message: format!(
                "--env-out {}: {}",
                path.display(),
                if meta.file_type().is_file() {
                    "the file exists (without --update it is never written over)"
                } else {
                    "is not a regular file"
                }
            ),
            fix: "pass --update to refresh it, or name another file".into(),
        }),
        _ => Ok(()),
    }
}

/// Refuses an `--env-out` inside the source village or inside the copy (2): the secrets would
/// travel with the village (its backups, the container's `/data` volume).
pub(super) fn check_place(path: &Path, source: &Path, out: &Path) -> Result<(), BakeError> {
    let real = |p: &Path| -> Option<PathBuf> {
        let parent = match p.parent() {
            Some(d) if d.as_os_str().is_empty() => Path::new("."),
            Some(d) => d,
            None => Path::new("."),
        };
        Some(parent.canonicalize().ok()?.join(p.file_name()?))
    };
    let env = real(path);
    let inside = |folder: Option<PathBuf>| {
        folder.is_some_and(|f| env.as_ref().is_some_and(|e| e.starts_with(&f)))
    };
    let place = if inside(source.canonicalize().ok()) {
        "inside the source village"
    } else if inside(real(out)) {
        "inside the copy (the container would carry its secrets in /data)"
    } else {
        return Ok(());
    };
    Err(BakeError::Usage {
        code: "BAKE_ENV_OUT_INVALID",
        message: format!("--env-out {}: {place}", path.display()),
        fix: "write it beside the copy, e.g. --out deploy/village --env-out deploy/.env".into(),
    })
}

/// Plans the `.env` of the village at `src`: reads each key from `store`, merges with the
/// existing file under `update`.
pub(super) fn plan(
    path: &Path,
    src: &HostPaths,
    store: &dyn SecretStore,
    time_zone: &str,
    update: bool,
    warnings: &mut Vec<Warning>,
) -> Result<EnvPlan, BakeError> {
    let keys = needed_keys(src).map_err(BakeError::Source)?;
    let existing = if update {
        read_existing(path)?
    } else {
        Vec::new()
    };
    let value_of = |name: &str| {
        existing
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let mut lines = vec![
        "# Written by fuseforks-cli bake --env-out: secrets from this machine's store.".to_owned(),
        "# Keep it owner-only (0600) and out of version control.".to_owned(),
        format!("TZ={time_zone}"),
    ];
    if let Some(old) = value_of("TZ").filter(|old| *old != time_zone) {
        warnings.push(Warning::new(
            "ENV_TZ_DIFFERS",
            format!("{}: TZ was {old}; the source's zone {time_zone} was written (schedules fire in the source's local time)", path.display()),
        ));
    }
    let mut plan = EnvPlan {
        path: path.to_owned(),
        text: String::new(),
        variables: Vec::new(),
        commented: Vec::new(),
    };
    let mut ours = BTreeSet::from(["TZ".to_owned()]);
    for key in &keys {
        let var = env_var_name(&key.key);
        if !ours.insert(var.clone()) {
            continue;
        }
        let stored = store
            .get(&key.key)
            .map_err(|e| BakeError::Secrets(e.to_string()))?;
        let line = env_line(path, &var, key, stored.as_deref(), value_of(&var), warnings);
        match line {
            Some(line) => {
                lines.push(line);
                plan.variables.push(var);
            }
            None => {
                lines.push(format!("# {var}=   ({}: not in the store)", key.used_by));
                plan.commented.push(var);
            }
        }
    }
    for (name, value) in &existing {
        if ours.contains(name) {
            continue;
        }
        if name.starts_with(ENV_PREFIX) {
            warnings.push(Warning::new(
                "ENV_UNUSED",
                format!(
                    "{}: {name} is used by nothing in the village; kept",
                    path.display()
                ),
            ));
        }
        lines.push(format!("{name}={value}"));
    }
    plan.text = lines.join("\n") + "\n";
    Ok(plan)
}

/// One variable's line, or `None` for a commented one (with its warning).
fn env_line(
    path: &Path,
    var: &str,
    key: &crate::secret_names::NeededKey,
    stored: Option<&str>,
    old: Option<&str>,
    warnings: &mut Vec<Warning>,
) -> Option<String> {
    let file = path.display();
    match (stored, old) {
        (Some(value), _) if !writable(value) => {
            warnings.push(Warning::new(
                "ENV_VALUE_UNWRITABLE",
                format!("{file}: {var}: the stored value holds a space, quote, $, # or backslash and cannot stand on a .env line; it was written commented out"),
            ));
            None
        }
        (Some(value), Some(old)) => {
            if old != value {
                warnings.push(Warning::new(
                    "ENV_VALUE_DIFFERS",
                    format!("{file}: {var} differed from the secret store; the store's value was written"),
                ));
            }
            Some(format!("{var}={value}"))
        }
        (Some(value), None) => Some(format!("{var}={value}")),
        // The store has none, the file has one: the operator's value stays.
        (None, Some(old)) => Some(format!("{var}={old}")),
        (None, None) => {
            if key.required {
                warnings.push(Warning::new(
                    "ENV_COMMENTED_OUT",
                    format!("{file}: {var} ({}) is not in the secret store; its line is commented out: fill it in before starting the container", key.used_by),
                ));
            }
            None
        }
    }
}

/// The `NAME=value` lines of an existing `.env` (comments and blanks skipped).
fn read_existing(path: &Path) -> Result<Vec<(String, String)>, BakeError> {
    let bytes = match super::source::read_bytes(path) {
        Ok(Some(b)) if b.len() as u64 <= MAX_ENV_BYTES => b,
        Ok(None) => return Ok(Vec::new()),
        Ok(Some(_)) | Err(_) => {
            return Err(BakeError::OutState {
                code: "BAKE_ENV_OUT_UNREADABLE",
                message: format!(
                    "--env-out {}: the existing file cannot be read back",
                    path.display()
                ),
                fix: "repair or remove it, then run bake again".into(),
            });
        }
    };
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.to_owned()))
        .collect())
}

/// The `.env` written beside its place (0600, fsynced) before the copy is made, so that a
/// failure to write it stops the bake with nothing written; [`StagedEnv::commit`] moves it
/// into place once the copy stands. Dropped uncommitted, it is removed.
pub(super) struct StagedEnv {
    temp: std::path::PathBuf,
    path: std::path::PathBuf,
    committed: bool,
}

/// Writes the `.env` under a temporary name beside `plan.path`.
pub(super) fn stage(plan: &EnvPlan) -> Result<StagedEnv, BakeError> {
    let name = plan
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = plan
        .path
        .with_file_name(format!(".{name}.bake-{}", std::process::id()));
    write_secret_file_atomically(&temp, plan.text.as_bytes())
        .map_err(|e| BakeError::write(&plan.path, e))?;
    Ok(StagedEnv {
        temp,
        path: plan.path.clone(),
        committed: false,
    })
}

impl StagedEnv {
    /// Renames the staged `.env` into place.
    pub(super) fn commit(mut self) -> Result<(), BakeError> {
        std::fs::rename(&self.temp, &self.path).map_err(|e| BakeError::write(&self.path, e))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for StagedEnv {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::writable;

    #[test]
    fn only_plain_values_stand_unquoted() {
        assert!(writable("sk-abc_123.XYZ/+="));
        for bad in ["", "a b", "a'b", "a\"b", "a$b", "a#b", "a\\b", "a\nb"] {
            assert!(!writable(bad), "{bad:?}");
        }
    }
}
