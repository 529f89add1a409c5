//! Token usage, normalised across wires: `prompt` holds every input token (cache reads and
//! writes are parts of it), `completion` every output token (reasoning is part of it).

use serde::{Deserialize, Serialize};

/// Tokens of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// All input tokens, cached or not.
    pub prompt: u64,
    /// All output tokens, reasoning included.
    pub completion: u64,
    /// Input tokens read from the provider's cache (⊆ prompt).
    pub cache_read: u64,
    /// Input tokens written to the cache (⊆ prompt, disjoint from `cache_read`).
    pub cache_write: u64,
    /// Of `cache_write`, those written with a 1-hour lifetime.
    pub cache_write_1h: u64,
    /// Output tokens spent on reasoning (⊆ completion).
    pub reasoning: u64,
}

impl Usage {
    /// `prompt + completion`.
    pub fn total(&self) -> u64 {
        self.prompt.saturating_add(self.completion)
    }

    /// True when the parts fit inside their wholes, as the reference requires.
    pub fn is_consistent(&self) -> bool {
        self.cache_read + self.cache_write <= self.prompt
            && self.cache_write_1h <= self.cache_write
            && self.reasoning <= self.completion
    }

    /// Adds another call's tokens.
    pub fn add(&mut self, other: &Usage) {
        self.prompt = self.prompt.saturating_add(other.prompt);
        self.completion = self.completion.saturating_add(other.completion);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.cache_write_1h = self.cache_write_1h.saturating_add(other.cache_write_1h);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relations() {
        let u = Usage {
            prompt: 10,
            completion: 5,
            cache_read: 4,
            cache_write: 6,
            cache_write_1h: 6,
            reasoning: 5,
        };
        assert!(u.is_consistent());
        assert_eq!(u.total(), 15);
        assert!(
            !Usage {
                cache_read: 11,
                prompt: 10,
                ..u
            }
            .is_consistent()
        );
        assert!(!Usage { reasoning: 6, ..u }.is_consistent());
    }
}
