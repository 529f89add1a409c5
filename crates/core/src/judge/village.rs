//! The judges of a village as the engine sees them: each one's file read (bounded), parsed
//! and checked against the village's servants, and whether it can run (why not, once).

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::village::judge_rules::Finding;
use crate::village::judge_rules::JudgeRules;
use crate::village::judge_rules::MAX_FILE_BYTES;
use crate::village::judge_rules::Roster;
use crate::village::judge_rules::validate_judge;
use crate::village::{JudgeSpec, VillageStore, World};

/// One judge's file, checked.
#[derive(Debug, Clone)]
pub struct JudgeState {
    /// The judge as listed in `world.json`.
    pub spec: JudgeSpec,
    /// `judges/<id>/judge.toml`.
    pub path: PathBuf,
    /// The checked rules, or every finding (a missing or unreadable file is one finding).
    pub rules: Result<JudgeRules, Vec<Finding>>,
}

impl JudgeState {
    /// Why the judge exposes no tool (`None` = it can run, as far as the village says; the
    /// backend's own settings are checked where it runs).
    pub fn unavailable(&self, world: &World) -> Option<String> {
        if !self.spec.enabled {
            return Some("disabled".into());
        }
        if let Err(findings) = &self.rules {
            let first = findings.first().map_or(String::new(), |f| {
                format!(" (first at {}:{}: {})", f.line, f.col, f.message)
            });
            return Some(format!(
                "invalid judge.toml: {} finding(s){first}",
                findings.len()
            ));
        }
        if let Some(t) = &self.spec.model_template_id
            && !world.model_templates.iter().any(|m| &m.id == t)
        {
            return Some(format!("model template {:?} does not exist", t.as_str()));
        }
        None
    }
}

/// Reads and checks the `judge.toml` of each judge of `world` (all, in list order).
pub fn judge_states(store: &VillageStore, world: &World) -> Vec<JudgeState> {
    let servants: Vec<&str> = world.agents.iter().map(|a| a.id.as_str()).collect();
    let judges: Vec<&str> = world.judges.iter().map(|j| j.id.as_str()).collect();
    let roster = Roster {
        servants: &servants,
        judges: &judges,
    };
    world
        .judges
        .iter()
        .map(|spec| judge_state(store, spec, roster))
        .collect()
}

fn judge_state(store: &VillageStore, spec: &JudgeSpec, roster: Roster<'_>) -> JudgeState {
    let whole = |message: String, fix: &str| {
        Err(vec![Finding {
            line: 1,
            col: 1,
            message,
            fix: fix.into(),
        }])
    };
    let (path, rules) = match store.judge_file(&spec.id) {
        Err(e) => (
            PathBuf::new(),
            whole(e.to_string(), "fix the judge's folder"),
        ),
        Ok(file) => {
            let path = file.path().to_path_buf();
            let rules = match read_bounded(&path) {
                Ok(Some(text)) => validate_judge(&text, roster),
                Ok(None) => whole(
                    "judge.toml is missing".into(),
                    "write judges/<id>/judge.toml (the GUI writes a starter file)",
                ),
                Err(why) => whole(
                    format!("judge.toml cannot be read: {why}"),
                    "make it a regular UTF-8 text file (not a link, folder or pipe) under 256 KiB",
                ),
            };
            (path, rules)
        }
    };
    JudgeState {
        spec: spec.clone(),
        path,
        rules,
    }
}

/// Reads a judge file: a regular file (not a link, FIFO or folder), at most
/// [`MAX_FILE_BYTES`] + 1 bytes (so an oversized file is still refused by the parser with its
/// location), UTF-8 with an optional BOM. `None` when absent.
pub fn read_bounded(path: &Path) -> Result<Option<String>, String> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.kind().to_string()),
    };
    if !meta.file_type().is_file() {
        return Err("not a regular file".into());
    }
    let file = std::fs::File::open(path).map_err(|e| e.kind().to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.kind().to_string())?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Some(text.to_owned())),
        Err(e) if bytes.len() > MAX_FILE_BYTES && e.valid_up_to() + 4 > bytes.len() => {
            // Cut in the middle of a character by the cap: the parser refuses the size.
            Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
        }
        Err(e) => Err(format!("not UTF-8 (byte {})", e.valid_up_to())),
    }
}
