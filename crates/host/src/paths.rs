//! `HostPaths`: a process knows only its `data_dir`; the village is always
//! `data_dir/workspace` and the shelf files sit in `data_dir` itself (seed 001 D2).

use std::path::{Path, PathBuf};

use fuseforks_core::village::shelf_store::names::WORKSPACE;
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
}
