//! A person's edits of the cast: create, rename, connect and disconnect, settings with their
//! refusals, a judge's switch, and delete — refused while the servant runs, then its folder to
//! the trash and every reference to it gone.

use fuseforks_core::llm::Wire;
use fuseforks_core::orchestrator::ServantSettings;

use crate::orch_support::Village;

#[tokio::test]
async fn servants_are_created_connected_set_and_deleted_with_their_references() {
    let v = Village::new(Wire::OpenAiCompat, "http://127.0.0.1:9/v1", None);
    v.data.edit_world(|w| {
        w.judges
            .push(fuseforks_testkit::judge_spec("gate", "Gate", false));
    });
    let orch = v.open();
    orch.create_servant("c3", "Cy", None).unwrap();
    assert_eq!(
        orch.create_servant("c3", "Again", None).unwrap_err().code(),
        "INVALID_CAST_CHANGE"
    );
    assert_eq!(
        orch.create_servant("a b", "Bad", None).unwrap_err().code(),
        "INVALID_CAST_CHANGE"
    );
    assert!(v.data.workspace().join("agents/c3/SKILL.md").exists());
    orch.rename_servant("c3", "Cyra").unwrap();
    orch.connect_servants("c3", "a1", true).unwrap();
    orch.connect_servants("a1", "c3", true).unwrap();
    orch.connect_servants("c3", "gate", true).unwrap();
    let w = orch.world();
    let c3 = w.agents.iter().find(|a| a.id.as_str() == "c3").unwrap();
    assert_eq!(c3.name, "Cyra");
    assert_eq!(c3.connected_agents.len(), 2);
    orch.connect_servants("c3", "gate", false).unwrap();
    let settings = ServantSettings {
        work_dir: Some(Some("/tmp/cy".into())),
        enabled_tools: Some(Some(vec!["grep".into()])),
        max_tool_iterations: Some(Some(7)),
        ..ServantSettings::default()
    };
    orch.set_servant("c3", &settings).unwrap();
    let bad = ServantSettings {
        enabled_tools: Some(Some(vec!["rm-rf".into()])),
        ..ServantSettings::default()
    };
    assert_eq!(
        orch.set_servant("c3", &bad).unwrap_err().code(),
        "INVALID_CAST_CHANGE"
    );
    let relative = ServantSettings {
        work_dir: Some(Some("work".into())),
        ..ServantSettings::default()
    };
    assert_eq!(
        orch.set_servant("c3", &relative).unwrap_err().code(),
        "INVALID_CAST_CHANGE"
    );
    // Not the village's own folder, nor one inside it or above it (its file tools would reach
    // world.json and run.json); a folder that does not exist yet is judged by its words.
    let ws = v.data.workspace();
    let outside = tempfile::tempdir().unwrap();
    let link = outside.path().join("link");
    std::os::unix::fs::symlink(&ws, &link).unwrap();
    for dir in [
        "/".to_owned(),
        link.join("not-yet").display().to_string(),
        ws.display().to_string(),
        ws.join("agents/c3").display().to_string(),
        ws.join("not-yet/../agents").display().to_string(),
        ws.parent().unwrap().display().to_string(),
    ] {
        let near = ServantSettings {
            work_dir: Some(Some(dir.clone())),
            ..ServantSettings::default()
        };
        let e = orch.set_servant("c3", &near).unwrap_err();
        assert_eq!(e.code(), "INVALID_CAST_CHANGE", "{dir}: {e}");
    }

    orch.set_judge_enabled("gate", true).unwrap();
    let on_disk: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(v.data.workspace().join("world.json")).unwrap(),
    )
    .unwrap();
    let c3 = on_disk["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == "c3")
        .unwrap()
        .clone();
    assert_eq!(
        (c3["maxToolIterations"].as_u64(), c3["workDir"].as_str()),
        (Some(7), Some("/tmp/cy"))
    );
    assert_eq!(on_disk["judges"][0]["enabled"], true);

    orch.start_agent("c3").unwrap();
    assert_eq!(
        orch.delete_servant("c3").unwrap_err().code(),
        "AGENT_RUNNING"
    );
    orch.stop_agent("c3", std::time::Duration::from_secs(2))
        .await;
    let trashed = orch
        .delete_servant("c3")
        .unwrap()
        .trashed
        .expect("its folder");
    assert!(trashed.exists() && !v.data.workspace().join("agents/c3").exists());
    let w = orch.world();
    assert!(w.agents.iter().all(|a| a.id.as_str() != "c3"));
    assert!(
        w.agents
            .iter()
            .all(|a| a.connected_agents.iter().all(|c| c.as_str() != "c3")),
        "edges to it gone"
    );
    assert_eq!(
        orch.delete_servant("c3").unwrap_err().code(),
        "AGENT_NOT_FOUND"
    );
    // A folder left behind is never handed to a new servant of the same id.
    std::fs::create_dir_all(v.data.workspace().join("agents/c3")).unwrap();
    std::fs::write(
        v.data.workspace().join("agents/c3/run.json"),
        r#"{"version":1,"allow":["rm *"]}"#,
    )
    .unwrap();
    let left = orch.create_servant("c3", "New", None).unwrap_err();
    assert_eq!(left.code(), "INVALID_CAST_CHANGE", "{left}");
}

#[tokio::test]
async fn what_names_a_servant_outside_world_json_is_told_and_left_as_it_is() {
    let v = Village::new(Wire::OpenAiCompat, "http://127.0.0.1:9/v1", None);
    v.data.edit_world(|w| {
        for (id, on) in [("gate", true), ("idle", false)] {
            w.judges.push(
                serde_json::from_value(
                    serde_json::json!({"id": id, "name": id, "order": 0, "enabled": on}),
                )
                .unwrap(),
            );
        }
    });
    let ws = v.data.workspace();
    let schedules = r#"[
      {"id": "morning", "to": "c3", "message": "hi", "recurrence": {"kind": "daily", "hour": 9, "minute": 0}},
      {"id": "other", "to": "a1", "message": "hi", "recurrence": {"kind": "daily", "hour": 9, "minute": 0}},
      {"id": "evening", "to": "c3", "message": "bye", "recurrence": {"kind": "daily", "hour": 18, "minute": 0}}
    ]"#;
    std::fs::write(ws.join("schedules.json"), schedules).unwrap();
    let routes = |to: &str| {
        format!(
            "[questions.kind]\ntype = \"choice\"\nask = \"What kind?\"\n\
             options = {{ bug = \"a bug\", other = \"else\" }}\n\n[otherwise]\nto = [\"{to}\"]\n"
        )
    };
    let orch = v.open();
    orch.create_servant("c3", "Cy", None).unwrap();
    for (judge, to) in [("gate", "c3"), ("idle", "a1")] {
        std::fs::create_dir_all(ws.join("judges").join(judge)).unwrap();
        std::fs::write(ws.join("judges").join(judge).join("judge.toml"), routes(to)).unwrap();
    }
    let named = orch.servant_references("c3");
    assert_eq!(named.schedules, ["morning", "evening"]);
    assert_eq!(
        named.judges,
        ["gate"],
        "a judge is listed whether or not it is on"
    );
    assert!(orch.servant_references("nobody").is_empty());
    assert_eq!(orch.servant_references("a1").judges, ["idle"]);

    orch.delete_servant("c3").unwrap();
    assert_eq!(
        std::fs::read_to_string(ws.join("schedules.json")).unwrap(),
        schedules,
        "schedules.json is not rewritten by a delete"
    );
    // Deleted, it is still named there (the GUI says so; the schedule skips, the judge is off).
    assert_eq!(orch.servant_references("c3"), named);
}

#[tokio::test]
async fn each_cast_refusal_names_its_field_and_each_reference_is_cleared_only_for_its_servant() {
    use fuseforks_core::orchestrator::ServantReferences;
    let v = Village::new(Wire::OpenAiCompat, "http://127.0.0.1:9/v1", None);
    v.data.edit_world(|w| {
        w.roles.push(
            serde_json::from_value(serde_json::json!({"id": "r1", "name": "Writer"})).unwrap(),
        );
        w.roles.push(
            serde_json::from_value(
                serde_json::json!({"id": "r2", "name": "Editor", "defaults": {
                "construct": "You edit.", "enabledTools": ["grep"], "maxToolIterations": 4,
                "modelTemplateId": w.model_templates[0].id.as_str()}}),
            )
            .unwrap(),
        );
        w.roles.push(
            serde_json::from_value(serde_json::json!({"id": "r3", "name": "Lost", "defaults": {
                "modelTemplateId": "gone"}}))
            .unwrap(),
        );
        w.groups
            .push(serde_json::from_value(serde_json::json!({"id": "g1", "name": "Team"})).unwrap());
        w.judges
            .push(fuseforks_testkit::judge_spec("gate", "Gate", false));
    });
    let orch = v.open();
    let code = |r: Result<(), fuseforks_core::CoreError>| r.unwrap_err().code();
    // Names: trimmed, 1 to 60 characters, no control characters.
    assert_eq!(
        code(orch.create_servant("n0", "  ", None)),
        "INVALID_CAST_CHANGE"
    );
    assert_eq!(
        code(orch.create_servant("n1", &"x".repeat(61), None)),
        "INVALID_CAST_CHANGE"
    );
    assert_eq!(
        code(orch.create_servant("n2", "a\u{7}b", None)),
        "INVALID_CAST_CHANGE"
    );
    orch.create_servant("n3", &"y".repeat(60), None).unwrap();
    // An id a judge holds is taken; a role must exist.
    assert_eq!(
        code(orch.create_servant("gate", "G", None)),
        "INVALID_CAST_CHANGE"
    );
    assert_eq!(
        code(orch.create_servant("n4", "N", Some("nope"))),
        "INVALID_CAST_CHANGE"
    );
    orch.create_servant("n5", "N", Some("r1")).unwrap();
    // A role's defaults are copied into the new servant; a role naming a missing template is
    // refused before anything is written.
    orch.create_servant("n6", "Ed", Some("r2")).unwrap();
    let n6 = orch
        .world()
        .agents
        .into_iter()
        .find(|a| a.id.as_str() == "n6")
        .unwrap();
    assert_eq!(
        (n6.enabled_tools.clone(), n6.max_tool_iterations),
        (Some(vec!["grep".to_owned()]), Some(4))
    );
    let ws = v.data.workspace();
    assert_eq!(
        std::fs::read_to_string(ws.join("agents/n6/Construct.md")).unwrap(),
        "You edit."
    );
    assert_eq!(
        code(orch.create_servant("n7", "L", Some("r3"))),
        "INVALID_CAST_CHANGE"
    );
    assert!(!ws.join("agents/n7").exists());
    let w = orch.world();
    let order = |id: &str| w.agents.iter().find(|a| a.id.as_str() == id).unwrap().order;
    assert!(
        order("n5") > order("n3") && order("n3") > order("a1"),
        "each new one last"
    );
    assert_eq!(
        w.agents
            .iter()
            .find(|a| a.id.as_str() == "n5")
            .unwrap()
            .role_id
            .as_deref(),
        Some("r1")
    );
    // An edge goes to the servant named, not to another.
    orch.connect_servants("n3", "n5", true).unwrap();
    let edges: Vec<String> = orch
        .world()
        .agents
        .iter()
        .find(|a| a.id.as_str() == "n3")
        .unwrap()
        .connected_agents
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(edges, ["n5"]);
    // A group must exist.
    let group = |g: &str| ServantSettings {
        group_id: Some(Some(g.into())),
        ..ServantSettings::default()
    };
    assert_eq!(
        code(orch.set_servant("n3", &group("nope"))),
        "INVALID_CAST_CHANGE"
    );
    orch.set_servant("n3", &group("g1")).unwrap();
    // From JSON (the GUI's form): a field left out stays, a `null` clears it.
    let json = |v: serde_json::Value| serde_json::from_value::<ServantSettings>(v).unwrap();
    orch.set_servant("n3", &json(serde_json::json!({"maxToolIterations": 9})))
        .unwrap();
    let n3 = |w: &fuseforks_core::village::World| {
        let a = w.agents.iter().find(|a| a.id.as_str() == "n3").unwrap();
        (a.group_id.clone(), a.max_tool_iterations)
    };
    assert_eq!(n3(&orch.world()), (Some("g1".into()), Some(9)));
    orch.set_servant("n3", &json(serde_json::json!({"groupId": null})))
        .unwrap();
    assert_eq!(n3(&orch.world()), (None, Some(9)));
    // The reception and the default verifier are cleared only when they name the deleted one.
    orch.update_world(|w| {
        w.reception = Some(fuseforks_core::village::AgentId::new("n3").unwrap());
        w.default_verifier = Some(fuseforks_core::village::AgentId::new("n3").unwrap());
        Ok(())
    })
    .unwrap();
    assert!(!orch.delete_servant("n5").unwrap().was_reception);
    let w = orch.world();
    assert_eq!(w.reception.as_ref().map(|r| r.as_str()), Some("n3"));
    assert_eq!(w.default_verifier.as_ref().map(|r| r.as_str()), Some("n3"));
    assert!(orch.delete_servant("n3").unwrap().was_reception);
    let w = orch.world();
    assert!(w.reception.is_none() && w.default_verifier.is_none());
    // A record of references is empty only when both lists are.
    let only = |schedules: usize, judges: usize| ServantReferences {
        schedules: vec!["s".into(); schedules],
        judges: vec!["j".into(); judges],
    };
    assert!(only(0, 0).is_empty());
    assert!(!only(1, 0).is_empty() && !only(0, 1).is_empty());
}
