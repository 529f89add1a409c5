//! `judge.toml` files: the starter template, every file-level finding located (line:col, code,
//! fix), `to` lists checked against the village.

use fuseforks_core::Coded;
use fuseforks_core::judge::{
    Action, Finding, Roster, parse_judge, starter_template, validate_judge,
};
use fuseforks_core::village::Language;

const ROSTER: Roster<'static> = Roster {
    servants: &["dev", "writer", "support"],
    judges: &["gate"],
};

fn findings(text: &str) -> Vec<Finding> {
    validate_judge(text, ROSTER).unwrap_err()
}

fn one(text: &str) -> Finding {
    let f = findings(text);
    assert_eq!(f.len(), 1, "{f:#?}");
    f.into_iter().next().unwrap()
}

const BASE: &str = "[questions.kind]\ntype = \"choice\"\nask = \"What?\"\noptions = { bug = \"b\", other = \"o\" }\n";

#[test]
fn the_starter_template_is_valid_in_both_languages() {
    for language in [Language::Ja, Language::En] {
        let text = starter_template("dev", language);
        let rules = validate_judge(&text, ROSTER).unwrap();
        assert_eq!(rules.questions.len(), 1);
        assert_eq!(rules.rules.len(), 2);
        assert_eq!(rules.rules[0].outcome.action, Action::Return);
        assert_eq!(
            rules.rules[1].outcome.action,
            Action::To(vec!["dev".into()])
        );
        assert_eq!(rules.otherwise.action, Action::Return);
        assert_eq!(rules.targets(), vec!["dev"]);
        // The template with a servant that does not exist: located at the `to` entry.
        let f = findings(&starter_template("ghost", language));
        assert_eq!((f[0].line, f[0].col), (13, 7), "{f:?}");
        assert!(f[0].message.contains("not a servant"));
    }
}

#[test]
fn a_finding_renders_as_line_col_code_message_with_a_fix() {
    let f = one(&format!(
        "{BASE}\n[[rules]]\nwhen = \"kind == crash\"\ndo = \"return\"\n\n[otherwise]\ndo = \"return\"\n"
    ));
    // `when = "kind == crash"`: line 7, the literal `crash` at column 17.
    assert_eq!((f.line, f.col), (7, 17), "{f:?}");
    assert_eq!(f.code(), "INVALID_JUDGE_FILE");
    assert_eq!(
        f.to_string(),
        "7:17 INVALID_JUDGE_FILE rule 1: \"crash\" is not an option of \"kind\""
    );
    assert_eq!(f.fix().unwrap().change, "use one of: bug, other");
}

#[test]
fn every_file_level_problem_is_located() {
    let otherwise = "\n[otherwise]\ndo = \"return\"\n";
    let cases: Vec<(String, (usize, usize), &str)> = vec![
        (BASE.to_string(), (5, 1), "[otherwise] is missing"),
        ("[questions.kind\n".into(), (1, 16), "TOML syntax"),
        (
            format!(
                "{BASE}[[rules]]\nwhen = \"kind == bug\"\nto = [\"dev\"]\ndo = \"return\"\n{otherwise}"
            ),
            (8, 1),
            "both to and do",
        ),
        (
            format!("{BASE}[[rules]]\nwhen = \"kind == bug\"\n{otherwise}"),
            (5, 1),
            "neither to nor do",
        ),
        (
            format!("{BASE}[[rules]]\nto = [\"dev\"]\n{otherwise}"),
            (5, 1),
            "when is missing",
        ),
        (
            format!(
                "{BASE}[[rules]]\nwhen = \"kind == bug\"\nto = [\"dev\", \"dev\"]\n{otherwise}"
            ),
            (7, 14),
            "appears twice",
        ),
        (
            format!("{BASE}[[rules]]\nwhen = \"kind == bug\"\nto = []\n{otherwise}"),
            (7, 6),
            "to is empty",
        ),
        (
            format!("{BASE}[[rules]]\nwhen = \"kind == bug\"\ndo = \"relay\"\n{otherwise}"),
            (7, 6),
            "do must be \"return\"",
        ),
        (
            format!(
                "{BASE}[[rules]]\nwhen = \"kind == bug\"\ndo = \"return\"\nnote = \"{}\"\n{otherwise}",
                "x".repeat(201)
            ),
            (8, 8),
            "longer than 200",
        ),
        (
            format!("{BASE}[[rules]]\nwhen = \"kind == bug\"\nto = [\"gate\"]\n{otherwise}"),
            (7, 7),
            "is a judge",
        ),
        (
            format!("{BASE}[[rules]]\nwhen = \"kind == bug\"\nto = [\"nobody\"]\n{otherwise}"),
            (7, 7),
            "not a servant",
        ),
        (
            format!(
                "{BASE}[[rules]]\nwhen = \"kind == bug\"\ndo = \"return\"\npriority = 1\n{otherwise}"
            ),
            (8, 1),
            "unknown key \"priority\"",
        ),
        (
            format!("{BASE}title = \"x\"\n{otherwise}"),
            (5, 1),
            "unknown key \"title\"",
        ),
        (
            format!(
                "{BASE}[questions.Kind2]\ntype = \"noul\"\nask = \"a\"\ntrue_if = \"t\"\nfalse_if = \"f\"\n{otherwise}"
            ),
            (5, 12),
            "breaks the rule",
        ),
        (
            format!(
                "{BASE}[questions.in]\ntype = \"noul\"\nask = \"a\"\ntrue_if = \"t\"\nfalse_if = \"f\"\n{otherwise}"
            ),
            (5, 12),
            "reserved",
        ),
        (
            format!(
                "[questions.kind]\ntype = \"choice\"\nask = \"a\"\noptions = {{ only = \"o\" }}\n{otherwise}"
            ),
            (4, 11),
            "2 to 255",
        ),
        (
            format!(
                "[questions.kind]\ntype = \"choice\"\nask = \"a\"\noptions = {{ Bug = \"o\", x = \"y\" }}\n{otherwise}"
            ),
            (4, 13),
            "option key \"Bug\"",
        ),
        (
            format!(
                "[questions.lvl]\ntype = \"score\"\nask = \"a\"\nlevels = [\"a\"]\n{otherwise}"
            ),
            (4, 10),
            "2 to 10",
        ),
        (
            format!(
                "[questions.lvl]\ntype = \"score\"\nask = \"a\"\nlevels = {:?}\n{otherwise}",
                vec!["l"; 11]
            ),
            (4, 10),
            "2 to 10",
        ),
        (
            format!("[questions.q]\ntype = \"yesno\"\nask = \"a\"\n{otherwise}"),
            (2, 8),
            "type must be",
        ),
        (
            format!("[questions.q]\ntype = \"noul\"\nask = \"a\"\ntrue_if = \"t\"\n{otherwise}"),
            (1, 12),
            "false_if is missing",
        ),
        (
            format!(
                "[questions.q]\ntype = \"noul\"\nask = \"\"\ntrue_if = \"t\"\nfalse_if = \"f\"\n{otherwise}"
            ),
            (3, 7),
            "non-empty",
        ),
        (otherwise.to_string(), (1, 1), "no [questions"),
        (
            format!("{BASE}[otherwise]\nwhen = \"kind == bug\"\ndo = \"return\"\n"),
            (6, 1),
            "otherwise: unknown key \"when\"",
        ),
        (
            format!("{BASE}[[rules]]\nwhen = \"kind ==\"\ndo = \"return\"\n{otherwise}"),
            (6, 16),
            "expected a number or a key",
        ),
        (
            format!("{BASE}[[rules]]\nwhen = 3\ndo = \"return\"\n{otherwise}"),
            (6, 8),
            "when must be a string",
        ),
    ];
    for (text, at, needle) in cases {
        let f = findings(&text);
        assert!(
            f.iter()
                .any(|f| (f.line, f.col) == at && f.message.contains(needle)),
            "expected {needle:?} at {at:?} in\n{text}\ngot {f:#?}"
        );
        assert!(f.iter().all(|f| !f.fix.is_empty()));
    }
}

#[test]
fn every_finding_is_reported_not_only_the_first() {
    let text = format!(
        "{BASE}[[rules]]\nwhen = \"kind == crash\"\nto = [\"nobody\"]\n\n[[rules]]\nwhen = \"urgency > 2\"\ndo = \"return\"\n"
    );
    let f = parse_judge(&text).unwrap_err();
    let messages: Vec<&str> = f.iter().map(|f| f.message.as_str()).collect();
    assert!(messages.len() >= 3, "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("crash")));
    assert!(
        messages
            .iter()
            .any(|m| m.contains("unknown question \"urgency\""))
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("[otherwise] is missing"))
    );
    let mut sorted = f.clone();
    sorted.sort_by_key(|f| (f.line, f.col));
    assert_eq!(f, sorted);
}

#[test]
fn options_as_a_subtable_and_escaped_strings_are_read() {
    let text = "[questions.kind]\ntype = \"choice\"\nask = \"a\"\n[questions.kind.options]\nbug = \"b\"\nother = \"o\"\n\n[[rules]]\nwhen = \"kind == \\u0062ug\"\nto = [\"dev\", \"writer\"]\nnote = \"n\"\n\n[otherwise]\nto = [\"support\"]\n";
    let rules = validate_judge(text, ROSTER).unwrap();
    assert_eq!(rules.rules[0].when_text, "kind == bug");
    assert_eq!(rules.rules[0].line, 9);
    assert_eq!(rules.targets(), vec!["dev", "writer", "support"]);
    // With an escape the column cannot be mapped: the finding points at the string.
    let bad = text.replace("\\u0062ug", "\\u0063rash");
    let f = one(&bad);
    assert_eq!((f.line, f.col), (9, 8));
}

#[test]
fn a_huge_file_is_refused_before_parsing() {
    let text = format!("{BASE}# {}\n", "x".repeat(300 * 1024));
    let f = one(&text);
    assert_eq!((f.line, f.col), (1, 1));
    assert!(f.message.contains("larger than"));
}

/// A judge written by the original (`{id, name, order, enabled}`, plus a field it may add
/// later) opens as a Jev judge, and a write gives back the same JSON: no `modelTemplateId`
/// appears, the unknown field stays.
#[test]
fn a_judge_of_the_original_village_opens_unchanged() {
    use fuseforks_core::village::VillageStore;
    use fuseforks_testkit::TempDataDir;
    use serde_json::{Value, json};

    let data = TempDataDir::with_original_village();
    let store = VillageStore::new(data.workspace());
    let path = store.path("world.json");
    let mut world: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    world["judges"] = json!([{"id": "gate", "name": "Gate", "order": 0, "enabled": false, "futureJudgeField": [1]}]);
    std::fs::write(&path, serde_json::to_vec_pretty(&world).unwrap()).unwrap();

    let loaded = store.load_world().unwrap();
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let judge = &loaded.value.judges[0];
    assert_eq!(
        (
            judge.id.as_str(),
            judge.name.as_str(),
            judge.order,
            judge.enabled
        ),
        ("gate", "Gate", 0, false)
    );
    assert_eq!(judge.model_template_id, None, "absent = Jev");
    store.save_world(&loaded.value).unwrap();
    let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(written["judges"], world["judges"]);

    // Ours: the template id is read and written back.
    world["judges"][0]["modelTemplateId"] = json!("stub");
    std::fs::write(&path, serde_json::to_vec_pretty(&world).unwrap()).unwrap();
    let loaded = store.load_world().unwrap().value;
    assert_eq!(
        loaded.judges[0]
            .model_template_id
            .as_ref()
            .map(|t| t.as_str()),
        Some("stub")
    );
    store.save_world(&loaded).unwrap();
    let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(written["judges"], world["judges"]);
}
