//! Changes to `world.json` made while the village runs (the GUI's settings, a group's switch):
//! the change is applied to a copy of the registry, written through the village store (atomic,
//! the write rules checked, never over a file that does not read), and only then put in place
//! of the one in memory, under the registry's write lock, so two changes never interleave and a
//! refused change leaves both the file and the running village as they were.

use super::Orchestrator;
use crate::CoreError;
use crate::sync::LockOrRecover;
use crate::village::World;

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

impl super::Inner {
    pub(super) fn update_world(
        &self,
        change: impl FnOnce(&mut World) -> Result<(), CoreError>,
    ) -> Result<World, CoreError> {
        let _one_at_a_time = self.world_edit.lock_or_recover();
        let mut world = self.world();
        change(&mut world)?;
        self.store().save_world(&world)?;
        self.set_world(world.clone());
        Ok(world)
    }
}
