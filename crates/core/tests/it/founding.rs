//! Founding a village: every file in place, the rules of a new village, nothing touched when a
//! village exists, files already in the folder kept.

use std::fs;

use fuseforks_core::village::{Credential, Language, Provider, VillageStore};
use fuseforks_core::village::{FoundingPlan, found_village};
use fuseforks_core::village::{PRESETS, preset};
use fuseforks_testkit::{TempDataDir, snapshot};

fn plan(language: Language, key: &str) -> FoundingPlan {
    FoundingPlan {
        language,
        preset: preset(key).unwrap(),
    }
}

#[test]
fn a_new_village_has_every_file_and_loads_cleanly() {
    for language in [Language::Ja, Language::En] {
        for p in PRESETS {
            let data = TempDataDir::new();
            let store = VillageStore::new(data.workspace());
            let report = found_village(&store, &plan(language, p.key)).unwrap();
            assert!(report.kept.is_empty());
            assert_eq!(report.created.len(), 5, "{:?}", report.created);

            let loaded = store.load_world().unwrap();
            assert!(loaded.notices.is_empty());
            let world = loaded.value;
            assert_eq!(world.language(), Some(language));
            assert_eq!(world.token_budget, Some(1_000_000));
            let reception = world.reception.clone().unwrap();
            let agent = world.agent(&reception).unwrap();
            let template = world.template(&agent.model_template_id).unwrap();
            assert_eq!(template.provider(), p.provider);
            assert_eq!(template.credential, p.credential);
            assert_eq!(template.id.as_str(), p.template_id);
            assert_eq!(report.village_id, store.read_village_id().unwrap().unwrap());

            let files = store.agent_files(&reception).unwrap();
            let construct = files.read_construct().unwrap();
            let skill = files.read_skill().unwrap();
            let japanese = |s: &str| s.chars().any(|c| ('\u{3040}'..='\u{30ff}').contains(&c));
            assert_eq!(japanese(&construct), language == Language::Ja);
            assert_eq!(japanese(&skill), language == Language::Ja);
            assert!(!store.read_ordinance().unwrap().is_empty());
        }
    }
    assert_eq!(
        preset("ollama").unwrap().credential,
        Credential::NotRequired
    );
    assert_eq!(preset("anthropic").unwrap().provider, Provider::Anthropic);
}

#[test]
fn an_existing_village_is_refused_and_untouched() {
    let data = TempDataDir::with_original_village();
    let before = snapshot(data.data_dir());
    let err = found_village(
        &VillageStore::new(data.workspace()),
        &plan(Language::En, "openai"),
    )
    .unwrap_err();
    assert_eq!(err.code(), "VILLAGE_EXISTS");
    assert_eq!(err.file(), data.workspace().join("world.json"));
    assert_eq!(snapshot(data.data_dir()), before);
}

#[test]
fn files_already_in_the_workspace_are_kept() {
    let data = TempDataDir::new();
    data.write("Ordinance.md", "my own rules\n");
    data.write("village_id", "kept-id\n");
    let store = VillageStore::new(data.workspace());
    let report = found_village(&store, &plan(Language::En, "gemini")).unwrap();
    assert_eq!(store.read_ordinance().unwrap(), "my own rules\n");
    assert_eq!(report.village_id, "kept-id");
    let kept: Vec<_> = report
        .kept
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    assert_eq!(kept, ["village_id", "Ordinance.md"]);
    assert!(store.load_world().is_ok());
}

#[test]
fn staging_leaves_no_trace_beside_the_workspace() {
    let data = TempDataDir::new();
    found_village(
        &VillageStore::new(data.workspace()),
        &plan(Language::Ja, "ollama"),
    )
    .unwrap();
    let names: Vec<_> = fs::read_dir(data.data_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["workspace"]);
}
