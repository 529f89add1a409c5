//! Judges (docs/judges.md, docs/formats/judge.toml.md): answers validated and normalised,
//! rules evaluated top-down, the verdict and log lines, the starter template, and the two backends
//! (Jev, a model template). The file's grammar and parser (pure) live below, in
//! `village/judge_rules/`, and are named here.
//!
//! # Parts
//!
//! Judges (`docs/formats/judge.toml.md`):
//!
//! - `answers.rs`: a backend's distributions validated — negative, NaN, infinite or a sum off 1 by
//!   more than 0.05 refused, else scaled — and what rules read: value, p, margin, mean
//! - `eval.rs`: top-down, first match; verdict, undecided and `judge:` lines
//! - `template.rs`: the starter file
//! - `village.rs`: each judge's file read bounded — a regular file only — and checked:
//!   `judge_states`, used by `judge validate`/`try` and the preflight's `JUDGE_INVALID`
//! - `backend.rs`: `ask_backend`: Jev when `modelTemplateId` is absent, else the template;
//!   `Undecided` reasons
//! - `model_backend.rs`: the forced `judge_answers` tool, `Specific` where the wire can force, else
//!   auto + a fixed line
//! - `jev.rs` (Workers AI `typesafe/jev`: request, reply, 1 MiB, 30 s, token hidden). Shapes in
//!   `docs/judges.md`. The engine side is `orchestrator/judge_route.rs`: the `judge_<id>` tool for
//!   servants connected to a usable judge, one backend call, then relay (the `ask_<id>` delivery
//!   path), fan-out + bundle, return or the undecided line; the `judge:` log line; a turn record
//!   under the judge's id; a model-template judge reserved from and settled once against the
//!   caller's causal-root budget (Jev uncharged). Invariants: no input panics (proptest); an
//!   undecided judge never uses `[otherwise]`; backend numbers are validated before any rule reads
//!   them; a judge call is charged once.

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
    JEV_DEFAULT_BASE, JEV_MODEL, JevEndpoint, JevSettingsError, answers_from_jev, ask_jev,
    jev_request_body,
};
pub use model_backend::{
    JUDGE_TOOL, answers_from_args, ask_model, judge_instruction, judge_request, judge_tool_spec,
};
pub use template::starter_template;
pub use village::{JudgeState, judge_states, read_bounded};
