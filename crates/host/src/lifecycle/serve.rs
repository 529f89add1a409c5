//! A serving village until a stop request: `serve` (the start set, the door, the schedules,
//! the GUI with `--gui-port`; a halt closes it too) and `gui` (nothing starts on open; a door
//! that cannot open is said and the GUI goes on). Both close GUI → door → schedules → agents,
//! with one deadline counted from the stop request.

use fuseforks_core::events::CoreEvent;
use fuseforks_core::preflight::HeadlessMode;
use fuseforks_core::safety::SwitchState;

use super::{
    Boot, CLOSE_GRACE, Closing, Failure, GuiOpened, Headless, Notice, OpenOptions, Opened,
    SharedWatcher, StopRequests, close, failed, open, reached,
};
use crate::gui::{GUI_TOKEN_KEY, Gui, GuiError, GuiState, random_secret};

/// What `serve` runs besides the start set.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServeRequest {
    /// Also open the web GUI on 127.0.0.1:PORT, its link's token the secret `gui_token`.
    pub gui_port: Option<u16>,
}

/// How `serve` ended.
#[derive(Debug)]
pub enum Served {
    /// Closed after a stop request (or one before the boot: nothing started).
    Closed,
    /// Closed because the village was halted.
    Halted,
    /// It could not start (said).
    Failed(Failure),
}

/// `serve`: the preflight, the boot (the door first), the start set, the GUI when asked, the
/// schedules, then the wait for a stop request or a halt, and the close.
pub async fn serve(
    options: OpenOptions,
    headless: Headless,
    request: ServeRequest,
    watcher: SharedWatcher,
    mut stop: StopRequests,
) -> Served {
    let report = match super::preflight(&options, &headless, HeadlessMode::Serve, &watcher) {
        Ok(r) => r,
        Err(f) => return Served::Failed(f),
    };
    if *stop.borrow() > 0 {
        return Served::Closed;
    }
    let boot = Boot {
        run_schedules: true,
        door_stops: true,
        warn_unkeyed: true,
    };
    let mut opened = match open(&options, boot, &watcher).await {
        Ok(o) => o,
        Err(f) => return Served::Failed(f),
    };
    opened.configure(Some(&report), Some(&headless));
    opened.start_channels();
    report_failed_turns(&opened);
    let start: Vec<String> = report.start.iter().cloned().collect();
    if let Err(f) = opened.start_agents(&start) {
        if let Some(door) = opened.door.take() {
            door.close().await;
        }
        return Served::Failed(f);
    }
    if let Some(door) = &opened.door {
        watcher.notice(Notice::DoorOpen(&door.url()));
    }
    let gui = match open_gui_port(&opened, request.gui_port).await {
        Ok(gui) => gui,
        Err(f) => {
            if let Some(door) = opened.door.take() {
                door.close().await;
            }
            let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
            close(opened.orchestrator(), &mut stop, &watcher, cut_at).await;
            return Served::Failed(f);
        }
    };
    // After the start set runs: a target not running at its due is consumed as stopped.
    let schedules = opened.host.start_schedules();
    watcher.notice(Notice::Serving {
        agents: report.start.len(),
    });
    // A stop request closes; a halt (any channel) closes too.
    let mut switch = opened.orchestrator().watch_switch();
    let halted = tokio::select! {
        () = reached(&mut stop, 1) => false,
        _ = switch.wait_for(|s| *s == SwitchState::Halted) => true,
    };
    if let Some(channels) = opened.channels.take() {
        channels.close().await;
    }
    // One deadline for the whole close, counted from the stop (the door's close included).
    let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
    watcher.notice(Notice::Closing(Closing::Serving));
    close_serving(&mut opened, gui, schedules, &mut stop, cut_at).await;
    drop(opened);
    if halted {
        watcher.notice(Notice::Halted);
        return Served::Halted;
    }
    Served::Closed
}

/// Closes GUI → door → schedules → agents.
async fn close_serving(
    opened: &mut Opened,
    gui: Option<Gui>,
    schedules: Option<crate::boot::ScheduleLoop>,
    stop: &mut StopRequests,
    cut_at: tokio::time::Instant,
) {
    if let Some(gui) = gui {
        gui.close().await;
    }
    if let Some(door) = opened.door.take() {
        door.close().await;
    }
    if let Some(schedules) = schedules {
        schedules.stop().await;
    }
    let watcher = std::sync::Arc::clone(&opened.watcher);
    close(opened.orchestrator(), stop, &watcher, cut_at).await;
}

/// `serve --gui-port N`: the GUI beside the headless agents, its token the secret `gui_token`.
async fn open_gui_port(opened: &Opened, port: Option<u16>) -> Result<Option<Gui>, Failure> {
    let Some(port) = port else {
        return Ok(None);
    };
    let host = &opened.host;
    let token = host.secrets.get(GUI_TOKEN_KEY).ok().flatten();
    let Some(token) = token else {
        return Err(failed(
            &opened.watcher,
            Failure::Gui(GuiError::TokenMissing),
        ));
    };
    let door = opened.door.as_ref().map(crate::door::Door::url);
    match Gui::open(GuiState::of(host, door), port, &token, false).await {
        Ok(gui) => {
            let opened_at = GuiOpened::Address(gui.address());
            opened.watcher.notice(Notice::GuiOpen(opened_at));
            Ok(Some(gui))
        }
        Err(e) => Err(failed(&opened.watcher, Failure::Gui(e))),
    }
}

/// Says why each failed turn failed (a door's request, a delegated one).
fn report_failed_turns(opened: &Opened) {
    let mut events = opened.orchestrator().events();
    let watcher = std::sync::Arc::clone(&opened.watcher);
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(CoreEvent::AgentFailed {
                    error,
                    code: Some(code),
                    fix,
                    ..
                }) => watcher.notice(Notice::TurnFailed {
                    code: &code,
                    error: &error,
                    fix: fix.as_deref(),
                }),
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
    });
}

/// How the `gui` command's GUI opens.
#[derive(Debug, Clone, Copy)]
pub struct GuiOpening {
    /// The port (0: a free one).
    pub port: u16,
}

/// `gui` (and `demo --gui`): the village in the GUI, nothing started, until the next stop
/// request (counted from the call: one while the GUI opens still closes it). A halt stops the
/// agents but keeps the GUI open, so that a person can resume.
pub async fn gui(
    options: OpenOptions,
    opening: GuiOpening,
    watcher: SharedWatcher,
    mut stop: StopRequests,
) -> Result<(), Failure> {
    let seen = *stop.borrow();
    let boot = Boot {
        run_schedules: true,
        door_stops: false,
        warn_unkeyed: false,
    };
    let mut opened = open(&options, boot, &watcher).await?;
    opened.configure(None, None);
    opened.start_channels();
    let schedules = opened.host.start_schedules();
    let door = opened.door.as_ref().map(crate::door::Door::url);
    let state = GuiState::of(&opened.host, door);
    let gui = match Gui::open(state, opening.port, &random_secret(), true).await {
        Ok(gui) => gui,
        Err(e) => return Err(failed(&watcher, Failure::Gui(e))),
    };
    watcher.notice(Notice::GuiOpen(GuiOpened::Url(&gui.url())));
    reached(&mut stop, seen + 1).await;
    let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
    gui.close().await;
    if let Some(door) = opened.door.take() {
        door.close().await;
    }
    if let Some(schedules) = schedules {
        schedules.stop().await;
    }
    if let Some(channels) = opened.channels.take() {
        channels.close().await;
    }
    close(opened.orchestrator(), &mut stop, &watcher, cut_at).await;
    Ok(())
}
