//! The kill switch: one state machine (running / paused / aborting / halted) per open village,
//! changed only through [`SwitchCommand`]s (the one core call every channel uses), and the two
//! things the engine asks of it: the gate before every model call and tool call, and the cut
//! token that an abort cancels (re-armed after each abort).

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::sync::LockOrRecover;

/// Where the switch stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchState {
    /// Calls start as usual.
    Running,
    /// No new model call or tool call starts; calls in flight finish.
    Paused,
    /// An abort is cutting every turn (short-lived; back to running when done).
    Aborting,
    /// Everything stopped; nothing starts until a human resumes the village.
    Halted,
}

impl SwitchState {
    /// The spelling in lines, events and the socket's answers.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Aborting => "aborting",
            Self::Halted => "halted",
        }
    }
}

/// A change asked of the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchCommand {
    /// Hold new calls.
    Pause,
    /// Continue (from paused or halted).
    Resume,
    /// Cut every turn now; agents stay running.
    Abort,
    /// Abort, stop every agent, the scheduler and the door; stays halted across restarts.
    Halt,
}

impl SwitchCommand {
    /// The spelling (`pause`, `resume`, `abort`, `halt`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Resume => "resume",
            Self::Abort => "abort",
            Self::Halt => "halt",
        }
    }

    /// Reads a spelling (ASCII, case-sensitive).
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pause, Self::Resume, Self::Abort, Self::Halt]
            .into_iter()
            .find(|c| c.as_str() == text)
    }
}

/// Who asked for a change (shown in the line, the event and the audit log).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// `fuseforks-cli pause|resume|abort|halt` over the socket (or its fallback).
    Cli,
    /// The local socket (another client than the CLI).
    Socket,
    /// A file created in `DATA_DIR/control/`.
    ControlFile,
    /// SIGUSR1 / SIGUSR2.
    Signal,
    /// The GUI.
    Gui,
    /// The engine's own API (tests, embedders).
    Api,
}

impl Channel {
    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cli => "cli",
            Self::Socket => "socket",
            Self::ControlFile => "control_file",
            Self::Signal => "signal",
            Self::Gui => "gui",
            Self::Api => "api",
        }
    }
}

/// The state after a command, and what the engine must do for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Transition {
    pub from: SwitchState,
    pub to: SwitchState,
}

impl Transition {
    pub(crate) fn changed(self) -> bool {
        self.from != self.to
    }
}

/// The rule of the state machine: what each command does from each state. A halted village
/// only resumes; an abort from paused leaves it paused (after the cut); resume from running is
/// nothing.
pub(crate) fn next_state(from: SwitchState, command: SwitchCommand) -> SwitchState {
    use SwitchCommand as C;
    use SwitchState as S;
    match (from, command) {
        (S::Halted, C::Resume) => S::Running,
        (S::Halted, _) => S::Halted,
        (_, C::Halt) => S::Halted,
        (_, C::Abort) => S::Aborting,
        (S::Running | S::Paused | S::Aborting, C::Pause) => S::Paused,
        (S::Running | S::Paused | S::Aborting, C::Resume) => S::Running,
    }
}

/// Why a gate let nothing start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// The village is halted.
    Halted,
    /// The turn was interrupted or cut while it waited.
    Cut,
}

/// The kill switch of one open village.
#[derive(Debug)]
pub struct KillSwitch {
    state: watch::Sender<SwitchState>,
    /// Cancelled by an abort (then replaced), so that calls in flight are cut once.
    cut: Mutex<CancellationToken>,
}

impl Default for KillSwitch {
    fn default() -> Self {
        Self {
            state: watch::channel(SwitchState::Running).0,
            cut: Mutex::new(CancellationToken::new()),
        }
    }
}

impl KillSwitch {
    /// Where it stands now.
    pub fn state(&self) -> SwitchState {
        *self.state.borrow()
    }

    /// Watches the state.
    pub fn watch(&self) -> watch::Receiver<SwitchState> {
        self.state.subscribe()
    }

    /// Moves the state by the rule ([`next_state`]).
    pub(crate) fn apply(&self, command: SwitchCommand) -> Transition {
        let mut from = SwitchState::Running;
        let mut to = SwitchState::Running;
        self.state.send_modify(|s| {
            from = *s;
            to = next_state(*s, command);
            *s = to;
        });
        Transition { from, to }
    }

    /// Sets the state after an abort's cut (back to where it was before, unless halted);
    /// `false` when a halt came meanwhile (nothing changed).
    pub(crate) fn settle(&self, after_abort: SwitchState) -> bool {
        self.state.send_if_modified(|s| {
            if *s == SwitchState::Aborting {
                *s = after_abort;
                true
            } else {
                false
            }
        })
    }

    /// Resolves once the village is halted (a section's wait ends there: a halt waits for
    /// nothing).
    pub(crate) async fn halted(&self) {
        let mut rx = self.state.subscribe();
        let _ = rx.wait_for(|s| *s == SwitchState::Halted).await;
    }

    /// The token the current calls are cut by.
    pub(crate) fn cut_token(&self) -> CancellationToken {
        self.cut.lock_or_recover().clone()
    }

    /// Cuts every call holding the current token and arms a fresh one.
    pub(crate) fn cut_now(&self) {
        let old = std::mem::replace(&mut *self.cut.lock_or_recover(), CancellationToken::new());
        old.cancel();
    }

    /// Waits while paused (or aborting); `Err` when halted, or when `stop` fires meanwhile.
    pub(crate) async fn gate(&self, stop: &CancellationToken) -> Result<(), Held> {
        let mut rx = self.state.subscribe();
        loop {
            let now = *rx.borrow_and_update();
            match now {
                SwitchState::Running => return Ok(()),
                SwitchState::Halted => return Err(Held::Halted),
                SwitchState::Paused | SwitchState::Aborting => {}
            }
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return Err(Held::Cut) },
                () = stop.cancelled() => return Err(Held::Cut),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_of_each_command_from_each_state() {
        use SwitchCommand as C;
        use SwitchState as S;
        let cases = [
            (S::Running, C::Pause, S::Paused),
            (S::Paused, C::Resume, S::Running),
            (S::Running, C::Resume, S::Running),
            (S::Paused, C::Abort, S::Aborting),
            (S::Running, C::Halt, S::Halted),
            (S::Halted, C::Pause, S::Halted),
            (S::Halted, C::Abort, S::Halted),
            (S::Halted, C::Resume, S::Running),
        ];
        for (from, command, to) in cases {
            assert_eq!(next_state(from, command), to, "{from:?} {command:?}");
        }
        assert_eq!(SwitchCommand::parse("halt"), Some(C::Halt));
        assert_eq!(SwitchCommand::parse("HALT"), None);
    }

    #[test]
    fn only_a_real_change_is_a_transition() {
        let switch = KillSwitch::default();
        assert!(
            switch.apply(SwitchCommand::Pause).changed(),
            "running -> paused"
        );
        assert!(
            !switch.apply(SwitchCommand::Pause).changed(),
            "paused again"
        );
        assert!(
            switch.apply(SwitchCommand::Halt).changed(),
            "paused -> halted"
        );
        assert!(!switch.apply(SwitchCommand::Halt).changed(), "halted again");
        assert!(
            !switch.apply(SwitchCommand::Pause).changed(),
            "a halt only resumes"
        );
        assert!(
            switch.apply(SwitchCommand::Resume).changed(),
            "halted -> running"
        );
        assert!(
            !switch.apply(SwitchCommand::Resume).changed(),
            "running again"
        );
    }

    /// The spellings are a format: the `kill switch:` lines, the audit log's `target` and
    /// `outcome`, the socket's answers and the events carry them.
    #[test]
    fn the_spellings_of_states_commands_and_channels() {
        let states = [
            SwitchState::Running,
            SwitchState::Paused,
            SwitchState::Aborting,
            SwitchState::Halted,
        ];
        assert_eq!(
            states.map(SwitchState::as_str),
            ["running", "paused", "aborting", "halted"]
        );
        let commands = [
            SwitchCommand::Pause,
            SwitchCommand::Resume,
            SwitchCommand::Abort,
            SwitchCommand::Halt,
        ];
        for command in commands {
            assert_eq!(SwitchCommand::parse(command.as_str()), Some(command));
        }
        let channels = [
            Channel::Cli,
            Channel::Socket,
            Channel::ControlFile,
            Channel::Signal,
            Channel::Gui,
            Channel::Api,
        ];
        assert_eq!(
            channels.map(Channel::as_str),
            ["cli", "socket", "control_file", "signal", "gui", "api"]
        );
        for state in states {
            let json = serde_json::to_value(state).unwrap();
            assert_eq!(json, state.as_str(), "the serde spelling is the same");
        }
        for channel in channels {
            assert_eq!(serde_json::to_value(channel).unwrap(), channel.as_str());
        }
    }

    #[tokio::test]
    async fn the_gate_holds_while_paused_and_opens_on_resume() {
        let switch = std::sync::Arc::new(KillSwitch::default());
        switch.apply(SwitchCommand::Pause);
        let stop = CancellationToken::new();
        let mut waiting = Box::pin(switch.gate(&stop));
        // Polled here: a gate that does not hold is ready at its first poll.
        let mut here = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(
            waiting.as_mut().poll(&mut here).is_pending(),
            "held while paused"
        );
        switch.apply(SwitchCommand::Resume);
        assert_eq!(waiting.await, Ok(()));
        switch.apply(SwitchCommand::Halt);
        assert_eq!(switch.gate(&stop).await, Err(Held::Halted));
    }

    #[test]
    fn an_abort_settles_back_unless_a_halt_came_meanwhile() {
        let switch = KillSwitch::default();
        switch.apply(SwitchCommand::Pause);
        switch.apply(SwitchCommand::Abort);
        assert_eq!(switch.state(), SwitchState::Aborting);
        switch.settle(SwitchState::Paused);
        assert_eq!(switch.state(), SwitchState::Paused, "back to where it was");
        switch.apply(SwitchCommand::Abort);
        switch.apply(SwitchCommand::Halt);
        switch.settle(SwitchState::Running);
        assert_eq!(
            switch.state(),
            SwitchState::Halted,
            "a halt is never undone by a settle"
        );
    }

    #[test]
    fn an_abort_cuts_the_current_token_once() {
        let switch = KillSwitch::default();
        let before = switch.cut_token();
        switch.cut_now();
        assert!(before.is_cancelled());
        assert!(!switch.cut_token().is_cancelled(), "re-armed");
    }
}
