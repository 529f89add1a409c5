//! Evaluation on answers: first match wins, `[otherwise]` only on decided answers, answers
//! validated and normalised (negative, NaN, off-sum refused; missing → unanswered), the
//! derived numbers (ties → lower level, mean, margin), the verdict and `judge:` lines.

use fuseforks_core::judge::{
    Answer, Answers, JudgeLog, RuleRef, answers_text, evaluate, parse_judge, undecided_line,
    verdict_line,
};
use fuseforks_core::village::Language;

const FILE: &str = r#"
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
ask = "Angry?"
true_if = "angry"
false_if = "calm"

[[rules]]
when = "kind == other"
do = "return"
note = "not ours"

[[rules]]
when = "kind == bug and (urgency >= 4 or urgency.mean >= 3.5)"
to = ["dev", "lead"]

[[rules]]
when = "kind in [bug, feature] and kind.margin >= 0.3 and not angry > 0.8"
to = ["dev"]

[otherwise]
to = ["support"]
"#;

fn answers(kind: [f64; 3], urgency: [f64; 5], angry: f64) -> Vec<Option<Answer>> {
    vec![
        Some(Answer::Choice(kind.to_vec())),
        Some(Answer::Score(urgency.to_vec())),
        Some(Answer::Noul(angry)),
    ]
}

#[test]
fn rules_are_evaluated_top_down_and_the_first_match_wins() {
    let rules = parse_judge(FILE).unwrap();
    let check = |a: Vec<Option<Answer>>, want: RuleRef, word: &str| {
        let a = Answers::build(&rules, a).unwrap();
        let d = evaluate(&rules, &a);
        assert_eq!((d.rule, d.outcome_word()), (want, word));
    };
    // other → rule 1 (return), even though later rules could match.
    check(
        answers([0.1, 0.1, 0.8], [0.0, 0.0, 0.0, 0.0, 1.0], 0.0),
        RuleRef::Rule(1),
        "returned",
    );
    // bug, level 5 → rule 2 (fan-out).
    check(
        answers([0.9, 0.05, 0.05], [0.0, 0.0, 0.0, 0.1, 0.9], 0.0),
        RuleRef::Rule(2),
        "fanned",
    );
    // bug, top level 2 but mean 3.6 → rule 2 through the mean.
    check(
        answers([0.9, 0.05, 0.05], [0.0, 0.4, 0.0, 0.0, 0.6], 0.0),
        RuleRef::Rule(2),
        "fanned",
    );
    // feature with a clear margin, calm → rule 3 (relay).
    check(
        answers([0.1, 0.8, 0.1], [1.0, 0.0, 0.0, 0.0, 0.0], 0.2),
        RuleRef::Rule(3),
        "routed",
    );
    // feature, but angry → otherwise.
    check(
        answers([0.1, 0.8, 0.1], [1.0, 0.0, 0.0, 0.0, 0.0], 0.9),
        RuleRef::Otherwise,
        "routed",
    );
    // feature with a thin margin → otherwise.
    check(
        answers([0.35, 0.45, 0.2], [1.0, 0.0, 0.0, 0.0, 0.0], 0.0),
        RuleRef::Otherwise,
        "routed",
    );
}

#[test]
fn derived_numbers_ties_mean_and_margin() {
    let rules = parse_judge(FILE).unwrap();
    let a = Answers::build(
        &rules,
        answers([0.4, 0.4, 0.2], [0.0, 0.5, 0.5, 0.0, 0.0], 0.25),
    )
    .unwrap();
    // Choice tie → the first option in file order; score tie → the lower level.
    assert_eq!(a.derived[0].shown, "bug");
    assert_eq!(a.derived[1].chosen, 2);
    assert!((a.derived[1].mean - 2.5).abs() < 1e-9);
    assert!(a.derived[1].margin.abs() < 1e-9);
    assert!((a.derived[0].margin - 0.0).abs() < 1e-9);
    assert_eq!(
        answers_text(&rules, &a),
        "kind:bug/0.40/0.00,urgency:2/0.50/0.00,angry:0.25/0.25/-"
    );
}

#[test]
fn bad_numbers_are_refused_or_normalised_never_trusted() {
    let rules = parse_judge(FILE).unwrap();
    let refused = |a: Vec<Option<Answer>>| Answers::build(&rules, a).unwrap_err();
    let e = refused(answers([-0.1, 0.6, 0.5], [1.0, 0.0, 0.0, 0.0, 0.0], 0.1));
    assert_eq!(e.reason, "malformed");
    assert!(e.detail.contains("kind"), "{e:?}");
    assert_eq!(
        refused(answers(
            [f64::NAN, 0.5, 0.5],
            [1.0, 0.0, 0.0, 0.0, 0.0],
            0.1
        ))
        .reason,
        "malformed"
    );
    assert_eq!(
        refused(answers([0.9, 0.9, 0.9], [1.0, 0.0, 0.0, 0.0, 0.0], 0.1)).reason,
        "malformed"
    );
    assert_eq!(
        refused(answers([0.2, 0.2, 0.6], [1.0, 0.0, 0.0, 0.0, 0.0], 1.5)).reason,
        "malformed"
    );
    assert_eq!(
        refused(answers(
            [0.2, 0.2, 0.6],
            [1.0, 0.0, 0.0, 0.0, f64::INFINITY],
            0.5
        ))
        .reason,
        "malformed"
    );
    // A question left out → unanswered, whatever the others say.
    let mut a = answers([0.2, 0.2, 0.6], [1.0, 0.0, 0.0, 0.0, 0.0], 0.5);
    a[1] = None;
    let e = refused(a);
    assert_eq!(
        (e.reason, e.detail.as_str()),
        ("unanswered", "no answer for \"urgency\"")
    );
    let e = refused(vec![Some(Answer::Choice(vec![0.5, 0.5, 0.0]))]);
    assert_eq!(e.reason, "unanswered");
    // Wrong shapes.
    assert_eq!(
        refused(vec![Some(Answer::Noul(0.5)), None, None]).reason,
        "malformed"
    );
    assert_eq!(
        refused(
            answers([0.2, 0.2, 0.6], [1.0, 0.0, 0.0, 0.0, 0.0], 0.5)
                .into_iter()
                .enumerate()
                .map(|(i, a)| if i == 1 {
                    Some(Answer::Score(vec![0.5, 0.5]))
                } else {
                    a
                })
                .collect()
        )
        .reason,
        "malformed"
    );
    // Near 1 → scaled to 1.
    let a = Answers::build(
        &rules,
        answers([0.51, 0.51, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0], 0.0),
    )
    .unwrap();
    assert!((a.derived[0].p - 0.5).abs() < 1e-9);
}

#[test]
fn verdict_undecided_and_log_lines() {
    let rules = parse_judge(FILE).unwrap();
    let a = Answers::build(
        &rules,
        answers([0.1, 0.1, 0.8], [1.0, 0.0, 0.0, 0.0, 0.0], 0.0),
    )
    .unwrap();
    let d = evaluate(&rules, &a);
    let text = answers_text(&rules, &a);
    assert_eq!(
        verdict_line("gate", &d, &text, Language::En),
        "[verdict gate] rule 1 matched (kind:other/0.80/0.70,urgency:1/1.00/1.00,angry:0.00/0.00/-)\nnot ours"
    );
    assert!(
        verdict_line("gate", &d, &text, Language::Ja).starts_with("[判定 gate] ルール1 に該当")
    );
    assert_eq!(
        undecided_line("gate", "timeout", Language::En),
        "[verdict gate] undecided (reason=timeout); nothing was routed."
    );
    let log = JudgeLog {
        caller: "writer".into(),
        judge: "gate".into(),
        rule: d.rule.log_text(),
        outcome: d.outcome_word().into(),
        answers: text,
        to: vec![],
        input_tokens: 12,
        output_tokens: 3,
        bundle_chars: None,
        reason: None,
    };
    assert_eq!(
        log.line(),
        "judge: caller=writer judge=gate rule=1 outcome=returned answers=kind:other/0.80/0.70,urgency:1/1.00/1.00,angry:0.00/0.00/- to=[] input_tokens=12 output_tokens=3"
    );
    let undecided = JudgeLog {
        rule: "none".into(),
        outcome: "undecided".into(),
        reason: Some("unanswered".into()),
        ..log
    };
    assert!(undecided.line().ends_with("answers=kind:other/0.80/0.70,urgency:1/1.00/1.00,angry:0.00/0.00/- to=[] input_tokens=12 output_tokens=3 reason=unanswered"));
}

/// A wire that cannot force a tool (Ollama's own API has no `tool_choice`) gets `auto` and
/// the fixed line "Call judge_answers now…" as the last message, and its answer is read the
/// same way; a wire that can force gets `Specific` and no extra line.
#[tokio::test]
async fn a_wire_that_cannot_force_gets_auto_and_the_fixed_line_and_still_answers() {
    use fuseforks_core::judge::{ask_model, judge_request};
    use fuseforks_core::llm::{LlmClient, Role, ToolChoice, Wire};
    use fuseforks_testkit::stub::StubServer;
    use fuseforks_testkit::wire_replies::{ScriptCall, ScriptUsage, tool_calls};
    use tokio_util::sync::CancellationToken;
    let rules = parse_judge(
        "[questions.kind]\ntype = \"choice\"\nask = \"What?\"\noptions = { bug = \"b\", other = \"o\" }\n\n[otherwise]\ndo = \"return\"\n",
    )
    .unwrap();
    let usage = ScriptUsage {
        prompt: 30,
        completion: 4,
        cache_read: 0,
        reasoning: 0,
    };
    let call = ScriptCall {
        id: "c1".into(),
        name: "judge_answers".into(),
        args: serde_json::json!({"kind": {"bug": 0.75, "other": 0.25}}),
    };
    let stub = StubServer::start(vec![tool_calls(Wire::OllamaNative, &[call], usage)]).await;
    for (wire, forced) in [(Wire::OllamaNative, false), (Wire::OpenAiCompat, true)] {
        let template = crate::llm_support::template(wire, stub.base_url());
        let endpoint = crate::llm_support::endpoint(wire, stub.base_url());
        let (request, was_forced) = judge_request(
            &rules,
            &template,
            &endpoint,
            "My app crashes",
            Language::En,
            CancellationToken::new(),
        );
        assert_eq!(was_forced, forced, "{wire:?}");
        let last = request.messages.last().unwrap();
        if forced {
            assert!(
                matches!(request.tool_choice, ToolChoice::Specific(ref n) if n == "judge_answers")
            );
            assert_eq!(last.role, Role::User);
            assert!(!format!("{last:?}").contains("Call judge_answers now"));
        } else {
            assert!(matches!(request.tool_choice, ToolChoice::Auto));
            assert!(format!("{last:?}").contains("Call judge_answers now. Write nothing else."));
            let answer = ask_model(&LlmClient::new().unwrap(), &endpoint, &request, &rules).await;
            let answers = answer.answers.unwrap();
            assert_eq!(answers_text(&rules, &answers), "kind:bug/0.75/0.50");
            let sent = &stub.requests()[0].body;
            assert!(sent.get("tool_choice").is_none(), "{sent}");
        }
    }
}

/// Every comparison on every kind of value, and the connectives, evaluated on one set of
/// answers: kind bug (p 0.6, margin 0.3), urgency level 3 (p 0.5, mean 3.1), angry 0.4.
#[test]
fn every_operator_evaluates_on_every_value_kind() {
    let head = FILE.split("[[rules]]").next().unwrap();
    let cases: &[(&str, bool)] = &[
        ("kind == bug", true),
        ("kind != bug", false),
        ("kind != other", true),
        ("kind in [bug]", true),
        ("kind in [feature, other]", false),
        ("kind.p >= 0.59", true),
        ("kind.p > 0.61", false),
        ("kind.margin < 0.31", true),
        ("kind.margin <= 0.29", false),
        ("urgency == 3", true),
        ("urgency != 3", false),
        ("urgency < 4", true),
        ("urgency <= 2", false),
        ("urgency > 2", true),
        ("urgency >= 4", false),
        ("urgency in [1, 3]", true),
        ("urgency in [4, 5]", false),
        ("urgency.p > 0.49", true),
        ("urgency.mean < 3.2", true),
        ("urgency.mean <= 3.0", false),
        ("angry < 0.5", true),
        ("angry <= 0.39", false),
        ("angry >= 0.4", true),
        ("angry != 0.4", false),
        ("not angry < 0.5", false),
        ("angry < 0.5 and kind == other", false),
        ("angry > 0.9 or kind == bug", true),
        ("(angry > 0.9 or kind == bug) and not urgency < 3", true),
        ("angry > 0.9 or kind == bug and urgency < 3", false),
    ];
    for (when, matches) in cases {
        let file = format!(
            "{head}[[rules]]\nwhen = \"{when}\"\ndo = \"return\"\n\n[otherwise]\nto = [\"support\"]\n"
        );
        let rules = parse_judge(&file).unwrap_or_else(|e| panic!("{when}: {e:?}"));
        let a = Answers::build(
            &rules,
            answers([0.6, 0.3, 0.1], [0.0, 0.2, 0.5, 0.3, 0.0], 0.4),
        )
        .unwrap();
        let want = if *matches {
            RuleRef::Rule(1)
        } else {
            RuleRef::Otherwise
        };
        assert_eq!(evaluate(&rules, &a).rule, want, "{when}");
    }
}
