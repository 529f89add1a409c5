//! The public square: every agent's reply is an utterance others hear. Each turn of an agent
//! with `hearsRoomLog` folds the latest 12 utterances of others (200-character excerpts, with
//! ids) into its user message; `room_log` reads one in full.

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::sync::LockOrRecover;
use crate::village::Language;

/// Utterances kept in memory.
const RING: usize = 500;
/// Utterances folded into a turn.
pub(super) const FOLDED: usize = 12;
/// Characters of each folded excerpt.
pub(super) const EXCERPT_CHARS: usize = 200;
/// Characters `room_log` returns at most.
pub(super) const FULL_CHARS: usize = 20_000;

/// One utterance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Utterance {
    pub id: String,
    pub speaker: String,
    pub speaker_name: String,
    pub text: String,
}

/// The square of one village.
#[derive(Debug, Default)]
pub(crate) struct Square {
    ring: Mutex<VecDeque<Utterance>>,
}

impl Square {
    pub(super) fn push(&self, utterance: Utterance) {
        let mut ring = self.ring.lock_or_recover();
        ring.push_back(utterance);
        while ring.len() > RING {
            ring.pop_front();
        }
    }

    /// The latest utterances of others than `listener`, oldest first.
    pub(super) fn recent_for(&self, listener: &str) -> Vec<Utterance> {
        let ring = self.ring.lock_or_recover();
        let mut out: Vec<Utterance> = ring
            .iter()
            .rev()
            .filter(|u| u.speaker != listener)
            .take(FOLDED)
            .cloned()
            .collect();
        out.reverse();
        out
    }

    pub(super) fn get(&self, id: &str) -> Option<Utterance> {
        let ring = self.ring.lock_or_recover();
        ring.iter().find(|u| u.id == id).cloned()
    }
}

/// The square section of a user message (empty when nothing was said).
pub(crate) fn fold(utterances: &[Utterance], language: Language) -> String {
    if utterances.is_empty() {
        return String::new();
    }
    let mut out = language.pick(
        "\n\n---\n広場の最近の発言（全文は room_log に id を渡すと読めます）:\n",
        "\n\n---\nRecent utterances in the square (room_log with the id gives the full text):\n",
    );
    for u in utterances {
        let excerpt: String = u
            .text
            .chars()
            .take(EXCERPT_CHARS)
            .collect::<String>()
            .replace('\n', " ");
        let more = if u.text.chars().count() > EXCERPT_CHARS {
            "…"
        } else {
            ""
        };
        out.push_str(&format!(
            "- [{}] {}: {}{more}\n",
            u.id,
            u.speaker_name,
            crate::prompt::defuse(&excerpt)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_only_latest_twelve_excerpts() {
        let square = Square::default();
        for i in 0..20 {
            let speaker = if i % 2 == 0 { "a" } else { "b" };
            square.push(Utterance {
                id: format!("m{i}"),
                speaker: speaker.into(),
                speaker_name: speaker.into(),
                text: "x".repeat(300),
            });
        }
        let heard = square.recent_for("a");
        assert_eq!(heard.len(), 10, "only b's ten");
        assert!(heard.iter().all(|u| u.speaker == "b"));
        let text = fold(&heard, Language::En);
        assert!(text.contains("[m19] b: ") && text.contains('…'));
        assert!(!text.contains(&"x".repeat(201)));
        assert_eq!(square.get("m3").unwrap().text.len(), 300);
    }
}
