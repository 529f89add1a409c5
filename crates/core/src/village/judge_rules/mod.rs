//! The judge file (`judge.toml`) as a village file model: its typed rules, the `when` grammar,
//! the parser with located findings, and the checks against the questions and the roster
//! (docs/formats/judge.toml.md). Pure: no model calls. It lives with the other file models so
//! that the editors' check ([`super::editable`]) needs nothing above the village; the public
//! names are `crate::judge`'s, which evaluates these rules and asks the backends.

pub(crate) mod check;
pub(crate) mod error;
pub(crate) mod expr;
pub(crate) mod model;
pub(crate) mod parse;

pub use check::{Roster, check_expr};
pub use error::{Finding, INVALID_JUDGE_FILE, Locator};
pub use expr::{Expr, ExprError, Lit, Literal, Op, Property, ValueRef, is_reserved, parse_expr};
pub use model::{Action, JudgeRules, Outcome, Question, QuestionKind, Rule, is_name};
pub use parse::{
    MAX_FILE_BYTES, MAX_NOTE_CHARS, MAX_QUESTIONS, MAX_RULES, parse_judge, validate_judge,
};
