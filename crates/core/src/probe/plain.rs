//! What a person approves must be what runs: a probe's command, arguments and `cwd` hold no
//! control characters (a terminal would hide them in the approval prompt), and its `cwd` is a
//! real path — no `..` and no symlink — so that an approval cannot be re-pointed later.

use std::path::{Component, Path, PathBuf};

use crate::village::ScheduleProbe;

/// The folder the probe runs in, when it is plain; else why not (never the folder's contents).
pub fn plain_cwd(probe: &ScheduleProbe, workspace: &Path) -> Result<PathBuf, &'static str> {
    let texts = std::iter::once(probe.command.as_str())
        .chain(probe.args.iter().map(String::as_str))
        .chain(probe.cwd.as_deref());
    if texts.clone().any(|t| t.chars().any(char::is_control)) {
        return Err("the command line or cwd holds a control character, which a terminal hides");
    }
    let base = workspace
        .canonicalize()
        .map_err(|_| "the workspace folder cannot be resolved")?;
    let Some(dir) = probe.cwd.as_deref() else {
        return Ok(base);
    };
    let dir = Path::new(dir);
    if dir.components().any(|c| c == Component::ParentDir) {
        return Err("cwd holds `..`: write the folder's real path");
    }
    let lexical = base.join(dir); // an absolute `cwd` replaces the base
    match lexical.canonicalize() {
        Ok(real) if real == lexical => Ok(real),
        Ok(_) => Err("cwd goes through a symlink: write the folder's real path"),
        Err(_) => Err("cwd is not a folder"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(command: &str, args: &[&str], cwd: Option<&str>) -> ScheduleProbe {
        serde_json::from_value(serde_json::json!({
            "command": command, "args": args, "cwd": cwd, "expect": "ok"
        }))
        .unwrap()
    }

    #[test]
    fn hidden_characters_dotdot_and_symlinks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("workspace");
        std::fs::create_dir_all(ws.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.path(), ws.join("link")).unwrap();
        let real = ws.canonicalize().unwrap();
        assert_eq!(plain_cwd(&probe("sh", &[], None), &ws), Ok(real.clone()));
        assert_eq!(
            plain_cwd(&probe("sh", &[], Some("real")), &ws),
            Ok(real.join("real"))
        );
        for bad in [
            probe("sh", &["-c", "echo ok\u{1b}]0; touch x;\u{7}"], None),
            probe("echo\u{1b}]0;x\u{7}", &[], None),
            probe("sh", &[], Some("link")),
            probe("sh", &[], Some("../..")),
            probe("sh", &[], Some("missing")),
        ] {
            assert!(plain_cwd(&bad, &ws).is_err(), "{bad:?}");
        }
    }
}
