//! A human's decisions on the `run` commands an agent was refused and recorded for approval
//! (`run.json` `pending`): approve exactly, approve the pattern `command *`, or reject (an exact
//! deny line); each drops the pending entry, writes `run.json` atomically through the agent's
//! files, and is a `run decision:` log line and a `run_approval` audit line. "Approve and
//! continue" then sends one fixed System message as a new causal root.

use super::Orchestrator;
use crate::CoreError;
use crate::budget::CausalBudget;
use crate::safety::{ApprovedBy, AuditEvent, Channel};
use crate::sessions::Endpoint;
use crate::tools::run_policy::exact_allow_line;
use crate::village::AgentId;

/// What a human decided about a pending command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingDecision {
    /// The exact command line is allowed.
    ApproveExact,
    /// `command *` is allowed.
    ApprovePattern,
    /// The exact command line is denied.
    Reject,
}

impl PendingDecision {
    /// The log's and the audit line's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApproveExact => "approved_exact",
            Self::ApprovePattern => "approved_pattern",
            Self::Reject => "rejected",
        }
    }
}

impl Orchestrator {
    /// Decides the pending request `command args` of `agent_id` (a person's decision through
    /// `by`); returns how many requests are still pending for that agent.
    pub async fn decide_pending(
        &self,
        agent_id: &str,
        command: &str,
        args: &[String],
        decision: PendingDecision,
        by: Channel,
    ) -> Result<usize, CoreError> {
        let id = AgentId::new(agent_id).map_err(|_| CoreError::AgentNotFound(agent_id.into()))?;
        if self.inner.world().agent(&id).is_none() {
            return Err(CoreError::AgentNotFound(agent_id.into()));
        }
        let files = self.inner.store().agent_files(&id)?;
        let mut policy = files.load_run_policy()?.value;
        let Some(at) = policy
            .pending
            .iter()
            .position(|p| p.command == command && p.args == args)
        else {
            return Err(CoreError::PendingNotFound(agent_id.into()));
        };
        let exact = || {
            exact_allow_line(command, args)
                .ok_or_else(|| CoreError::PendingUnrepresentable(command.into()))
        };
        match decision {
            PendingDecision::ApproveExact => policy.allow.push(exact()?),
            PendingDecision::ApprovePattern => policy.allow.push(format!("{command} *")),
            PendingDecision::Reject => policy.deny.push(exact()?),
        }
        policy.pending.remove(at);
        files.save_run_policy(&policy)?;
        let left = policy.pending.len();
        self.inner.log(&format!(
            "run decision: agent={agent_id} command={command} decision={} pending_left={left}",
            decision.as_str()
        ));
        let argv = serde_json::to_string(&(command, args)).unwrap_or_default();
        let event = AuditEvent::new(agent_id, "-", "run_approval", command, argv.as_bytes())
            .with_outcome(decision.as_str())
            .approved_by(ApprovedBy::Person(by));
        self.audit(event).await;
        Ok(left)
    }

    /// "Approve and continue": one fixed System message to `agent_id` as a new causal root
    /// (with a fresh budget), not waited for.
    pub async fn resume_after_approval(&self, agent_id: &str) -> Result<(), CoreError> {
        let world = self.inner.world();
        let id = AgentId::new(agent_id).map_err(|_| CoreError::AgentNotFound(agent_id.into()))?;
        let pending_left = self
            .inner
            .store()
            .agent_files(&id)
            .and_then(|f| f.load_run_policy())
            .map_or(0, |p| p.value.pending.len());
        let text = self.inner.language().pick(
            "人が保留中のコマンドを承認しました。止まっていた作業を続けてください。",
            "A human approved the command that was waiting. Continue the work where it stopped.",
        );
        self.deliver(
            agent_id,
            Endpoint::System,
            &text,
            CausalBudget::new(world.token_budget),
            None,
        )
        .await?;
        let ceiling = world
            .token_budget
            .map_or_else(|| "-".into(), |c| c.to_string());
        self.inner.log(&format!(
            "resume after approval: agent={agent_id} pending_left={pending_left} ceiling={ceiling}"
        ));
        Ok(())
    }
}
