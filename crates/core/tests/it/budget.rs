//! The budget gate: a call whose estimate exceeds what is left is refused; many calls of one
//! causal root on many threads, with random estimates and real costs up to their estimates,
//! never spend past the ceiling; sequential calls whose costs overrun their estimates spend at
//! most the ceiling plus the last admitted call's overrun (randomised properties over many seeds).

use std::sync::Arc;

use fuseforks_core::llm::Usage;
use fuseforks_core::{BudgetStop, CausalBudget, RESERVATION_FLOOR, effective_tokens};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn concurrent_calls_within_their_estimates_never_overshoot() {
    for seed in 1..=64u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let ceiling = 20_000 + rng.next() % 80_000;
        let budget = CausalBudget::new(Some(ceiling));
        let max_estimate = 12_000;
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let budget = Arc::clone(&budget);
                let mut rng = Rng(rng.next() ^ (t + 1));
                std::thread::spawn(move || {
                    let mut stops = 0;
                    for _ in 0..50 {
                        let estimate =
                            RESERVATION_FLOOR + rng.next() % (max_estimate - RESERVATION_FLOOR);
                        match budget.reserve(estimate) {
                            Ok(reservation) => {
                                // The real cost is at most the estimate (prompt and output caps).
                                let cost = rng.next() % (reservation.amount() + 1);
                                let usage = Usage {
                                    prompt: cost,
                                    ..Usage::default()
                                };
                                assert_eq!(effective_tokens(&usage), cost);
                                if rng.next().is_multiple_of(10) {
                                    drop(reservation); // unknown cost: charged in full
                                } else {
                                    reservation.settle(Some(&usage));
                                }
                            }
                            Err(BudgetStop::Exhausted | BudgetStop::ReserveShort) => stops += 1,
                        }
                        std::thread::yield_now();
                    }
                    stops
                })
            })
            .collect();
        let stops: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        let spent = budget.spent();
        assert!(
            spent <= ceiling,
            "seed {seed}: spent {spent} > ceiling {ceiling} (no cost exceeded its reservation)"
        );
        assert!(stops > 0, "seed {seed}: the ceiling was reached");
    }
}

#[test]
fn costs_above_the_reservation_are_bounded_by_admission() {
    // Even when a call costs more than it reserved, no new call is admitted past the ceiling.
    let budget = CausalBudget::new(Some(10_000));
    let a = budget.reserve(4_000).unwrap();
    let b = budget.reserve(4_000).unwrap();
    a.settle(Some(&Usage {
        prompt: 9_000,
        ..Usage::default()
    }));
    assert_eq!(budget.reserve(1_000).unwrap_err(), BudgetStop::ReserveShort);
    b.settle(Some(&Usage {
        prompt: 3_000,
        ..Usage::default()
    }));
    assert_eq!(budget.reserve(1_000).unwrap_err(), BudgetStop::Exhausted);
    assert_eq!(budget.spent(), 12_000);
}

#[test]
fn an_estimate_over_what_is_left_is_refused_before_anything_is_spent() {
    // Budget 500 and a call estimated at 5,000: nothing may be sent (the old gate capped the
    // reservation at the ceiling and admitted it, then spent 3.3× the budget).
    let budget = CausalBudget::new(Some(500));
    assert_eq!(budget.reserve(5_000).unwrap_err(), BudgetStop::ReserveShort);
    assert_eq!(budget.spent(), 0);
    // Also when part of the budget is spent: 4,000 left, 4,500 asked.
    let budget = CausalBudget::new(Some(10_000));
    budget.reserve(6_000).unwrap().settle(Some(&Usage {
        prompt: 6_000,
        ..Usage::default()
    }));
    assert_eq!(budget.reserve(4_500).unwrap_err(), BudgetStop::ReserveShort);
    assert_eq!(budget.reserve(4_000).unwrap().amount(), 4_000);
}

#[test]
fn sequential_calls_spend_at_most_the_ceiling_plus_the_last_admitted_overrun() {
    for seed in 1..=256u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let ceiling = 1 + rng.next() % 50_000;
        let budget = CausalBudget::new(Some(ceiling));
        let mut last_overrun = 0u64;
        let mut admitted = 0;
        for _ in 0..100 {
            let estimate = RESERVATION_FLOOR + rng.next() % 8_000;
            let Ok(reservation) = budget.reserve(estimate) else {
                continue;
            };
            admitted += 1;
            assert!(
                reservation.amount() >= estimate,
                "never reserved below the estimate"
            );
            // Real costs up to twice the estimate (an estimate is not a promise).
            let cost = rng.next() % (2 * reservation.amount() + 1);
            last_overrun = cost.saturating_sub(reservation.amount());
            reservation.settle(Some(&Usage {
                prompt: cost,
                ..Usage::default()
            }));
        }
        let spent = budget.spent();
        assert!(
            spent <= ceiling + last_overrun,
            "seed {seed}: spent {spent} > ceiling {ceiling} + last overrun {last_overrun} ({admitted} admitted)"
        );
    }
}
