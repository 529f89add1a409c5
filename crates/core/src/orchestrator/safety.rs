//! The kill switch and the audit log inside the orchestrator: [`Orchestrator::control`], the
//! one core call of every channel (CLI, socket, control file, signals, GUI), with its line,
//! event and audit line; the gate a turn passes before each model call and tool call; the cut
//! token an abort cancels; the audit line of each side-effecting tool call; dry-run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Orchestrator;
use crate::events::CoreEvent;
use crate::log::LogSink;
use crate::safety::{
    ABORT_WAIT_BOUND, ApprovedBy, AuditEvent, AuditLog, AuditLogOptions, AuditSetup, Channel,
    DEFAULT_MAX_BYTES, KillSwitch, Sections, SwitchCommand, SwitchState,
};
use crate::sessions::SessionStore;

/// The log line's code (docs/codes.md); a failed write says its `AuditError`'s.
const AUDIT_UNAVAILABLE: &str = "AUDIT_UNAVAILABLE";

/// How long a halt waits for agents to stop after their turns were cut.
const HALT_STOP_GRACE: Duration = Duration::from_secs(2);

/// What the orchestrator keeps for the safety layer.
pub(crate) struct Safety {
    switch: KillSwitch,
    /// The sections an abort waits for (`crate::safety::Sections`).
    sections: Sections,
    audit: Option<AuditLog>,
    dry_run: AtomicBool,
    /// One command at a time (an abort's cut and a halt's stop are not interleaved).
    commands: tokio::sync::Mutex<()>,
}

impl Safety {
    pub(super) fn open(
        workspace: &std::path::Path,
        sessions: Option<Arc<SessionStore>>,
        setup: AuditSetup,
        log: &dyn LogSink,
    ) -> Self {
        let options = AuditLogOptions {
            head_store: sessions,
            shelf: setup.shelf,
            key: setup.key,
            max_bytes: DEFAULT_MAX_BYTES,
        };
        let audit = match AuditLog::open_with(workspace, options) {
            Ok(audit) => Some(audit),
            Err(e) => {
                log.line(&format!(
                    "audit: unavailable code={AUDIT_UNAVAILABLE} kind={} (side effects are not audited)",
                    e.kind()
                ));
                None
            }
        };
        Self {
            switch: KillSwitch::default(),
            sections: Sections::default(),
            audit,
            dry_run: AtomicBool::new(false),
            commands: tokio::sync::Mutex::new(()),
        }
    }

    pub(super) fn switch(&self) -> &KillSwitch {
        &self.switch
    }

    pub(super) fn sections(&self) -> &Sections {
        &self.sections
    }

    pub(super) fn dry_run(&self) -> bool {
        self.dry_run.load(Ordering::SeqCst)
    }

    /// Waits at the gate (paused: until resumed); `false` when nothing may start (halted, or
    /// one of `stops` — the turn's interrupt, its hard stop, its cut — fired meanwhile).
    pub(super) async fn pass(&self, stops: [&CancellationToken; 3]) -> bool {
        if stops.iter().any(|s| s.is_cancelled()) {
            return false;
        }
        tokio::select! {
            held = self.switch.gate(stops[0]) => held.is_ok(),
            () = stops[1].cancelled() => false,
            () = stops[2].cancelled() => false,
        }
    }

    /// Writes an audit line and waits until it is on disk (nothing when the log is closed).
    pub(super) async fn record(&self, event: AuditEvent, log: &dyn LogSink) {
        if let Some(audit) = &self.audit
            && let Err(e) = audit.append(event).await
        {
            log.line(&format!(
                "audit: write failed code={} {e}",
                crate::error::Coded::code(&e)
            ));
        }
    }

    /// Writes an audit line without waiting.
    pub(super) fn record_detached(&self, event: AuditEvent) {
        if let Some(audit) = &self.audit {
            audit.append_detached(event);
        }
    }
}

impl Orchestrator {
    /// Where the kill switch stands.
    pub fn switch_state(&self) -> SwitchState {
        self.inner.safety().switch().state()
    }

    /// Watches the kill switch.
    pub fn watch_switch(&self) -> tokio::sync::watch::Receiver<SwitchState> {
        self.inner.safety().switch().watch()
    }

    /// The one call every channel makes: pause (no new model or tool call starts), resume,
    /// abort (every turn is cut now — model calls, `run` children as process groups, MCP
    /// calls —; agents stay running) or halt (abort, then every agent stops; the host closes
    /// the door, stops the scheduler and writes the `halt` marker). A change is said in a
    /// `kill switch:` line, a `killSwitchChanged` event and an audit line; a command that
    /// changes nothing (pause while paused, halt while halted) only logs `unchanged` and cuts
    /// nothing. Returns the state after the command.
    pub async fn control(&self, command: SwitchCommand, channel: Channel) -> SwitchState {
        let safety = self.inner.safety();
        let one = safety.commands.lock().await;
        let t = safety.switch().apply(command);
        if !t.changed() {
            // Nothing to do, nothing to audit: a repeated command is not a second change.
            self.inner.log(&format!(
                "kill switch: command={} unchanged state={} channel={}",
                command.as_str(),
                t.to.as_str(),
                channel.as_str()
            ));
            return t.to;
        }
        self.said(command, channel, t.from, t.to).await;
        match t.to {
            SwitchState::Aborting => {
                self.cut_turns();
                // A halt may come in while the abort waits for its sections: it waits for
                // nothing, and the abort's wait ends there.
                drop(one);
                self.wait_for_sections().await;
                let back = if t.from == SwitchState::Paused {
                    SwitchState::Paused
                } else {
                    SwitchState::Running
                };
                if safety.switch().settle(back) {
                    self.said(command, channel, SwitchState::Aborting, back)
                        .await;
                }
            }
            SwitchState::Halted => {
                // The emergency stop: every child group gets SIGKILL now, no grace (a `run`
                // command that ignores SIGTERM must not hold the halt up).
                #[cfg(target_os = "linux")]
                crate::process::kill_every_group();
                self.cut_turns();
                self.interrupt_all();
                self.stop_all(HALT_STOP_GRACE).await;
            }
            _ => {}
        }
        safety.switch().state()
    }

    /// An abort's wait for the sections it may not cut (`crate::safety::Sections`): until
    /// none is held, [`ABORT_WAIT_BOUND`] at most, or until a halt; said in an `abort wait:`
    /// line.
    async fn wait_for_sections(&self) {
        let safety = self.inner.safety();
        let started = std::time::Instant::now();
        let held = safety.sections().held();
        let end = tokio::select! {
            drained = safety.sections().drained(ABORT_WAIT_BOUND) => match drained {
                Ok(()) => "drained".to_owned(),
                Err(left) => format!("bound left={left}"),
            },
            () = safety.switch().halted() => "halted".to_owned(),
        };
        self.inner.log(&format!(
            "abort wait: sections={held} waited_ms={} end={end}",
            started.elapsed().as_millis()
        ));
    }

    /// Cuts every turn running now — its model call and tool in flight, and its next call
    /// — (a turn started later holds the fresh token; an idle agent's next turn is untouched).
    fn cut_turns(&self) {
        self.inner.safety().switch().cut_now();
    }

    async fn said(
        &self,
        command: SwitchCommand,
        channel: Channel,
        from: SwitchState,
        to: SwitchState,
    ) {
        let (c, f, t) = (command.as_str(), from.as_str(), to.as_str());
        self.inner.emit(
            &format!(
                "kill switch: command={c} from={f} to={t} channel={}",
                channel.as_str()
            ),
            CoreEvent::KillSwitchChanged {
                command,
                from,
                to,
                channel,
            },
        );
        let event = AuditEvent::new("-", "-", "kill_switch", t, c.as_bytes())
            .with_outcome(channel.as_str())
            .approved_by(ApprovedBy::Person(channel));
        self.inner
            .safety()
            .record(event, &*self.inner.log_sink())
            .await;
    }

    /// Writes an audit line for something the host or a surface did (a file saved through the
    /// CLI or GUI, a schedule firing, a probe run) and waits until it is on disk.
    pub async fn audit(&self, event: AuditEvent) {
        self.inner
            .safety()
            .record(event, &*self.inner.log_sink())
            .await;
    }

    /// The audit line of a human's decision that changes what agents may do (an approval mode,
    /// the plan-review switch, a plan dispatched or discarded), written without waiting: the
    /// callers are synchronous, and the decision itself has no side effect outside memory.
    pub(super) fn audit_human(&self, action: &str, target: &str, args: &[u8], by: Channel) {
        let event =
            AuditEvent::new("-", "-", action, target, args).approved_by(ApprovedBy::Person(by));
        self.inner.safety().record_detached(event);
    }

    /// Waits while the switch is paused; `false` when halted (a schedule's firing).
    pub(crate) async fn hold_while_paused(&self) -> bool {
        let never = CancellationToken::new();
        self.inner.safety().pass([&never, &never, &never]).await
    }

    /// The token the current calls are cut by (an abort cancels it).
    pub(crate) fn cut_token(&self) -> CancellationToken {
        self.inner.safety().switch().cut_token()
    }

    /// Turns dry-run on or off: side-effecting tools stop at their side effect and answer
    /// `dry-run: would …` (audited as `dry_run`).
    pub fn set_dry_run(&self, enabled: bool) {
        self.inner.safety().dry_run.store(enabled, Ordering::SeqCst);
        if enabled {
            self.inner
                .log("dry-run: on (side-effecting tools stop at the side effect)");
        }
    }
}

/// A token cancelled by `hard` (its parent) or by `cut` (bridged by a small task that ends
/// when the guard drops).
pub(super) fn either(
    hard: &CancellationToken,
    cut: &CancellationToken,
) -> (CancellationToken, tokio_util::sync::DropGuard) {
    let out = hard.child_token();
    let (bridged, cut) = (out.clone(), cut.clone());
    tokio::spawn(async move {
        tokio::select! {
            () = cut.cancelled() => bridged.cancel(),
            () = bridged.cancelled() => {}
        }
    });
    (out.clone(), out.drop_guard())
}

/// The audit line of a tool call with a side effect (`crate::safety::side_effect`), on disk
/// before the result reaches the model.
pub(super) async fn audit_tool(
    turn: &super::turn::Turn<'_>,
    name: &str,
    args: &serde_json::Value,
    is_mcp: bool,
    output: &crate::tools::ToolOutput,
    dry_run: bool,
) {
    let Some((action, target)) = crate::safety::side_effect(name, args, is_mcp) else {
        return;
    };
    let outcome = match (dry_run, output.ok) {
        (true, true) => "dry_run",
        (true, false) => "dry_run_failed",
        (false, true) => "ok",
        (false, false) => "failed",
    };
    let (inner, agent, root) = turn.audit_context();
    let args_text = args.to_string();
    if let Some(note) = output.approval.filter(|n| n.is_decision()) {
        // The approval first: `pending` (recorded for a human) or `auto_approved` (an allow
        // line added to run.json), then the call itself.
        let event = AuditEvent::new(agent, root, "run_approval", &target, args_text.as_bytes())
            .with_outcome(note.as_str())
            .approved_by(note.approved_by());
        inner.safety().record(event, &*inner.log_sink()).await;
    }
    let by = output
        .approval
        .map_or(ApprovedBy::Nobody, |n| n.approved_by());
    let event = AuditEvent::new(agent, root, &action, &target, args_text.as_bytes())
        .with_outcome(outcome)
        .approved_by(by);
    inner.safety().record(event, &*inner.log_sink()).await;
}

/// What a dry-run MCP call answers.
pub(super) fn would_call_mcp(name: &str, args: &serde_json::Value) -> String {
    format!(
        "dry-run: would call the MCP tool {} (arguments sha256 {})",
        name.replacen("__", "/", 1),
        crate::safety::sha256_hex(args.to_string().as_bytes())
    )
}
