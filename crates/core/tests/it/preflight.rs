//! The headless preflight as a pure function: every code fires on the village that earns it,
//! at its level, heaviest first then in table order; a clean village has no findings.

use std::collections::BTreeSet;

use fuseforks_core::preflight::{HeadlessMode, HostView, Level, headless_preflight, probe_key};
use fuseforks_core::tools::RunApproval;
use fuseforks_core::village::mcp_config::McpConfig;
use fuseforks_core::village::schedule::{ScheduleProbe, ScheduledTask};
use fuseforks_core::village::{Language, World};
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
        jev_pruning_enabled: false,
        bypass_plan_review: false,
        run_approval: RunApproval::Required,
        door_port: Some(40000),
        time_zone: Some("UTC".into()),
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
