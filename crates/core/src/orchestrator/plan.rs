//! Plan waves: one wave of tasks to connected agents, run in parallel, joined under the ask
//! timeout, and returned as one bundle. With `planReview` the wave becomes a proposal a human
//! dispatches (possibly edited) or discards; a dispatch is a new causal root whose bundle comes
//! back to the coordinator from System. Waves live in memory only (a ring of 50).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::sync::LockOrRecover;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::delegation::{Delegated, Via, delegate};
use super::{Delivery, Inner, PlanTaskState, now_ms};
use crate::events::CoreEvent;
pub use crate::events::PlanTask;

/// Waves kept in memory.
pub(super) const RING: usize = 50;

/// Where a wave is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaveStatus {
    /// Waiting for review.
    Proposed,
    /// Running.
    Running,
    /// Bundled.
    Finished,
    /// Discarded by a human.
    Discarded,
}

/// A wave as the Work Status pane shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanWave {
    /// Wave id.
    pub plan_id: String,
    /// The coordinator.
    pub agent_id: String,
    /// Its number for this coordinator.
    pub wave: u32,
    /// The tasks.
    pub tasks: Vec<PlanTask>,
    /// Where it is.
    pub status: WaveStatus,
    /// One state per task once resolved.
    pub states: Vec<PlanTaskState>,
}

/// The ring of waves.
#[derive(Debug, Default)]
pub(crate) struct PlanBook {
    waves: Mutex<VecDeque<PlanWave>>,
}

impl PlanBook {
    pub(super) fn insert(&self, wave: PlanWave) {
        let mut waves = self.waves.lock_or_recover();
        waves.push_back(wave);
        while waves.len() > RING {
            waves.pop_front();
        }
    }

    pub(super) fn update(&self, plan_id: &str, f: impl FnOnce(&mut PlanWave)) -> bool {
        match self
            .waves
            .lock_or_recover()
            .iter_mut()
            .find(|w| w.plan_id == plan_id)
        {
            Some(wave) => {
                f(wave);
                true
            }
            None => false,
        }
    }

    pub(super) fn get(&self, plan_id: &str) -> Option<PlanWave> {
        self.waves
            .lock_or_recover()
            .iter()
            .find(|w| w.plan_id == plan_id)
            .cloned()
    }

    pub(super) fn all(&self) -> Vec<PlanWave> {
        self.waves.lock_or_recover().iter().cloned().collect()
    }

    pub(super) fn next_wave_number(&self, agent_id: &str) -> u32 {
        let waves = self.waves.lock_or_recover();
        waves.iter().filter(|x| x.agent_id == agent_id).count() as u32 + 1
    }
}

/// Parses the `plan` tool's arguments.
pub(crate) fn parse_tasks(args: &serde_json::Value) -> Option<Vec<PlanTask>> {
    let tasks: Vec<PlanTask> = serde_json::from_value(args.get("tasks")?.clone()).ok()?;
    (!tasks.is_empty()).then_some(tasks)
}

/// Runs one wave now and returns its bundle.
pub(crate) async fn run_wave(
    inner: &Arc<Inner>,
    caller: &str,
    plan_id: &str,
    wave: u32,
    tasks: &[PlanTask],
    delivery: &Delivery,
) -> String {
    let started = Instant::now();
    let targets: Vec<String> = tasks.iter().map(|t| t.to.clone()).collect();
    let msg_chars: usize = tasks.iter().map(|t| t.message.chars().count()).sum();
    inner.emit(
        &format!(
            "plan wave: agent={caller} wave={wave} tasks={} to=[{}] msg_chars={msg_chars}",
            tasks.len(),
            targets.join(","),
        ),
        CoreEvent::PlanWaveStarted {
            plan_id: plan_id.into(),
            agent_id: caller.into(),
            wave,
            tasks: targets.clone(),
            started_at_ms: now_ms(),
        },
    );
    inner
        .plans()
        .update(plan_id, |w| w.status = super::plan::WaveStatus::Running);
    let connected = inner
        .world()
        .agents
        .iter()
        .find(|a| a.id.as_str() == caller)
        .map(|a| {
            a.connected_agents
                .iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut joins = Vec::new();
    for task in tasks {
        let inner = Arc::clone(inner);
        let (caller, plan_id, task) = (caller.to_owned(), plan_id.to_owned(), task.clone());
        let route = delivery.route.clone();
        let (message, budget) = (delivery.message.clone(), Arc::clone(&delivery.budget));
        let allowed = connected.contains(&task.to);
        joins.push(tokio::spawn(async move {
            let shadow = Delivery {
                message,
                budget,
                route,
                reply: None,
                resume: None,
            };
            let result = if allowed {
                delegate(&inner, &caller, &task.to, &task.message, &shadow, Via::Plan).await
            } else {
                Delegated {
                    answer: None,
                    state: PlanTaskState::Undeliverable,
                    elapsed: std::time::Duration::ZERO,
                }
            };
            inner.event(CoreEvent::PlanTaskResolved {
                plan_id,
                to: task.to.clone(),
                state: result.state,
                elapsed_ms: u64::try_from(result.elapsed.as_millis()).unwrap_or(u64::MAX),
            });
            result
        }));
    }
    let (bundle, states) = join_bundle(tasks, joins).await;
    let answered = states
        .iter()
        .filter(|s| **s == PlanTaskState::Answered)
        .count();
    inner.plans().update(plan_id, |w| {
        w.status = WaveStatus::Finished;
        w.states = states;
    });
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    inner.emit(
        &format!("plan bundle: agent={caller} wave={wave} tasks={} answered={answered} chars={} elapsed_ms={elapsed_ms}", tasks.len(), bundle.chars().count()),
        CoreEvent::PlanWaveFinished {
            plan_id: plan_id.into(),
            bundle_chars: bundle.chars().count() as u64,
            elapsed_ms,
        },
    );
    match &delivery.route.verify_with {
        Some(verifier) => verify(inner, caller, plan_id, wave, verifier, bundle, delivery).await,
        None => bundle,
    }
}

/// A scheduled chain's default verifier: the bundle goes to `verifier` as a normal
/// request from the planner, and its answer (or a fixed line saying it could not check) is
/// appended to the bundle. Never blocks the wave beyond the ask timeout.
async fn verify(
    inner: &Arc<Inner>,
    caller: &str,
    plan_id: &str,
    wave: u32,
    verifier: &str,
    mut bundle: String,
    delivery: &Delivery,
) -> String {
    let lang = inner.language();
    let request = lang.pick(
        format!("計画の波 {wave} の結果を確かめてください。最初の行に判定（OK か NG）を書き、理由を続けてください。\n\n{bundle}"),
        format!("Check the results of plan wave {wave}. Write your verdict (OK or NG) on the first line, then your reasons.\n\n{bundle}"),
    );
    let shadow = Delivery {
        message: delivery.message.clone(),
        budget: Arc::clone(&delivery.budget),
        route: super::Route {
            verify_with: None,
            ..delivery.route.clone()
        },
        reply: None,
        resume: None,
    };
    let result = if inner.is_running(verifier) {
        Some(delegate(inner, caller, verifier, &request, &shadow, Via::Plan).await)
    } else {
        None
    };
    let (outcome, section) = match result {
        None => (
            "not_running",
            lang.pick(
                "確認されていません（検証役が停止中です）。".to_owned(),
                "not checked: the verifier is not running.".to_owned(),
            ),
        ),
        Some(Delegated {
            state: PlanTaskState::Answered,
            answer: Some(answer),
            ..
        }) => ("answered", answer),
        Some(_) => (
            "failed",
            lang.pick(
                "確認できませんでした（検証役が答えませんでした）。".to_owned(),
                "not checked: the verifier did not answer.".to_owned(),
            ),
        ),
    };
    inner.log(&format!(
        "verifier: plan={plan_id} wave={wave} verifier={verifier} outcome={outcome}"
    ));
    bundle.push_str(&lang.pick(
        format!("### 検証役 ({verifier}): {section}\n"),
        format!("### verifier ({verifier}): {section}\n"),
    ));
    bundle
}

/// Waits for every task of a wave, in order, and writes the bundle: one section per task
/// with its state and answer.
pub(super) async fn join_bundle(
    tasks: &[PlanTask],
    joins: Vec<tokio::task::JoinHandle<Delegated>>,
) -> (String, Vec<PlanTaskState>) {
    let mut bundle = String::new();
    let mut states = Vec::new();
    for (task, join) in tasks.iter().zip(joins) {
        let result = join.await.unwrap_or(Delegated {
            answer: None,
            state: PlanTaskState::NoAnswer,
            elapsed: std::time::Duration::ZERO,
        });
        let state = serde_json::to_value(result.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        bundle.push_str(&format!(
            "### {} ({state})\n{}\n\n",
            task.to,
            result.answer.as_deref().unwrap_or("-")
        ));
        states.push(result.state);
    }
    (bundle, states)
}
