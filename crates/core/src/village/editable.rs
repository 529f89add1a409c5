//! The village files a person edits as text (the GUI's editors): which they are (a path
//! relative to the workspace, checked against this list — nothing else can be named), read
//! as text, checked by the parser of their kind (a JSON document by its model's rules with line
//! and column, `judge.toml` by the judge parser with the village's roster), and saved: JSON
//! through its typed save (unknown fields kept, never over a file that does not read), text
//! atomically as given. Every file at most [`MAX_EDIT_BYTES`].

use super::{AgentId, VillageError, VillageStore, World};

/// The largest text an editor opens or saves (the GUI's request bodies are at most 256 KiB,
/// with room for the JSON escaping of the text).
pub const MAX_EDIT_BYTES: usize = 128 * 1024;

/// One editable file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditableFile {
    /// `world.json` (the cast, the model templates, the limits): saved through the running
    /// village's `update_world`, so that what runs is what is written.
    World,
    /// `Ordinance.md`.
    Ordinance,
    /// `schedules.json`.
    Schedules,
    /// The shared `mcp.json`.
    SharedMcp,
    /// `agents/<id>/Construct.md`.
    Construct(AgentId),
    /// `agents/<id>/SKILL.md`.
    Skill(AgentId),
    /// `agents/<id>/Memory.md`.
    Memory(AgentId),
    /// `agents/<id>/mcp.json`.
    AgentMcp(AgentId),
    /// `agents/<id>/run.json`.
    RunPolicy(AgentId),
    /// `judges/<id>/judge.toml`.
    Judge(AgentId),
}

/// A problem of a text, at its place.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TextFinding {
    /// 1-based line (1 when the parser gives none).
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

/// Why a text was not saved.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The text does not pass its parser (nothing written).
    #[error("the text has {} problem(s); the first at {}:{}: {}", .0.len(), .0[0].line, .0[0].col, .0[0].message)]
    Findings(Vec<TextFinding>),
    /// The store refused or failed.
    #[error(transparent)]
    Village(#[from] VillageError),
}

impl crate::error::Coded for EditError {
    fn code(&self) -> &'static str {
        match self {
            Self::Findings(_) => "FILE_INVALID",
            Self::Village(e) => crate::error::Coded::code(e),
        }
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        match self {
            Self::Findings(f) => Some(f[0].fix.clone().into()),
            Self::Village(e) => crate::error::Coded::fix(e),
        }
    }
}

impl EditableFile {
    /// The file of a workspace-relative path, when it is one of the editable ones.
    pub fn parse(path: &str) -> Option<Self> {
        let parts: Vec<&str> = path.split('/').collect();
        let id = |s: &str| AgentId::new(s).ok();
        Some(match parts.as_slice() {
            ["world.json"] => Self::World,
            ["Ordinance.md"] => Self::Ordinance,
            ["schedules.json"] => Self::Schedules,
            ["mcp.json"] => Self::SharedMcp,
            ["agents", a, "Construct.md"] => Self::Construct(id(a)?),
            ["agents", a, "SKILL.md"] => Self::Skill(id(a)?),
            ["agents", a, "Memory.md"] => Self::Memory(id(a)?),
            ["agents", a, "mcp.json"] => Self::AgentMcp(id(a)?),
            ["agents", a, "run.json"] => Self::RunPolicy(id(a)?),
            ["judges", j, "judge.toml"] => Self::Judge(id(j)?),
            _ => return None,
        })
    }

    /// Its workspace-relative path.
    pub fn path(&self) -> String {
        match self {
            Self::World => "world.json".into(),
            Self::Ordinance => "Ordinance.md".into(),
            Self::Schedules => "schedules.json".into(),
            Self::SharedMcp => "mcp.json".into(),
            Self::Construct(a) => format!("agents/{a}/Construct.md"),
            Self::Skill(a) => format!("agents/{a}/SKILL.md"),
            Self::Memory(a) => format!("agents/{a}/Memory.md"),
            Self::AgentMcp(a) => format!("agents/{a}/mcp.json"),
            Self::RunPolicy(a) => format!("agents/{a}/run.json"),
            Self::Judge(j) => format!("judges/{j}/judge.toml"),
        }
    }

    /// Whether `world` has the agent or judge it belongs to.
    pub fn exists_in(&self, world: &World) -> bool {
        match self {
            Self::World | Self::Ordinance | Self::Schedules | Self::SharedMcp => true,
            Self::Judge(j) => world.judges.iter().any(|x| &x.id == j),
            Self::Construct(a)
            | Self::Skill(a)
            | Self::Memory(a)
            | Self::AgentMcp(a)
            | Self::RunPolicy(a) => world.agent(a).is_some(),
        }
    }
}

fn finding_of(e: &VillageError) -> TextFinding {
    let fix = crate::error::Coded::fix(e)
        .map(|f| f.text())
        .unwrap_or_default();
    match e {
        VillageError::Invalid(i) => TextFinding {
            line: i.line.unwrap_or(1),
            col: i.column.unwrap_or(1),
            message: match &i.field {
                Some(f) => format!("field `{f}`: {}", i.reason),
                None => i.reason.clone(),
            },
            fix: i.fix.clone(),
        },
        other => TextFinding {
            line: 1,
            col: 1,
            message: other.to_string(),
            fix,
        },
    }
}

impl VillageStore {
    /// `world.json`'s text parsed by its model and checked by its write rules (a template an
    /// agent names must exist; ids unique), as a save would.
    pub fn parse_world_text(&self, text: &str) -> Result<World, VillageError> {
        let path = self.path(&EditableFile::World.path());
        let world: World = super::doc::parse_text(&path, text)?.value;
        super::doc::JsonDoc::validate_for_write(&world, &path)?;
        Ok(world)
    }

    /// The file's text as on disk (empty when absent).
    pub fn read_editable(&self, file: &EditableFile) -> Result<String, VillageError> {
        let path = self.path(&file.path());
        // Only a regular file is read (a FIFO would block the reader for ever), and only up to
        // the editors' cap.
        let refused = |why: String| VillageError::Unreadable {
            file: path.clone(),
            source: std::io::Error::other(why),
        };
        if let Ok(meta) = std::fs::metadata(&path) {
            if !meta.is_file() {
                return Err(refused("not a regular file".into()));
            }
            if meta.len() > MAX_EDIT_BYTES as u64 {
                return Err(refused(format!(
                    "larger than the editors' {MAX_EDIT_BYTES} bytes"
                )));
            }
        }
        Ok(super::doc::read_text(&path)?.unwrap_or_default())
    }

    /// The problems of `text` as `file` (empty: it would save).
    pub fn check_editable(
        &self,
        file: &EditableFile,
        text: &str,
        world: &World,
    ) -> Vec<TextFinding> {
        if text.len() > MAX_EDIT_BYTES {
            let message = format!("the text is larger than {MAX_EDIT_BYTES} bytes");
            return vec![TextFinding {
                line: 1,
                col: 1,
                message,
                fix: "shorten it".into(),
            }];
        }
        let path = self.path(&file.path());
        let json =
            |r: Result<(), VillageError>| r.err().map(|e| vec![finding_of(&e)]).unwrap_or_default();
        match file {
            EditableFile::World => json(self.parse_world_text(text).map(|_| ())),
            EditableFile::Schedules => {
                json(super::doc::parse_text::<super::Schedules>(&path, text).map(|_| ()))
            }
            EditableFile::SharedMcp | EditableFile::AgentMcp(_) => {
                json(super::doc::parse_text::<super::McpConfig>(&path, text).map(|_| ()))
            }
            EditableFile::RunPolicy(_) => {
                json(super::doc::parse_text::<super::CommandPolicy>(&path, text).map(|_| ()))
            }
            EditableFile::Judge(_) => {
                let servants: Vec<&str> = world.agents.iter().map(|a| a.id.as_str()).collect();
                let judges: Vec<&str> = world.judges.iter().map(|j| j.id.as_str()).collect();
                let roster = super::judge_rules::Roster {
                    servants: &servants,
                    judges: &judges,
                };
                match super::judge_rules::validate_judge(text, roster) {
                    Ok(_) => Vec::new(),
                    Err(findings) => findings
                        .into_iter()
                        .map(|f| TextFinding {
                            line: f.line,
                            col: f.col,
                            message: f.message,
                            fix: f.fix,
                        })
                        .collect(),
                }
            }
            _ => Vec::new(),
        }
    }

    /// Saves `text` as `file` when it passes its parser: atomic; JSON through its typed save.
    pub fn save_editable(
        &self,
        file: &EditableFile,
        text: &str,
        world: &World,
    ) -> Result<(), EditError> {
        let findings = self.check_editable(file, text, world);
        if !findings.is_empty() {
            return Err(EditError::Findings(findings));
        }
        let path = self.path(&file.path());
        match file {
            // What runs must be what is written: world.json goes through `update_world`.
            EditableFile::World => {
                return Err(EditError::Findings(vec![TextFinding {
                    line: 1,
                    col: 1,
                    message: "world.json is saved through the running village".into(),
                    fix: "use Orchestrator::update_world".into(),
                }]));
            }
            EditableFile::Ordinance => self.write_ordinance(text)?,
            EditableFile::Schedules => {
                self.save_schedules(&super::doc::parse_text(&path, text)?.value)?
            }
            EditableFile::SharedMcp => {
                self.save_shared_mcp(&super::doc::parse_text(&path, text)?.value)?
            }
            EditableFile::Construct(a) => self.agent_files(a)?.write_construct(text)?,
            EditableFile::Skill(a) => self.agent_files(a)?.write_skill(text)?,
            EditableFile::Memory(a) => self.agent_files(a)?.write_memory(text)?,
            EditableFile::AgentMcp(a) => self
                .agent_files(a)?
                .save_mcp(&super::doc::parse_text(&path, text)?.value)?,
            EditableFile::RunPolicy(a) => self
                .agent_files(a)?
                .save_run_policy(&super::doc::parse_text(&path, text)?.value)?,
            EditableFile::Judge(j) => self.judge_file(j)?.write_text(text)?,
        }
        Ok(())
    }
}
