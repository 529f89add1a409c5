//! Ctrl+C and SIGTERM, registered at the very start of a command (before the boot), counted on
//! a watch channel: the first asks for a graceful close, a second one exits at once.

use tokio::sync::watch;

/// Signals received so far.
pub(crate) type SignalCount = watch::Receiver<u32>;

/// Registers the handlers now and returns the counter.
pub(crate) fn install() -> std::io::Result<SignalCount> {
    let (tx, rx) = watch::channel(0u32);
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
                tx.send_modify(|n| *n += 1);
            }
        });
    }
    #[cfg(not(unix))]
    {
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                tx.send_modify(|n| *n += 1);
            }
        });
    }
    Ok(rx)
}

/// Waits until at least `n` signals have arrived.
pub(crate) async fn reached(signals: &mut SignalCount, n: u32) {
    while *signals.borrow() < n {
        if signals.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
