//! `HostPaths`: a process knows only its `data_dir`; the village is always
//! `data_dir/workspace` and the shelf files sit in `data_dir` itself.

use std::path::{Path, PathBuf};

use fuseforks_core::village::WORKSPACE;
use fuseforks_core::village::{ShelfStore, VillageStore};

/// The paths of one running village, derived from a single `data_dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPaths {
    data_dir: PathBuf,
}

impl HostPaths {
    /// Paths for `data_dir` (which need not exist yet).
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
        }
    }

    /// The per-machine shelf folder.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The village folder: always `data_dir/workspace`.
    pub fn workspace(&self) -> PathBuf {
        self.data_dir.join(WORKSPACE)
    }

    /// The store of the village.
    pub fn village(&self) -> VillageStore {
        VillageStore::new(self.workspace())
    }

    /// The store of the shelf.
    pub fn shelf(&self) -> ShelfStore {
        ShelfStore::new(&self.data_dir)
    }

    /// `Some` when there is no village at `data_dir/workspace`; its fix says "use its parent"
    /// when `data_dir` is itself a village's workspace (it holds `world.json`).
    pub fn village_missing(&self) -> Option<VillageMissing> {
        let file = self.workspace().join("world.json");
        if file.is_file() {
            return None;
        }
        let fix = match self.parent_when_workspace() {
            Some(parent) => format!(
                "--data-dir points at a village's workspace folder; use its parent: --data-dir {}",
                shell_word(&parent.display().to_string())
            ),
            None => "run `fuseforks-cli init --data-dir <DIR>` or point --data-dir at a village (the folder that holds workspace/)".to_owned(),
        };
        Some(VillageMissing { file, fix })
    }

    /// The folder above `data_dir` when `data_dir` itself is a village's workspace.
    pub fn parent_when_workspace(&self) -> Option<PathBuf> {
        if !self.data_dir.join("world.json").is_file() {
            return None;
        }
        let absolute = self
            .data_dir
            .canonicalize()
            .unwrap_or_else(|_| self.data_dir.clone());
        Some(
            absolute
                .parent()
                .map_or_else(|| PathBuf::from(".."), Path::to_path_buf),
        )
    }
}

/// `VILLAGE_MISSING`: no `world.json` at `data_dir/workspace`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: no village here (world.json is missing)", .file.display())]
pub struct VillageMissing {
    /// The missing `world.json`.
    pub file: PathBuf,
    /// How to fix it (names the parent when `--data-dir` is a workspace).
    pub fix: String,
}

impl VillageMissing {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        "VILLAGE_MISSING"
    }
}

impl fuseforks_core::Coded for VillageMissing {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(self.fix.clone().into())
    }
}

/// `text` as one POSIX shell word, for commands printed to be pasted: as it is when it holds
/// only characters no shell treats specially, else in single quotes (a `'` inside as `'\''`).
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || "/._-+:,@%".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_is_derived_from_the_data_dir() {
        let paths = HostPaths::new("/srv/village");
        assert_eq!(paths.workspace(), Path::new("/srv/village/workspace"));
        assert_eq!(
            paths.village().workspace(),
            Path::new("/srv/village/workspace")
        );
        assert_eq!(paths.shelf().data_dir(), Path::new("/srv/village"));
    }

    #[test]
    fn a_workspace_given_as_data_dir_is_told_to_use_its_parent() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::write(workspace.join("world.json"), "{}").unwrap();
        assert!(HostPaths::new(dir.path()).village_missing().is_none());
        let missing = HostPaths::new(&workspace).village_missing().unwrap();
        assert!(missing.fix.contains("use its parent"), "{}", missing.fix);
        let elsewhere = HostPaths::new(dir.path().join("empty"))
            .village_missing()
            .unwrap();
        assert!(!elsewhere.fix.contains("parent"), "{}", elsewhere.fix);
    }

    #[test]
    fn shell_words_quote_what_a_shell_would_split_or_expand() {
        assert_eq!(shell_word("/srv/village-1"), "/srv/village-1");
        assert_eq!(shell_word("my village"), "'my village'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("~x"), "'~x'");
        assert_eq!(shell_word("=ls"), "'=ls'");
    }
}
