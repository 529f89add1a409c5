//! The kill switch's channels into a running process: the control folder
//! `DATA_DIR/control/` (creating `pause`, `resume`, `abort` or `halt` there triggers it,
//! noticed within [`POLL`]; the file is consumed; a folder or an unreadable file under such a
//! name is reported once and ignored) and a Unix socket `DATA_DIR/control/fuseforks.sock`
//! (folder 0700, socket 0600, the peer's uid checked against ours, and on Linux a peer that is
//! one of our own descendants — a `run` command, an MCP server — refused; one request line
//! `pause|resume|abort|halt|state`, or `probe-approved <key> <kind> <schedule id>` — a probe
//! the CLI approved, written into this process's audit chain —, one answer line
//! `{"state":…}` or `{"error":…}`).
//! Every channel ends in [`apply`]: the core's one call, plus the `halt` marker on the shelf
//! (written on halt, removed on resume). [`send`] is the CLI's client.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use fuseforks_core::log::LogSink;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::safety::{
    ApprovedBy, AuditEvent, Channel, SwitchCommand, SwitchState, clear_halt_marker,
    write_halt_marker,
};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

/// How often the control folder is looked at.
pub const POLL: Duration = Duration::from_millis(200);
/// The control folder's name on the shelf.
pub const CONTROL_DIR: &str = "control";
/// The socket's name in the control folder.
pub const SOCKET: &str = "fuseforks.sock";
/// The longest request line read (a probe approval names its schedule).
const MAX_REQUEST: u64 = 512;
/// How long a client may take to send its line.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the CLI waits for an answer (a halt waits for agents to stop, an abort for the
/// sections it may not cut: `ABORT_WAIT_BOUND`, docs/threat-model.md).
const ANSWER_TIMEOUT: Duration =
    Duration::from_secs(fuseforks_core::safety::ABORT_WAIT_BOUND.as_secs() + 10);

/// The log lines' codes (docs/codes.md).
const CONTROL_FILE_IGNORED: &str = "CONTROL_FILE_IGNORED";
const CONTROL_PEER_REFUSED: &str = "CONTROL_PEER_REFUSED";
const CONTROL_SOCKET_FAILED: &str = "CONTROL_SOCKET_FAILED";

/// The names the control folder knows, in the order they are applied in one look.
const NAMES: [SwitchCommand; 4] = [
    SwitchCommand::Halt,
    SwitchCommand::Abort,
    SwitchCommand::Pause,
    SwitchCommand::Resume,
];

/// The control folder of a data folder.
pub fn control_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(CONTROL_DIR)
}

/// Applies a command through the core and keeps the `halt` marker in step.
pub async fn apply(
    orchestrator: &Orchestrator,
    data_dir: &Path,
    command: SwitchCommand,
    channel: Channel,
    log: &dyn LogSink,
) -> SwitchState {
    // The marker first: a halt must hold across a restart even if this process dies next.
    let marked = match command {
        SwitchCommand::Halt if orchestrator.switch_state() != SwitchState::Halted => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            write_halt_marker(data_dir, channel, now).map(drop)
        }
        _ => Ok(()),
    };
    let state = orchestrator.control(command, channel).await;
    let marked = marked.and_then(|()| match command {
        SwitchCommand::Resume => clear_halt_marker(data_dir).map(drop),
        _ => Ok(()),
    });
    if let Err(e) = marked {
        log.line(&format!(
            "kill switch: the halt marker could not be changed kind={}",
            e.kind()
        ));
    }
    state
}

/// The running channels; dropping it (or [`Channels::stop`]) ends them and removes the socket.
pub struct Channels {
    stop: CancellationToken,
    socket: Option<PathBuf>,
    server: Option<tokio::task::JoinHandle<()>>,
}

/// How long [`Channels::close`] waits for an answer in progress (a halt's takes ~2 s).
const CLOSE_WAIT: Duration = Duration::from_secs(5);

impl Channels {
    /// Ends the channels, letting an answer in progress reach its client (a halt's answer
    /// comes after the agents stopped) for at most [`CLOSE_WAIT`].
    pub async fn close(mut self) {
        self.stop.cancel();
        if let Some(server) = self.server.take() {
            let _ = tokio::time::timeout(CLOSE_WAIT, server).await;
        }
    }
}

impl Drop for Channels {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(path) = &self.socket {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A pause left on the shelf for the next process (`pause` with nothing running): the next
/// `ask` or `serve` starts paused and sends nothing until `resume`.
pub fn pause_waiting(data_dir: &Path) -> bool {
    control_dir(data_dir).join("pause").is_file()
}

/// Starts the control-folder watcher, the socket and the signals (SIGUSR1 toggles
/// pause/resume, SIGUSR2 aborts) of a running process.
pub fn start(orchestrator: &Orchestrator, data_dir: &Path, log: Arc<dyn LogSink>) -> Channels {
    spawn_signals(orchestrator, data_dir, Arc::clone(&log));
    let stop = CancellationToken::new();
    let dir = control_dir(data_dir);
    if let Err(e) = prepare_dir(&dir) {
        log.line(&format!(
            "control: the control folder is unusable code={} kind={} (the control files and the socket are off)",
            fuseforks_core::Coded::code(&e),
            e.kind()
        ));
        return Channels {
            stop,
            socket: None,
            server: None,
        };
    }
    tokio::spawn(watch_files(
        orchestrator.clone(),
        data_dir.to_path_buf(),
        Arc::clone(&log),
        stop.clone(),
    ));
    let (socket, server) = match open_socket(&dir, &*log) {
        Some((listener, path)) => {
            let server = tokio::spawn(serve_socket(
                listener,
                orchestrator.clone(),
                data_dir.to_path_buf(),
                log,
                stop.clone(),
            ));
            (Some(path), Some(server))
        }
        None => (None, None),
    };
    Channels {
        stop,
        socket,
        server,
    }
}

/// SIGUSR1 toggles pause/resume, SIGUSR2 aborts (Unix); each ends in [`apply`].
fn spawn_signals(orchestrator: &Orchestrator, data_dir: &Path, log: Arc<dyn LogSink>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut usr1), Ok(mut usr2)) = (
            signal(SignalKind::user_defined1()),
            signal(SignalKind::user_defined2()),
        ) else {
            return;
        };
        let (orchestrator, data_dir) = (orchestrator.clone(), data_dir.to_path_buf());
        tokio::spawn(async move {
            loop {
                let command = tokio::select! {
                    _ = usr1.recv() => match orchestrator.switch_state() {
                        SwitchState::Paused => SwitchCommand::Resume,
                        _ => SwitchCommand::Pause,
                    },
                    _ = usr2.recv() => SwitchCommand::Abort,
                };
                // An abort waits for its sections; the next signal is read meanwhile.
                let (o, d, l) = (orchestrator.clone(), data_dir.clone(), Arc::clone(&log));
                let applied = async move { apply(&o, &d, command, Channel::Signal, &*l).await };
                if command == SwitchCommand::Abort {
                    tokio::spawn(applied);
                } else {
                    applied.await;
                }
            }
        });
    }
    #[cfg(not(unix))]
    let _ = (orchestrator, data_dir, log);
}

/// Makes the control folder (0700) unless it is there; a link or a file in its place is refused.
fn prepare_dir(dir: &Path) -> Result<(), ControlDirError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(ControlDirError::NotAFolder {
            path: dir.to_path_buf(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir).map_err(|source| ControlDirError::Io {
                path: dir.to_path_buf(),
                source,
            })
        }
        Err(source) => Err(ControlDirError::Io {
            path: dir.to_path_buf(),
            source,
        }),
    }
}

/// Why the control folder cannot be used (the control files and the socket are then off).
#[derive(Debug, thiserror::Error)]
pub enum ControlDirError {
    /// A link, a file or another non-folder is in its place.
    #[error("{}: the control folder is not a folder", path.display())]
    NotAFolder {
        /// `DATA_DIR/control`.
        path: PathBuf,
    },
    /// Looking at it or making it failed.
    #[error("{}: the control folder cannot be made or read", path.display())]
    Io {
        /// `DATA_DIR/control`.
        path: PathBuf,
        /// The io error.
        #[source]
        source: std::io::Error,
    },
}

impl ControlDirError {
    /// The log line's `kind=` token: `not_a_folder`, or the io error's kind.
    pub fn kind(&self) -> String {
        match self {
            Self::NotAFolder { .. } => "not_a_folder".to_owned(),
            Self::Io { source, .. } => source.kind().to_string(),
        }
    }
}

impl fuseforks_core::Coded for ControlDirError {
    fn code(&self) -> &'static str {
        "CONTROL_DIR_UNUSABLE"
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(
            "remove what stands in the place of DATA_DIR/control, or make the data folder writable"
                .into(),
        )
    }
}

/// Looks at the control folder every [`POLL`] and applies what it finds.
async fn watch_files(
    orchestrator: Orchestrator,
    data_dir: PathBuf,
    log: Arc<dyn LogSink>,
    stop: CancellationToken,
) {
    let dir = control_dir(&data_dir);
    let mut reported = HashSet::new();
    loop {
        for command in NAMES {
            if let Some(found) = take(&dir, command, &mut reported, &*log) {
                if found == SwitchCommand::Abort {
                    // An abort waits for its sections: a halt file must still be read meanwhile.
                    let (o, d, l) = (orchestrator.clone(), data_dir.clone(), Arc::clone(&log));
                    tokio::spawn(
                        async move { apply(&o, &d, found, Channel::ControlFile, &*l).await },
                    );
                } else {
                    apply(&orchestrator, &data_dir, found, Channel::ControlFile, &*log).await;
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            () = stop.cancelled() => return,
        }
    }
}

/// Consumes `DATA_DIR/control/<command>` when it is a readable regular file; reports once
/// (until it goes away) anything else under that name.
fn take(
    dir: &Path,
    command: SwitchCommand,
    reported: &mut HashSet<SwitchCommand>,
    log: &dyn LogSink,
) -> Option<SwitchCommand> {
    let path = dir.join(command.as_str());
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        reported.remove(&command);
        return None;
    };
    let refused = if !meta.is_file() {
        Some("not_a_regular_file")
    } else if std::fs::File::open(&path).is_err() {
        Some("unreadable")
    } else {
        None
    };
    if let Some(why) = refused {
        if reported.insert(command) {
            log.line(&format!(
                "control: ignored code={CONTROL_FILE_IGNORED} name={} reason={why} (the switch is unchanged)",
                command.as_str()
            ));
        }
        return None;
    }
    match std::fs::remove_file(&path) {
        Ok(()) => Some(command),
        Err(e) => {
            if reported.insert(command) {
                log.line(&format!(
                    "control: ignored code={CONTROL_FILE_IGNORED} name={} reason={}",
                    command.as_str(),
                    e.kind()
                ));
            }
            None
        }
    }
}

#[cfg(unix)]
type Listener = tokio::net::UnixListener;
#[cfg(not(unix))]
type Listener = ();

/// Binds the socket in the control folder (a stale socket of a dead process is replaced;
/// anything else under its name keeps the socket off), 0600.
#[cfg(unix)]
fn open_socket(dir: &Path, log: &dyn LogSink) -> Option<(Listener, PathBuf)> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let path = dir.join(SOCKET);
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        if !meta.file_type().is_socket() {
            log.line(&format!(
                "control: socket off code={CONTROL_SOCKET_FAILED} reason=name_taken"
            ));
            return None;
        }
        // We hold the village lock: a socket left here is a dead process's.
        let _ = std::fs::remove_file(&path);
    }
    let bound = tokio::net::UnixListener::bind(&path).and_then(|listener| {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        Ok(listener)
    });
    match bound {
        Ok(listener) => Some((listener, path)),
        Err(e) => {
            log.line(&format!(
                "control: socket off code={CONTROL_SOCKET_FAILED} reason={}",
                e.kind()
            ));
            None
        }
    }
}

#[cfg(not(unix))]
fn open_socket(_dir: &Path, _log: &dyn LogSink) -> Option<(Listener, PathBuf)> {
    None
}

/// Answers socket clients, each connection in a task of its own (each bounded in size and
/// time): an abort waiting for its sections must not hold up a halt sent meanwhile.
#[cfg(unix)]
async fn serve_socket(
    listener: Listener,
    orchestrator: Orchestrator,
    data_dir: PathBuf,
    log: Arc<dyn LogSink>,
    stop: CancellationToken,
) {
    use std::os::unix::fs::MetadataExt;
    let path = control_dir(&data_dir).join(SOCKET);
    let Ok(own_uid) = std::fs::metadata(&path).map(|m| m.uid()) else {
        return;
    };
    let mut answering = tokio::task::JoinSet::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            () = stop.cancelled() => break,
        };
        let peer = stream.peer_cred().ok();
        if peer.map(|c| c.uid()) != Some(own_uid) {
            log.line(&format!(
                "control: refused code={CONTROL_PEER_REFUSED} reason=other_user"
            ));
            continue;
        }
        if let Some(why) = peer.and_then(|c| refused_peer(c.pid())) {
            // Closed unanswered: the switch is not operable by the processes it controls.
            log.line(&format!(
                "control: refused code={CONTROL_PEER_REFUSED} {why} (a process this one started; the switch is unchanged)"
            ));
            continue;
        }
        let (orchestrator, data_dir, log) =
            (orchestrator.clone(), data_dir.clone(), Arc::clone(&log));
        answering.spawn(async move { answer(stream, &orchestrator, &data_dir, &*log).await });
        while answering.try_join_next().is_some() {}
    }
    // Answers in progress reach their clients (a halt's comes after the agents stopped).
    while answering.join_next().await.is_some() {}
}

/// Why a peer of our own user is refused: it is one of our own descendants (a `run` command,
/// an MCP server, anything they started — orphans included, as the binary is their subreaper),
/// or its pid is unknown. `None`: a process outside our tree (the CLI of a person).
#[cfg(target_os = "linux")]
fn refused_peer(pid: Option<i32>) -> Option<String> {
    match pid.and_then(|p| u32::try_from(p).ok()).filter(|p| *p > 0) {
        None => Some("reason=peer_unknown".to_owned()),
        Some(pid) if fuseforks_core::process::is_own_descendant(pid) => {
            Some(format!("reason=own_child peer_pid={pid}"))
        }
        Some(_) => None,
    }
}

/// Off Linux the peer's ancestry is not read (see docs/threat-model.md).
#[cfg(all(unix, not(target_os = "linux")))]
fn refused_peer(_pid: Option<i32>) -> Option<String> {
    None
}

#[cfg(not(unix))]
async fn serve_socket(
    _listener: Listener,
    _orchestrator: Orchestrator,
    _data_dir: PathBuf,
    _log: Arc<dyn LogSink>,
    _stop: CancellationToken,
) {
}

/// One request, one answer; a malformed or slow request gets an error line (or nothing).
#[cfg(unix)]
async fn answer(
    mut stream: tokio::net::UnixStream,
    orchestrator: &Orchestrator,
    data_dir: &Path,
    log: &dyn LogSink,
) {
    let (read, mut write) = stream.split();
    let mut line = String::new();
    let mut reader = BufReader::new(read.take(MAX_REQUEST));
    let got = tokio::time::timeout(REQUEST_TIMEOUT, reader.read_line(&mut line)).await;
    let reply = match got {
        Ok(Ok(_)) => match line.trim_end_matches(['\n', '\r']) {
            "state" => state_line(orchestrator.switch_state()),
            text if text.starts_with(PROBE_APPROVED) => {
                let rest = &text[PROBE_APPROVED.len()..];
                match parse_probe_approved(rest.trim_start()) {
                    Some(event) => {
                        orchestrator.audit(event).await;
                        state_line(orchestrator.switch_state())
                    }
                    None => "{\"error\":\"malformed probe-approved request\"}\n".to_owned(),
                }
            }
            text => match SwitchCommand::parse(text) {
                Some(command) => {
                    state_line(apply(orchestrator, data_dir, command, Channel::Cli, log).await)
                }
                None => {
                    "{\"error\":\"unknown request; send pause, resume, abort, halt or state\"}\n"
                        .to_owned()
                }
            },
        },
        _ => return,
    };
    let _ = write.write_all(reply.as_bytes()).await;
}

/// The socket request of a probe approval: `probe-approved <key> <kind> <schedule id>`.
pub(crate) const PROBE_APPROVED: &str = "probe-approved";

/// The audit event of a probe approved on this machine: target `<schedule id>/<kind>`
/// (`probe` or `acceptance`), the approval key hashed.
pub(crate) fn probe_approval_event(schedule_id: &str, kind: &str, key: &str) -> AuditEvent {
    AuditEvent::new(
        "-",
        "-",
        "probe_approve",
        &format!("{schedule_id}/{kind}"),
        key.as_bytes(),
    )
    .approved_by(ApprovedBy::Person(Channel::Cli))
}

/// Parses the socket request's words after [`PROBE_APPROVED`].
pub(crate) fn parse_probe_approved(rest: &str) -> Option<AuditEvent> {
    let mut words = rest.splitn(3, ' ');
    let key = words
        .next()
        .filter(|k| k.len() == 64 && k.bytes().all(|b| b.is_ascii_hexdigit()))?;
    let kind = words
        .next()
        .filter(|k| matches!(*k, "probe" | "acceptance"))?;
    let id = words.next().filter(|id| !id.trim().is_empty())?;
    Some(probe_approval_event(id, kind, key))
}

fn state_line(state: SwitchState) -> String {
    format!("{{\"state\":\"{}\"}}\n", state.as_str())
}

/// Why [`send`] got no answer.
#[derive(Debug)]
pub enum SendError {
    /// Nothing listens (no process runs this village).
    NotRunning,
    /// Something else went wrong (with the I/O kind or the answer's error).
    Failed(String),
}

/// The CLI's client: sends one command (or `state`) to the running process and returns the
/// state it answers.
pub async fn send(data_dir: &Path, request: &str) -> Result<SwitchState, SendError> {
    #[cfg(unix)]
    {
        use std::io::ErrorKind;
        let path = control_dir(data_dir).join(SOCKET);
        let mut stream = match tokio::net::UnixStream::connect(&path).await {
            Ok(s) => s,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::ConnectionRefused) => {
                return Err(SendError::NotRunning);
            }
            Err(e) => return Err(SendError::Failed(e.kind().to_string())),
        };
        let exchange = async {
            stream.write_all(format!("{request}\n").as_bytes()).await?;
            let mut reply = String::new();
            BufReader::new((&mut stream).take(256))
                .read_line(&mut reply)
                .await?;
            Ok::<_, std::io::Error>(reply)
        };
        let reply = match tokio::time::timeout(ANSWER_TIMEOUT, exchange).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(e)) => return Err(SendError::Failed(e.kind().to_string())),
            Err(_) => return Err(SendError::Failed("timed out".into())),
        };
        let value: serde_json::Value = serde_json::from_str(&reply)
            .map_err(|_| SendError::Failed("unreadable answer".into()))?;
        let state = value.get("state").and_then(serde_json::Value::as_str);
        [
            SwitchState::Running,
            SwitchState::Paused,
            SwitchState::Aborting,
            SwitchState::Halted,
        ]
        .into_iter()
        .find(|s| Some(s.as_str()) == state)
        .ok_or_else(|| {
            SendError::Failed(
                value
                    .get("error")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("no state")
                    .to_owned(),
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = (data_dir, request);
        Err(SendError::NotRunning)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::parse_probe_approved;

    #[test]
    fn only_a_well_formed_request_is_an_event() {
        let key = "ab".repeat(32);
        let e = parse_probe_approved(&format!("{key} acceptance nightly build")).unwrap();
        assert_eq!(e.target, "nightly build/acceptance");
        assert_eq!(e.action, "probe_approve");
        for bad in [
            format!("{key} other id"),
            format!("{} probe id", "zz".repeat(32)),
            format!("{key} probe"),
            format!("{key} probe  "),
            "short probe id".to_owned(),
        ] {
            assert!(parse_probe_approved(&bad).is_none(), "{bad}");
        }
    }
}
