//! Judge figures: parse + validate a 200-rule `judge.toml` (target ≤ 1 ms), and
//! evaluate 200 rules on answers where only `[otherwise]` matches, so every rule is tried
//! (target ≤ 20 µs). Median and p99 of many runs.
//!
//! Run with `cargo bench -p fuseforks-core --bench judge`.

#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: it prints its figures, and a broken setup stops it with a panic that says why"
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use fuseforks_core::judge::{Answer, Answers, Roster, evaluate, validate_judge};

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "{name:<52} median {:>8.1} µs   p99 {:>8.1} µs",
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6
    );
}

fn file(rules: usize) -> String {
    let mut text = String::from(
        "[questions.kind]\ntype = \"choice\"\nask = \"What kind of request is this?\"\noptions = { bug = \"a bug\", feature = \"a feature\", question = \"a question\", other = \"else\" }\n\n[questions.urgency]\ntype = \"score\"\nask = \"How urgent?\"\nlevels = [\"none\", \"low\", \"mid\", \"high\", \"fire\"]\n\n[questions.angry]\ntype = \"noul\"\nask = \"Is the writer angry?\"\ntrue_if = \"angry\"\nfalse_if = \"calm\"\n",
    );
    for i in 0..rules {
        let level = 1 + i % 5;
        text.push_str(&format!(
            "\n[[rules]]\nwhen = \"(kind in [bug, feature] and urgency >= {level} and kind.margin >= 0.9{}) or (not angry < 0.99 and urgency.mean > 4.9)\"\nto = [\"dev{}\"]\nnote = \"rule {i}\"\n",
            i % 10,
            i % 3
        ));
    }
    text.push_str("\n[otherwise]\ndo = \"return\"\n");
    text
}

fn main() {
    let text = file(200);
    let roster = Roster {
        servants: &["dev0", "dev1", "dev2"],
        judges: &["gate"],
    };
    let parse: Vec<Duration> = (0..500)
        .map(|_| {
            let began = Instant::now();
            let rules = validate_judge(black_box(&text), roster);
            let took = began.elapsed();
            assert!(rules.is_ok());
            took
        })
        .collect();
    summary(
        &format!("parse + validate, 200 rules ({} bytes)", text.len()),
        parse,
    );

    let toml_only: Vec<Duration> = (0..500)
        .map(|_| {
            let began = Instant::now();
            let doc = toml_edit::Document::parse(black_box(text.as_str()));
            let took = began.elapsed();
            assert!(doc.is_ok());
            took
        })
        .collect();
    summary("of which toml_edit's parse alone", toml_only);
    let whens: Vec<String> = text
        .lines()
        .filter_map(|l| {
            l.strip_prefix("when = \"")
                .and_then(|l| l.strip_suffix('"'))
        })
        .map(str::to_string)
        .collect();
    let exprs: Vec<Duration> = (0..500)
        .map(|_| {
            let began = Instant::now();
            for w in &whens {
                black_box(fuseforks_core::judge::parse_expr(black_box(w)).is_ok());
            }
            began.elapsed()
        })
        .collect();
    summary("of which the 200 when expressions alone", exprs);

    let rules = validate_judge(&text, roster).unwrap_or_else(|e| panic!("{e:?}"));
    let answers = Answers::build(
        &rules,
        vec![
            Some(Answer::Choice(vec![0.5, 0.3, 0.1, 0.1])),
            Some(Answer::Score(vec![0.0, 0.1, 0.2, 0.3, 0.4])),
            Some(Answer::Noul(0.2)),
        ],
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    let eval: Vec<Duration> = (0..20_000)
        .map(|_| {
            let began = Instant::now();
            let d = evaluate(black_box(&rules), black_box(&answers));
            let took = began.elapsed();
            black_box(d);
            took
        })
        .collect();
    let d = evaluate(&rules, &answers);
    assert_eq!(d.rule.log_text(), "otherwise", "every rule must be tried");
    summary("evaluate 200 rules (none matches)", eval);
}
