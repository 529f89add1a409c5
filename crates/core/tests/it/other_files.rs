//! Every other file of the village and the shelf: defaults when absent, values as written,
//! unknown fields kept through a write, and the read rules.

use std::fs;

use fuseforks_core::village::{AgentId, NoticeCode, ShelfStore, VillageStore};
use fuseforks_core::village::{BakeRecord, DEFAULT_DOOR_PORT, DEFAULT_PRICING_URL};
use fuseforks_core::village::{McpConfig, McpServerEntry};
use fuseforks_core::village::{Recurrence, SessionMode, Weekday};
use fuseforks_testkit::TempDataDir;
use serde_json::{Value, json};

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

#[test]
fn absent_files_read_as_their_defaults() {
    let data = TempDataDir::new();
    let village = VillageStore::new(data.workspace());
    let shelf = ShelfStore::new(data.data_dir());
    assert!(village.load_schedules().unwrap().value.0.is_empty());
    assert!(
        village
            .load_shared_mcp()
            .unwrap()
            .value
            .mcp_servers
            .is_empty()
    );
    assert_eq!(village.read_ordinance().unwrap(), "");
    assert_eq!(village.read_village_id().unwrap(), None);
    let agent = village.agent_files(&AgentId::new("a1").unwrap()).unwrap();
    assert_eq!(agent.read_construct().unwrap(), "");
    assert_eq!(agent.read_icon().unwrap(), None);
    let policy = agent.load_run_policy().unwrap().value;
    assert!(
        policy.allow.is_empty() && policy.deny.is_empty(),
        "fail-closed default"
    );
    assert_eq!((policy.version, policy.timeout_secs), (1, 60));
    let door = shelf.load_door().unwrap().value;
    assert_eq!(
        (door.enabled, door.port, door.token.is_none()),
        (false, DEFAULT_DOOR_PORT, true)
    );
    assert_eq!(
        shelf.load_pricing_source().unwrap().value.url,
        DEFAULT_PRICING_URL
    );
    assert_eq!(shelf.load_jev().unwrap().value.threshold, 0.2);
    assert!(
        shelf
            .load_probe_approvals()
            .unwrap()
            .value
            .hashes
            .is_empty()
    );
    assert!(shelf.load_bake_record().unwrap().is_none());
    // Reading created nothing.
    assert!(!data.workspace().exists());
}

#[test]
fn schedules_round_trip_with_every_field() {
    let data = TempDataDir::new();
    let text = json!([
        {"id": "s1", "to": "a1", "message": "daily report", "recurrence": {"kind": "daily", "hour": 9, "minute": 30, "futureRec": 1},
         "createdAtMs": 1700000000000i64, "lastConsumedDueMs": 1700000600000i64, "enabled": false,
         "probe": {"command": "test", "args": ["-f", "x"], "expect": "ok", "timeoutSecs": 30, "cwd": "/srv", "futureProbe": true},
         "sessionMode": "fresh", "summarizeAfter": true,
         "acceptance": {"command": "check", "args": [], "expect": "pass", "timeoutSecs": 60, "maxAttempts": 3, "futureAcc": "y"},
         "autoApprovePlans": true, "futureTask": {"a": 1}},
        {"id": "s2", "to": "a2", "message": "tick", "recurrence": {"kind": "interval", "everyMinutes": 15}, "createdAtMs": 5, "enabled": true},
        {"id": "s3", "to": "a2", "message": "weekly", "recurrence": {"kind": "weekly", "weekday": "sun", "hour": 23, "minute": 59}, "createdAtMs": 6, "enabled": true}
    ]);
    data.write("schedules.json", serde_json::to_vec_pretty(&text).unwrap());
    let store = VillageStore::new(data.workspace());
    let loaded = store.load_schedules().unwrap();
    assert!(loaded.notices.is_empty());
    let tasks = &loaded.value.0;
    assert!(matches!(&tasks[0].recurrence, Recurrence::Daily(t) if t.hour == 9 && t.minute == 30));
    assert!(matches!(&tasks[2].recurrence, Recurrence::Weekly(t) if t.weekday == Weekday::Sun));
    assert_eq!(tasks[0].session_mode, SessionMode::Fresh);
    assert_eq!(tasks[0].acceptance.as_ref().unwrap().max_attempts, 3);
    assert_eq!(
        tasks[0].acceptance.as_ref().unwrap().probe.extra["futureAcc"],
        "y"
    );
    assert_eq!(tasks[1].session_mode, SessionMode::Continue);
    store.save_schedules(&loaded.value).unwrap();
    assert_eq!(read_json(&store.path("schedules.json")), text);
}

#[test]
fn probe_and_acceptance_values_are_clamped_with_notices() {
    let data = TempDataDir::new();
    data.write("schedules.json", serde_json::to_vec(&json!([
        {"id": "s1", "to": "a1", "message": "m", "recurrence": {"kind": "interval", "everyMinutes": 1}, "createdAtMs": 0,
         "probe": {"command": "c", "expect": "e", "timeoutSecs": 0},
         "acceptance": {"command": "c", "expect": "e", "timeoutSecs": 9999, "maxAttempts": 9}}
    ])).unwrap());
    let loaded = VillageStore::new(data.workspace())
        .load_schedules()
        .unwrap();
    let task = &loaded.value.0[0];
    assert_eq!(task.probe.as_ref().unwrap().timeout_secs, 1);
    assert_eq!(task.acceptance.as_ref().unwrap().probe.timeout_secs, 3600);
    assert_eq!(task.acceptance.as_ref().unwrap().max_attempts, 5);
    assert_eq!(loaded.notices.len(), 3);
    assert!(
        loaded
            .notices
            .iter()
            .all(|n| n.code == NoticeCode::ValueClamped)
    );
}

#[test]
fn run_policy_round_trips_and_keeps_the_newest_twenty_pending() {
    let data = TempDataDir::new();
    let pending: Vec<Value> = (0..25)
        .map(|i| json!({"command": "tool", "args": [format!("{i}")], "firstRequestedAtMs": 1000 + i, "count": 1}))
        .collect();
    let path = data.write("agents/a1/run.json", serde_json::to_vec(&json!({
        "version": 1, "allow": ["git status", "cargo *"], "deny": ["rm *"], "pending": pending, "timeoutSecs": 99999, "futureRun": [1]
    })).unwrap());
    let agent = VillageStore::new(data.workspace())
        .agent_files(&AgentId::new("a1").unwrap())
        .unwrap();
    let loaded = agent.load_run_policy().unwrap();
    let policy = &loaded.value;
    assert_eq!(policy.timeout_secs, 3600);
    assert_eq!(policy.pending.len(), 20);
    assert_eq!(
        policy.pending[0].args,
        ["5"],
        "the five oldest were evicted"
    );
    let codes: Vec<_> = loaded.notices.iter().map(|n| n.code).collect();
    assert_eq!(codes, [NoticeCode::ValueClamped, NoticeCode::ListTrimmed]);
    agent.save_run_policy(policy).unwrap();
    let written = read_json(&path);
    assert_eq!(written["futureRun"], json!([1]));
    assert_eq!(written["allow"], json!(["git status", "cargo *"]));
}

#[test]
fn mcp_json_round_trips_in_the_claude_desktop_format() {
    let data = TempDataDir::new();
    let text = json!({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"A": "1"}},
        "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${secret:REMOTE}"}, "enabled": false}
    }});
    let path = data.write("mcp.json", serde_json::to_vec(&text).unwrap());
    let store = VillageStore::new(data.workspace());
    let config = store.load_shared_mcp().unwrap().value;
    assert!(
        matches!(&config.mcp_servers["files"], McpServerEntry::Stdio(s) if s.command == "npx" && s.enabled)
    );
    assert!(matches!(&config.mcp_servers["remote"], McpServerEntry::Http(h) if !h.enabled));
    store.save_shared_mcp(&config).unwrap();
    let written = read_json(&path);
    assert_eq!(
        written["mcpServers"]["remote"],
        text["mcpServers"]["remote"]
    );
    assert_eq!(written["mcpServers"]["files"]["enabled"], true);
    assert!(written["mcpServers"]["files"].get("type").is_none());
    let again: McpConfig = serde_json::from_value(written).unwrap();
    assert_eq!(again, config);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}

#[test]
fn shelf_files_round_trip_and_keep_unknown_fields() {
    let data = TempDataDir::new();
    let shelf = ShelfStore::new(data.data_dir());
    let files = [
        (
            "mcp_server.json",
            json!({"enabled": true, "port": 40000, "token": "door-token-value-7f3a", "futureDoor": 1}),
        ),
        (
            "probe_approvals.json",
            json!({"hashes": ["a".repeat(64)], "futureApprovals": 2}),
        ),
        (
            "pricing.json",
            json!({"url": "https://prices.example/p.json", "futurePricing": 3}),
        ),
        (
            "jev.json",
            json!({"enabled": true, "accountId": "acc", "threshold": 0.5, "futureJev": 4}),
        ),
        (
            "bake.json",
            json!({"bakedAtMs": 1, "appVersion": "0.1.0", "sourceVillageId": "v", "sourceTimeZone": "Asia/Tokyo",
                             "maps": [{"from": "C:\\work", "to": "/work", "futureMap": 5}], "futureBake": 6}),
        ),
    ];
    for (name, value) in &files {
        fs::write(shelf.path(name), serde_json::to_vec(value).unwrap()).unwrap();
    }
    let door = shelf.load_door().unwrap().value;
    assert!(
        !format!("{door:?}").contains("door-token-value-7f3a"),
        "Debug hides the token"
    );
    shelf.save_door(&door).unwrap();
    shelf
        .save_probe_approvals(&shelf.load_probe_approvals().unwrap().value)
        .unwrap();
    shelf
        .save_pricing_source(&shelf.load_pricing_source().unwrap().value)
        .unwrap();
    shelf.save_jev(&shelf.load_jev().unwrap().value).unwrap();
    let bake: BakeRecord = shelf.load_bake_record().unwrap().unwrap().value;
    assert_eq!(bake.maps[0].to, "/work");
    shelf.save_bake_record(&bake).unwrap();
    for (name, value) in &files {
        assert_eq!(&read_json(&shelf.path(name)), value, "{name}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(shelf.path("mcp_server.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the door token file is owner-only");
    }
}

#[test]
fn jev_threshold_outside_the_allowed_set_reads_as_the_default() {
    let data = TempDataDir::new();
    let shelf = ShelfStore::new(data.data_dir());
    fs::write(
        shelf.path("jev.json"),
        br#"{"enabled":true,"threshold":0.25}"#,
    )
    .unwrap();
    let loaded = shelf.load_jev().unwrap();
    assert_eq!(loaded.value.threshold, 0.2);
    assert_eq!(loaded.notices[0].code, NoticeCode::ValueDefaulted);
}

#[test]
fn text_files_icons_judges_and_the_village_id() {
    let data = TempDataDir::new();
    let store = VillageStore::new(data.workspace());
    let id = store.village_id().unwrap();
    assert_eq!(store.village_id().unwrap(), id, "created once, then read");
    assert_eq!(
        store.read_village_id().unwrap().as_deref(),
        Some(id.as_str())
    );

    store.write_ordinance("# 条例\n").unwrap();
    assert_eq!(store.read_ordinance().unwrap(), "# 条例\n");
    let agent = store.agent_files(&AgentId::new("a1").unwrap()).unwrap();
    agent.write_construct("c").unwrap();
    agent.write_skill("s").unwrap();
    agent.write_memory("m").unwrap();
    agent.write_icon(b"RIFF\0\0\0\0WEBP").unwrap();
    assert_eq!(
        (
            agent.read_construct().unwrap(),
            agent.read_skill().unwrap(),
            agent.read_memory().unwrap()
        ),
        ("c".into(), "s".into(), "m".into())
    );
    assert_eq!(agent.read_icon().unwrap().unwrap(), b"RIFF\0\0\0\0WEBP");
    assert_eq!(agent.dir(), data.workspace().join("agents/a1"));

    let judge = store.judge_file(&AgentId::new("gate").unwrap()).unwrap();
    assert_eq!(judge.read_text().unwrap(), None);
    judge.write_text("[otherwise]\ndo = \"return\"\n").unwrap();
    assert_eq!(
        judge.path(),
        data.workspace().join("judges/gate/judge.toml")
    );
    assert!(judge.read_text().unwrap().unwrap().contains("otherwise"));

    // A BOM written by a Windows editor is accepted.
    data.write("Ordinance.md", b"\xEF\xBB\xBFhello");
    assert_eq!(store.read_ordinance().unwrap(), "hello");
    // A text file that is not UTF-8 is named, and never written over.
    let path = data.write("agents/a1/SKILL.md", b"ok\n\xff");
    let err = agent.read_skill().unwrap_err();
    assert_eq!(
        (err.code(), err.file()),
        ("VILLAGE_FILE_INVALID", path.as_path())
    );
    assert_eq!(
        agent.write_skill("new").unwrap_err().code(),
        "VILLAGE_WRITE_REFUSED"
    );
    assert_eq!(fs::read(&path).unwrap(), b"ok\n\xff");
}

#[test]
fn ids_that_would_escape_the_village_are_refused() {
    let data = TempDataDir::new();
    let store = VillageStore::new(data.workspace());
    for bad in ["..", "a/b", "", "a\\b"] {
        assert!(AgentId::new(bad).is_err(), "{bad:?}");
    }
    // Ids read from a file are unchecked values until the store checks them.
    let sneaky: AgentId = serde_json::from_str("\"../../etc\"").unwrap();
    assert_eq!(store.agent_files(&sneaky).unwrap_err().code(), "INVALID_ID");
    assert_eq!(store.judge_file(&sneaky).unwrap_err().code(), "INVALID_ID");
}
