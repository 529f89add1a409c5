//! Golden tests of the `when` grammar (docs/formats/judge.toml.md): every operator, precedence,
//! `in`, each value kind, each syntax and type error with its offset. The golden file shows each
//! expression fully parenthesised, or its errors (run with `UPDATE_GOLDEN=1` to rewrite it).

use fuseforks_core::judge::{check_expr, parse_expr, parse_judge};

/// Questions of every kind: `kind` (choice bug/feature/other), `urgency` (score, 5 levels),
/// `angry` (noul).
pub(crate) const QUESTIONS: &str = r#"
[questions.kind]
type = "choice"
ask = "What kind?"
options = { bug = "a bug", feature = "a feature", other = "else" }

[questions.urgency]
type = "score"
ask = "How urgent?"
levels = ["none", "low", "mid", "high", "fire"]

[questions.angry]
type = "noul"
ask = "Is the writer angry?"
true_if = "angry"
false_if = "calm"
"#;

const CASES: &[&str] = &[
    // every operator and value kind
    "kind == bug",
    "kind != other",
    "kind in [bug, feature]",
    "kind.p >= 0.5",
    "kind.margin > 0.25",
    "urgency >= 4",
    "urgency <= 2",
    "urgency < 3",
    "urgency > 1",
    "urgency == 5",
    "urgency != 1",
    "urgency in [1, 2]",
    "urgency.p >= 0.4",
    "urgency.margin < 0.1",
    "urgency.mean >= 3.5",
    "angry >= 0.7",
    "angry < 0.2",
    // precedence
    "kind == bug or kind == feature and urgency >= 4",
    "(kind == bug or kind == feature) and urgency >= 4",
    "not kind == bug and angry > 0.5",
    "not (kind == bug and angry > 0.5)",
    "not not kind == bug",
    "kind == bug and urgency >= 3 and angry < 0.5 or kind == other",
    "((kind == bug))",
    // syntax errors
    "",
    "kind = bug",
    "kind == ",
    "kind bug",
    "kind == bug and",
    "(kind == bug",
    "kind == bug)",
    "kind in bug",
    "kind in [bug feature]",
    "kind in []",
    "kind.confidence > 0.5",
    "kind == bug extra",
    "angry > -1",
    "angry > 1.",
    "urgency + 1 > 2",
    "len(kind) > 2",
    "and == bug",
    "kind == in",
    "kind == \"bug\"",
    // type, key, level and range errors
    "unknown == bug",
    "kind == crash",
    "kind == 1",
    "kind >= bug",
    "kind.mean > 1",
    "kind.p > 1.5",
    "kind.p in [0.5]",
    "urgency == 6",
    "urgency == 0",
    "urgency == 2.5",
    "urgency == high",
    "urgency.mean > 5.5",
    "urgency.mean in [2]",
    "angry == yes",
    "angry in [1]",
    "angry > 2",
    "angry.p > 0.5",
    "angry.margin > 0.5",
    "angry.mean > 0.5",
];

fn render(expr: &str) -> String {
    let rules = parse_judge(&format!("{QUESTIONS}\n[otherwise]\ndo = \"return\"\n")).unwrap();
    match parse_expr(expr) {
        Err(e) => format!("syntax @{}: {} | fix: {}", e.at, e.message, e.fix),
        Ok(parsed) => {
            let errors = check_expr(&parsed, &rules.questions);
            if errors.is_empty() {
                parsed.to_string()
            } else {
                errors
                    .iter()
                    .map(|e| format!("type @{}: {} | fix: {}", e.at, e.message, e.fix))
                    .collect::<Vec<_>>()
                    .join("\n    ")
            }
        }
    }
}

#[test]
fn the_grammar_matches_the_golden_file() {
    let mut text = String::new();
    for case in CASES {
        text.push_str(&format!("{case}\n    {}\n", render(case)));
    }
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/judge_grammar.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let pinned = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        text, pinned,
        "judge_grammar.txt differs: run with UPDATE_GOLDEN=1 if deliberate"
    );
}

#[test]
fn precedence_is_or_below_and_below_not() {
    let e = parse_expr("not kind == bug or kind == other and angry > 0.5").unwrap();
    assert_eq!(
        e.to_string(),
        "((not (kind == bug)) or ((kind == other) and (angry > 0.5)))"
    );
}

#[test]
fn nesting_and_length_are_bounded() {
    let deep = format!("{}kind == bug{}", "(".repeat(100), ")".repeat(100));
    let e = parse_expr(&deep).unwrap_err();
    assert!(e.message.contains("deeper"), "{e:?}");
    let nots = format!("{}kind == bug", "not ".repeat(100));
    assert!(parse_expr(&nots).unwrap_err().message.contains("deeper"));
    let long = "kind == bug or ".repeat(400) + "kind == bug";
    assert!(parse_expr(&long).unwrap_err().message.contains("longer"));
}
