//! The file table of `bake`: every file `bake` knows, where it lives,
//! who owns its truth, and what a first bake and an `--update` do with it. Everything `bake`
//! reads or writes comes from this one table; a file that is not in it is not copied.

/// Who owns a file's truth (four places).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The GUI: copied, then replaced by every `--update`.
    Design,
    /// Both: definitions from the GUI, runtime records from the container (merged).
    Mixed,
    /// The container: never replaced (`Memory.md` is seeded when missing).
    Runtime,
    /// Per machine, beside the workspace.
    Shelf,
}

/// Where a file's name is rooted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `data_dir/workspace/<name>`.
    Workspace,
    /// `data_dir/workspace/agents/<id>/<name>`, for each agent of `world.json`.
    Agent,
    /// `data_dir/workspace/judges/<id>/<name>`, for each judge of `world.json`.
    Judge,
    /// `data_dir/<name>`.
    Shelf,
}

/// What `bake` does with a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Copied byte for byte (Markdown, icons, `village_id`, `judge.toml`).
    Bytes,
    /// `world.json`: read and written through the core's store, path fields rewritten.
    World,
    /// An `mcp.json`: read through the core (headers checked), written through it.
    Mcp,
    /// `schedules.json`: definitions from the source, `lastConsumedDueMs` from the copy.
    Schedules,
    /// `run.json`: rules from the source, `pending` from the copy, settled lines pruned.
    RunPolicy,
    /// `Memory.md`: copied only when the copy has none.
    SeedOnce,
    /// `probe_approvals.json`: rebuilt from the source's approvals, re-keyed.
    Approvals,
    /// `jev.json`, `pricing.json`: read and written through the core.
    ShelfJson,
    /// `bake.json`: written by `bake`.
    Record,
    /// Never copied, never touched.
    Never,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRule {
    /// Where the name is rooted.
    pub scope: Scope,
    /// The file's name (or a folder's, for `Never` rows).
    pub name: &'static str,
    /// Who owns it.
    pub place: Place,
    /// What bake does.
    pub rule: Rule,
}

const fn row(scope: Scope, name: &'static str, place: Place, rule: Rule) -> FileRule {
    FileRule {
        scope,
        name,
        place,
        rule,
    }
}

use fuseforks_core::goal::GOALS_DIR;
use fuseforks_core::safety::AUDIT_FILE;
use fuseforks_core::village::{agent_files, shelf_files, workspace_files};

use crate::lock::LOCK_FILE;
use Place::{Design, Mixed, Runtime, Shelf};
use Scope::{Agent, Judge, Workspace};

/// Every file `bake` knows, one row per file.
pub const TABLE: &[FileRule] = &[
    row(Workspace, workspace_files::WORLD, Design, Rule::World),
    row(Workspace, workspace_files::ORDINANCE, Design, Rule::Bytes),
    row(Workspace, workspace_files::VILLAGE_ID, Design, Rule::Bytes),
    row(Workspace, workspace_files::MCP, Design, Rule::Mcp),
    row(Workspace, "user/icon.webp", Design, Rule::Bytes),
    row(Workspace, "external/icon.webp", Design, Rule::Bytes),
    row(Agent, agent_files::CONSTRUCT, Design, Rule::Bytes),
    row(Agent, agent_files::SKILL, Design, Rule::Bytes),
    row(Agent, agent_files::MCP, Design, Rule::Mcp),
    row(Agent, agent_files::ICON, Design, Rule::Bytes),
    row(Judge, agent_files::JUDGE, Design, Rule::Bytes),
    row(
        Workspace,
        workspace_files::SCHEDULES,
        Mixed,
        Rule::Schedules,
    ),
    row(Agent, agent_files::RUN, Mixed, Rule::RunPolicy),
    row(Agent, agent_files::MEMORY, Runtime, Rule::SeedOnce),
    row(Workspace, "sessions.redb", Runtime, Rule::Never),
    row(Workspace, "attachments", Runtime, Rule::Never),
    row(Workspace, "exports", Runtime, Rule::Never),
    row(Workspace, GOALS_DIR, Runtime, Rule::Never),
    row(Workspace, "fuseforks.log", Runtime, Rule::Never),
    row(Workspace, "fuseforks.log.old", Runtime, Rule::Never),
    row(Workspace, LOCK_FILE, Runtime, Rule::Never),
    row(Workspace, AUDIT_FILE, Runtime, Rule::Never),
    row(Scope::Shelf, shelf_files::BAKE, Shelf, Rule::Record),
    row(
        Scope::Shelf,
        shelf_files::PROBE_APPROVALS,
        Shelf,
        Rule::Approvals,
    ),
    row(Scope::Shelf, shelf_files::JEV, Shelf, Rule::ShelfJson),
    row(Scope::Shelf, shelf_files::PRICING, Shelf, Rule::ShelfJson),
    row(Scope::Shelf, shelf_files::DOOR, Shelf, Rule::Never),
];

/// The rows bake reads from the source (everything but `Never` and `Record`).
pub(super) fn copied() -> impl Iterator<Item = &'static FileRule> {
    TABLE
        .iter()
        .filter(|r| !matches!(r.rule, Rule::Never | Rule::Record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_named_once_per_scope() {
        let mut seen = std::collections::HashSet::new();
        for r in TABLE {
            assert!(seen.insert((r.scope, r.name)), "{} twice", r.name);
        }
        // Runtime files are never replaced; design files always are.
        for r in TABLE {
            match r.place {
                Place::Runtime => assert!(matches!(r.rule, Rule::SeedOnce | Rule::Never)),
                Place::Design => assert!(matches!(r.rule, Rule::Bytes | Rule::World | Rule::Mcp)),
                _ => {}
            }
        }
    }
}
