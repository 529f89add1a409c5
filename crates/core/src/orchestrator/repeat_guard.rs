//! The repeat guard: the same tool call (name and arguments) made again and again in one turn
//! stops the turn instead of burning tokens in a loop.

use std::collections::HashMap;

use serde_json::Value;

/// How many identical calls one turn may make; the next one is blocked.
pub(super) const MAX_IDENTICAL_CALLS: u32 = 2;

/// Counts identical calls within one turn.
#[derive(Debug, Default)]
pub(super) struct RepeatGuard {
    seen: HashMap<String, u32>,
}

impl RepeatGuard {
    /// Records a call; returns how many times it was made before when it must be blocked.
    pub(super) fn check(&mut self, name: &str, args: &Value) -> Option<u32> {
        let key = format!("{name}\u{0}{args}");
        let count = self.seen.entry(key).or_insert(0);
        *count += 1;
        (*count > MAX_IDENTICAL_CALLS).then_some(*count - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_third_identical_call_is_blocked() {
        let mut g = RepeatGuard::default();
        let a = serde_json::json!({"path": "x"});
        assert_eq!(g.check("file", &a), None);
        assert_eq!(g.check("file", &serde_json::json!({"path": "y"})), None);
        assert_eq!(g.check("file", &a), None);
        assert_eq!(g.check("file", &a), Some(2));
    }
}
