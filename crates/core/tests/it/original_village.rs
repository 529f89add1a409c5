//! The original Fuseforks' village opens with every value as written, and a write re-reads
//! equal with no field lost.

use std::fs;

use fuseforks_core::village::{Credential, Language, Provider, VillageStore};
use fuseforks_testkit::{TempDataDir, original_village};
use serde_json::Value;

#[test]
fn the_original_village_loads_with_every_value_as_written() {
    let store = VillageStore::new(original_village().join("workspace"));
    let loaded = store.load_world().unwrap();
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let world = loaded.value;

    assert_eq!(world.agents.len(), 1);
    let agent = &world.agents[0];
    assert_eq!(agent.id.as_str(), "agent_1");
    assert_eq!(agent.name, "reception");
    assert_eq!(agent.model_template_id.as_str(), "stub");
    assert!(agent.rag_sources.is_empty() && agent.connected_agents.is_empty());
    assert_eq!(agent.order, 0);
    assert_eq!(agent.work_dir, None);
    assert_eq!(agent.max_tool_iterations, None);
    assert_eq!(agent.max_tool_iterations(), 12);
    assert_eq!(agent.enabled_tools, None);
    assert!(agent.hears_room_log && agent.allow_handoff && agent.uses_blackboard);
    assert!(!agent.plan_review && agent.batch_start);
    assert_eq!(
        (agent.role_id.as_deref(), agent.group_id.as_deref()),
        (None, None)
    );
    assert!(agent.extra.is_empty());

    let t = &world.model_templates[0];
    assert_eq!((t.id.as_str(), t.name.as_str()), ("stub", "stub"));
    assert_eq!(t.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(t.model, "stub-model");
    assert_eq!(t.context_length, 128_000);
    assert_eq!(t.temperature, None);
    assert_eq!(t.max_output_tokens, 8192);
    assert_eq!(t.credential, Credential::Keyring);
    assert_eq!(t.provider(), Provider::OpenAiCompat);
    assert!(t.use_tools);
    assert_eq!(t.effort, None);
    assert!(!t.google_search && !t.gemini_url_context && !t.perplexity_fetch_url);
    assert_eq!(t.request_timeout_secs, 120);
    assert_eq!(t.max_retries, 1);
    assert!(!t.is_priced() && t.pricing_as_of.is_none());
    assert!(t.extra.is_empty());

    assert!(world.topology_positions.is_empty());
    assert_eq!(world.token_budget, Some(100_000));
    assert_eq!(world.ask_timeout_secs, None);
    assert_eq!(world.ask_timeout_secs(), 600);
    assert_eq!(world.language(), Some(Language::En));
    assert!(world.roles.is_empty() && world.groups.is_empty() && world.judges.is_empty());
    assert_eq!(
        world.reception.as_ref().map(|r| r.as_str()),
        Some("agent_1")
    );
    assert!(world.user_name.is_none() && world.external_name.is_none());
    assert!(world.default_verifier.is_none());
    assert!(world.extra.is_empty());

    assert_eq!(
        store.read_village_id().unwrap().as_deref(),
        Some("e168ff4c-3b3e-42fa-87fe-1ee963c9fa34")
    );
}

#[test]
fn a_write_of_the_original_village_rereads_equal_and_keeps_every_field() {
    let data = TempDataDir::with_original_village();
    let store = VillageStore::new(data.workspace());
    let world = store.load_world().unwrap().value;
    store.save_world(&world).unwrap();

    let again = store.load_world().unwrap();
    assert_eq!(again.value, world);
    assert!(again.notices.is_empty());

    // The written JSON is the original's JSON: same fields, same values, nulls where the
    // original writes nulls.
    let original: Value =
        serde_json::from_slice(&fs::read(original_village().join("workspace/world.json")).unwrap())
            .unwrap();
    let written: Value =
        serde_json::from_slice(&fs::read(store.path("world.json")).unwrap()).unwrap();
    assert_eq!(written, original);
    // And in the original's key order, so a diff against it is quiet.
    let keys = |v: &Value| {
        v["agents"][0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&written), keys(&original));
    let tkeys = |v: &Value| {
        v["modelTemplates"][0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(tkeys(&written), tkeys(&original));
}
