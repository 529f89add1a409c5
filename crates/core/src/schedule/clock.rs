//! The scheduler's clock: [`Clock::now_ms`], the wall clock in production ([`SystemClock`])
//! and a clock a test sets and moves by hand ([`ManualClock`]) — forward, backward, by days —
//! so that every calendar rule runs in virtual time.

use std::sync::atomic::{AtomicI64, Ordering};

/// A source of "now", in ms since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now_ms(&self) -> i64;
}

/// The system's wall clock (it may jump: suspend and resume, an NTP step — the decisions are
/// built for that).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        jiff::Timestamp::now().as_millisecond()
    }
}

/// A clock moved by hand (tests, benches).
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    /// A clock reading `now_ms`.
    pub fn new(now_ms: i64) -> Self {
        Self {
            now_ms: AtomicI64::new(now_ms),
        }
    }

    /// Sets the time (a jump either way).
    pub fn set(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }

    /// Moves the time by `delta_ms` (negative: backwards); returns the new time.
    pub fn advance(&self, delta_ms: i64) -> i64 {
        self.now_ms.fetch_add(delta_ms, Ordering::SeqCst) + delta_ms
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> i64 {
        (**self).now_ms()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manual_clock_moves_both_ways_and_the_system_clock_is_now() {
        let clock = ManualClock::new(1_000);
        assert_eq!(clock.advance(500), 1_500);
        assert_eq!(clock.advance(-2_000), -500);
        clock.set(42);
        assert_eq!(clock.now_ms(), 42);
        let shared: std::sync::Arc<dyn Clock> = std::sync::Arc::new(clock);
        assert_eq!(shared.now_ms(), 42);
        let system = SystemClock.now_ms();
        let std_now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        assert!((system - std_now).abs() < 5_000);
    }
}
