//! The tool specs are pinned by golden files: a change to a description or schema must be
//! deliberate (run with `UPDATE_GOLDEN=1` to rewrite them, and review the diff).

use fuseforks_core::tools::{BUNDLED_TOOL_NAMES, RunApproval, golden, offered_tools, spec};
use fuseforks_core::village::{AgentId, AgentSpec, Language, TemplateId};

#[test]
fn specs_match_the_golden_files() {
    for (language, file) in [
        (Language::Ja, "tool_specs_ja.txt"),
        (Language::En, "tool_specs_en.txt"),
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(file);
        let text = golden(language);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let pinned = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            text, pinned,
            "{file} differs: run with UPDATE_GOLDEN=1 if the change is deliberate"
        );
    }
}

#[test]
fn every_schema_is_closed_and_carries_reason() {
    // Every tool of the table (the golden text names each one): a new one cannot escape.
    let golden = golden(Language::En);
    let names: Vec<&str> = golden
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .collect();
    assert!(names.len() > BUNDLED_TOOL_NAMES.len(), "{names:?}");
    for name in names {
        let s = spec(name, Language::En, RunApproval::Required).unwrap();
        assert_eq!(s.parameters["additionalProperties"], false, "{name}");
        assert!(s.parameters["properties"]["reason"].is_object(), "{name}");
        assert!(
            !s.parameters["required"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == "reason"),
            "{name}"
        );
    }
    let required = spec("run", Language::Ja, RunApproval::Required)
        .unwrap()
        .description;
    let auto = spec("run", Language::Ja, RunApproval::AutoApprove)
        .unwrap()
        .description;
    assert!(
        auto.starts_with(&required) && auto.len() > required.len(),
        "non-required modes add one sentence"
    );
}

#[test]
fn offered_tools_follow_the_agent() {
    let mut agent = AgentSpec::new(
        AgentId::new("a").unwrap(),
        "A",
        TemplateId::new("t").unwrap(),
    );
    let names = |a: &AgentSpec, wd: bool| {
        offered_tools(a, wd, RunApproval::Required, Language::En)
            .into_iter()
            .map(|s| s.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&agent, true),
        ["diff", "fd", "file", "grep", "remember", "sd", "yq"],
        "default set, no run"
    );
    assert_eq!(
        names(&agent, false),
        ["remember"],
        "work-folder tools hidden without a work folder"
    );
    agent.enabled_tools = Some(vec!["run".into(), "grep".into(), "nonsense".into()]);
    agent.rag_sources = vec!["/srv/docs".into()];
    assert_eq!(names(&agent, true), ["grep", "rag", "run"]);
}
