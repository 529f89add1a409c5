//! The headless preflight as a pure function: every code fires on the village that earns it,
//! at its level, heaviest first then in table order; a clean village has no findings.

use std::collections::BTreeSet;

use fuseforks_core::preflight::{HeadlessMode, HostView, Level, headless_preflight, probe_key};
use fuseforks_core::schedule::resolve_process_zone;
use fuseforks_core::tools::RunApproval;
use fuseforks_core::village::McpConfig;
use fuseforks_core::village::{Language, World};
use fuseforks_core::village::{ScheduleProbe, ScheduledTask};
use fuseforks_testkit::maximal::maximal_world;
use serde_json::json;

fn run(
    world: &World,
    schedules: &[ScheduledTask],
    mode: HeadlessMode,
    start: &[&str],
    present: &[&str],
    extra: impl FnOnce(&mut HostView<'_>),
) -> Vec<(Level, &'static str)> {
    let start: BTreeSet<String> = start.iter().map(|s| (*s).to_owned()).collect();
    let present: Vec<String> = present.iter().map(|s| (*s).to_owned()).collect();
    let secret_present = |k: &str| present.iter().any(|p| p == k);
    let mcp: Vec<(String, McpConfig)> = vec![(
        String::new(),
        serde_json::from_value(json!({"mcpServers": {
            "local": {"command": "definitely-not-a-command-xyz"},
            "remote": {"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${secret:REMOTE}"}}
        }})).unwrap(),
    )];
    let run_allow = vec![(
        "coordinator".to_owned(),
        vec!["no-such-tool-abc *".to_owned()],
    )];
    let mut view = HostView {
        mode,
        start: &start,
        secret_present: &secret_present,
        probe_approved: &|_: &ScheduleProbe| false,
        command_found: &|c: &str| c == "sh",
        dir_exists: &|_: &str| false,
        dir_holds_village: &|_: &str| false,
        mcp: &mcp,
        run_allow: &run_allow,
        run_network_denied: &[],
        judge_invalid: &[],
        bypass_plan_review: false,
        run_approval: RunApproval::Required,
        door_port: Some(40000),
        time_zone: resolve_process_zone(Some("UTC")),
        baked_time_zone: Some("Asia/Tokyo".into()),
        language: Language::En,
    };
    extra(&mut view);
    headless_preflight(world, schedules, &view)
        .into_iter()
        .map(|f| (f.level, f.code))
        .collect()
}

#[test]
fn every_code_fires_heaviest_first_in_table_order() {
    let world: World = serde_json::from_value(maximal_world()).unwrap();
    let schedules: Vec<ScheduledTask> = serde_json::from_value(json!([
        {"id": "s1", "to": "writer", "message": "m", "recurrence": {"kind": "daily", "hour": 9, "minute": 0}, "createdAtMs": 0,
         "probe": {"command": "sh", "args": ["-c", "echo ok"], "expect": "ok"}}
    ])).unwrap();
    let serve = run(
        &world,
        &schedules,
        HeadlessMode::Serve,
        &["coordinator"],
        &[],
        |_| {},
    );
    assert_eq!(
        serve,
        [
            (Level::Reject, "PLAN_REVIEW_WAITS"),
            (Level::Reject, "SECRET_MISSING"),
            (Level::Reject, "SECRET_MISSING"),
            (Level::Reject, "DOOR_TOKEN_MISSING"),
            (Level::Reject, "WORK_DIR_MISSING"),
            (Level::Warn, "SCHEDULE_TARGET_OUTSIDE"),
            (Level::Warn, "RUN_APPROVAL_REQUIRED"),
            (Level::Warn, "PROBE_UNAPPROVED"),
            (Level::Warn, "JEV_TOKEN_MISSING"),
            (Level::Warn, "RAG_SOURCE_MISSING"),
            (Level::Warn, "RAG_SOURCE_MISSING"),
            (Level::Warn, "MCP_COMMAND_NOT_FOUND"),
            (Level::Warn, "RUN_COMMAND_NOT_FOUND"),
            (Level::Warn, "TIMEZONE_MISMATCH"),
        ]
    );
    let ask = run(
        &world,
        &schedules,
        HeadlessMode::Ask,
        &["coordinator"],
        &["claude", "mcp:REMOTE", "jev_api_token"],
        |v| {
            v.bypass_plan_review = true;
            v.dir_exists = &|_: &str| true;
            v.command_found = &|_: &str| true;
            v.run_approval = RunApproval::NoApproval;
        },
    );
    assert_eq!(
        ask,
        [(Level::Info, "RECEPTION_TARGETS_OUTSIDE")],
        "writer is outside; the judge gate is not counted"
    );

    let mut no_reception = world.clone();
    no_reception.reception = None;
    let found = run(
        &no_reception,
        &[],
        HeadlessMode::Ask,
        &["writer"],
        &["gpt"],
        |v| v.dir_exists = &|_: &str| true,
    );
    assert!(
        found.contains(&(Level::Reject, "RECEPTION_UNSET")),
        "{found:?}"
    );
    no_reception.reception = Some(fuseforks_core::village::AgentId::new("ghost").unwrap());
    let found = run(
        &no_reception,
        &[],
        HeadlessMode::Ask,
        &["writer"],
        &["gpt"],
        |v| v.dir_exists = &|_: &str| true,
    );
    assert!(
        found.contains(&(Level::Reject, "RECEPTION_MISSING")),
        "{found:?}"
    );
}

#[test]
fn probe_keys_are_stable_sha256() {
    let probe: ScheduleProbe =
        serde_json::from_value(json!({"command": "test", "args": ["-f", "x"], "expect": "ok"}))
            .unwrap();
    let key = probe_key(&probe, "village-1");
    assert_eq!(key.len(), 64);
    assert_eq!(key, probe_key(&probe, "village-1"));
    assert_ne!(
        key,
        probe_key(&probe, "village-2"),
        "approvals are bound to the village"
    );
}

#[test]
fn endpoints_must_be_absolute_http_s_and_plain_http_only_to_loopback() {
    let base: World = serde_json::from_value(maximal_world()).unwrap();
    let found = |url: &str, allow: bool| {
        let mut world = base.clone();
        for t in &mut world.model_templates {
            t.base_url = url.into();
            t.allow_insecure_http = allow;
        }
        run(
            &world,
            &[],
            HeadlessMode::Ask,
            &["coordinator"],
            &["claude", "mcp:REMOTE", "jev_api_token"],
            |v| {
                v.bypass_plan_review = true;
                v.dir_exists = &|_: &str| true;
                v.command_found = &|_: &str| true;
                v.run_approval = RunApproval::NoApproval;
            },
        )
        .into_iter()
        .filter(|(_, code)| code.starts_with("ENDPOINT"))
        .collect::<Vec<_>>()
    };
    assert_eq!(found("https://api.example.com/v1", false), []);
    assert_eq!(found("http://127.0.0.1:11434/v1", false), []);
    assert_eq!(found("http://localhost:11434/v1", false), []);
    assert_eq!(found("http://[::1]:8080/v1", false), []);
    for bad in ["not a url", "file:///etc/passwd", "ftp://example.com/v1"] {
        assert_eq!(
            found(bad, false),
            [(Level::Reject, "ENDPOINT_INVALID")],
            "{bad}"
        );
        assert_eq!(
            found(bad, true),
            [(Level::Reject, "ENDPOINT_INVALID")],
            "{bad}: the flag allows plain http, not anything"
        );
    }
    assert_eq!(
        found("http://192.168.1.20:11434/v1", false),
        [(Level::Reject, "ENDPOINT_INSECURE")]
    );
    assert_eq!(
        found("http://192.168.1.20:11434/v1", true),
        [(Level::Warn, "ENDPOINT_INSECURE_ALLOWED")]
    );
}

/// Three agents on one template: `a` and `b` share a work folder, a source folder and an
/// allow line, and have `run`; `c` has the same allow line but no `run`.
fn grouped_world(template: &str) -> World {
    use fuseforks_core::village::{AgentId, AgentSpec, ModelTemplate, TemplateId};
    let agent = |id: &str, run: bool| {
        let mut a = AgentSpec::new(
            AgentId::new(id).unwrap(),
            format!("Agent {id}"),
            TemplateId::new(template).unwrap(),
        );
        a.work_dir = Some("/nowhere/work".into());
        a.rag_sources = vec!["/nowhere/docs".into()];
        if run {
            a.enabled_tools = Some(vec!["run".into(), "file".into()]);
        }
        a
    };
    World {
        agents: vec![agent("a", true), agent("b", true), agent("c", false)],
        model_templates: vec![ModelTemplate::new(
            TemplateId::new("t").unwrap(),
            "t",
            "https://api.example.com/v1",
            "m",
        )],
        ..World::default()
    }
}

fn findings(
    world: &World,
    run_allow: &[(String, Vec<String>)],
    work_exists: bool,
) -> Vec<(Level, &'static str, String)> {
    let start: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| (*s).to_owned()).collect();
    let mcp: Vec<(String, McpConfig)> = vec![
        (
            String::new(),
            serde_json::from_value(json!({"mcpServers": {"one": {"command": "ghost-mcp"}}}))
                .unwrap(),
        ),
        (
            "b".to_owned(),
            serde_json::from_value(json!({"mcpServers": {
                "two": {"command": "ghost-mcp"},
                "off": {"command": "other-ghost", "enabled": false}
            }}))
            .unwrap(),
        ),
    ];
    let dir_exists = move |d: &str| work_exists && !d.contains("nowhere");
    let view = HostView {
        mode: HeadlessMode::Serve,
        start: &start,
        secret_present: &|_: &str| true,
        probe_approved: &|_: &ScheduleProbe| true,
        command_found: &|c: &str| c.contains('/') && std::path::Path::new(c).is_file(),
        dir_exists: &dir_exists,
        dir_holds_village: &|_: &str| false,
        mcp: &mcp,
        run_allow,
        run_network_denied: &[],
        judge_invalid: &[],
        bypass_plan_review: true,
        run_approval: RunApproval::Required,
        door_port: None,
        time_zone: resolve_process_zone(Some("UTC")),
        baked_time_zone: None,
        language: Language::En,
    };
    headless_preflight(world, &[], &view)
        .into_iter()
        .filter(|f| !f.code.starts_with("RUN_UNCONFINED") && f.code != "RUN_NETWORK_UNCONFINED")
        .map(|f| (f.level, f.code, f.message))
        .collect()
}

#[test]
fn findings_are_one_per_path_or_command_with_the_agents_listed() {
    let allow = |line: &str| -> Vec<(String, Vec<String>)> {
        ["a", "b", "c"]
            .iter()
            .map(|id| ((*id).to_owned(), vec![line.to_owned()]))
            .collect()
    };
    let found = findings(&grouped_world("gone"), &allow("ghost-cmd --x"), false);
    let codes: Vec<&str> = found.iter().map(|(_, c, _)| *c).collect();
    assert_eq!(
        codes,
        [
            "MODEL_TEMPLATE_MISSING",
            "WORK_DIR_MISSING",
            "RUN_APPROVAL_REQUIRED",
            "RAG_SOURCE_MISSING",
            "MCP_COMMAND_NOT_FOUND",
            "RUN_COMMAND_NOT_FOUND",
        ],
        "{found:#?}"
    );
    let message = |code: &str| {
        found
            .iter()
            .find(|(_, c, _)| *c == code)
            .map(|(_, _, m)| m.clone())
            .unwrap()
    };
    assert_eq!(
        message("MODEL_TEMPLATE_MISSING"),
        "Template gone does not exist (used by a, b, c)."
    );
    assert_eq!(
        message("WORK_DIR_MISSING"),
        "The work folder /nowhere/work does not exist (agents: a, b, c)."
    );
    assert!(message("RUN_APPROVAL_REQUIRED").starts_with("Unknown commands of a, b will"));
    assert!(message("RAG_SOURCE_MISSING").contains("(agents: a, b, c)"));
    assert_eq!(
        message("MCP_COMMAND_NOT_FOUND"),
        "The command ghost-mcp of MCP servers one (mcp.json), two (agents/b/mcp.json) is not found."
    );
    assert_eq!(
        message("RUN_COMMAND_NOT_FOUND"),
        "The command ghost-cmd allowed in run.json is not found (agents: a, b).",
        "c has no run tool"
    );
}

#[test]
fn a_relative_run_command_counts_from_the_work_folder() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("fail.sh"), "#!/bin/sh\nexit 1\n").unwrap();
    let mut world = grouped_world("t");
    for a in &mut world.agents {
        a.work_dir = Some(work.path().display().to_string());
        a.rag_sources.clear();
    }
    let allow: Vec<(String, Vec<String>)> = vec![
        (
            "a".to_owned(),
            vec!["./fail.sh".to_owned(), "./missing.sh *".to_owned()],
        ),
        ("c".to_owned(), vec!["./missing.sh".to_owned()]),
    ];
    let found = findings(&world, &allow, true);
    let run: Vec<&String> = found
        .iter()
        .filter(|(_, c, _)| *c == "RUN_COMMAND_NOT_FOUND")
        .map(|(_, _, m)| m)
        .collect();
    assert_eq!(
        run,
        ["The command ./missing.sh allowed in run.json is not found (agents: a)."],
        "./fail.sh exists in the work folder; c has no run tool"
    );
}
