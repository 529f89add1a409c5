//! The second of `bake`'s stages: every planned file is first written into a staging folder
//! beside `--out` (through the core's stores and atomic writer), so that a file the core
//! refuses stops the bake before the copy is touched. Nothing reads the staging folder before
//! it is in place, so its files are written plainly (the core's stores opened `staged`,
//! `WriteMode::Staged`) and made durable once (`make_durable`) before any rename. A first bake then renames the whole
//! staging folder into place (a SIGKILL leaves no half copy at `--out`); `--update` renames
//! the staged files over the copy one by one (each rename atomic), removes what the source
//! no longer has, and makes that durable once (one `syncfs` on Linux, else each folder it
//! changed). Runtime files are never in the plan, so never touched.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use fuseforks_core::probe::approve_probes;
use fuseforks_core::village::{ShelfStore, VillageStore, WriteMode, make_durable, write_file};

use super::error::BakeError;
use super::plan::{Content, Plan, Planned};

/// A staging folder beside the copy; removed on drop unless it was renamed into place.
pub(crate) struct Staging {
    dir: PathBuf,
    keep: bool,
}

impl Staging {
    /// Creates `.<out-name>.baking-<pid>-<nanos>` beside `out`.
    pub(crate) fn beside(out: &Path) -> Result<Self, BakeError> {
        let parent = out.parent().unwrap_or(Path::new("."));
        let name = out
            .file_name()
            .map_or_else(|| "copy".into(), |n| n.to_string_lossy().into_owned());
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = parent.join(format!(".{name}.baking-{}-{nanos}", std::process::id()));
        fs::create_dir(&dir).map_err(|e| BakeError::write(&dir, e))?;
        Ok(Self { dir, keep: false })
    }

    /// The staging folder.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Writes every planned file under `root` (a staging folder), then makes them all durable.
pub(crate) fn write_all(root: &Path, plan: &Plan) -> Result<(), BakeError> {
    let village = VillageStore::staged(root.join("workspace"));
    let shelf = ShelfStore::staged(root);
    plan.writes
        .iter()
        .try_for_each(|planned| write_one(root, &village, &shelf, planned))?;
    make_durable(root).map_err(|e| BakeError::write(root, e))
}

fn write_one(
    root: &Path,
    village: &VillageStore,
    shelf: &ShelfStore,
    planned: &Planned,
) -> Result<(), BakeError> {
    let path = root.join(&planned.rel);
    let failed = |e: &dyn std::fmt::Display| BakeError::write(&path, e);
    match &planned.content {
        Content::Bytes(bytes) => {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|e| failed(&e))?;
            }
            write_file(&path, bytes, WriteMode::Staged).map_err(|e| failed(&e))
        }
        Content::World(world) => village.save_world(world).map_err(|e| failed(&e)),
        Content::SharedMcp(config) => village.save_shared_mcp(config).map_err(|e| failed(&e)),
        Content::AgentMcp(id, config) => village
            .agent_files(id)
            .and_then(|f| f.save_mcp(config))
            .map_err(|e| failed(&e)),
        Content::Schedules(s) => village.save_schedules(s).map_err(|e| failed(&e)),
        Content::Run(id, policy) => village
            .agent_files(id)
            .and_then(|f| f.save_run_policy(policy))
            .map_err(|e| failed(&e)),
        Content::Jev(jev) => shelf.save_jev(jev).map_err(|e| failed(&e)),
        Content::Pricing(p) => shelf.save_pricing_source(p).map_err(|e| failed(&e)),
        Content::Approvals(village_id, probes) => approve_probes(shelf, probes, village_id)
            .map(drop)
            .map_err(|e| failed(&e)),
        Content::Record(record) => shelf.save_bake_record(record).map_err(|e| failed(&e)),
    }
}

/// A first bake: the staging folder becomes `out` (which is absent or an empty folder).
pub(crate) fn put_in_place(mut staging: Staging, out: &Path) -> Result<(), BakeError> {
    if out.is_dir() {
        // An empty folder: rename replaces it (POSIX); remove it first where it does not.
        let _ = fs::remove_dir(out);
    }
    fs::rename(&staging.dir, out).map_err(|e| BakeError::write(out, e))?;
    staging.keep = true;
    sync_dir(out.parent().unwrap_or(Path::new(".")));
    Ok(())
}

/// `--update`: each staged file (durable already) renamed over the copy's, one by one; then the
/// removals; then each folder changed synced once.
pub(crate) fn replace_files(staging: &Staging, out: &Path, plan: &Plan) -> Result<(), BakeError> {
    let mut changed = BTreeSet::new();
    for planned in &plan.writes {
        let from = staging.dir.join(&planned.rel);
        let to = out.join(&planned.rel);
        if !from.exists() {
            continue;
        }
        let parent = to.parent().unwrap_or(out);
        fs::create_dir_all(parent).map_err(|e| BakeError::write(parent, e))?;
        fs::rename(&from, &to).map_err(|e| BakeError::write(&to, e))?;
        changed.insert(parent.to_owned());
    }
    for rel in &plan.removes {
        let path = out.join(rel);
        match fs::remove_file(&path) {
            Ok(()) => {
                changed.insert(path.parent().unwrap_or(out).to_owned());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(BakeError::write(&path, e)),
        }
    }
    sync_changed(out, &changed);
    Ok(())
}

/// Makes the renames and removals durable: on Linux one `syncfs` of the copy's file system
/// (one journal commit, where a folder `fsync` each cost one: 52 of them took 1.3 s under load);
/// elsewhere each changed folder once. Best effort, as the folder syncs are.
fn sync_changed(out: &Path, changed: &BTreeSet<std::path::PathBuf>) {
    if cfg!(any(target_os = "linux", target_os = "android")) {
        let _ = make_durable(out);
    } else {
        changed.iter().for_each(|dir| sync_dir(dir));
    }
}

/// Makes a folder's entries durable (best effort; not every platform opens folders).
fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}
