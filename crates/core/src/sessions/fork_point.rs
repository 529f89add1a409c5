//! Where a conversation may be forked: before a message that starts an exchange, never inside
//! one (between a request and its reply, or between a paid call's `intent` and the `turn` that
//! records its usage), so that a fork copies whole exchanges and `stats` of the copy never sees
//! a call sent without its usage.

use std::collections::BTreeMap;

use super::records::Record;
use super::store::StoredRecord;

/// Why a fork point is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ForkRefusal {
    /// `at` is past the last record (`last` is `None` for an empty conversation).
    PastEnd {
        /// The last record's seq.
        last: Option<u64>,
        /// The fork points there are (the first few).
        points: Vec<u64>,
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

/// How many fork points a refusal names.
const MAX_POINTS_NAMED: usize = 8;

/// Checks `at` against a conversation's records (in seq order).
pub(super) fn check(records: &[(u64, StoredRecord)], at: u64) -> Result<(), ForkRefusal> {
    let last = records.last().map(|(seq, _)| *seq);
    if last.is_none_or(|last| at > last) {
        let points = records
            .iter()
            .map(|(seq, _)| *seq)
            .filter(|seq| starts_exchange(records, *seq))
            .take(MAX_POINTS_NAMED)
            .collect();
        return Err(ForkRefusal::PastEnd { last, points });
    }
    if starts_exchange(records, at) {
        return Ok(());
    }
    let valid = |seq: &&u64| starts_exchange(records, **seq);
    let seqs: Vec<u64> = records.iter().map(|(seq, _)| *seq).collect();
    Err(ForkRefusal::SplitsExchange {
        before: seqs
            .iter()
            .rev()
            .filter(|s| before(**s, at))
            .find(valid)
            .copied(),
        after: seqs.iter().filter(|s| before(at, **s)).find(valid).copied(),
    })
}

/// Whether record `seq` comes before the point `at`. Every caller asks it of an `at` that is
/// no match itself (a refused point, or a message where an intent is looked for), so `<` and
/// `<=` answer alike there (`.cargo/mutants.toml` says so).
fn before(seq: u64, at: u64) -> bool {
    seq < at
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
            StoredRecord::Known(Record::Intent(i)) if before(*seq, at) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::records::{AgentMessage, Endpoint, IntentRecord, TurnRecord, TurnStop};

    fn message() -> StoredRecord {
        let to = Endpoint::Agent { id: "a".into() };
        StoredRecord::Known(Record::Message(AgentMessage::new(
            Endpoint::User,
            to,
            "q",
            0,
            1,
        )))
    }

    fn intent(agent: &str, ts: i64) -> StoredRecord {
        StoredRecord::Known(Record::Intent(IntentRecord {
            agent_id: agent.into(),
            ts_ms: ts,
            round: 1,
            model: "m".into(),
            backend: "b".into(),
            reserved: 1,
        }))
    }

    fn turn(agent: &str, ts: i64) -> StoredRecord {
        StoredRecord::Known(Record::Turn(TurnRecord {
            agent_id: agent.into(),
            ts_ms: ts,
            hop: 0,
            rounds: 1,
            waves: 0,
            stop: TurnStop::Completed,
            prompt: 1,
            cached: 0,
            completion: 1,
            reasoning: 0,
            cache_write: 0,
            cache_write_1h: 0,
            model: "m".into(),
            backend: "b".into(),
            elapsed_ms: 1,
            usage_unknown: false,
            skill: None,
        }))
    }

    fn numbered(records: Vec<StoredRecord>) -> Vec<(u64, StoredRecord)> {
        (0..).zip(records).collect()
    }

    /// message 0, intent 1, turn 2 (a), message 3, intent 4 (a), intent 5 (b), turn 6 (b),
    /// message 7, turn 8 (a): a's second call spans the requests 3 and 7.
    fn conversation() -> Vec<(u64, StoredRecord)> {
        numbered(vec![
            message(),
            intent("a", 10),
            turn("a", 10),
            message(),
            intent("a", 20),
            intent("b", 21),
            turn("b", 21),
            message(),
            turn("a", 20),
        ])
    }

    #[test]
    fn only_a_request_outside_every_call_is_a_fork_point() {
        let records = conversation();
        let valid: Vec<u64> = (0..=8).filter(|at| check(&records, *at).is_ok()).collect();
        assert_eq!(valid, [0, 3], "7 is a message inside a's open call");
    }

    #[test]
    fn a_refusal_names_the_nearest_points_around_it() {
        let records = conversation();
        assert_eq!(
            check(&records, 2),
            Err(ForkRefusal::SplitsExchange {
                before: Some(0),
                after: Some(3)
            })
        );
        assert_eq!(
            check(&records, 8),
            Err(ForkRefusal::SplitsExchange {
                before: Some(3),
                after: None
            })
        );
        assert_eq!(
            check(&records, 9),
            Err(ForkRefusal::PastEnd {
                last: Some(8),
                points: vec![0, 3]
            })
        );
        assert_eq!(
            check(&[], 0),
            Err(ForkRefusal::PastEnd {
                last: None,
                points: vec![]
            })
        );
    }

    #[test]
    fn an_intent_no_turn_completes_does_not_block_later_points() {
        // A crash left intent 1 open; the turn 3 started after it (ts 30 > 10), so it does not
        // complete it, and request 2 is a fork point.
        let records = numbered(vec![message(), intent("a", 10), message(), turn("a", 30)]);
        assert_eq!(check(&records, 2), Ok(()));
        // The same turn started before the intent: it completes it, so 2 splits that call.
        let records = numbered(vec![message(), intent("a", 10), message(), turn("a", 5)]);
        assert!(check(&records, 2).is_err());
        // A completed call is closed for good: a later turn of the same agent that started
        // before it does not reopen it.
        let records = numbered(vec![
            message(),
            intent("a", 10),
            turn("a", 10),
            message(),
            turn("a", 8),
        ]);
        assert_eq!(check(&records, 3), Ok(()));
        // A turn closes only its own calls (from its start on); the older one stays open and a
        // later turn that started after it completes nothing across the point.
        let records = numbered(vec![
            message(),
            intent("a", 10),
            intent("a", 20),
            turn("a", 15),
            message(),
            turn("a", 12),
        ]);
        assert_eq!(check(&records, 4), Ok(()));
        // Another agent's turn completes nothing of a's.
        let records = numbered(vec![message(), intent("a", 10), message(), turn("b", 5)]);
        assert_eq!(check(&records, 2), Ok(()));
    }
}
