//! Judges (docs/judges.md, docs/formats/judge.toml.md): answers validated and normalised,
//! rules evaluated top-down, the verdict and log lines, the starter template, and the two backends
//! (Jev, a model template). The file's grammar and parser (pure) live below, in
//! `village/judge_rules/`, and are named here.

pub(crate) mod answers;
pub(crate) mod backend;
pub(crate) mod eval;
pub(crate) mod jev;
pub(crate) mod model_backend;
pub(crate) mod template;
pub(crate) mod village;

pub use crate::village::judge_rules::{
    Action, Expr, ExprError, Finding, INVALID_JUDGE_FILE, JudgeRules, Lit, Literal, Locator,
    MAX_FILE_BYTES, MAX_NOTE_CHARS, MAX_QUESTIONS, MAX_RULES, Op, Outcome, Property, Question,
    QuestionKind, Roster, Rule, ValueRef, check_expr, is_name, is_reserved, parse_expr,
    parse_judge, validate_judge,
};
pub use answers::{Answer, AnswerProblem, Answers, Derived, SUM_TOLERANCE, normalise};
pub use backend::{BackendAnswer, BackendSetup, Undecided, ask_backend, uses_jev};
pub use eval::{Decision, JudgeLog, RuleRef, answers_text, evaluate, undecided_line, verdict_line};
pub use jev::{
    JEV_DEFAULT_BASE, JEV_MODEL, JevEndpoint, answers_from_jev, ask_jev, jev_request_body,
};
pub use model_backend::{
    JUDGE_TOOL, answers_from_args, ask_model, judge_instruction, judge_request, judge_tool_spec,
};
pub use template::starter_template;
pub use village::{JudgeState, judge_states, read_bounded};
