//! Judges (reference §1.6, §3.6): `judge.toml` parsed with spans and checked (located
//! `INVALID_JUDGE_FILE` findings), the `when` grammar, answers validated and normalised,
//! rules evaluated top-down, the verdict and log lines, the starter template.

pub(crate) mod answers;
pub(crate) mod check;
pub(crate) mod error;
pub(crate) mod eval;
pub(crate) mod expr;
pub(crate) mod model;
pub(crate) mod parse;
pub(crate) mod template;

pub use answers::{Answer, AnswerProblem, Answers, Derived, SUM_TOLERANCE, normalise};
pub use check::{Roster, check_expr, check_targets};
pub use error::{Finding, INVALID_JUDGE_FILE, Locator};
pub use eval::{Decision, JudgeLog, RuleRef, answers_text, evaluate, undecided_line, verdict_line};
pub use expr::{Expr, ExprError, Lit, Literal, Op, Property, ValueRef, is_reserved, parse_expr};
pub use model::{Action, JudgeRules, Outcome, Question, QuestionKind, Rule, is_name};
pub use parse::{MAX_FILE_BYTES, MAX_NOTE_CHARS, MAX_QUESTIONS, MAX_RULES, parse_judge};
pub use template::starter_template;

/// Parses a judge file and checks its `to` lists against the village: every finding, sorted.
pub fn validate_judge(text: &str, roster: Roster<'_>) -> Result<JudgeRules, Vec<Finding>> {
    let rules = parse_judge(text)?;
    let findings = check_targets(&rules, roster);
    if findings.is_empty() {
        Ok(rules)
    } else {
        Err(findings)
    }
}
