//! Type, key, level and range checks of a parsed expression against the questions
//! (they are refused on save: docs/formats/judge.toml.md), and the village check of `to` lists.

use super::expr::{Expr, ExprError, Lit, Literal, Op, Property, ValueRef};
use super::model::{Question, QuestionKind};

fn err(at: usize, message: String, fix: impl Into<String>) -> ExprError {
    ExprError {
        at,
        message,
        fix: fix.into(),
    }
}

/// Every type error of `expr` (empty = well typed).
pub fn check_expr(expr: &Expr, questions: &[Question]) -> Vec<ExprError> {
    let mut out = Vec::new();
    walk(expr, questions, &mut out);
    out
}

fn walk(expr: &Expr, questions: &[Question], out: &mut Vec<ExprError>) {
    match expr {
        Expr::Or(parts) | Expr::And(parts) => parts.iter().for_each(|p| walk(p, questions, out)),
        Expr::Not(inner) => walk(inner, questions, out),
        Expr::Compare(v, op, lit) => {
            if let Some(q) = question(v, questions, out) {
                compare(v, q, Some(*op), std::slice::from_ref(lit), out);
            }
        }
        Expr::In(v, lits) => {
            if let Some(q) = question(v, questions, out) {
                compare(v, q, None, lits, out);
            }
        }
    }
}

fn question<'q>(
    v: &ValueRef,
    qs: &'q [Question],
    out: &mut Vec<ExprError>,
) -> Option<&'q Question> {
    let found = qs.iter().find(|q| q.name == v.question);
    if found.is_none() {
        let names: Vec<&str> = qs.iter().map(|q| q.name.as_str()).collect();
        out.push(err(
            v.at,
            format!("unknown question {:?}", v.question),
            format!("use one of the questions: {}", names.join(", ")),
        ));
    }
    found
}

/// What a value accepts: `in` allowed, key literals (choice), or a number range.
enum Accepts<'a> {
    Keys(&'a [(String, String)]),
    Levels(usize),
    Range(f64, f64),
}

fn compare(v: &ValueRef, q: &Question, op: Option<Op>, lits: &[Lit], out: &mut Vec<ExprError>) {
    let kind = q.kind.name();
    let (accepts, in_ok, ops_ok): (Accepts<'_>, bool, bool) = match (&q.kind, v.property) {
        (QuestionKind::Choice { options }, Property::Value) => {
            (Accepts::Keys(options), true, false)
        }
        (QuestionKind::Score { levels }, Property::Value) => {
            (Accepts::Levels(levels.len()), true, true)
        }
        (QuestionKind::Score { levels }, Property::Mean) => {
            (Accepts::Range(1.0, levels.len() as f64), false, true)
        }
        (QuestionKind::Noul { .. }, Property::Value)
        | (
            QuestionKind::Choice { .. } | QuestionKind::Score { .. },
            Property::P | Property::Margin,
        ) => (Accepts::Range(0.0, 1.0), false, true),
        (_, prop) => {
            let which = match prop {
                Property::Mean => "score questions",
                _ => "choice and score questions",
            };
            let fix = match q.kind {
                QuestionKind::Noul { .. } => format!(
                    "a noul question's {} is already its probability: compare {} itself",
                    v.question, v.question
                ),
                _ => format!(
                    "use {}, {}.p or {}.margin",
                    v.question, v.question, v.question
                ),
            };
            out.push(err(v.at, format!("{v} is not defined: that property exists for {which} only, and {:?} is a {kind} question", v.question), fix));
            return;
        }
    };
    match op {
        None if !in_ok => {
            out.push(err(
                v.at,
                format!("{v} cannot be used with in"),
                "compare it with >=, <=, >, < (or == / !=)",
            ));
            return;
        }
        Some(op) if !ops_ok && !matches!(op, Op::Eq | Op::Ne) => {
            out.push(err(
                v.at,
                format!(
                    "{v} is a choice key: only ==, != and in apply, not {}",
                    op.text()
                ),
                format!("write {v} == <key> or {v} in [<key>, …]"),
            ));
            return;
        }
        _ => {}
    }
    for lit in lits {
        if let Some(e) = literal(v, &accepts, lit) {
            out.push(e);
        }
    }
}

fn literal(v: &ValueRef, accepts: &Accepts<'_>, lit: &Lit) -> Option<ExprError> {
    match (accepts, &lit.value) {
        (Accepts::Keys(options), Literal::Key(k)) => {
            if options.iter().any(|(o, _)| o == k) {
                return None;
            }
            let keys: Vec<&str> = options.iter().map(|(o, _)| o.as_str()).collect();
            Some(err(
                lit.at,
                format!("{k:?} is not an option of {:?}", v.question),
                format!("use one of: {}", keys.join(", ")),
            ))
        }
        (Accepts::Keys(_), Literal::Number(_, n)) => Some(err(
            lit.at,
            format!("{v} is a choice key, not a number ({n})"),
            format!("compare {v} with one of its option keys"),
        )),
        (Accepts::Levels(n), Literal::Number(x, text)) => {
            if x.fract() == 0.0 && *x >= 1.0 && *x <= *n as f64 {
                return None;
            }
            Some(err(
                lit.at,
                format!(
                    "{text} is not a level of {:?} (levels are whole numbers 1 to {n})",
                    v.question
                ),
                format!(
                    "use a level from 1 to {n}, or {}.mean for fractions",
                    v.question
                ),
            ))
        }
        (Accepts::Range(lo, hi), Literal::Number(x, text)) => {
            if x >= lo && x <= hi {
                return None;
            }
            Some(err(
                lit.at,
                format!("{text} is outside {lo}..{hi}, the range of {v}"),
                format!("compare {v} with a number from {lo} to {hi}"),
            ))
        }
        (_, Literal::Key(k)) => Some(err(
            lit.at,
            format!("{v} is a number; {k:?} is not"),
            format!("compare {v} with a number"),
        )),
    }
}

/// The village's view for the `to` check: which ids are servants and which are judges.
#[derive(Debug, Clone, Copy)]
pub struct Roster<'a> {
    /// Servant (agent) ids.
    pub servants: &'a [&'a str],
    /// Judge ids.
    pub judges: &'a [&'a str],
}

impl Roster<'_> {
    /// Why `id` cannot be a `to` target (a judge, or not a servant), with a fix.
    pub fn refuses(&self, id: &str) -> Option<(String, String)> {
        if self.judges.contains(&id) {
            Some((
                format!("{id:?} is a judge; to names servants only"),
                "route to a servant (a judge cannot receive)".into(),
            ))
        } else if !self.servants.contains(&id) {
            Some((
                format!("{id:?} is not a servant of this village"),
                format!("use one of: {}", self.servants.join(", ")),
            ))
        } else {
            None
        }
    }
}
