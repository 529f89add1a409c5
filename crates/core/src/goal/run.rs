//! The goal loop: ask, check, and re-send with the check's output while it does not match.
//!
//! Every attempt is a request to the reception in the **current** conversation (so the model
//! sees its earlier answers), all under **one** [`CausalBudget`] (the goal is one causal root's
//! worth of spending, not `maxAttempts` of them). The acceptance command runs through
//! [`execute_probe`] (no shell, cwd = the workspace, cleared environment, own process group):
//! no approval is asked, the person typed it. `no_match` retries; `error` and `timeout` never
//! do (running it again would not change a missing program). A turn without an answer ends the
//! loop without a check (and without a line in the goals log: nothing was checked).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use super::journal::{GoalError, GoalLine, Journal, goal_sha256};
use crate::budget::CausalBudget;
use crate::clock::now_ms;
use crate::log::LogSink;
use crate::orchestrator::{ExternalOutcome, Orchestrator, PlanTaskState};
use crate::probe::{Outcome, Report, execute_probe};
use crate::sessions::Endpoint;
use crate::village::{Extra, Language, ScheduleProbe};

/// The acceptance command and how often to try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoalSpec {
    /// The program (no shell).
    pub command: String,
    /// Its arguments, in order.
    pub args: Vec<String>,
    /// The first stdout line, trimmed, that means the goal is reached.
    pub expect: String,
    /// Attempts, [`super::MIN_ATTEMPTS`]..=[`super::MAX_ATTEMPTS`] (clamped).
    pub max_attempts: u8,
    /// The command's timeout in seconds (clamped to 1..=3600 by the runner).
    pub timeout_secs: u64,
}

/// The request and where it runs.
#[derive(Clone, Copy)]
pub struct GoalRequest<'a> {
    /// The village.
    pub orchestrator: &'a Orchestrator,
    /// The client name the reception sees (the village's `externalName` wins).
    pub client: &'a str,
    /// The original request text.
    pub message: &'a str,
    /// The village folder: the command's cwd and the goals log's base.
    pub workspace: &'a Path,
    /// The village log (the `goal:` lines).
    pub log: &'a dyn LogSink,
}

/// One attempt's check, as told to the caller while the loop runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptReport {
    /// The goal id.
    pub goal_id: String,
    /// This attempt, from 1.
    pub attempt: u8,
    /// The attempts allowed.
    pub max_attempts: u8,
    /// The check's outcome.
    pub outcome: Outcome,
    /// Why, in a few words (never the output).
    pub reason: String,
}

/// How a goal ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalVerdict {
    /// The check matched.
    Reached,
    /// Every attempt's check printed something else.
    NotReached,
    /// The check could not run or ran too long (`error` / `timeout`): not retried.
    CheckFailed {
        /// `error` or `timeout`.
        outcome: Outcome,
        /// Why (the runner's reason).
        reason: String,
    },
    /// A turn gave no answer (its state says why); nothing was checked after it.
    NoAnswer,
}

/// What a goal loop gave.
#[derive(Debug, Clone)]
pub struct GoalOutcome {
    /// The goal id (the goals log's file name without `.jsonl`).
    pub goal_id: String,
    /// The last turn's outcome (its answer is the final answer).
    pub last: ExternalOutcome,
    /// The attempts made (turns sent).
    pub attempts: u8,
    /// How it ended.
    pub verdict: GoalVerdict,
}

/// Runs a goal loop. Fails only when the goals log cannot be written (before anything is sent
/// when its folder or file cannot be created).
pub async fn run_goal(
    request: GoalRequest<'_>,
    spec: &GoalSpec,
    on_attempt: &mut (dyn FnMut(&AttemptReport) + Send),
) -> Result<GoalOutcome, GoalError> {
    let max = spec
        .max_attempts
        .clamp(super::MIN_ATTEMPTS, super::MAX_ATTEMPTS);
    let hash = goal_sha256(request.message);
    let mut journal = Journal::create(request.workspace, &hash, now_ms())?;
    let goal_id = journal.id().to_owned();
    let orchestrator = request.orchestrator;
    let budget = CausalBudget::new(orchestrator.world().token_budget);
    let probe = ScheduleProbe {
        command: spec.command.clone(),
        args: spec.args.clone(),
        expect: spec.expect.clone(),
        timeout_secs: spec.timeout_secs,
        cwd: None,
        extra: Extra::default(),
    };
    let mut text = request.message.to_owned();
    let mut attempt = 1;
    loop {
        let last = ask(orchestrator, request.client, &text, &budget).await;
        if !matches!(
            last.state,
            PlanTaskState::Answered | PlanTaskState::HandedOff
        ) {
            return Ok(outcome(goal_id, last, attempt, GoalVerdict::NoAnswer));
        }
        let report = execute_probe(&probe, request.workspace).await;
        let excerpt = report.excerpt();
        journal.append(&GoalLine {
            goal_sha256: hash.clone(),
            attempt,
            outcome: report.outcome,
            excerpt_chars: excerpt.chars().count(),
            ts_ms: now_ms(),
        })?;
        request.log.line(&format!(
            "goal: id={goal_id} attempt={attempt}/{max} outcome={}",
            report.outcome
        ));
        on_attempt(&AttemptReport {
            goal_id: goal_id.clone(),
            attempt,
            max_attempts: max,
            outcome: report.outcome,
            reason: report.reason.clone(),
        });
        let verdict = match report.outcome {
            Outcome::Match => GoalVerdict::Reached,
            Outcome::NoMatch if attempt < max => {
                text = follow_up(
                    orchestrator.language(),
                    request.message,
                    spec,
                    &report,
                    attempt,
                    max,
                );
                attempt += 1;
                continue;
            }
            Outcome::NoMatch => GoalVerdict::NotReached,
            outcome => GoalVerdict::CheckFailed {
                outcome,
                reason: report.reason,
            },
        };
        return Ok(outcome(goal_id, last, attempt, verdict));
    }
}

fn outcome(
    goal_id: String,
    last: ExternalOutcome,
    attempts: u8,
    verdict: GoalVerdict,
) -> GoalOutcome {
    GoalOutcome {
        goal_id,
        last,
        attempts,
        verdict,
    }
}

/// One request to the reception in the current conversation, under the goal's budget, waiting
/// up to `askTimeoutSecs` (as `Orchestrator::ask_external`, with the budget passed in).
async fn ask(
    orchestrator: &Orchestrator,
    client: &str,
    message: &str,
    budget: &Arc<CausalBudget>,
) -> ExternalOutcome {
    let world = orchestrator.world();
    let Some(reception) = world.reception.clone() else {
        return ExternalOutcome::bare(PlanTaskState::Undeliverable);
    };
    let client = world
        .external_name
        .clone()
        .unwrap_or_else(|| client.to_owned());
    let (tx, rx) = oneshot::channel();
    let delivered = orchestrator
        .deliver(
            reception.as_str(),
            Endpoint::External { client },
            message,
            Arc::clone(budget),
            Some(tx),
        )
        .await;
    if delivered.is_err() {
        return ExternalOutcome::bare(PlanTaskState::Undeliverable);
    }
    match tokio::time::timeout(Duration::from_secs(world.ask_timeout_secs()), rx).await {
        Ok(Ok(outcome)) => ExternalOutcome::of(outcome),
        Ok(Err(_)) => ExternalOutcome::bare(PlanTaskState::NoAnswer),
        Err(_) => ExternalOutcome::bare(PlanTaskState::TimedOut),
    }
}

/// The request re-sent after a `no_match`: fixed wording in the village language, the
/// command, the original request and the output excerpt.
pub(crate) fn follow_up(
    language: Language,
    message: &str,
    spec: &GoalSpec,
    report: &Report,
    attempt: u8,
    max: u8,
) -> String {
    let command = std::iter::once(spec.command.as_str())
        .chain(spec.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let excerpt = report.excerpt();
    let expect = &spec.expect;
    language.pick(
        format!(
            "受け入れ確認が通りませんでした（{attempt}/{max} 回目）。確認コマンド `{command}` の出力の最初の行が「{expect}」になるよう、元の依頼を続けてください。\n\n元の依頼:\n{message}\n\n確認コマンドの出力（抜粋）:\n{}",
            if excerpt.is_empty() { "（出力なし）" } else { &excerpt }
        ),
        format!(
            "The acceptance check did not pass (attempt {attempt} of {max}). Continue the original request so that the first output line of the check `{command}` is \"{expect}\".\n\nOriginal request:\n{message}\n\nOutput of the check (excerpt):\n{}",
            if excerpt.is_empty() { "(no output)" } else { &excerpt }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(first: Option<&str>) -> Report {
        Report {
            outcome: Outcome::NoMatch,
            reason: String::new(),
            first_line: first.map(str::to_owned),
            extra_lines: vec!["second".into()],
            extra_truncated: false,
            exit_code: Some(0),
        }
    }

    fn spec() -> GoalSpec {
        GoalSpec {
            command: "sh".into(),
            args: vec!["check.sh".into()],
            expect: "ok".into(),
            max_attempts: 2,
            timeout_secs: 60,
        }
    }

    #[test]
    fn the_follow_up_carries_request_command_and_excerpt_in_the_village_language() {
        let en = follow_up(
            Language::En,
            "Fix it.",
            &spec(),
            &report(Some("not yet")),
            1,
            2,
        );
        assert!(
            en.starts_with("The acceptance check did not pass (attempt 1 of 2)."),
            "{en}"
        );
        assert!(
            en.contains("`sh check.sh`") && en.contains("\"ok\""),
            "{en}"
        );
        assert!(
            en.contains("Original request:\nFix it.") && en.ends_with("not yet\nsecond"),
            "{en}"
        );
        let ja = follow_up(Language::Ja, "直して。", &spec(), &report(None), 1, 2);
        assert!(
            ja.starts_with("受け入れ確認が通りませんでした（1/2 回目）。"),
            "{ja}"
        );
        assert!(
            ja.contains("元の依頼:\n直して。") && ja.ends_with("second"),
            "{ja}"
        );
    }
}
