//! What `servants` and `templates` share: where the village is, reading its `world.json` for a
//! list, and one edit through the host's one path (`fuseforks_host::world_edit`, as the GUI
//! edits): the village opened under its lock (exit 4 while the GUI, `serve` or another command
//! holds it), the core's checked edit, written, then audited as a `file_save` from the CLI.

use std::path::{Path, PathBuf};

use clap::Args;
use fuseforks_core::safety::Channel;
use fuseforks_core::village::{VillageError, World};
use fuseforks_core::{Coded, CoreError};
use fuseforks_host::world_edit::{CastEdit, EditDone, TemplateEdit, apply_cast, apply_template};
use fuseforks_host::{HostPaths, SecretSource};

use crate::exit;
use crate::output::Out;

/// The village a list reads.
#[derive(Debug, Args)]
pub(crate) struct Place {
    /// The data folder; the village is DATA_DIR/workspace.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
}

/// The village an edit writes, and where the audit key comes from.
#[derive(Debug, Args)]
pub(crate) struct EditPlace {
    /// The data folder; the village is DATA_DIR/workspace.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
    /// Where the audit key comes from (the edit's audit line is marked with it).
    #[arg(long, value_enum, default_value = "keyring")]
    pub secrets: super::headless::SecretsArg,
}

/// One edit of either kind.
pub(crate) enum Edit {
    /// Of the cast.
    Cast(CastEdit),
    /// Of the model templates.
    Template(TemplateEdit),
}

/// Reads the village's `world.json` (no lock: nothing is written); the exit code when it
/// cannot (said on stderr).
pub(crate) fn read_world(data_dir: &Path, out: &Out) -> Result<World, u8> {
    let paths = HostPaths::new(data_dir);
    if let Some(missing) = paths.village_missing() {
        out.error(&missing);
        return Err(exit::BOOT_FAILED);
    }
    match paths.village().load_world() {
        Ok(loaded) => Ok(loaded.value),
        Err(e) => {
            out.error(&e);
            Err(exit::for_village_error(&e))
        }
    }
}

/// A list's typed answer as one JSON line on stdout.
pub(crate) fn print_json(answer: &impl serde::Serialize, out: &Out) -> u8 {
    match serde_json::to_string(answer) {
        Ok(text) => {
            out.result(&format!("{text}\n"));
            exit::OK
        }
        Err(e) => {
            out.cli("error", "JSON_FAILED", &e.to_string(), None);
            exit::CORE_ERROR
        }
    }
}

/// Applies `edit` to the village at `place`; on success prints `done` (given what the edit
/// did) on stdout and returns 0, else says why on stderr and returns its exit code.
pub(crate) fn run(
    place: &EditPlace,
    edit: Edit,
    out: &Out,
    done: impl FnOnce(&EditDone) -> String,
) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            out.cli("error", "RUNTIME_FAILED", &e.to_string(), None);
            return exit::CORE_ERROR;
        }
    };
    let paths = HostPaths::new(&place.data_dir);
    let secrets = match place.secrets {
        super::headless::SecretsArg::Keyring => SecretSource::Keyring,
        super::headless::SecretsArg::Env => SecretSource::Env,
    };
    let result = runtime.block_on(async {
        let host = match fuseforks_host::world_edit::open_for_edit(&paths, secrets, None) {
            Ok(host) => host,
            Err(e) => return Err((exit::for_host_error(&e), Box::new(e) as Box<dyn Coded>)),
        };
        let orch = &host.orchestrator;
        let applied = match edit {
            Edit::Cast(edit) => apply_cast(orch, edit, Channel::Cli).await,
            Edit::Template(edit) => apply_template(orch, edit, Channel::Cli).await,
        };
        applied.map_err(|e| (for_core_error(&e), Box::new(e) as Box<dyn Coded>))
    });
    match result {
        Ok(what) => {
            out.result(&format!("{}\n", crate::terminal::for_stdout(&done(&what))));
            exit::OK
        }
        Err((code, e)) => {
            out.error(&*e);
            code
        }
    }
}

/// The exit code of a refused edit: an id taken is 11 (nothing written); a value the village
/// refuses (the field named), an unknown servant or template, a template in use are 2; a
/// running servant is 4 (as the GUI's 409); a village file that does not read or write is 5.
pub(crate) fn for_core_error(e: &CoreError) -> u8 {
    match e {
        CoreError::IdTaken(_) => exit::OUTPUT_EXISTS,
        CoreError::CastRefused { .. }
        | CoreError::AgentNotFound(_)
        | CoreError::TemplateNotFound(_)
        | CoreError::TemplateInUse { .. } => exit::USAGE,
        CoreError::Village(VillageError::Rule(_)) => exit::USAGE,
        CoreError::StillRunning(_) => exit::LOCKED,
        CoreError::Village(v) => exit::for_village_error(v),
        _ => exit::CORE_ERROR,
    }
}

/// A list of ids split on commas (`--tools a,b`), blanks dropped.
pub(crate) fn comma_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_map_to_their_exit_codes() {
        assert_eq!(for_core_error(&CoreError::IdTaken("a".into())), 11);
        let refused = CoreError::CastRefused {
            what: "id: x".into(),
            fix: "y".into(),
        };
        assert_eq!(for_core_error(&refused), 2);
        assert_eq!(for_core_error(&CoreError::StillRunning("a".into())), 4);
        assert_eq!(comma_list(" grep, ,read_file"), ["grep", "read_file"]);
    }
}
