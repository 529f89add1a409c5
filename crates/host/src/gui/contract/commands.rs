//! The answers of `POST /api/commands`: `{ok: true}` with the fields of the command's answer
//! (docs/gui-api.md "Commands").

// The fields are the wire names, described in docs/gui-api.md (a test holds the two together).
#![allow(missing_docs)]

use serde::Serialize;

use super::cast::{CastDone, TryJudge};
use super::editing::{AssistAnswer, Checked, SecretStored, Written};
use crate::pricing::PricingReport;

/// Every command's answer: the command's fields, then `ok`.
#[derive(Debug, Clone, Serialize)]
pub struct Done {
    #[serde(flatten)]
    pub answer: CommandAnswer,
    /// Always `true` (a refusal is an error answer).
    pub ok: bool,
}

impl From<CommandAnswer> for Done {
    fn from(answer: CommandAnswer) -> Self {
        Self { answer, ok: true }
    }
}

/// The fields one command answers with.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum CommandAnswer {
    /// Nothing but `ok`.
    Empty {},
    InGrace(InGrace),
    Started(Started),
    PendingLeft(PendingLeft),
    Forked(Forked),
    SwitchMoved(SwitchMoved),
    KeyStored(KeyStored),
    DoorSaved(DoorSaved),
    Prices(PricingReport),
    Checked(Checked),
    Written(Written),
    SecretStored(SecretStored),
    Assist(AssistAnswer),
    Cast(CastDone),
    TryJudge(TryJudge),
}

/// `stopAgent`: whether the turn was still in its grace when it was stopped.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InGrace {
    pub in_grace: bool,
}

/// `startBatch`: the agents started.
#[derive(Debug, Clone, Serialize)]
pub struct Started {
    pub started: Vec<String>,
}

/// `approveRun`, `rejectRun`: the agent's requests still pending.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingLeft {
    pub pending_left: usize,
}

/// `forkConversation`: the copy, now current.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forked {
    pub session_id: String,
}

/// `killSwitch`: the switch's state now.
#[derive(Debug, Clone, Serialize)]
pub struct SwitchMoved {
    pub state: &'static str,
}

/// `setApiKey`, `deleteApiKey`: the secret store written.
#[derive(Debug, Clone, Serialize)]
pub struct KeyStored {
    pub store: String,
}

/// `setDoor`: it takes effect at the next start.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DoorSaved {
    pub restart_needed: bool,
}
