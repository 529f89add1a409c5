//! Judges (docs/judges.md, docs/formats/judge.toml.md): `judge.toml` parsed with spans and checked
//! (located `INVALID_JUDGE_FILE` findings), the `when` grammar, answers validated and normalised,
//! rules evaluated top-down, the verdict and log lines, the starter template, and the two backends
//! (Jev, a model template).

pub(crate) mod answers;
pub(crate) mod backend;
pub(crate) mod check;
pub(crate) mod error;
pub(crate) mod eval;
pub(crate) mod expr;
pub(crate) mod jev;
pub(crate) mod model;
pub(crate) mod model_backend;
pub(crate) mod parse;
pub(crate) mod template;
pub(crate) mod village;

pub use answers::{Answer, AnswerProblem, Answers, Derived, SUM_TOLERANCE, normalise};
pub use backend::{BackendAnswer, BackendSetup, Undecided, ask_backend, uses_jev};
pub use check::{Roster, check_expr};
pub use error::{Finding, INVALID_JUDGE_FILE, Locator};
pub use eval::{Decision, JudgeLog, RuleRef, answers_text, evaluate, undecided_line, verdict_line};
pub use expr::{Expr, ExprError, Lit, Literal, Op, Property, ValueRef, is_reserved, parse_expr};
pub use jev::{
    JEV_DEFAULT_BASE, JEV_MODEL, JevEndpoint, answers_from_jev, ask_jev, jev_request_body,
};
pub use model::{Action, JudgeRules, Outcome, Question, QuestionKind, Rule, is_name};
pub use model_backend::{
    JUDGE_TOOL, answers_from_args, ask_model, judge_instruction, judge_request, judge_tool_spec,
};
pub use parse::{
    MAX_FILE_BYTES, MAX_NOTE_CHARS, MAX_QUESTIONS, MAX_RULES, parse_judge, validate_judge,
};
pub use template::starter_template;
pub use village::{JudgeState, judge_states, read_bounded};
