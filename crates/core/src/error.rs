//! [`Coded`], the one way every error of the workspace gives its code and fix to an edge, and
//! [`Fix`]/[`Remedy`], the fix as data: core says what to change in words no surface owns, and
//! names the person's action as a [`Remedy`] that each edge (the CLI, the GUI, the door) puts
//! into its own words (a command, a place to click). A leaf: the errors of every floor
//! implement it (ARCHITECTURE.md, "Core's floors").

/// An error with a stable machine code (UPPER_SNAKE) and, where it has one, what to change.
/// Its `Display` is the message alone: no `[CODE] ` prefix and no `Fix:` text, so that an
/// edge (the CLI, the door, the GUI) renders code, message and fix from these fields and never
/// parses text.
pub trait Coded: std::error::Error {
    /// The stable machine code.
    fn code(&self) -> &'static str;
    /// What to change, when the error has a fix.
    fn fix(&self) -> Option<Fix> {
        None
    }
}

/// What to change: surface-neutral words, and the person's action where one surface or more
/// offers it. An edge shows its words for the remedy first, then `change` (which completes
/// them: "or …", "then …"); with no remedy, `change` alone is the whole fix.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fix {
    /// What to change, in words that name no command, flag or button (may be empty when the
    /// remedy says it all).
    pub change: String,
    /// The action an edge offers in its own words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remedy: Option<Remedy>,
}

impl Fix {
    /// A fix that is the remedy, completed by `change` (empty: the remedy alone).
    pub fn remedy(remedy: Remedy, change: impl Into<String>) -> Self {
        Self {
            change: change.into(),
            remedy: Some(remedy),
        }
    }
}

impl Fix {
    /// The whole fix in surface-neutral words (for a record or an event that no edge words).
    pub fn text(&self) -> String {
        let Some(remedy) = &self.remedy else {
            return self.change.clone();
        };
        let said = remedy.neutral();
        if self.change.is_empty() {
            said
        } else {
            format!("{said} {}", self.change)
        }
    }
}

impl Remedy {
    /// The action in words that name no command or button.
    fn neutral(&self) -> String {
        match self {
            Self::StoreSecret { name, env: true } => {
                format!(
                    "store the key {name} in the credential store (or its environment variable)"
                )
            }
            Self::StoreSecret { name, env: false } => {
                format!("store the key {name} in the credential store")
            }
            Self::ApproveProbe { schedule, .. } => {
                format!("approve the probe of schedule {schedule}")
            }
            Self::MakeReception => "make a servant the reception".into(),
            Self::ValidateJudge => "validate the judge's file".into(),
            Self::FoundVillage => "found a village".into(),
            Self::RunDemo => "make a new demo village".into(),
            Self::Resume => "resume the village".into(),
            Self::ListServants => "list the servants".into(),
            Self::AddTemplate { id: Some(id) } => format!("add the model template {id}"),
            Self::AddTemplate { id: None } => "add a model template".into(),
            Self::RetemplateServant => "point those servants at another template".into(),
            Self::CloseOtherProcess => "close the other Fuseforks using this village".into(),
            Self::DataDir => "the data folder".into(),
        }
    }
}

impl From<String> for Fix {
    fn from(change: String) -> Self {
        Self {
            change,
            remedy: None,
        }
    }
}

impl From<&str> for Fix {
    fn from(change: &str) -> Self {
        Self::from(change.to_owned())
    }
}

/// The person's actions that more than one surface offers (the CLI as a command, the GUI as a
/// place to click). Each names only what the action needs; an edge adds its own placeholders.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Remedy {
    /// Store the secret `name` in the credential store (or, where `env`, in its environment
    /// variable for a run that reads secrets from the environment).
    StoreSecret {
        /// The secret's name (a template id, `door_token`, …).
        name: String,
        /// Whether the fix offers the environment variable too.
        env: bool,
    },
    /// Approve a schedule's probe on this machine.
    ApproveProbe {
        /// The schedule's id.
        schedule: String,
        /// The acceptance probe (else the pre-check).
        acceptance: bool,
    },
    /// Make a servant the reception.
    MakeReception,
    /// Validate a judge's file and see every finding.
    ValidateJudge,
    /// Found a new village.
    FoundVillage,
    /// Make a new demo village (the demo again).
    RunDemo,
    /// Resume the halted or paused village.
    Resume,
    /// List the servants and judges.
    ListServants,
    /// Add a model template (`id` when the fix names one).
    AddTemplate {
        /// The template id the fix wants, where it names one.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// Point a servant at another model template.
    RetemplateServant,
    /// Close the other process that holds this village.
    CloseOtherProcess,
    /// The setting that names the village's data folder; `change` says what is wrong with it.
    DataDir,
}
