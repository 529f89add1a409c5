//! A backend's answers, validated and normalised: one distribution per question, and the
//! numbers rules read (`q`, `q.p`, `q.margin`, `q.mean`). Negative, NaN or infinite
//! probabilities are refused; a distribution whose sum is off 1 by more than
//! [`SUM_TOLERANCE`] is refused; within it, it is scaled to sum 1. A missing question makes
//! the whole answer undecided (`unanswered`): nothing is guessed.

use crate::village::judge_rules::{JudgeRules, QuestionKind};

/// How far a distribution's sum may be from 1 before it is refused instead of scaled.
pub const SUM_TOLERANCE: f64 = 0.05;

/// One question's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Probabilities per option, in the file's option order.
    Choice(Vec<f64>),
    /// Probabilities per level, low to high.
    Score(Vec<f64>),
    /// The probability that the statement is true.
    Noul(f64),
}

/// What a question's answer gives the rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    /// Choice: index of the chosen option; score: 1-based level; noul: unused (0).
    pub chosen: usize,
    /// Choice/score: probability of the chosen one; noul: the probability.
    pub p: f64,
    /// Top-1 minus top-2 (choice/score; 0 for noul).
    pub margin: f64,
    /// Expected level, 1-based (score; 0 otherwise).
    pub mean: f64,
    /// The value as the log shows it (key, level number, or probability).
    pub shown: String,
}

/// Why an answer cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerProblem {
    /// `unanswered` (a question is missing) or `malformed` (refused numbers or shape).
    pub reason: &'static str,
    /// The detail, naming the question (no text of the request).
    pub detail: String,
}

impl AnswerProblem {
    /// A question without an answer.
    pub fn unanswered(question: &str) -> Self {
        Self {
            reason: "unanswered",
            detail: format!("no answer for {question:?}"),
        }
    }

    /// An answer whose numbers or shape are refused.
    pub fn malformed(question: &str, what: impl std::fmt::Display) -> Self {
        Self {
            reason: "malformed",
            detail: format!("{question:?}: {what}"),
        }
    }
}

/// Checks a distribution and scales it to sum 1.
pub fn normalise(question: &str, probs: &[f64]) -> Result<Vec<f64>, AnswerProblem> {
    if let Some(bad) = probs.iter().find(|p| !p.is_finite() || **p < 0.0) {
        return Err(AnswerProblem::malformed(
            question,
            format!("probability {bad} is negative or not a number"),
        ));
    }
    let sum: f64 = probs.iter().sum();
    if (sum - 1.0).abs() > SUM_TOLERANCE {
        return Err(AnswerProblem::malformed(
            question,
            format!("probabilities sum to {sum:.3}, not 1"),
        ));
    }
    Ok(probs.iter().map(|p| p / sum).collect())
}

/// Checks a noul probability (0..=1, finite).
pub(crate) fn noul(question: &str, p: f64) -> Result<f64, AnswerProblem> {
    if p.is_finite() && (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(AnswerProblem::malformed(
            question,
            format!("probability {p} is outside 0..1"),
        ))
    }
}

/// Validated answers to every question of a judge, with what rules read.
#[derive(Debug, Clone, PartialEq)]
pub struct Answers {
    /// Aligned with `JudgeRules::questions`.
    pub derived: Vec<Derived>,
}

/// Top index (ties → the lower index), top probability and margin.
fn top(probs: &[f64]) -> (usize, f64, f64) {
    let mut best = 0;
    for (i, p) in probs.iter().enumerate() {
        if *p > probs[best] {
            best = i;
        }
    }
    let first = probs.get(best).copied().unwrap_or(0.0);
    let second = probs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != best)
        .map(|(_, p)| *p)
        .fold(0.0_f64, f64::max);
    (best, first, first - second)
}

impl Answers {
    /// Checks one answer per question (in question order; `None` = unanswered), shapes and
    /// numbers included, and derives what rules read.
    pub fn build(rules: &JudgeRules, answers: Vec<Option<Answer>>) -> Result<Self, AnswerProblem> {
        let mut derived = Vec::with_capacity(rules.questions.len());
        let mut given = answers.into_iter();
        for q in &rules.questions {
            let Some(answer) = given.next().flatten() else {
                return Err(AnswerProblem::unanswered(&q.name));
            };
            derived.push(derive(&q.name, &q.kind, answer)?);
        }
        Ok(Self { derived })
    }
}

fn derive(name: &str, kind: &QuestionKind, answer: Answer) -> Result<Derived, AnswerProblem> {
    match (kind, answer) {
        (QuestionKind::Choice { options }, Answer::Choice(probs)) => {
            if probs.len() != options.len() {
                return Err(AnswerProblem::malformed(name, "wrong number of options"));
            }
            let probs = normalise(name, &probs)?;
            let (i, p, margin) = top(&probs);
            Ok(Derived {
                chosen: i,
                p,
                margin,
                mean: 0.0,
                shown: options[i].0.clone(),
            })
        }
        (QuestionKind::Score { levels }, Answer::Score(probs)) => {
            if probs.len() != levels.len() {
                return Err(AnswerProblem::malformed(name, "wrong number of levels"));
            }
            let probs = normalise(name, &probs)?;
            let (i, p, margin) = top(&probs);
            let mean = probs
                .iter()
                .enumerate()
                .map(|(l, p)| (l + 1) as f64 * p)
                .sum();
            Ok(Derived {
                chosen: i + 1,
                p,
                margin,
                mean,
                shown: (i + 1).to_string(),
            })
        }
        (QuestionKind::Noul { .. }, Answer::Noul(p)) => {
            let p = noul(name, p)?;
            Ok(Derived {
                chosen: 0,
                p,
                margin: 0.0,
                mean: 0.0,
                shown: format!("{p:.2}"),
            })
        }
        _ => Err(AnswerProblem::malformed(
            name,
            "the answer's kind differs from the question's",
        )),
    }
}
