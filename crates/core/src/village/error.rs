//! Typed errors of the village stores, each with a stable machine code, the file, and a fix.
//!
//! Words for people are chosen at the edge; the fields here (code, file, line, column, field,
//! reason, fix) are what an edge needs to say them. No error ever carries a secret value or the
//! body of a file.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Everything that can go wrong while reading or writing a village or shelf file.
#[derive(Debug, thiserror::Error)]
pub enum VillageError {
    /// `world.json` is absent: there is no village at this path.
    #[error("{}: no village here (world.json is missing)", .file.display())]
    Missing {
        /// The missing `world.json`.
        file: PathBuf,
    },
    /// The file exists but could not be read (permissions, I/O).
    #[error("{}: {source}", .file.display())]
    Unreadable {
        /// The file.
        file: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The file could not be parsed into its model: syntax, types or enum values.
    #[error("{0}")]
    Invalid(Box<InvalidFile>),
    /// The file parsed, but breaks a rule of the village (ids, duplicates, references).
    #[error("{0}")]
    Rule(Box<RuleViolation>),
    /// Writing the file failed; the previous file (if any) is intact.
    #[error("{}: {source}. The previous file is unchanged", .file.display())]
    WriteFailed {
        /// The file that was being written.
        file: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The file on disk could not be read, so the store refused to write over it.
    #[error("{}: not written, because the file on disk could not be read ({reason})", .file.display())]
    WriteRefused {
        /// The file that was not written.
        file: PathBuf,
        /// Why the existing file could not be read (its own error, without file contents).
        reason: String,
    },
    /// A file that must be created fresh already exists.
    #[error("{}: already exists; nothing was changed", .file.display())]
    AlreadyExists {
        /// The file that already exists.
        file: PathBuf,
        /// The folder given as the data folder is itself a village's workspace (it holds
        /// `world.json`): the fix is to use its parent.
        data_dir_is_workspace: bool,
    },
}

impl VillageError {
    /// The stable machine code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Missing { .. } => "VILLAGE_MISSING",
            Self::Unreadable { .. } => "VILLAGE_FILE_UNREADABLE",
            Self::Invalid(_) => "VILLAGE_FILE_INVALID",
            Self::Rule(rule) => rule.code.as_str(),
            Self::WriteFailed { .. } => "VILLAGE_WRITE_FAILED",
            Self::WriteRefused { .. } => "VILLAGE_WRITE_REFUSED",
            Self::AlreadyExists { .. } => "VILLAGE_EXISTS",
        }
    }

    /// The file this error is about.
    pub fn file(&self) -> &Path {
        match self {
            Self::Missing { file }
            | Self::Unreadable { file, .. }
            | Self::WriteFailed { file, .. }
            | Self::WriteRefused { file, .. }
            | Self::AlreadyExists { file, .. } => file,
            Self::Invalid(invalid) => &invalid.file,
            Self::Rule(rule) => &rule.file,
        }
    }

    /// The field (a JSON path such as `agents[2].modelTemplateId`) where the parser or the rule
    /// points, if any.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Invalid(invalid) => invalid.field.as_deref(),
            Self::Rule(rule) => Some(&rule.field),
            _ => None,
        }
    }

    pub(crate) fn rule(
        code: RuleCode,
        file: &Path,
        field: impl Into<String>,
        reason: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self::Rule(Box::new(RuleViolation {
            code,
            file: file.to_path_buf(),
            field: field.into(),
            reason: reason.into(),
            fix: fix.into(),
        }))
    }

    pub(crate) fn unreadable(file: &Path, source: io::Error) -> Self {
        Self::Unreadable {
            file: file.to_path_buf(),
            source,
        }
    }

    pub(crate) fn write_failed(file: &Path, source: io::Error) -> Self {
        Self::WriteFailed {
            file: file.to_path_buf(),
            source,
        }
    }
}

impl crate::error::Coded for VillageError {
    fn code(&self) -> &'static str {
        Self::code(self)
    }

    fn fix(&self) -> Option<crate::error::Fix> {
        Some(match self {
            Self::Missing { .. } => crate::error::Fix::remedy(
                crate::error::Remedy::FoundVillage,
                "or point at an existing village's folder",
            ),
            Self::Unreadable { .. } => "check that the file is readable by this user".into(),
            Self::Invalid(invalid) => invalid.fix.clone().into(),
            Self::Rule(rule) => rule.fix.clone().into(),
            Self::WriteFailed { .. } => "check free space and permissions of the folder".into(),
            Self::WriteRefused { .. } => "repair or move the file by hand, then save again".into(),
            Self::AlreadyExists {
                data_dir_is_workspace,
                ..
            } => exists_fix(*data_dir_is_workspace),
        })
    }
}

fn exists_fix(data_dir_is_workspace: bool) -> crate::error::Fix {
    if data_dir_is_workspace {
        crate::error::Fix::remedy(
            crate::error::Remedy::DataDir,
            "points at a village's workspace folder; use its parent (the folder that holds workspace/)",
        )
    } else {
        "choose another data folder, or move the existing village away first".into()
    }
}

/// A file that could not be parsed into its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidFile {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, where the parser gives one.
    pub line: Option<usize>,
    /// 1-based column, where the parser gives one.
    pub column: Option<usize>,
    /// The JSON path of the offending field, where known (`agents[0].order`).
    pub field: Option<String>,
    /// What is wrong, in the parser's words (values hidden for files that may hold secrets).
    pub reason: String,
    /// How to fix it.
    pub fix: String,
}

impl fmt::Display for InvalidFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// A rule of the village that a parsed file breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleViolation {
    /// Which rule.
    pub code: RuleCode,
    /// The file.
    pub file: PathBuf,
    /// The JSON path of the offending field.
    pub field: String,
    /// What is wrong.
    pub reason: String,
    /// How to fix it.
    pub fix: String,
}

impl fmt::Display for RuleViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: field `{}`: {}",
            self.file.display(),
            self.field,
            self.reason
        )
    }
}

/// The rules a parsed village file can break. Each has a stable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleCode {
    /// An id is not `[A-Za-z0-9_-]{1,64}` (or, for template, role and group ids, is empty).
    InvalidId,
    /// Two agents (or an agent and a judge) share an id.
    DuplicateAgent,
    /// Two agents or judges share a name.
    DuplicateAgentName,
    /// Two templates, roles, groups or schedules share an id.
    DuplicateId,
    /// An agent names a model template that does not exist.
    ModelTemplateMissing,
    /// A name is empty or holds control characters.
    InvalidName,
    /// `tokenBudget` is 0 on write (use no budget instead).
    InvalidTokenBudget,
    /// `askTimeoutSecs` is outside 30..=3600 on write.
    InvalidAskTimeout,
    /// Any other value outside its allowed range.
    InvalidValue,
}

impl RuleCode {
    /// The stable machine code.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidId => "INVALID_ID",
            Self::DuplicateAgent => "DUPLICATE_AGENT",
            Self::DuplicateAgentName => "DUPLICATE_AGENT_NAME",
            Self::DuplicateId => "DUPLICATE_ID",
            Self::ModelTemplateMissing => "MODEL_TEMPLATE_MISSING",
            Self::InvalidName => "INVALID_NAME",
            Self::InvalidTokenBudget => "INVALID_TOKEN_BUDGET",
            Self::InvalidAskTimeout => "INVALID_ASK_TIMEOUT",
            Self::InvalidValue => "INVALID_VALUE",
        }
    }
}
