//! Property tests (proptest): random and mutated judge files and expressions never panic, and
//! every refusal is located inside the text.

use fuseforks_core::judge::{Roster, parse_expr, starter_template, validate_judge};
use fuseforks_core::village::Language;
use proptest::prelude::*;

const ROSTER: Roster<'static> = Roster {
    servants: &["dev"],
    judges: &["gate"],
};

fn seed() -> String {
    format!(
        "{}\n[questions.urgency]\ntype = \"score\"\nask = \"u\"\nlevels = [\"a\", \"b\", \"c\"]\n\n[questions.angry]\ntype = \"noul\"\nask = \"a\"\ntrue_if = \"t\"\nfalse_if = \"f\"\n\n[[rules]]\nwhen = \"(urgency >= 2 or angry > 0.5) and not kind in [other]\"\nto = [\"dev\"]\n",
        starter_template("dev", Language::En)
    )
}

fn check_located(text: &str) {
    match validate_judge(text, ROSTER) {
        Ok(_) => {}
        Err(findings) => {
            assert!(!findings.is_empty());
            let all: Vec<&str> = text.split('\n').collect();
            let lines = all.len();
            for f in findings {
                assert!(
                    f.line >= 1 && f.line <= lines,
                    "{f:?} outside {lines} lines"
                );
                // A column within its line (one past the end: the end of the line).
                let width = all[f.line - 1].chars().count();
                assert!(
                    f.col >= 1 && f.col <= width + 1,
                    "{f:?} outside a line of {width}"
                );
                assert!(!f.message.is_empty() && !f.fix.is_empty());
            }
        }
    }
}

const PIECES: &[&str] = &[
    "kind",
    "urgency",
    "angry",
    ".p",
    ".margin",
    ".mean",
    ".",
    "==",
    "!=",
    ">=",
    "<=",
    ">",
    "<",
    "in",
    "[",
    "]",
    ",",
    "(",
    ")",
    "and",
    "or",
    "not",
    "bug",
    "other",
    "0",
    "1",
    "2",
    "0.5",
    "3.25",
    "-",
    "=",
    "\"",
    "\\",
    "é",
    " ",
    "x",
    "9999999999999999999999999999",
];

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// 5,000 + 4,000 + 1,500 = 10,500 cases (random bytes are the slowest to generate and mostly
// stop at the TOML syntax).
proptest! {
    #![proptest_config(config(5_000))]

    #[test]
    fn random_expressions_never_panic(pieces in prop::collection::vec(0..PIECES.len(), 0..24)) {
        let expr: Vec<&str> = pieces.iter().map(|i| PIECES[*i]).collect();
        let expr = expr.join(" ");
        if let Err(e) = parse_expr(&expr) {
            prop_assert!(e.at <= expr.len());
        }
        let text = format!("{}\n[[rules]]\nwhen = '{}'\ndo = \"return\"\n", seed(), expr.replace('\'', ""));
        check_located(&text);
    }

}

proptest! {
    #![proptest_config(config(4_000))]

    #[test]
    fn mutated_files_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<char>()), 1..6)
    ) {
        let mut text: Vec<char> = seed().chars().collect();
        for (at, kind, ch) in edits {
            if text.is_empty() { break; }
            let i = at.index(text.len());
            match kind {
                0 => { text.remove(i); }
                1 => text.insert(i, ch),
                2 => text[i] = ch,
                _ => { let j = at.index(text.len().min(i + 40)); let piece: Vec<char> = text[i.min(j)..i.max(j)].to_vec(); text.splice(i..i, piece); }
            }
        }
        let text: String = text.into_iter().collect();
        check_located(&text);
    }

}

proptest! {
    #![proptest_config(config(1_500))]

    #[test]
    fn random_bytes_never_panic(text in "\\PC{0,300}") {
        check_located(&text);
    }
}
