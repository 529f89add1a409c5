//! Waiting on a condition instead of the clock: [`eventually`] (a condition read at once),
//! [`eventually_async`] (one that needs an await, e.g. an HTTP call) and [`eventually_blocking`]
//! (for a test without a runtime) poll until the condition holds and fail, naming what was
//! awaited, at a deadline. A test never sleeps for a fixed time: it waits here for the event
//! that proves the moment it needs has come (a log line, a request, a file, a later tick).

use std::time::{Duration, Instant};

/// The deadline most waits use: far beyond what any awaited event takes on a loaded machine,
/// so only a real failure reaches it.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// How often a condition is read again.
const POLL: Duration = Duration::from_millis(20);

/// What a condition gives back: `bool` (held or not yet), or `Option<T>` (the value, once there).
pub trait Settled {
    /// What [`eventually`] returns once the condition holds.
    type Value;
    /// `Some` once the condition holds.
    fn settled(self) -> Option<Self::Value>;
}

impl Settled for bool {
    type Value = ();
    fn settled(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Settled for Option<T> {
    type Value = T;
    fn settled(self) -> Option<T> {
        self
    }
}

/// Reads `check` until it holds, then gives back its value; fails after `deadline` with
/// "waited {deadline} for {what}". The deadline is wall-clock time, so the wait holds under
/// paused tokio time too.
pub async fn eventually<S: Settled>(
    what: impl std::fmt::Display,
    deadline: Duration,
    check: impl FnMut() -> S,
) -> S::Value {
    within(deadline, check)
        .await
        .unwrap_or_else(|| panic!("waited {deadline:?} for {what}"))
}

/// [`eventually`] that gives back `None` at the deadline instead of failing, for a test that
/// says more than "timed out" when the wait ends without the condition.
pub async fn within<S: Settled>(
    deadline: Duration,
    mut check: impl FnMut() -> S,
) -> Option<S::Value> {
    let started = Instant::now();
    loop {
        if let Some(value) = check().settled() {
            return Some(value);
        }
        if started.elapsed() >= deadline {
            return None;
        }
        // tidy: the one poll
        tokio::time::sleep(POLL).await;
    }
}

/// [`eventually`] for a condition that must be awaited (an HTTP request, a query).
pub async fn eventually_async<S: Settled>(
    what: impl std::fmt::Display,
    deadline: Duration,
    mut check: impl AsyncFnMut() -> S,
) -> S::Value {
    let started = Instant::now();
    loop {
        if let Some(value) = check().await.settled() {
            return value;
        }
        assert!(
            started.elapsed() < deadline,
            "waited {deadline:?} for {what}"
        );
        // tidy: the one poll
        tokio::time::sleep(POLL).await;
    }
}

/// [`eventually`] for a test without a runtime: blocks the thread between reads.
pub fn eventually_blocking<S: Settled>(
    what: impl std::fmt::Display,
    deadline: Duration,
    mut check: impl FnMut() -> S,
) -> S::Value {
    let started = Instant::now();
    loop {
        if let Some(value) = check().settled() {
            return value;
        }
        assert!(
            started.elapsed() < deadline,
            "waited {deadline:?} for {what}"
        );
        // tidy: the one poll
        std::thread::sleep(POLL);
    }
}

/// A port for a child that must be told which port to listen on (the CLI refuses port 0 for
/// `--door-port` and `--gui-port`): the kernel names a free port, `start` tries it and gives
/// back `None` when the port was taken meanwhile (another process may take a released port:
/// the attempt then fails to bind), and another port is tried, up to five times.
pub async fn on_a_free_port<T>(
    what: &str,
    mut start: impl AsyncFnMut(u16) -> Option<T>,
) -> (T, u16) {
    for _ in 0..5 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("no free port: {e}"));
        if let Some(started) = start(port).await {
            return (started, port);
        }
    }
    panic!("{what} lost its port five times in a row");
}

/// Spawns `task` after running it here up to its first wait, so that what it does before it
/// waits (e.g. putting a message in a mailbox, then waiting for the answer) has happened when
/// this returns: the moment a test needs, instead of a sleep after a spawn.
pub fn spawn_started<F>(task: F) -> tokio::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut task = Box::pin(task);
    let mut here = std::task::Context::from_waker(std::task::Waker::noop());
    match task.as_mut().poll(&mut here) {
        std::task::Poll::Ready(done) => tokio::spawn(async move { done }),
        std::task::Poll::Pending => tokio::spawn(task),
    }
}
