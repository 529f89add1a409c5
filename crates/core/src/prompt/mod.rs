//! The system prompt and the user message of a turn.
//!
//! System: ordinance → about you → work folder → grounding note → construct → skill →
//! **stable boundary** → roster → memory. `cacheable_prefix_len` counts the characters up to
//! the boundary; everything before it is byte-identical while the village files do not
//! change, so provider caches hit. Volatile context goes into the user message, never here.

pub(crate) mod envelope;
mod text;

use crate::village::Language;
pub(crate) use envelope::{defuse, user_message};

/// One connected peer as the roster shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RosterEntry {
    /// Agent id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Whether it is running.
    pub running: bool,
}

/// What the system prompt is made of.
#[derive(Debug, Clone, Default)]
pub(crate) struct PromptParts {
    /// `Ordinance.md`.
    pub ordinance: String,
    /// The agent's id.
    pub agent_id: String,
    /// The agent's name.
    pub agent_name: String,
    /// Its work folder.
    pub work_dir: Option<String>,
    /// Google Search grounding is on.
    pub grounding: bool,
    /// `Construct.md`.
    pub construct: String,
    /// `SKILL.md`.
    pub skill: String,
    /// Connected peers.
    pub roster: Vec<RosterEntry>,
    /// `Memory.md`.
    pub memory: String,
}

/// A composed system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SystemPrompt {
    /// The full text.
    pub text: String,
    /// Characters of the stable prefix.
    pub cacheable_prefix_len: usize,
}

/// Composes the system prompt in the reference order.
pub(crate) fn compose_system_prompt(parts: &PromptParts, language: Language) -> SystemPrompt {
    let t = text::Texts::of(language);
    let mut stable = String::new();
    if !parts.ordinance.trim().is_empty() {
        stable.push_str(t.ordinance_header);
        stable.push_str(parts.ordinance.trim_end());
        stable.push_str("\n\n");
    }
    stable.push_str(t.about_header);
    stable.push_str(&(t.identity)(&parts.agent_name, &parts.agent_id));
    stable.push_str("\n\n");
    if let Some(dir) = &parts.work_dir {
        stable.push_str(t.work_dir_header);
        stable.push_str(&(t.work_dir_note)(dir));
        stable.push_str("\n\n");
    }
    if parts.grounding {
        stable.push_str(t.grounding_note);
        stable.push_str("\n\n");
    }
    stable.push_str("## Construct\n");
    stable.push_str(parts.construct.trim_end());
    stable.push_str("\n\n## Skill\n");
    stable.push_str(parts.skill.trim_end());
    stable.push_str("\n\n");
    let cacheable_prefix_len = stable.chars().count();

    let mut text = stable;
    text.push_str(t.roster_header);
    if parts.roster.is_empty() {
        text.push_str(t.roster_empty);
    }
    for peer in &parts.roster {
        let state = if peer.running { t.running } else { t.stopped };
        text.push_str(&format!("- {} ({}): {state}\n", peer.name, peer.id));
    }
    text.push('\n');
    text.push_str(t.memory_header);
    text.push_str(if parts.memory.trim().is_empty() {
        t.memory_empty
    } else {
        parts.memory.trim_end()
    });
    text.push('\n');
    SystemPrompt {
        text,
        cacheable_prefix_len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> PromptParts {
        PromptParts {
            ordinance: "Be kind.".into(),
            agent_id: "a1".into(),
            agent_name: "Ada".into(),
            work_dir: Some("/srv/work".into()),
            grounding: false,
            construct: "You forecast.".into(),
            skill: "Look it up.".into(),
            roster: vec![RosterEntry {
                id: "b".into(),
                name: "Bo".into(),
                running: true,
            }],
            memory: "- likes tea".into(),
        }
    }

    #[test]
    fn order_and_boundary() {
        let p = compose_system_prompt(&parts(), Language::En);
        let at = |needle: &str| p.text.find(needle).unwrap();
        assert!(at("Be kind.") < at("## About you") && at("## About you") < at("/srv/work"));
        assert!(at("/srv/work") < at("## Construct") && at("## Construct") < at("## Skill"));
        assert!(
            at("## Skill") < at("## Current roster") && at("## Current roster") < at("## Memory")
        );
        let prefix: String = p.text.chars().take(p.cacheable_prefix_len).collect();
        assert!(prefix.ends_with("Look it up.\n\n") && !prefix.contains("roster"));
    }

    #[test]
    fn the_prefix_ignores_roster_and_memory() {
        let a = compose_system_prompt(&parts(), Language::Ja);
        let mut changed = parts();
        changed.roster[0].running = false;
        changed.memory = "- likes coffee".into();
        let b = compose_system_prompt(&changed, Language::Ja);
        assert_eq!(a.cacheable_prefix_len, b.cacheable_prefix_len);
        let prefix = |p: &SystemPrompt| {
            p.text
                .chars()
                .take(p.cacheable_prefix_len)
                .collect::<String>()
        };
        assert_eq!(prefix(&a), prefix(&b));
        assert_ne!(a.text, b.text);
        assert!(a.text.contains("## 条例"));
    }
}
