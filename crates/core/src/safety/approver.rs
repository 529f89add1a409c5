//! Who approved an audited effect (the line's `approvedBy`, docs/formats/audit.jsonl.md): a
//! person through a surface, a rule file a person wrote (`run.json`, `probe_approvals.json`,
//! `schedules.json`), the auto-approve mode, or nobody.

use super::switch::Channel;

/// Who let an effect happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovedBy {
    /// A person, through a surface: `person:gui`, `person:cli`, `person:socket`,
    /// `person:control_file`, `person:signal`, `person:api` (an embedder's own call).
    Person(Channel),
    /// An allow line of the agent's `run.json`.
    RunRule,
    /// This machine's `probe_approvals.json`.
    ProbeApproval,
    /// A schedule entry of `schedules.json`.
    Schedule,
    /// The `autoApprove` mode, which wrote an exact allow line as it let the command run.
    AutoApproveMode,
    /// Nobody: the agent's own tools (a file write, an MCP call), the no-approval mode, a call
    /// refused or held for a person, the engine's own stop.
    Nobody,
}

impl ApprovedBy {
    /// The spelling in the audit line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Person(channel) => match channel {
                Channel::Cli => "person:cli",
                Channel::Socket => "person:socket",
                Channel::ControlFile => "person:control_file",
                Channel::Signal => "person:signal",
                Channel::Gui => "person:gui",
                Channel::Api => "person:api",
            },
            Self::RunRule => "rule:run.json",
            Self::ProbeApproval => "rule:probe_approvals.json",
            Self::Schedule => "rule:schedules.json",
            Self::AutoApproveMode => "mode:auto_approve",
            Self::Nobody => "none",
        }
    }

    /// Reads a spelling back (`None` for one this version does not write).
    pub fn parse(text: &str) -> Option<Self> {
        use Channel as C;
        let channels = [C::Gui, C::Cli, C::Socket, C::ControlFile, C::Signal, C::Api];
        let every = channels.into_iter().map(Self::Person).chain([
            Self::RunRule,
            Self::ProbeApproval,
            Self::Schedule,
            Self::AutoApproveMode,
            Self::Nobody,
        ]);
        every.into_iter().find(|by| by.as_str() == text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spellings are a format (docs/formats/audit.jsonl.md lists them).
    #[test]
    fn the_spellings_are_stable() {
        let doc = include_str!("../../../../docs/formats/audit.jsonl.md");
        for by in [
            ApprovedBy::Person(Channel::Gui),
            ApprovedBy::Person(Channel::Cli),
            ApprovedBy::RunRule,
            ApprovedBy::ProbeApproval,
            ApprovedBy::Schedule,
            ApprovedBy::AutoApproveMode,
            ApprovedBy::Nobody,
        ] {
            assert!(
                doc.contains(&format!("`{}`", by.as_str())),
                "{}",
                by.as_str()
            );
            assert_eq!(ApprovedBy::parse(by.as_str()), Some(by));
        }
    }
}
