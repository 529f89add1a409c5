//! The judge file as a typed model (docs/formats/judge.toml.md): questions, rules, `[otherwise]`.

use super::expr::Expr;

/// What kind of answer a question has.
#[derive(Debug, Clone, PartialEq)]
pub enum QuestionKind {
    /// One key out of 2–255 `options` (key, description), in file order.
    Choice {
        /// `(key, description)` in file order.
        options: Vec<(String, String)>,
    },
    /// One level out of 2–10 `levels`, low to high; rules use 1-based level numbers.
    Score {
        /// Descriptions, low to high.
        levels: Vec<String>,
    },
    /// A probability that the statement holds.
    Noul {
        /// When it is true.
        true_if: String,
        /// When it is false.
        false_if: String,
    },
}

impl QuestionKind {
    /// `choice`, `score` or `noul`.
    pub fn name(&self) -> &'static str {
        match self {
            QuestionKind::Choice { .. } => "choice",
            QuestionKind::Score { .. } => "score",
            QuestionKind::Noul { .. } => "noul",
        }
    }
}

/// One question.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// `[a-z][a-z0-9_]*`, not a reserved word.
    pub name: String,
    /// The question put to the backend.
    pub ask: String,
    /// Its kind and answers.
    pub kind: QuestionKind,
}

/// What a rule does when it matches.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Relay (one) or fan out and bundle (several) to these servants.
    To(Vec<String>),
    /// Send back the verdict line and the note.
    Return,
}

/// A rule's action with its optional note.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// What happens.
    pub action: Action,
    /// ≤ 200 code points.
    pub note: Option<String>,
    /// Line and column of each `to` entry (empty for `return`).
    pub to_at: Vec<(usize, usize)>,
}

/// One `[[rules]]` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The condition.
    pub when: Expr,
    /// The condition as written (for the log and `try`).
    pub when_text: String,
    /// What happens when it matches.
    pub outcome: Outcome,
    /// 1-based line of the rule's `when`.
    pub line: usize,
}

/// A checked `judge.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRules {
    /// The questions in file order.
    pub questions: Vec<Question>,
    /// The rules, top-down.
    pub rules: Vec<Rule>,
    /// What happens when no rule matches (never on undecided).
    pub otherwise: Outcome,
}

impl JudgeRules {
    /// The question with this name.
    pub fn question(&self, name: &str) -> Option<&Question> {
        self.questions.iter().find(|q| q.name == name)
    }

    /// Every servant any rule or `[otherwise]` routes to, first seen first (the map's edges).
    pub fn targets(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let all = self
            .rules
            .iter()
            .map(|r| &r.outcome)
            .chain(std::iter::once(&self.otherwise));
        for o in all {
            if let Action::To(ids) = &o.action {
                for id in ids {
                    if !out.contains(&id.as_str()) {
                        out.push(id);
                    }
                }
            }
        }
        out
    }
}

/// True for a question name or choice key: `[a-z][a-z0-9_]*`.
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
