//! Evaluation: rules top-down, the first match wins; `[otherwise]` only when answers exist and
//! no rule matched — an undecided judge never uses it. Also the verdict line, the fixed
//! undecided line and the `judge:` log line (docs/formats/log-lines.md).

use super::answers::{Answers, Derived};
use crate::village::Language;
use crate::village::judge_rules::{Action, JudgeRules, Outcome, QuestionKind};
use crate::village::judge_rules::{Expr, Lit, Literal, Op, Property, ValueRef};

/// Which rule decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleRef {
    /// The n-th rule, 1-based.
    Rule(usize),
    /// `[otherwise]`.
    Otherwise,
}

impl RuleRef {
    /// `n` or `otherwise`, as the log writes it.
    pub fn log_text(self) -> String {
        match self {
            RuleRef::Rule(n) => n.to_string(),
            RuleRef::Otherwise => "otherwise".into(),
        }
    }
}

/// The outcome of evaluating the rules on answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision<'a> {
    /// Which rule.
    pub rule: RuleRef,
    /// What it does.
    pub outcome: &'a Outcome,
}

impl Decision<'_> {
    /// `routed`, `fanned` or `returned`.
    pub fn outcome_word(&self) -> &'static str {
        match &self.outcome.action {
            Action::To(ids) if ids.len() == 1 => "routed",
            Action::To(_) => "fanned",
            Action::Return => "returned",
        }
    }
}

fn value(rules: &JudgeRules, answers: &Answers, v: &ValueRef) -> Option<(usize, f64)> {
    let i = rules.questions.iter().position(|q| q.name == v.question)?;
    let d: &Derived = answers.derived.get(i)?;
    let n = match v.property {
        Property::Value => match rules.questions[i].kind {
            QuestionKind::Noul { .. } => d.p,
            _ => d.chosen as f64,
        },
        Property::P => d.p,
        Property::Margin => d.margin,
        Property::Mean => d.mean,
    };
    Some((i, n))
}

/// The literal as a number for question `qi`: a key is its option index.
fn lit_number(rules: &JudgeRules, qi: usize, lit: &Lit) -> Option<f64> {
    match &lit.value {
        Literal::Number(n, _) => Some(*n),
        Literal::Key(k) => match &rules.questions[qi].kind {
            QuestionKind::Choice { options } => {
                options.iter().position(|(o, _)| o == k).map(|i| i as f64)
            }
            _ => None,
        },
    }
}

fn holds(rules: &JudgeRules, answers: &Answers, expr: &Expr) -> bool {
    match expr {
        Expr::Or(parts) => parts.iter().any(|p| holds(rules, answers, p)),
        Expr::And(parts) => parts.iter().all(|p| holds(rules, answers, p)),
        Expr::Not(inner) => !holds(rules, answers, inner),
        Expr::Compare(v, op, lit) => {
            let Some((qi, x)) = value(rules, answers, v) else {
                return false;
            };
            let Some(y) = lit_number(rules, qi, lit) else {
                return false;
            };
            match op {
                Op::Eq => x == y,
                Op::Ne => x != y,
                Op::Ge => x >= y,
                Op::Le => x <= y,
                Op::Gt => x > y,
                Op::Lt => x < y,
            }
        }
        Expr::In(v, lits) => {
            let Some((qi, x)) = value(rules, answers, v) else {
                return false;
            };
            lits.iter().any(|l| lit_number(rules, qi, l) == Some(x))
        }
    }
}

/// Rules top-down, first match; else `[otherwise]`.
pub fn evaluate<'a>(rules: &'a JudgeRules, answers: &Answers) -> Decision<'a> {
    for (i, rule) in rules.rules.iter().enumerate() {
        if holds(rules, answers, &rule.when) {
            return Decision {
                rule: RuleRef::Rule(i + 1),
                outcome: &rule.outcome,
            };
        }
    }
    Decision {
        rule: RuleRef::Otherwise,
        outcome: &rules.otherwise,
    }
}

/// `q:val/p/margin,…` for the log and `try` (margin `-` for noul).
pub fn answers_text(rules: &JudgeRules, answers: &Answers) -> String {
    rules
        .questions
        .iter()
        .zip(&answers.derived)
        .map(|(q, d)| match q.kind {
            QuestionKind::Noul { .. } => format!("{}:{}/{:.2}/-", q.name, d.shown, d.p),
            _ => format!("{}:{}/{:.2}/{:.2}", q.name, d.shown, d.p, d.margin),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The verdict line appended to a relayed body, or sent back (with the note) on `return`.
pub fn verdict_line(
    judge: &str,
    decision: &Decision<'_>,
    answers: &str,
    language: Language,
) -> String {
    let rule = match decision.rule {
        RuleRef::Rule(n) => language.pick(format!("ルール{n}"), format!("rule {n}")),
        RuleRef::Otherwise => language.pick("otherwise".to_string(), "otherwise".to_string()),
    };
    let mut line = language.pick(
        format!("[判定 {judge}] {rule} に該当 ({answers})"),
        format!("[verdict {judge}] {rule} matched ({answers})"),
    );
    if let Some(note) = &decision.outcome.note {
        line.push('\n');
        line.push_str(note);
    }
    line
}

/// The fixed line the caller gets when the judge is undecided (no routing happened).
pub fn undecided_line(judge: &str, reason: &str, language: Language) -> String {
    language.pick(
        format!("[判定 {judge}] 判定できませんでした (reason={reason})。何も転送していません。"),
        format!("[verdict {judge}] undecided (reason={reason}); nothing was routed."),
    )
}

/// What the `judge:` log line carries.
#[derive(Debug, Clone, Default)]
pub struct JudgeLog {
    /// The calling servant.
    pub caller: String,
    /// The judge.
    pub judge: String,
    /// `n`, `otherwise` or `none`.
    pub rule: String,
    /// `routed`, `fanned`, `returned` or `undecided`.
    pub outcome: String,
    /// `q:val/p/margin,…`.
    pub answers: String,
    /// Target ids.
    pub to: Vec<String>,
    /// Backend input tokens.
    pub input_tokens: u64,
    /// Backend output tokens.
    pub output_tokens: u64,
    /// Bundle size after a fan-out.
    pub bundle_chars: Option<usize>,
    /// Why undecided.
    pub reason: Option<String>,
}

impl JudgeLog {
    /// `judge: caller= judge= rule= outcome= answers= to= input_tokens= output_tokens=
    /// [bundle_chars=] [reason=]` — ids, counts and codes only.
    pub fn line(&self) -> String {
        let mut s = format!(
            "judge: caller={} judge={} rule={} outcome={} answers={} to=[{}] input_tokens={} output_tokens={}",
            self.caller,
            self.judge,
            self.rule,
            self.outcome,
            if self.answers.is_empty() {
                "-"
            } else {
                &self.answers
            },
            self.to.join(","),
            self.input_tokens,
            self.output_tokens
        );
        if let Some(n) = self.bundle_chars {
            s.push_str(&format!(" bundle_chars={n}"));
        }
        if let Some(r) = &self.reason {
            s.push_str(&format!(" reason={r}"));
        }
        s
    }
}
