//! The registry in memory and its changes made while the village runs (the GUI's settings, a
//! group's switch): a change is applied to a copy of the registry, written through the village
//! store (atomic, the write rules checked, never over a file that does not read), and only then
//! put in place of the one in memory. The edit lock is held from the copy to the put, so two
//! changes never interleave and a refused change leaves both the file and the running village
//! as they were; readers take only the registry's read lock, never the edit lock, so they are
//! not held up by a change's write.

use std::sync::{Mutex, RwLock};

use super::Orchestrator;
use crate::CoreError;
use crate::sync::{LockOrRecover, RwLockOrRecover};
use crate::village::{Language, VillageStore, World};

/// The village's files, its registry in memory, and the language in effect.
pub(super) struct Registry {
    store: VillageStore,
    world: RwLock<World>,
    /// Held by a change from start (the copy) to end (put in place); taken before `world`.
    edit: Mutex<()>,
    language: Language,
}

impl Registry {
    /// Reads `world.json` from `workspace`; the language is the village's, or the OS locale's
    /// when the village leaves it undetermined.
    pub(super) fn open(
        workspace: &std::path::Path,
        os_locale: Option<&str>,
    ) -> Result<Self, CoreError> {
        let store = VillageStore::new(workspace);
        let world = store.load_world()?.value;
        let language = world.effective_language(os_locale);
        Ok(Self {
            store,
            world: RwLock::new(world),
            edit: Mutex::default(),
            language,
        })
    }

    /// The village's files.
    pub(super) fn store(&self) -> &VillageStore {
        &self.store
    }

    /// A copy of the registry.
    pub(super) fn world(&self) -> World {
        self.world.read_or_recover().clone()
    }

    /// The village language in effect.
    pub(super) fn language(&self) -> Language {
        self.language
    }

    /// Applies `change` to a copy of the registry, saves it, and puts it in effect.
    pub(super) fn update(
        &self,
        change: impl FnOnce(&mut World) -> Result<(), CoreError>,
    ) -> Result<World, CoreError> {
        let _one_at_a_time = self.edit.lock_or_recover();
        let mut world = self.world();
        change(&mut world)?;
        self.store.save_world(&world)?;
        *self.world.write_or_recover() = world.clone();
        Ok(world)
    }
}

impl Orchestrator {
    /// Applies `change` to the registry, saves it, and puts it in effect. A `change` that
    /// returns `Err` writes nothing; so does a write the store refuses.
    pub fn update_world(
        &self,
        change: impl FnOnce(&mut World) -> Result<(), CoreError>,
    ) -> Result<World, CoreError> {
        self.inner.update_world(change)
    }
}
