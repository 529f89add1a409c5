//! Notices: what a read adjusted while keeping the file usable (a clamp, a default, a dropped
//! name), so that an edge can tell the user instead of changing things silently.

use std::path::{Path, PathBuf};

/// A value read from disk together with what the read adjusted.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded<T> {
    /// The value, normalised (defaults applied, out-of-range values reset as the rules say).
    pub value: T,
    /// What the read adjusted. Empty when the file was taken exactly as written.
    pub notices: Vec<Notice>,
}

/// One adjustment made while reading a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// What kind of adjustment.
    pub code: NoticeCode,
    /// The file.
    pub file: PathBuf,
    /// The JSON path of the field.
    pub field: String,
    /// What was adjusted, without secret values.
    pub message: String,
}

/// Kinds of adjustment a read can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoticeCode {
    /// An out-of-range value was replaced by the default.
    ValueDefaulted,
    /// An out-of-range value was clamped into its range.
    ValueClamped,
    /// A name that breaks the naming rules was dropped to unset.
    NameDropped,
    /// The language value is unknown and will be detected from the OS.
    LanguageUndetermined,
    /// An edge points at an agent or judge that does not exist; it is ignored.
    EdgeTargetMissing,
    /// A list over its cap lost its oldest entries.
    ListTrimmed,
    /// An agent names a model template that does not exist (kept; refused on write).
    ModelTemplateMissing,
    /// `SKILL.md`'s front matter names a key this version does not read; it is ignored.
    SkillKeyUnknown,
    /// A line or value of `SKILL.md`'s front matter could not be read; it is ignored.
    SkillValueInvalid,
}

impl NoticeCode {
    /// The stable machine code.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ValueDefaulted => "VALUE_DEFAULTED",
            Self::ValueClamped => "VALUE_CLAMPED",
            Self::NameDropped => "NAME_DROPPED",
            Self::LanguageUndetermined => "LANGUAGE_UNDETERMINED",
            Self::EdgeTargetMissing => "EDGE_TARGET_MISSING",
            Self::ListTrimmed => "LIST_TRIMMED",
            Self::ModelTemplateMissing => "MODEL_TEMPLATE_MISSING",
            Self::SkillKeyUnknown => "SKILL_KEY_UNKNOWN",
            Self::SkillValueInvalid => "SKILL_VALUE_INVALID",
        }
    }
}

/// Collects notices for one file while it is being normalised.
#[derive(Debug)]
pub(crate) struct Notes<'a> {
    file: &'a Path,
    notices: Vec<Notice>,
}

impl<'a> Notes<'a> {
    pub(crate) fn new(file: &'a Path) -> Self {
        Self {
            file,
            notices: Vec::new(),
        }
    }

    /// Records one adjustment.
    pub(crate) fn add(
        &mut self,
        code: NoticeCode,
        field: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.notices.push(Notice {
            code,
            file: self.file.to_path_buf(),
            field: field.into(),
            message: message.into(),
        });
    }

    pub(crate) fn into_vec(self) -> Vec<Notice> {
        self.notices
    }
}
