//! A maximal `world.json` (every field the original writes, docs/formats/world.json.md, and unknown
//! fields at every level) survives read → write → read, and the read rules hold.

use std::fs;

use fuseforks_core::village::RoleColor;
use fuseforks_core::village::{Credential, Effort, Language, NoticeCode, Provider, VillageStore};
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::maximal::maximal_world;
use serde_json::{Value, json};

fn store_with(data: &TempDataDir, world: &Value) -> VillageStore {
    data.write("world.json", serde_json::to_vec_pretty(world).unwrap());
    VillageStore::new(data.workspace())
}

#[test]
fn the_maximal_world_survives_read_write_read() {
    let data = TempDataDir::new();
    let store = store_with(&data, &maximal_world());
    let first = store.load_world().unwrap();
    assert!(first.notices.is_empty(), "{:?}", first.notices);
    store.save_world(&first.value).unwrap();
    let second = store.load_world().unwrap();
    assert_eq!(second.value, first.value);

    let written: Value =
        serde_json::from_slice(&fs::read(store.path("world.json")).unwrap()).unwrap();
    assert_eq!(
        written,
        maximal_world(),
        "the JSON written differs from the JSON read"
    );
}

#[test]
fn every_field_of_the_maximal_world_is_read() {
    let data = TempDataDir::new();
    let world = store_with(&data, &maximal_world())
        .load_world()
        .unwrap()
        .value;
    let a = &world.agents[0];
    assert_eq!(a.rag_sources, ["/srv/docs", "/srv/notes"]);
    assert_eq!(
        a.connected_agents
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>(),
        ["writer", "gate"]
    );
    assert_eq!(a.work_dir.as_deref(), Some("/srv/work"));
    assert_eq!(a.max_tool_iterations, Some(20));
    assert_eq!(
        a.enabled_tools.as_deref(),
        Some(&["file".to_owned(), "grep".into(), "run".into()][..])
    );
    assert!(
        !a.hears_room_log
            && !a.allow_handoff
            && !a.uses_blackboard
            && a.plan_review
            && !a.batch_start
    );
    assert_eq!(a.role_id.as_deref(), Some("lead"));
    assert_eq!(a.extra["futureAgentField"], json!({"nested": [1, 2, 3]}));

    let t = &world.model_templates[0];
    assert_eq!(t.provider(), Provider::Anthropic);
    assert_eq!(t.credential, Credential::Keyring);
    assert_eq!(t.effort, Some(Effort::Xhigh));
    assert_eq!(t.temperature, Some(0.25));
    assert!(t.google_search && t.xai_web_search && t.xai_x_search && t.openai_web_search);
    assert!(t.openai_reasoning_pro && t.meta_web_search && t.perplexity_web_search);
    assert!(t.perplexity_finance_search && t.perplexity_people_search && t.perplexity_fetch_url);
    assert!(t.gemini_url_context && !t.use_tools);
    assert_eq!(
        (
            t.context_length,
            t.max_output_tokens,
            t.request_timeout_secs,
            t.max_retries
        ),
        (200_000, 16_000, 300, 5)
    );
    assert_eq!(
        (
            t.input_per_mtok,
            t.output_per_mtok,
            t.cache_read_per_mtok,
            t.cache_write_per_mtok,
            t.cache_write_1h_per_mtok
        ),
        (Some(3.0), Some(15.0), Some(0.3), Some(3.75), Some(6.0))
    );
    assert_eq!(t.pricing_as_of.as_deref(), Some("2026-11-01"));
    assert_eq!(world.model_templates[1].credential, Credential::NotRequired);
    assert_eq!(
        world.model_templates[1].provider(),
        Provider::OpenAiResponses
    );

    assert_eq!(world.topology_positions["coordinator"].x, 10.5);
    assert_eq!(world.token_budget, Some(250_000));
    assert_eq!(world.ask_timeout_secs(), 900);
    assert_eq!(world.language(), Some(Language::Ja));
    assert_eq!(world.user_name.as_deref(), Some("Aki"));
    assert_eq!(world.roles[0].color, Some(RoleColor::Violet));
    assert_eq!(world.roles[0].defaults.max_tool_iterations, Some(8));
    assert_eq!(world.roles[0].defaults.extra["futureDefaultsField"], 1);
    assert!(!world.groups[0].batch_start);
    assert!(!world.judges[0].enabled);
    assert_eq!(world.external_name.as_deref(), Some("Claude Desktop"));
    assert_eq!(
        world.default_verifier.as_ref().map(|v| v.as_str()),
        Some("writer")
    );
    assert_eq!(world.extra["futureTopLevelField"]["since"], "v9");
}

#[test]
fn read_rules_of_the_reference_apply_with_notices() {
    let data = TempDataDir::new();
    let mut world = maximal_world();
    world["tokenBudget"] = json!(0);
    world["askTimeoutSecs"] = json!(5);
    world["language"] = json!("fr");
    world["userName"] = json!("   ");
    world["externalName"] = json!("  Desk  ");
    world["modelTemplates"][0]["credential"] = json!("none");
    world["modelTemplates"][0]
        .as_object_mut()
        .unwrap()
        .remove("provider");
    world["modelTemplates"][1]
        .as_object_mut()
        .unwrap()
        .remove("provider");
    world["agents"][1]["connectedAgents"] = json!(["ghost"]);
    let loaded = store_with(&data, &world).load_world().unwrap();
    let w = &loaded.value;
    assert_eq!(w.token_budget, None);
    assert_eq!((w.ask_timeout_secs, w.ask_timeout_secs()), (None, 600));
    assert_eq!(w.language(), None);
    assert_eq!(w.effective_language(Some("ja_JP.UTF-8")), Language::Ja);
    assert_eq!(
        w.language.as_ref().unwrap().as_str(),
        "fr",
        "an unknown language is kept as written"
    );
    assert_eq!(w.user_name, None);
    assert_eq!(w.external_name.as_deref(), Some("Desk"));
    assert_eq!(w.model_templates[0].credential, Credential::Unset);
    assert_eq!(
        w.model_templates[0].provider,
        Some(Provider::Anthropic),
        "api.anthropic.com → anthropic"
    );
    assert_eq!(
        w.model_templates[1].provider,
        Some(Provider::OpenAiCompat),
        "other hosts → open_ai_compat"
    );

    let codes: Vec<_> = loaded
        .notices
        .iter()
        .map(|n| (n.code, n.field.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            (NoticeCode::ValueDefaulted, "tokenBudget"),
            (NoticeCode::ValueDefaulted, "askTimeoutSecs"),
            (NoticeCode::LanguageUndetermined, "language"),
            (NoticeCode::NameDropped, "userName"),
            (
                NoticeCode::EdgeTargetMissing,
                "agents[1].connectedAgents[0]"
            ),
        ]
    );
    // What a read adjusted is what a write stores: the result writes cleanly.
    let store = VillageStore::new(data.workspace());
    store.save_world(w).unwrap();
    let written: Value =
        serde_json::from_slice(&fs::read(store.path("world.json")).unwrap()).unwrap();
    assert_eq!(written["modelTemplates"][0]["credential"], "unset");
    assert!(written.get("tokenBudget").is_none() && written.get("askTimeoutSecs").is_none());
}

#[test]
fn boundaries_of_ask_timeout_are_kept() {
    for (secs, kept) in [(29, false), (30, true), (3600, true), (3601, false)] {
        let data = TempDataDir::new();
        let mut world = maximal_world();
        world["askTimeoutSecs"] = json!(secs);
        let w = store_with(&data, &world).load_world().unwrap().value;
        assert_eq!(w.ask_timeout_secs.is_some(), kept, "{secs}");
    }
}
