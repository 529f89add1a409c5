//! The one lock rule of the core: a poisoned `Mutex` or `RwLock` is recovered with
//! [`PoisonError::into_inner`], never turned into a default, an error or a skipped update.
//!
//! Why recovering is right here: every critical section of the core is short and leaves its
//! data whole (a counter moved, an entry inserted or removed, a value replaced), so a panic in
//! another thread while it held the lock leaves nothing half-written worth refusing. Before
//! this rule, each site invented its own meaning for a poisoned lock (an empty `World`, `Idle`,
//! a spent budget of `u64::MAX` in one place and `Exhausted` in another), which turned one
//! panic into silent, inconsistent behaviour everywhere after it.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex::lock`] under the lock rule.
pub(crate) trait LockOrRecover<T: ?Sized> {
    /// The guard, recovered from a poisoned lock.
    fn lock_or_recover(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> LockOrRecover<T> for Mutex<T> {
    fn lock_or_recover(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// [`RwLock::read`] and [`RwLock::write`] under the lock rule.
pub(crate) trait RwLockOrRecover<T: ?Sized> {
    /// The read guard, recovered from a poisoned lock.
    fn read_or_recover(&self) -> RwLockReadGuard<'_, T>;
    /// The write guard, recovered from a poisoned lock.
    fn write_or_recover(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockOrRecover<T> for RwLock<T> {
    fn read_or_recover(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_or_recover(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poison<T: Send + Sync>(lock: &T, hold: impl Fn(&T) + Send + Sync) {
        std::thread::scope(|s| {
            let _ = s.spawn(|| hold(lock)).join();
        });
    }

    #[test]
    fn a_poisoned_lock_gives_back_what_it_held() {
        let m = Mutex::new(7);
        poison(&m, |m| {
            let mut held = m.lock_or_recover();
            *held += 1;
            panic!("while holding the lock");
        });
        assert!(m.is_poisoned());
        assert_eq!(*m.lock_or_recover(), 8, "the value, not a default");
        let rw = RwLock::new(vec![1]);
        poison(&rw, |rw| {
            let mut held = rw.write_or_recover();
            held.push(2);
            panic!("while holding the lock");
        });
        assert!(rw.is_poisoned());
        assert_eq!(*rw.read_or_recover(), [1, 2]);
        rw.write_or_recover().push(3);
        assert_eq!(rw.read_or_recover().len(), 3);
    }

    /// The rule, enforced: no `Mutex`/`RwLock` result of the core is matched, mapped or
    /// defaulted by hand (every lock goes through this module).
    #[test]
    fn no_lock_result_is_turned_into_a_default() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut bad = Vec::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") || path.ends_with("sync.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for (n, line) in text.lines().enumerate() {
                    let hand_made = [".lock()", ".read()", ".write()"]
                        .iter()
                        .any(|call| line.contains(call))
                        && !line.contains(".await")
                        && !line.contains("stdin()")
                        && !line.contains("stderr()")
                        && !line.contains("stdout()");
                    if hand_made {
                        bad.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                    }
                }
            }
        }
        assert!(
            bad.is_empty(),
            "lock rule (crates/core/src/sync.rs): take a std lock with lock_or_recover / \
             read_or_recover / write_or_recover, never .lock()/.read()/.write() by hand:\n{}",
            bad.join("\n")
        );
    }
}
