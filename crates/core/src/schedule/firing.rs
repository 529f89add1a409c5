//! One firing of a schedule, after its consume is on disk: the pre-check probe (anything but
//! `match` skips the firing), the request from System with the origin marker (and the probe's
//! extra lines) as a new causal root, then the acceptance probe, re-sending with the output
//! excerpt on `no_match` up to `maxAttempts`, all under one budget. Log lines carry ids,
//! counts and outcomes, never the message.

use std::sync::Arc;

use super::decide::Timing;
use super::runner::{Firing, RunnerConfig};
use crate::budget::CausalBudget;
use crate::orchestrator::TurnOutcome;
use crate::probe::{Outcome, ProbeContext, Report, run_probe};
use crate::safety::{ApprovedBy, AuditEvent};
use crate::village::{ScheduleProbe, ScheduledTask, SessionMode};

/// How a firing ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiringReport {
    /// The schedule.
    pub id: String,
    /// Why nothing was delivered (`probe_no_match`, `undeliverable`, …); `None`: delivered.
    pub skipped: Option<String>,
    /// Deliveries made (the first one and the acceptance retries).
    pub deliveries: u8,
    /// The last acceptance outcome (`None` without an acceptance probe).
    pub acceptance: Option<Outcome>,
}

impl FiringReport {
    fn skipped(id: &str, reason: String) -> Self {
        Self {
            id: id.to_owned(),
            skipped: Some(reason),
            deliveries: 0,
            acceptance: None,
        }
    }
}

/// Runs a firing to its end.
pub(super) async fn fire(config: &RunnerConfig, firing: Firing) -> FiringReport {
    let task = &firing.task;
    let ctx = ProbeContext {
        workspace: &config.workspace,
        village_id: &config.village_id,
        shelf: &config.shelf,
    };
    let mut appended = None;
    // The kill switch: paused holds the firing here (it fires on resume); halted skips it.
    if !config.orchestrator.hold_while_paused().await {
        skip(config, &task.id, "halted");
        return FiringReport::skipped(&task.id, "halted".into());
    }
    // Held by a pause past its grace: it no longer fires (an interval has no grace).
    let grace = Timing::from(task).grace_ms();
    if grace.is_some_and(|g| config.clock.now_ms() > firing.due_ms.saturating_add(g)) {
        skip(config, &task.id, "late_after_pause");
        return FiringReport::skipped(&task.id, "late_after_pause".into());
    }
    if let Some(probe) = &task.probe {
        let Some(report) = probe_unless_cut(config, &task.id, probe, &ctx).await else {
            skip(config, &task.id, "aborted");
            return FiringReport::skipped(&task.id, "aborted".into());
        };
        config.log.line(&format!(
            "schedule probe: id={} outcome={}",
            task.id, report.outcome
        ));
        if report.outcome != Outcome::Match {
            let reason = format!("probe_{}", report.outcome);
            skip(config, &task.id, &reason);
            return FiringReport::skipped(&task.id, reason);
        }
        appended = report.appended_text();
    }
    config.log.line(&format!(
        "schedule fire: id={} target={} due={} session={} auto_approve_plans={} dry_run={}",
        task.id,
        task.to,
        firing.due_ms,
        session_word(task.session_mode),
        task.auto_approve_plans,
        task.dry_run
    ));
    if task.session_mode == SessionMode::Fresh {
        config.orchestrator.new_conversation();
    }
    let budget = CausalBudget::new(config.orchestrator.world().token_budget);
    let fired = AuditEvent::new(
        task.to.as_str(),
        budget.root_id(),
        "schedule_fire",
        &task.id,
        firing.due_ms.to_string().as_bytes(),
    )
    .approved_by(ApprovedBy::Schedule);
    config.orchestrator.audit(fired).await;
    let first = request(config, task, appended.as_deref(), None);
    let mut report = FiringReport {
        id: task.id.clone(),
        skipped: None,
        deliveries: 0,
        acceptance: None,
    };
    if !deliver(config, task, &first, &budget, &mut report).await {
        return report;
    }
    if let Some(acceptance) = &task.acceptance {
        let max = acceptance.max_attempts.clamp(1, 5);
        accept(config, task, &acceptance.probe, max, &budget, &mut report).await;
    }
    if task.summarize_after {
        summarize(config, task, &budget).await;
    }
    report
}

/// `summarizeAfter`: one summary call after the chain, under the firing's budget; a failure
/// is logged and the firing still counts.
async fn summarize(config: &RunnerConfig, task: &ScheduledTask, budget: &Arc<CausalBudget>) {
    let to = task.to.as_str();
    match config.orchestrator.summarize_agent(to, budget).await {
        Ok(done) => config.log.line(&format!(
            "summary: agent={to} covers={} chars={}",
            done.covers, done.chars
        )),
        Err(reason) => config.log.line(&format!(
            "summary failed: agent={to} schedule={} reason={reason}",
            task.id
        )),
    }
}

/// The acceptance loop: attempt `a` of `max` checks the chain of delivery `a`.
async fn accept(
    config: &RunnerConfig,
    task: &ScheduledTask,
    probe: &ScheduleProbe,
    max: u8,
    budget: &Arc<CausalBudget>,
    report: &mut FiringReport,
) {
    let ctx = ProbeContext {
        workspace: &config.workspace,
        village_id: &config.village_id,
        shelf: &config.shelf,
    };
    for attempt in 1..=max {
        let Some(checked) = probe_unless_cut(config, &task.id, probe, &ctx).await else {
            return;
        };
        report.acceptance = Some(checked.outcome);
        config.log.line(&format!(
            "acceptance: schedule={} attempt={attempt}/{max} outcome={}",
            task.id, checked.outcome
        ));
        if checked.outcome != Outcome::NoMatch || attempt == max {
            return;
        }
        let retry = request(config, task, None, Some((attempt, max, &checked.excerpt())));
        if !deliver(config, task, &retry, budget, report).await {
            return;
        }
    }
}

/// Delivers one request; false (with the report's `skipped` set on the first) when it could
/// not be delivered or the chain ran out of budget.
async fn deliver(
    config: &RunnerConfig,
    task: &ScheduledTask,
    text: &str,
    budget: &Arc<CausalBudget>,
    report: &mut FiringReport,
) -> bool {
    let outcome: Result<TurnOutcome, _> = config
        .orchestrator
        .deliver_scheduled(
            task.to.as_str(),
            text,
            Arc::clone(budget),
            task.auto_approve_plans,
            verifier(config, task),
            crate::orchestrator::RequestMode {
                dry_run: task.dry_run,
            },
        )
        .await;
    match outcome {
        Ok(outcome) => {
            report.deliveries += 1;
            let state = outcome.state();
            !matches!(
                state,
                crate::orchestrator::PlanTaskState::BudgetExhausted
                    | crate::orchestrator::PlanTaskState::Interrupted
            )
        }
        Err(e) => {
            let reason = format!("undeliverable:{}", crate::Coded::code(&e));
            skip(config, &task.id, &reason);
            if report.deliveries == 0 {
                report.skipped = Some(reason);
            }
            false
        }
    }
}

/// The request text: the origin marker, the message, the pre-check's extra lines, or an
/// acceptance retry's excerpt.
fn request(
    config: &RunnerConfig,
    task: &ScheduledTask,
    appended: Option<&str>,
    retry: Option<(u8, u8, &str)>,
) -> String {
    let lang = config.orchestrator.language();
    let mut text = lang.pick(
        format!("[予定タスク {}]\n{}", task.id, task.message),
        format!("[Scheduled task {}]\n{}", task.id, task.message),
    );
    if let Some(extra) = appended {
        text.push_str(&lang.pick("\n\n事前確認の出力:\n", "\n\nPre-check output:\n"));
        text.push_str(extra);
    }
    if let Some((attempt, max, excerpt)) = retry {
        text.push_str(&lang.pick(
            format!("\n\n後判定が通りませんでした（{attempt}/{max} 回目）。出力:\n{excerpt}"),
            format!(
                "\n\nThe acceptance check did not pass (attempt {attempt}/{max}). Its output:\n{excerpt}"
            ),
        ));
    }
    text
}

/// The agent that checks the bundles of the chain's plan waves: the world's `defaultVerifier`,
/// for a schedule that lets its plans run unreviewed (`autoApprovePlans`).
fn verifier(config: &RunnerConfig, task: &ScheduledTask) -> Option<String> {
    if !task.auto_approve_plans {
        return None;
    }
    config
        .orchestrator
        .world()
        .default_verifier
        .as_ref()
        .map(ToString::to_string)
}

fn session_word(mode: SessionMode) -> &'static str {
    match mode {
        SessionMode::Continue => "continue",
        SessionMode::Fresh => "fresh",
    }
}

fn skip(config: &RunnerConfig, id: &str, reason: &str) {
    config
        .log
        .line(&format!("schedule skip: id={id} reason={reason}"));
}

/// Runs a probe unless the kill switch's abort comes first (then the probe's process group is
/// ended with the dropped handle: SIGTERM, SIGKILL 2 s later); audits the run.
async fn probe_unless_cut(
    config: &RunnerConfig,
    schedule: &str,
    probe: &ScheduleProbe,
    ctx: &ProbeContext<'_>,
) -> Option<Report> {
    let cut = config.orchestrator.cut_token();
    let report: Option<Report> = tokio::select! {
        report = run_probe(probe, ctx) => Some(report),
        () = cut.cancelled() => None,
    };
    let argv = serde_json::to_string(&(&probe.command, &probe.args)).unwrap_or_default();
    let outcome = report.as_ref().map_or("aborted", |r| r.outcome.as_str());
    // A probe runs only when this machine's probe_approvals.json approves it.
    let by = match &report {
        Some(r) if r.outcome == Outcome::Unapproved => ApprovedBy::Nobody,
        _ => ApprovedBy::ProbeApproval,
    };
    let event = AuditEvent::new("-", "-", "probe_run", schedule, argv.as_bytes())
        .with_outcome(outcome)
        .approved_by(by);
    config.orchestrator.audit(event).await;
    report
}
