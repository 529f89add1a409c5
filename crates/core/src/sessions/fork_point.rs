//! Where a conversation may be forked: before a message that starts an exchange, never inside
//! one (between a request and its reply, or between a paid call's `intent` and the `turn` that
//! records its usage), so that a fork copies whole exchanges and `stats` of the copy never sees
//! a call sent without its usage.

use std::collections::BTreeMap;

use super::records::Record;
use super::store::StoredRecord;

/// Why a fork point is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForkRefusal {
    /// `at` is past the last record (`last` is `None` for an empty conversation).
    PastEnd {
        /// The last record's seq.
        last: Option<u64>,
    },
    /// `at` falls inside an exchange: it is not a message, or an intent before it is completed
    /// by a turn at or after it.
    SplitsExchange {
        /// The nearest valid point before `at`, if any.
        before: Option<u64>,
        /// The nearest valid point after `at`, if any.
        after: Option<u64>,
    },
}

/// Checks `at` against a conversation's records (in seq order).
pub fn check(records: &[(u64, StoredRecord)], at: u64) -> Result<(), ForkRefusal> {
    let last = records.last().map(|(seq, _)| *seq);
    if last.is_none_or(|last| at > last) {
        return Err(ForkRefusal::PastEnd { last });
    }
    if starts_exchange(records, at) {
        return Ok(());
    }
    let valid = |seq: &&u64| starts_exchange(records, **seq);
    let seqs: Vec<u64> = records.iter().map(|(seq, _)| *seq).collect();
    Err(ForkRefusal::SplitsExchange {
        before: seqs.iter().rev().filter(|s| **s < at).find(valid).copied(),
        after: seqs.iter().filter(|s| **s > at).find(valid).copied(),
    })
}

/// Whether the record at `at` is a message and no call is open across it.
fn starts_exchange(records: &[(u64, StoredRecord)], at: u64) -> bool {
    let message = records
        .iter()
        .any(|(seq, r)| *seq == at && matches!(r, StoredRecord::Known(Record::Message(_))));
    message && whole_at(records, at)
}

/// Whether no intent before `at` is completed by a turn at or after it. A turn completes the
/// intents of its agent written since the turn started (`tsMs` at least the turn's), the rule
/// `stats` counts by.
fn whole_at(records: &[(u64, StoredRecord)], at: u64) -> bool {
    let mut open: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for (seq, record) in records {
        match record {
            StoredRecord::Known(Record::Intent(i)) if *seq < at => {
                open.entry(i.agent_id.as_str()).or_default().push(i.ts_ms);
            }
            StoredRecord::Known(Record::Turn(t)) => {
                let Some(calls) = open.get_mut(t.agent_id.as_str()) else {
                    continue;
                };
                if *seq >= at && calls.iter().any(|ts| *ts >= t.ts_ms) {
                    return false;
                }
                calls.retain(|ts| *ts < t.ts_ms);
            }
            _ => {}
        }
    }
    true
}
