//! The token budget of one causal root: effective tokens, reservations before
//! each call, settlement after it.
//!
//! **The gate is hard.** A call is admitted only when `spent + reserved + estimate ≤ ceiling`
//! (the estimate raised to [`RESERVATION_FLOOR`], never lowered to fit: the original capped the
//! reservation at the ceiling, so a call estimated above the whole budget was admitted). A call
//! whose estimate exceeds what is left is refused before it is sent ([`BudgetStop::ReserveShort`],
//! the turn stop `reserve_short`).
//!
//! **The guarantee.** Let `L` be the last admitted call. At its admission `spent + reserved +
//! estimate(L) ≤ ceiling`; afterwards nothing is admitted, so the final spending is at most
//! `ceiling + Σ max(0, cost(c) − reservation(c))` over the calls in flight when `L` was admitted
//! (`L` included). For sequential calls (the rounds of one turn) that is `ceiling + the last
//! admitted call's overrun`; a call whose cost stays within its estimate never takes the
//! spending past the ceiling. A call whose usage is unknown is charged its whole reservation.

use std::sync::{Arc, Mutex};

use crate::llm::Usage;
use crate::sync::LockOrRecover;

/// The smallest reservation, in effective tokens.
pub const RESERVATION_FLOOR: u64 = 1_000;

/// Effective tokens of a call: uncached input × 1 + cached input × 0.1 + cache writes × 1 +
/// output × 4 (rounded up).
pub fn effective_tokens(usage: &Usage) -> u64 {
    // Saturating: the numbers come from the provider, and a wrap would undercharge.
    let uncached = usage
        .prompt
        .saturating_sub(usage.cache_read.saturating_add(usage.cache_write));
    let tenths = uncached
        .saturating_mul(10)
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write.saturating_mul(10))
        .saturating_add(usage.completion.saturating_mul(OUTPUT_WEIGHT * 10));
    tenths.div_ceil(10)
}

/// Tokens a provider may add to a request beyond its bytes (a tool-use preamble, message
/// framing): a fixed allowance on top of the request's size.
pub(crate) const REQUEST_OVERHEAD_TOKENS: u64 = 512;

/// An upper bound of a call's effective tokens: the request **as sent** (its whole body —
/// system prompt, history, tool specs — in bytes: no tokenizer makes more tokens than bytes
/// of text) plus [`REQUEST_OVERHEAD_TOKENS`], and the whole output cap at the output weight
/// (× 4). A server that honours the cap it was sent can never cost more than this.
pub(crate) fn estimate(request_bytes: usize, max_output_tokens: u32) -> u64 {
    let input = u64::try_from(request_bytes)
        .unwrap_or(u64::MAX)
        .saturating_add(REQUEST_OVERHEAD_TOKENS);
    let output = u64::from(max_output_tokens).saturating_mul(OUTPUT_WEIGHT);
    input.saturating_add(output)
}

/// The weight of an output token in effective tokens.
const OUTPUT_WEIGHT: u64 = 4;

/// Why a call may not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetStop {
    /// The ceiling is reached.
    Exhausted,
    /// Something is left, but less than the next reservation.
    ReserveShort,
}

#[derive(Debug, Default)]
struct Ledger {
    spent: u64,
    reserved: u64,
}

/// The budget of one causal root. Shared (`Arc`) by every call the root causes.
#[derive(Debug)]
pub struct CausalBudget {
    /// A random id of the causal root (the audit log's `causalRoot`).
    root: String,
    ceiling: Option<u64>,
    ledger: Mutex<Ledger>,
    /// The causal root's trace span, opened by its first turn; it ends when the last turn of
    /// the chain lets go of the root.
    span: std::sync::OnceLock<crate::trace::Span>,
}

impl CausalBudget {
    /// A fresh budget; `None` = no ceiling (spending is still counted).
    pub fn new(ceiling: Option<u64>) -> Arc<Self> {
        Arc::new(Self {
            root: uuid::Uuid::new_v4().simple().to_string(),
            ceiling,
            ledger: Mutex::new(Ledger::default()),
            span: std::sync::OnceLock::new(),
        })
    }

    /// The causal root's span, opened by `open` the first time.
    pub(crate) fn span(&self, open: impl FnOnce() -> crate::trace::Span) -> &crate::trace::Span {
        self.span.get_or_init(open)
    }

    /// The causal root's id (random, per budget).
    pub fn root_id(&self) -> &str {
        &self.root
    }

    /// The ceiling.
    pub fn ceiling(&self) -> Option<u64> {
        self.ceiling
    }

    /// Effective tokens settled so far.
    pub fn spent(&self) -> u64 {
        self.ledger.lock_or_recover().spent
    }

    /// What is left of the ceiling (settled spending and open reservations deducted).
    pub fn remaining(&self) -> Option<u64> {
        let ceiling = self.ceiling?;
        let ledger = self.ledger.lock_or_recover();
        Some(ceiling.saturating_sub(ledger.spent.saturating_add(ledger.reserved)))
    }

    /// Reserves an estimate (at least [`RESERVATION_FLOOR`]) before a call. Refused with
    /// [`BudgetStop::Exhausted`] when the ceiling is reached, and with
    /// [`BudgetStop::ReserveShort`] when the reservation does not fit what is left.
    pub fn reserve(self: &Arc<Self>, estimate: u64) -> Result<Reservation, BudgetStop> {
        let amount = estimate.max(RESERVATION_FLOOR);
        let mut ledger = self.ledger.lock_or_recover();
        if let Some(ceiling) = self.ceiling {
            if ledger.spent >= ceiling {
                return Err(BudgetStop::Exhausted);
            }
            if ledger
                .spent
                .saturating_add(ledger.reserved)
                .saturating_add(amount)
                > ceiling
            {
                return Err(BudgetStop::ReserveShort);
            }
        }
        ledger.reserved += amount;
        Ok(Reservation {
            budget: Arc::clone(self),
            amount,
            settled: false,
        })
    }

    fn settle(&self, reserved: u64, charged: u64) {
        let mut ledger = self.ledger.lock_or_recover();
        ledger.reserved = ledger.reserved.saturating_sub(reserved);
        ledger.spent = ledger.spent.saturating_add(charged);
    }
}

/// An open reservation. Settle it with the real usage; dropped unsettled (a call whose usage
/// is unknown), it charges the whole reservation, so an unknown cost never goes uncounted.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<CausalBudget>,
    amount: u64,
    settled: bool,
}

impl Reservation {
    /// The reserved amount.
    pub fn amount(&self) -> u64 {
        self.amount
    }

    /// Replaces the reservation with the real cost (`None`: unknown, the reservation is
    /// charged); returns the effective tokens charged.
    pub fn settle(mut self, usage: Option<&Usage>) -> u64 {
        let charged = usage.map_or(self.amount, effective_tokens);
        self.budget.settle(self.amount, charged);
        self.settled = true;
        charged
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.settled {
            self.budget.settle(self.amount, self.amount);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_bounds_the_request_as_sent_and_the_whole_output_cap() {
        // 7,388 bytes sent (tool specs included) with a cap of 16: every byte, the allowance,
        // and 16 output tokens at weight 4.
        assert_eq!(estimate(7_388, 16), 7_388 + REQUEST_OVERHEAD_TOKENS + 64);
        assert_eq!(estimate(0, 0), REQUEST_OVERHEAD_TOKENS);
        // The cap is never shortened (it was capped at 1,024 before).
        assert_eq!(estimate(1, 8_192), 1 + REQUEST_OVERHEAD_TOKENS + 32_768);
        assert_eq!(estimate(usize::MAX, u32::MAX), u64::MAX, "saturates");
        // Never below what the call can really cost: a reply of the whole cap to a request
        // counted one token per byte.
        let worst = Usage {
            prompt: 7_388,
            completion: 16,
            ..Usage::default()
        };
        assert!(effective_tokens(&worst) <= estimate(7_388, 16));
    }

    #[test]
    fn a_reservation_that_fills_the_ceiling_exactly_is_admitted() {
        let budget = CausalBudget::new(Some(2_000));
        assert_eq!(budget.ceiling(), Some(2_000));
        assert_eq!(CausalBudget::new(None).ceiling(), None);
        let a = budget.reserve(1_000).unwrap();
        let b = budget
            .reserve(1_000)
            .expect("spent + reserved + estimate == ceiling fits");
        assert_eq!(budget.remaining(), Some(0));
        assert_eq!(budget.reserve(1).unwrap_err(), BudgetStop::ReserveShort);
        drop((a, b));
        assert_eq!(budget.reserve(1).unwrap_err(), BudgetStop::Exhausted);
    }

    #[test]
    fn remaining_deducts_spending_and_open_reservations() {
        let budget = CausalBudget::new(Some(10_000));
        let open = budget.reserve(3_000).unwrap();
        budget.reserve(2_000).unwrap().settle(Some(&Usage {
            prompt: 1_500,
            ..Usage::default()
        }));
        assert_eq!(budget.spent(), 1_500);
        assert_eq!(budget.remaining(), Some(10_000 - 1_500 - 3_000));
        drop(open);
        assert_eq!(
            budget.remaining(),
            Some(10_000 - 1_500 - 3_000),
            "charged in full"
        );
        assert_eq!(CausalBudget::new(Some(1)).remaining(), Some(1));
    }

    #[test]
    fn each_root_has_its_own_id_and_one_span() {
        let (a, b) = (CausalBudget::new(None), CausalBudget::new(None));
        assert_eq!(a.root_id().len(), 32);
        assert_ne!(a.root_id(), b.root_id());
        assert_eq!(a.root_id(), a.root_id(), "stable");
        let mut opened = 0;
        let _ = a.span(|| {
            opened += 1;
            crate::trace::Span::default()
        });
        let _ = a.span(|| {
            opened += 1;
            crate::trace::Span::default()
        });
        assert_eq!(opened, 1, "the root's span is opened once");
    }

    #[test]
    fn a_poisoned_ledger_keeps_its_numbers() {
        let budget = CausalBudget::new(Some(5_000));
        budget.reserve(1_000).unwrap().settle(Some(&Usage {
            prompt: 400,
            ..Usage::default()
        }));
        let held = Arc::clone(&budget);
        let _ = std::thread::spawn(move || {
            let _ledger = held.ledger.lock_or_recover();
            panic!("a panic while the ledger is held");
        })
        .join();
        assert!(budget.ledger.is_poisoned());
        assert_eq!(budget.spent(), 400, "the real spending, not u64::MAX");
        assert_eq!(budget.remaining(), Some(4_600));
        budget.reserve(1_000).unwrap().settle(None);
        assert_eq!(budget.spent(), 1_400, "still admits and settles");
    }

    #[test]
    fn huge_reported_usage_saturates_instead_of_wrapping() {
        let huge = Usage {
            prompt: u64::MAX,
            completion: u64::MAX / 3,
            ..Usage::default()
        };
        assert_eq!(effective_tokens(&huge), u64::MAX.div_ceil(10));
    }

    #[test]
    fn effective_tokens_weigh_cache_and_output() {
        let u = Usage {
            prompt: 1000,
            cache_read: 600,
            cache_write: 100,
            completion: 50,
            ..Usage::default()
        };
        // 300 uncached + 60 cached + 100 written + 200 output
        assert_eq!(effective_tokens(&u), 660);
        assert_eq!(
            effective_tokens(&Usage {
                prompt: 1,
                cache_read: 1,
                ..Usage::default()
            }),
            1,
            "rounded up"
        );
    }

    #[test]
    fn reservations_floor_cap_and_stops() {
        let budget = CausalBudget::new(Some(5_000));
        let a = budget.reserve(10).unwrap();
        assert_eq!(a.amount(), RESERVATION_FLOOR);
        let b = budget.reserve(3_500).unwrap();
        assert_eq!(budget.reserve(1_000).unwrap_err(), BudgetStop::ReserveShort);
        a.settle(Some(&Usage {
            prompt: 400,
            completion: 10,
            ..Usage::default()
        }));
        drop(b); // unknown cost: the whole reservation is charged
        assert_eq!(budget.spent(), 440 + 3_500);
        let c = budget.reserve(1_000).unwrap();
        c.settle(Some(&Usage {
            prompt: 2_000,
            ..Usage::default()
        }));
        assert_eq!(budget.reserve(1).unwrap_err(), BudgetStop::Exhausted);
        assert_eq!(
            CausalBudget::new(Some(2_000))
                .reserve(1_000_000)
                .unwrap_err(),
            BudgetStop::ReserveShort,
            "never capped at the ceiling"
        );
        let unlimited = CausalBudget::new(None);
        unlimited.reserve(u64::MAX / 2).unwrap().settle(None);
        assert!(unlimited.remaining().is_none());
    }
}
