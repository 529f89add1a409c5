//! A village in the original Fuseforks' format (the testkit fixture `original-village`, written
//! from `docs/` with every field the original writes) opens with every value as written, and a
//! write re-reads equal with no field lost.

use std::fs;
use std::path::Path;

use fuseforks_core::village::{Credential, Language, Provider, VillageStore};
use fuseforks_testkit::{TempDataDir, copy_tree, original_village, shared_reference};
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
    assert_eq!(agent.name, "gatekeeper");
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
    assert_eq!((t.id.as_str(), t.name.as_str()), ("stub", "Village stub"));
    assert_eq!(t.base_url, "http://127.0.0.1:9/v1");
    assert_eq!(t.model, "lantern-model");
    assert_eq!(t.context_length, 64_000);
    assert_eq!(t.temperature, None);
    assert_eq!(t.max_output_tokens, 4096);
    assert_eq!(t.credential, Credential::Keyring);
    assert_eq!(t.provider(), Provider::OpenAiCompat);
    assert!(t.use_tools);
    assert_eq!(t.effort, None);
    assert!(!t.google_search && !t.gemini_url_context && !t.perplexity_fetch_url);
    assert_eq!(t.request_timeout_secs, 90);
    assert_eq!(t.max_retries, 2);
    assert!(!t.is_priced() && t.pricing_as_of.is_none());
    assert!(t.extra.is_empty());

    assert!(world.topology_positions.is_empty());
    assert_eq!(world.token_budget, Some(250_000));
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
        Some("7c41d2e9-5b08-4f6a-a3d1-90e2b6f4c815")
    );
}

#[test]
fn a_write_of_the_original_village_rereads_equal_and_keeps_every_field() {
    round_trip(&TempDataDir::with_original_village(), &original_village());
}

/// With `FUSEFORKS_SHARED`, the original's own village passes the same round trip.
#[test]
fn the_shared_original_village_round_trips_when_named() {
    let Some(village) = shared_reference("fixtures/original-village") else {
        return;
    };
    let data = TempDataDir::new();
    copy_tree(&village.join("workspace"), &data.workspace());
    let loaded = VillageStore::new(data.workspace()).load_world().unwrap();
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    assert_eq!(loaded.value.agents.len(), 1);
    round_trip(&data, &village);
}

/// Loads the village copied into `data`, writes it, and compares the result with the JSON of
/// `source` (the village it was copied from): equal values, the same key order.
fn round_trip(data: &TempDataDir, source: &Path) {
    let store = VillageStore::new(data.workspace());
    let world = store.load_world().unwrap().value;
    store.save_world(&world).unwrap();

    let again = store.load_world().unwrap();
    assert_eq!(again.value, world);
    assert!(again.notices.is_empty());

    // The written JSON is the original's JSON: same fields, same values, nulls where the
    // original writes nulls.
    let original: Value =
        serde_json::from_slice(&fs::read(source.join("workspace/world.json")).unwrap()).unwrap();
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
