//! `SKILL.md`: an optional front matter — `---` lines around `key: value` lines, the small
//! subset of YAML skills are written in, read by hand — turned into [`SkillTerms`] (the
//! loops of a turn, a fresh context, the tools offered), and the procedure after it, the only
//! part the model reads (`docs/formats/skill-front-matter.md`). Bad input is a notice, never a
//! refusal: the skill still runs.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::notice::{Loaded, Notes, NoticeCode};

/// The most loops `max_loops` may ask for; more is read as this (a notice).
pub const MAX_LOOPS: u8 = 20;
/// The most model calls of one turn, whatever `max_loops` asks (`maxToolIterations`' own
/// ceiling).
pub const MAX_ROUND_CAP: u32 = 255;

/// A `SKILL.md` as a turn uses it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skill {
    /// The text after the front matter (all of it when there is none): the system prompt's
    /// `## Skill` section.
    pub procedure: String,
    /// What the front matter asks of the agent's turns.
    pub terms: SkillTerms,
}

/// What a skill's front matter asks; `None` is "not said" (the agent's own settings hold).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillTerms {
    /// Loops of one turn, each `maxToolIterations` model calls (1..=[`MAX_LOOPS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_loops: Option<u8>,
    /// Each turn runs in a fresh context (none of the conversation's earlier exchanges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork: Option<SkillFork>,
    /// The tools offered, by name or `prefix*` (our names; Claude Code's are mapped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
}

/// `fork:`'s one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillFork {
    /// A fresh context per turn, as a sub-agent would have.
    Subagent,
}

impl SkillTerms {
    /// Whether the front matter asked nothing of the turn.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The model calls one turn may make: `max_loops` loops of `per_loop` calls each (the
    /// agent's `maxToolIterations`), at most [`MAX_ROUND_CAP`]; `per_loop` without it.
    pub fn round_cap(&self, per_loop: u8) -> u32 {
        let loops = u32::from(self.max_loops.unwrap_or(1).max(1));
        (loops * u32::from(per_loop.max(1))).min(MAX_ROUND_CAP)
    }

    /// Whether the tool `name` may be offered and called.
    pub fn allows(&self, name: &str) -> bool {
        self.allowed_tools.as_ref().is_none_or(|list| {
            list.iter().any(|p| match p.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => p == name,
            })
        })
    }
}

/// Reads `text`, the `SKILL.md` at `file`.
pub(crate) fn parse_skill(text: &str, file: &Path) -> Loaded<Skill> {
    let mut notes = Notes::new(file);
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let skill = match split(body) {
        Split::None => Skill {
            procedure: body.to_owned(),
            terms: SkillTerms::default(),
        },
        Split::Unclosed => {
            notes.add(
                NoticeCode::SkillValueInvalid,
                "front matter",
                "no closing `---` line: the whole file is read as the procedure",
            );
            Skill {
                procedure: body.to_owned(),
                terms: SkillTerms::default(),
            }
        }
        Split::Found { front, rest } => Skill {
            procedure: rest.to_owned(),
            terms: terms(&entries(front, &mut notes), &mut notes),
        },
    };
    Loaded {
        value: skill,
        notices: notes.into_vec(),
    }
}

enum Split<'a> {
    None,
    Unclosed,
    Found { front: &'a str, rest: &'a str },
}

/// The front matter and the rest: a first line `---`, up to the next `---` (or `...`) line.
fn split(body: &str) -> Split<'_> {
    let mut lines = body.split_inclusive('\n');
    let Some(first) = lines.next().filter(|l| l.trim_end() == "---") else {
        return Split::None;
    };
    let mut at = first.len();
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            return Split::Found {
                front: &body[first.len()..at],
                rest: body[at + line.len()..].trim_start_matches(['\n', '\r']),
            };
        }
        at += line.len();
    }
    Split::Unclosed
}

/// A value as written: one scalar, or a list (`[a, b]` or `- a` lines).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Raw {
    Scalar(String),
    List(Vec<String>),
}

/// The `key: value` entries, a nested map's keys joined with `.` (`goal_seek.engine`).
fn entries(front: &str, notes: &mut Notes<'_>) -> Vec<(String, Raw)> {
    let mut out: Vec<(String, Raw)> = Vec::new();
    // The key whose value is the indented lines that follow, and its list items so far.
    let mut open: Option<(String, Vec<String>, bool)> = None;
    for (n, line) in front.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        match (&mut open, indented) {
            (Some((_, _, true)), true) => continue, // a block scalar's text (`description: >`)
            (Some((key, items, _)), true) => {
                if let Some(item) = trimmed
                    .strip_prefix("- ")
                    .or((trimmed == "-").then_some(""))
                {
                    items.push(unquote(item));
                } else if let Some((sub, value)) = trimmed.split_once(':') {
                    out.push((format!("{key}.{}", sub.trim()), value_of(value)));
                } else {
                    invalid_line(
                        notes,
                        n,
                        "an indented line is neither `- item` nor `key: value`",
                    );
                }
            }
            (_, true) => invalid_line(notes, n, "an indented line belongs to no key"),
            (_, false) => {
                close(&mut open, &mut out);
                let Some((key, value)) = trimmed.split_once(':') else {
                    invalid_line(notes, n, "not `key: value`");
                    continue;
                };
                let (key, value) = (key.trim().to_owned(), value.trim());
                match value {
                    "" => open = Some((key, Vec::new(), false)),
                    "|" | ">" | "|-" | ">-" | "|+" | ">+" => open = Some((key, Vec::new(), true)),
                    _ => out.push((key, value_of(value))),
                }
            }
        }
    }
    close(&mut open, &mut out);
    out
}

/// Ends an open key: its list items become its value (a key with none is left unsaid).
fn close(open: &mut Option<(String, Vec<String>, bool)>, out: &mut Vec<(String, Raw)>) {
    if let Some((key, items, block)) = open.take() {
        if block {
            out.push((key, Raw::Scalar(String::new())));
        } else if !items.is_empty() {
            out.push((key, Raw::List(items)));
        }
    }
}

fn invalid_line(notes: &mut Notes<'_>, n: usize, why: &str) {
    notes.add(
        NoticeCode::SkillValueInvalid,
        format!("front matter line {}", n + 2),
        format!("{why}; the line is ignored"),
    );
}

fn value_of(text: &str) -> Raw {
    let text = text.trim();
    match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(inner) => Raw::List(
            inner
                .split(',')
                .map(unquote)
                .filter(|s| !s.is_empty())
                .collect(),
        ),
        None => Raw::Scalar(unquote(text)),
    }
}

fn unquote(text: &str) -> String {
    let t = text.trim();
    ['"', '\'']
        .iter()
        .find_map(|q| t.strip_prefix(*q).and_then(|r| r.strip_suffix(*q)))
        .unwrap_or(t)
        .to_owned()
}

/// The terms of the entries; every key or value not understood is a notice.
fn terms(entries: &[(String, Raw)], notes: &mut Notes<'_>) -> SkillTerms {
    let mut terms = SkillTerms::default();
    for (key, raw) in entries {
        let bad = |notes: &mut Notes<'_>, why: &str| {
            notes.add(
                NoticeCode::SkillValueInvalid,
                key.clone(),
                format!("{why}; ignored"),
            );
        };
        match (key.as_str(), raw) {
            ("name" | "description", _) => {}
            ("max_loops", Raw::Scalar(v)) => match v.parse::<u64>() {
                Ok(0) | Err(_) => bad(notes, "not a whole number from 1"),
                Ok(n) if n > u64::from(MAX_LOOPS) => {
                    notes.add(
                        NoticeCode::ValueClamped,
                        key.clone(),
                        format!("{n} is above the village's cap; read as {MAX_LOOPS}"),
                    );
                    terms.max_loops = Some(MAX_LOOPS);
                }
                Ok(n) => terms.max_loops = u8::try_from(n).ok(),
            },
            ("fork", Raw::Scalar(v)) if v == "subagent" => terms.fork = Some(SkillFork::Subagent),
            ("fork", _) => bad(notes, "the one value is `subagent`"),
            ("allowed-tools" | "allowed_tools", raw) => {
                let names = match raw {
                    Raw::Scalar(v) => v.split(',').map(unquote).collect(),
                    Raw::List(items) => items.clone(),
                };
                let mut tools: Vec<String> = Vec::new();
                for name in names.iter().filter(|n| !n.is_empty()).map(|n| tool_name(n)) {
                    if !tools.contains(&name) {
                        tools.push(name);
                    }
                }
                terms.allowed_tools = Some(tools);
            }
            ("goal_seek.engine", Raw::Scalar(v)) if v == "inline" => {}
            ("goal_seek.engine", _) => bad(notes, "the one engine is `inline`"),
            ("goal_seek", _) => bad(notes, "write `engine: inline` on an indented line below it"),
            ("max_loops", _) => bad(notes, "not a whole number from 1"),
            _ => notes.add(
                NoticeCode::SkillKeyUnknown,
                key.clone(),
                "not a key of SKILL.md's front matter; ignored",
            ),
        }
    }
    terms
}

/// Our tool name for an entry of `allowed-tools`: Claude Code's names mapped (`Bash(git:*)`
/// is `run`: `run.json` decides the commands), ours as they are.
fn tool_name(entry: &str) -> String {
    let base = entry.split('(').next().unwrap_or(entry).trim();
    match base {
        "Bash" => "run",
        "Read" | "Write" | "Edit" | "MultiEdit" => "file",
        "Grep" => "grep",
        "Glob" => "fd",
        "AskUserQuestion" => "ask_user",
        other => other,
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Loaded<Skill> {
        parse_skill(text, Path::new("/v/agents/a/SKILL.md"))
    }

    fn codes(loaded: &Loaded<Skill>) -> Vec<(&'static str, String)> {
        loaded
            .notices
            .iter()
            .map(|n| (n.code.as_str(), n.field.clone()))
            .collect()
    }

    #[test]
    fn the_front_matter_is_read_and_not_part_of_the_procedure() {
        let loaded = read(
            "---\nname: x\ndescription: >\n  two\n  lines\ngoal_seek:\n  engine: inline\nfork: subagent\nmax_loops: 5\nallowed-tools:\n  - file\n  - \"run\"\n---\n\n# Steps\nDo it.\n",
        );
        assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
        assert_eq!(loaded.value.procedure, "# Steps\nDo it.\n");
        let t = &loaded.value.terms;
        assert_eq!(t.max_loops, Some(5));
        assert_eq!(t.fork, Some(SkillFork::Subagent));
        assert_eq!(
            t.allowed_tools.as_deref(),
            Some(&["file".to_owned(), "run".to_owned()][..])
        );
        assert_eq!(t.round_cap(12), 60);
        assert!(t.allows("run") && !t.allows("grep"));
    }

    #[test]
    fn no_front_matter_is_all_procedure_and_no_terms() {
        let loaded = read("Check the notes.\n---\nmax_loops: 3\n---\n");
        assert!(loaded.notices.is_empty());
        assert_eq!(
            loaded.value.procedure,
            "Check the notes.\n---\nmax_loops: 3\n---\n"
        );
        assert!(loaded.value.terms.is_empty());
        assert_eq!(loaded.value.terms.round_cap(12), 12);
        assert!(loaded.value.terms.allows("anything"));
    }

    #[test]
    fn bad_input_is_a_notice_naming_it_never_a_refusal() {
        let loaded = read(
            "---\nmax_loops: 99\nmodel: opus\nfork: thread\nallowed-tools: Bash(python3:*), Read, Write, github__*\ngoal_seek:\n  engine: remote\n  budget: 3\noops\n---\nSteps.\n",
        );
        assert_eq!(
            codes(&loaded),
            vec![
                ("SKILL_VALUE_INVALID", "front matter line 9".to_owned()),
                ("VALUE_CLAMPED", "max_loops".to_owned()),
                ("SKILL_KEY_UNKNOWN", "model".to_owned()),
                ("SKILL_VALUE_INVALID", "fork".to_owned()),
                ("SKILL_VALUE_INVALID", "goal_seek.engine".to_owned()),
                ("SKILL_KEY_UNKNOWN", "goal_seek.budget".to_owned()),
            ]
        );
        let t = &loaded.value.terms;
        assert_eq!(t.max_loops, Some(MAX_LOOPS));
        assert_eq!(t.fork, None);
        assert_eq!(
            t.allowed_tools.as_deref(),
            Some(&["run".to_owned(), "file".to_owned(), "github__*".to_owned()][..])
        );
        assert!(t.allows("github__search") && !t.allows("grep"));
        assert_eq!(t.round_cap(255), MAX_ROUND_CAP);
        assert_eq!(loaded.value.procedure, "Steps.\n");
    }

    #[test]
    fn an_unclosed_front_matter_is_read_as_procedure_and_said() {
        let loaded = read("---\nmax_loops: 5\nSteps.\n");
        assert_eq!(
            codes(&loaded),
            vec![("SKILL_VALUE_INVALID", "front matter".to_owned())]
        );
        assert!(loaded.value.terms.is_empty());
        assert_eq!(loaded.value.procedure, "---\nmax_loops: 5\nSteps.\n");
    }
}
