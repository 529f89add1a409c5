//! `FUSEFORKS_REQUIRE_BAKE`: a process told to run only a bake copy (the image sets it to `1`)
//! refuses a data folder without `bake.json` at its top as the preflight's one finding,
//! `NOT_A_BAKE_COPY`, made before the village is read or anything is written: an unmounted
//! volume leaves an empty folder with no village to read (the README's Headless section).
//! `1` requires a copy; unset, empty or `0` does not; any other value is refused
//! (`REQUIRE_BAKE_INVALID`), never guessed, since a mistyped switch would run a village it was
//! set to refuse.

use std::ffi::OsStr;
use std::path::Path;

use fuseforks_core::Coded;
use fuseforks_core::preflight::{Finding, Level};
use fuseforks_core::village::Language;

use crate::paths::HostPaths;

/// The variable's name.
pub const VARIABLE: &str = "FUSEFORKS_REQUIRE_BAKE";

/// What `FUSEFORKS_REQUIRE_BAKE` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BakeRequirement {
    /// Any village runs (unset, empty or `0`).
    Off,
    /// Only a bake copy runs (`1`).
    Required,
}

impl BakeRequirement {
    /// The requirement this process's environment sets.
    pub fn from_env() -> Result<Self, RequireBakeInvalid> {
        Self::parse(std::env::var_os(VARIABLE).as_deref())
    }

    /// The requirement a value of the variable sets (`None`: unset).
    pub fn parse(value: Option<&OsStr>) -> Result<Self, RequireBakeInvalid> {
        match value.map(|v| v.to_str()) {
            None | Some(Some("" | "0")) => Ok(Self::Off),
            Some(Some("1")) => Ok(Self::Required),
            Some(_) => Err(RequireBakeInvalid {
                value: value.unwrap_or_default().to_string_lossy().into_owned(),
            }),
        }
    }

    /// Whether `paths` is refused: a copy is required and it has no `bake.json` at its top.
    pub fn refuses(self, paths: &HostPaths) -> bool {
        self == Self::Required && !paths.shelf().is_bake_copy()
    }
}

/// `REQUIRE_BAKE_INVALID`: the variable holds something other than `1`, `0` or nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{VARIABLE}={value:?}: it takes 1 (run only a bake copy), or 0, empty or unset (no requirement)"
)]
pub struct RequireBakeInvalid {
    /// The value as set (not a secret: a switch).
    pub value: String,
}

impl Coded for RequireBakeInvalid {
    fn code(&self) -> &'static str {
        "REQUIRE_BAKE_INVALID"
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(
            format!(
                "set {VARIABLE}=1 to run only a bake copy, or 0 (or unset it) to run any village"
            )
            .into(),
        )
    }
}

/// `NOT_A_BAKE_COPY` for the data folder `folder` (as the person gave it), in `language`.
pub fn not_a_bake_copy(folder: &Path, language: Language) -> Finding {
    let folder = folder.display();
    let message = language.pick(
        format!(
            "{folder} は bake で作った写しではありません（先頭に bake.json がありません）。{VARIABLE}=1 は写しだけを動かします。"
        ),
        format!(
            "{folder} is not a bake copy (no bake.json at its top), and {VARIABLE}=1 runs only one."
        ),
    );
    let fix = language.pick(
        format!(
            "GUI のある機械で `fuseforks-cli bake --data-dir <GUI の村> --out <フォルダー>` で写しを作り、そのフォルダーを {folder} にマウントしてください（ボリュームのマウント忘れなら、マウントしてください）。"
        ),
        format!(
            "Make the copy on the GUI machine with `fuseforks-cli bake --data-dir <GUI village> --out <folder>`, then mount that folder at {folder} (if the volume was not mounted, mount it)."
        ),
    );
    Finding {
        level: Level::Reject,
        code: "NOT_A_BAKE_COPY",
        message,
        fix,
        file: None,
        field: None,
        remedy: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_requires_zero_empty_and_unset_do_not_and_the_rest_is_refused() {
        let parse = |v: Option<&str>| BakeRequirement::parse(v.map(OsStr::new));
        assert_eq!(parse(Some("1")), Ok(BakeRequirement::Required));
        for off in [None, Some(""), Some("0")] {
            assert_eq!(parse(off), Ok(BakeRequirement::Off), "{off:?}");
        }
        for bad in ["yes", "true", " 1", "01"] {
            let err = parse(Some(bad)).unwrap_err();
            assert_eq!(err.value, bad);
            assert!(
                err.to_string().starts_with("FUSEFORKS_REQUIRE_BAKE="),
                "{err}"
            );
        }
    }

    #[test]
    fn only_a_folder_with_bake_json_at_its_top_passes() {
        let dir = tempfile::tempdir().unwrap();
        let paths = HostPaths::new(dir.path());
        assert!(BakeRequirement::Required.refuses(&paths));
        assert!(!BakeRequirement::Off.refuses(&paths));
        let refused = not_a_bake_copy(dir.path(), Language::En);
        assert_eq!(
            (refused.code, refused.level),
            ("NOT_A_BAKE_COPY", Level::Reject)
        );
        let record = dir.path().join("bake.json");
        std::fs::create_dir(&record).unwrap();
        assert!(
            BakeRequirement::Required.refuses(&paths),
            "a folder named bake.json is not the record"
        );
        std::fs::remove_dir(&record).unwrap();
        std::fs::write(&record, "{}").unwrap();
        assert!(!BakeRequirement::Required.refuses(&paths));
    }
}
