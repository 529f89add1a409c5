//! The pages of `docs/formats/` against the product's own parsers: every page the index lists
//! exists and holds an example block (a fenced block whose info string is `json example`,
//! `toml example` or `text example`); each example is loaded through the same function the
//! product loads that file with, and a few of its values are checked; every field the model
//! writes is named on its page. A page and its parser cannot drift apart unnoticed.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use fuseforks_core::judge::{JudgeLog, RuleRef, answers_from_args, answers_text, evaluate};
use fuseforks_core::llm::Wire;
use fuseforks_core::log::{LogSink, VillageLog};
use fuseforks_core::preflight::{env_var_name, probe_key};
use fuseforks_core::probe::{ApprovalState, approval_state};
use fuseforks_core::safety::{
    ApprovedBy, AuditEntry, AuditEvent, AuditKey, VerifyOptions, verify_keyed,
};
use fuseforks_core::sessions::Endpoint;
use fuseforks_core::tools::{Decision, decide};
use fuseforks_core::village::{
    AgentId, AgentSpec, JudgeSpec, LanguageTag, McpServerEntry, ModelTemplate, Recurrence,
    SessionMode, ShelfStore, TemplateId, VillageStore, Weekday, World, agent_files,
    workspace_files,
};
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use serde_json::{Value, json};

use crate::orch_support::Village;
use crate::orchestrator::{U1, call};

/// The folder of the pages.
fn formats_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/formats")
}

/// The text of one page.
fn page(name: &str) -> String {
    let path = formats_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The bodies of the fenced blocks of `text` whose info string is exactly `info`.
fn blocks(text: &str, info: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None => {
                if line.trim_start().strip_prefix("```").map(str::trim) == Some(info) {
                    current = Some(String::new());
                }
            }
            Some(body) => {
                if line.trim_start().starts_with("```") {
                    out.push(std::mem::take(body));
                    current = None;
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    assert!(current.is_none(), "an `{info}` block is not closed");
    out
}

/// The one example block of a page.
fn example(name: &str, info: &str) -> String {
    let mut found = blocks(&page(name), info);
    assert_eq!(found.len(), 1, "{name}: exactly one `{info}` block");
    found.remove(0)
}

/// The pages the index links to (`[x](x.md)` inside the index's table).
fn listed_pages() -> Vec<String> {
    let index = page("README.md");
    let mut out = Vec::new();
    for line in index.lines().filter(|l| l.starts_with("| [")) {
        let start = line.find("](").map(|i| i + 2);
        let end = line.find(".md)").map(|i| i + 3);
        if let (Some(s), Some(e)) = (start, end) {
            out.push(line[s..e].to_owned());
        }
    }
    out
}

/// Every object key in `value`, except the keys of maps whose keys are data (names, ids,
/// headers) and the fields named in `unknown` (the examples' stand-ins for unknown fields).
fn keys(value: &Value, unknown: &[&str], out: &mut BTreeSet<String>) {
    const DATA_MAPS: [&str; 3] = ["topologyPositions", "mcpServers", "options"];
    const OPAQUE_MAPS: [&str; 2] = ["env", "headers"];
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if unknown.contains(&k.as_str()) {
                    continue;
                }
                out.insert(k.clone());
                if OPAQUE_MAPS.contains(&k.as_str()) {
                    continue;
                }
                match v {
                    Value::Object(inner) if DATA_MAPS.contains(&k.as_str()) => {
                        inner.values().for_each(|x| keys(x, unknown, out));
                    }
                    _ => keys(v, unknown, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|x| keys(x, unknown, out)),
        _ => {}
    }
}

/// Every key of `value` is named on the page as `` `key` ``.
fn assert_documented(name: &str, value: &Value, unknown: &[&str]) {
    let text = page(name);
    let mut found = BTreeSet::new();
    keys(value, unknown, &mut found);
    let missing: Vec<&String> = found
        .iter()
        .filter(|k| !text.contains(&format!("`{k}`")))
        .collect();
    assert!(missing.is_empty(), "{name} does not name {missing:?}");
}

/// A village holding the `world.json` example.
fn village_of_the_example() -> (TempDataDir, VillageStore) {
    let data = TempDataDir::new();
    data.write(
        workspace_files::WORLD,
        example("world.json.md", "json example"),
    );
    let store = VillageStore::new(data.workspace());
    (data, store)
}

#[test]
fn every_listed_page_exists_and_shows_an_example() {
    let listed = listed_pages();
    for name in [
        "world.json.md",
        "schedules.json.md",
        "judge.toml.md",
        "run.json.md",
        "mcp.json.md",
        "probe_approvals.json.md",
        "log-lines.md",
        "audit.jsonl.md",
        "skill-front-matter.md",
        "prices.json.md",
    ] {
        assert!(listed.iter().any(|p| p == name), "the index lists {name}");
    }
    for name in &listed {
        let text = page(name);
        let count: usize = ["json example", "toml example", "text example"]
            .iter()
            .map(|info| blocks(&text, info).len())
            .sum();
        assert!(count >= 1, "{name} has no example block");
    }
    let on_disk: BTreeSet<String> = std::fs::read_dir(formats_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "README.md")
        .collect();
    let listed: BTreeSet<String> = listed.into_iter().collect();
    assert_eq!(
        on_disk, listed,
        "every page is in the index, and only pages"
    );
}

#[test]
fn the_world_example_loads_cleanly_and_every_field_is_named() {
    let (_data, store) = village_of_the_example();
    let loaded = store.load_world().unwrap();
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let world = loaded.value;
    let ids: Vec<&str> = world.agents.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["reception", "scribe", "finder"]);
    let scribe = world.agent(&AgentId::new("scribe").unwrap()).unwrap();
    assert_eq!(
        scribe.enabled_tools.as_deref(),
        Some(&["file".to_owned(), "grep".to_owned(), "run".to_owned()][..])
    );
    assert_eq!(scribe.max_tool_iterations(), 20);
    assert_eq!(world.token_budget, Some(1_000_000));
    assert_eq!(world.ask_timeout_secs(), 900);
    assert_eq!(world.judges[0].id.as_str(), "triage");
    assert_eq!(
        world.judges[0]
            .model_template_id
            .as_ref()
            .map(TemplateId::as_str),
        Some("claude")
    );
    let local = world.template(&TemplateId::new("local").unwrap()).unwrap();
    assert!(local.allow_insecure_http && !local.streaming);
    assert_eq!(world.extra["futureSetting"], json!({"keptAsWritten": true}));
    assert_eq!(world.batch_start_ids(), ["reception", "scribe"]);

    // Every field the model writes is in the example and named on the page.
    let written = serde_json::to_value(&world).unwrap();
    assert_documented("world.json.md", &written, &["futureSetting"]);
    let mut template = ModelTemplate::new(
        TemplateId::new("t").unwrap(),
        "T",
        "https://example.com/v1",
        "m",
    );
    template.max_response_bytes = Some(1);
    template.allow_insecure_http = true;
    template.streaming = false;
    let full = World {
        agents: vec![AgentSpec::new(
            AgentId::new("a").unwrap(),
            "A",
            TemplateId::new("t").unwrap(),
        )],
        model_templates: vec![template],
        judges: vec![JudgeSpec {
            id: AgentId::new("j").unwrap(),
            name: "J".into(),
            order: 0,
            enabled: true,
            model_template_id: Some(TemplateId::new("t").unwrap()),
            extra: Default::default(),
        }],
        token_budget: Some(1),
        ask_timeout_secs: Some(30),
        language: Some(LanguageTag::of(fuseforks_core::village::Language::En)),
        user_name: Some("U".into()),
        reception: Some(AgentId::new("a").unwrap()),
        external_name: Some("E".into()),
        default_verifier: Some(AgentId::new("a").unwrap()),
        ..World::default()
    };
    let mut model_keys = BTreeSet::new();
    keys(&serde_json::to_value(&full).unwrap(), &[], &mut model_keys);
    let mut example_keys = BTreeSet::new();
    keys(&written, &[], &mut example_keys);
    let absent: Vec<&String> = model_keys.difference(&example_keys).collect();
    assert!(absent.is_empty(), "the world.json example lacks {absent:?}");
}

#[test]
fn the_schedules_example_loads_cleanly() {
    let (data, store) = village_of_the_example();
    data.write(
        workspace_files::SCHEDULES,
        example("schedules.json.md", "json example"),
    );
    let loaded = store.load_schedules().unwrap();
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let tasks = &loaded.value.0;
    assert_eq!(tasks.len(), 3);
    assert!(matches!(
        &tasks[0].recurrence,
        Recurrence::Daily(t) if (t.hour, t.minute) == (8, 30)
    ));
    assert!(matches!(&tasks[1].recurrence, Recurrence::Interval(i) if i.every_minutes == 90));
    assert!(matches!(
        &tasks[2].recurrence,
        Recurrence::Weekly(w) if w.weekday == Weekday::Mon && w.hour == 9
    ));
    assert_eq!(tasks[0].session_mode, SessionMode::Fresh);
    assert_eq!(tasks[0].probe.as_ref().unwrap().command, "test-inbox");
    assert_eq!(tasks[0].acceptance.as_ref().unwrap().max_attempts, 3);
    assert!(!tasks[1].enabled && tasks[2].enabled);
    assert_eq!(tasks[2].probe, None);
    let written = serde_json::to_value(&loaded.value).unwrap();
    assert_documented("schedules.json.md", &written, &[]);
}

#[test]
fn the_judge_example_is_valid_in_the_example_village() {
    let (data, store) = village_of_the_example();
    data.write(
        "judges/triage/judge.toml",
        example("judge.toml.md", "toml example"),
    );
    let world = store.load_world().unwrap().value;
    let states = fuseforks_core::judge::judge_states(&store, &world);
    assert_eq!(states.len(), 1);
    let rules = match &states[0].rules {
        Ok(rules) => rules,
        Err(findings) => panic!("the example has findings: {findings:?}"),
    };
    let names: Vec<&str> = rules.questions.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(names, ["kind", "urgency", "polite"]);
    assert_eq!(rules.rules.len(), 4);
    assert_eq!(rules.targets(), ["scribe", "finder"]);
    assert_eq!(states[0].unavailable(&world), None);
}

#[test]
fn the_run_policy_example_loads_and_decides_as_the_page_says() {
    let (data, store) = village_of_the_example();
    let scribe = AgentId::new("scribe").unwrap();
    data.write(
        &format!("agents/scribe/{}", agent_files::RUN),
        example("run.json.md", "json example"),
    );
    let loaded = store
        .agent_files(&scribe)
        .unwrap()
        .load_run_policy()
        .unwrap();
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let policy = loaded.value;
    assert_eq!(policy.allow.len(), 4);
    assert_eq!(policy.timeout_secs, 120);
    assert_eq!(policy.network, Some(false));
    assert_eq!(policy.pending[0].command, "curl");
    assert_eq!(policy.pending[0].count, 2);
    let argv = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        decide(&policy, "cargo", &argv(&["test", "-p", "core"])),
        Decision::Allowed
    );
    assert_eq!(
        decide(&policy, "cargo", &argv(&["publish", "--dry-run"])),
        Decision::Denied
    );
    assert_eq!(
        decide(&policy, "curl", &argv(&["https://example.com/feed.xml"])),
        Decision::Unknown
    );
    assert_eq!(decide(&policy, "ls", &argv(&["-la"])), Decision::Unknown);
    let written = serde_json::to_value(&policy).unwrap();
    assert_documented("run.json.md", &written, &[]);
}

#[test]
fn the_mcp_example_loads_as_shared_and_as_an_agents_file() {
    let (data, store) = village_of_the_example();
    let text = example("mcp.json.md", "json example");
    data.write(workspace_files::MCP, &text);
    data.write(&format!("agents/finder/{}", agent_files::MCP), &text);
    let shared = store.load_shared_mcp().unwrap();
    let own = store
        .agent_files(&AgentId::new("finder").unwrap())
        .unwrap()
        .load_mcp()
        .unwrap();
    assert_eq!(shared.value, own.value);
    let config = shared.value;
    let names: Vec<&str> = config.mcp_servers.keys().map(String::as_str).collect();
    assert_eq!(names, ["files", "tracker", "local-notes"]);
    assert!(matches!(
        config.mcp_servers["files"],
        McpServerEntry::Stdio(_)
    ));
    assert!(matches!(
        config.mcp_servers["tracker"],
        McpServerEntry::Http(_)
    ));
    assert!(!config.mcp_servers["local-notes"].enabled());
    assert_eq!(config.secret_names(), ["TRACKER_TOKEN"]);
    let variable = env_var_name("mcp:TRACKER_TOKEN");
    assert!(page("mcp.json.md").contains(&format!("`{variable}`")));
    let written = serde_json::to_value(&config).unwrap();
    assert_documented("mcp.json.md", &written, &[]);
}

#[test]
fn the_probe_approvals_example_approves_the_schedules_examples_probes() {
    let (data, store) = village_of_the_example();
    let village_id = "3e9d1f7a-5b2c-4d8e-9f10-a1b2c3d4e5f6";
    data.write(workspace_files::VILLAGE_ID, village_id);
    data.write(
        workspace_files::SCHEDULES,
        example("schedules.json.md", "json example"),
    );
    std::fs::write(
        data.data_dir()
            .join(fuseforks_core::village::shelf_files::PROBE_APPROVALS),
        example("probe_approvals.json.md", "json example"),
    )
    .unwrap();
    let shelf = ShelfStore::new(data.data_dir());
    let approvals = shelf.load_probe_approvals().unwrap();
    assert!(approvals.notices.is_empty());
    let schedules = store.load_schedules().unwrap().value;
    let probe = schedules.0[0].probe.as_ref().unwrap();
    let acceptance = &schedules.0[0].acceptance.as_ref().unwrap().probe;
    assert_eq!(store.village_id().unwrap(), village_id);
    assert_eq!(
        approvals.value.hashes,
        [
            probe_key(probe, village_id),
            probe_key(acceptance, village_id)
        ]
    );
    assert_eq!(
        approval_state(&shelf, probe, village_id),
        ApprovalState::Approved
    );
    assert_eq!(
        approval_state(&shelf, probe, "another-village"),
        ApprovalState::Unapproved
    );
    let written = serde_json::to_value(&approvals.value).unwrap();
    assert_documented("probe_approvals.json.md", &written, &[]);
}

/// The example lines of the log page: the frame checked, the bodies returned.
fn example_log_bodies() -> Vec<String> {
    let frame =
        regex::Regex::new(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \[fuseforks\] (.+)$")
            .unwrap();
    example("log-lines.md", "text example")
        .lines()
        .map(|line| match frame.captures(line) {
            Some(c) => c[1].to_owned(),
            None => panic!("not a framed log line: {line}"),
        })
        .collect()
}

/// The kind of a log body (`turn start`) and its keys in order.
fn shape(body: &str) -> (String, Vec<String>) {
    let (kind, rest) = body.split_once(": ").unwrap_or((body, ""));
    let keys = rest
        .split(' ')
        .filter_map(|part| part.split_once('=').map(|(k, _)| k.to_owned()))
        .collect();
    (kind.to_owned(), keys)
}

#[test]
fn the_log_example_has_the_frame_the_village_log_writes() {
    let bodies = example_log_bodies();
    assert!(bodies.len() >= 5);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuseforks.log");
    let log = VillageLog::open(&path).unwrap();
    log.line(&bodies[0]);
    let written = std::fs::read_to_string(&path).unwrap();
    let rendered = written.lines().next().unwrap();
    let documented = example("log-lines.md", "text example");
    let first = documented.lines().next().unwrap();
    assert_eq!(rendered.len(), first.len(), "{rendered}\n{first}");
    assert_eq!(
        &rendered[23..],
        &first[23..],
        "same body after the time stamp"
    );
}

#[test]
fn the_logs_judge_line_is_what_the_judge_writes_for_the_judge_example() {
    let rules = fuseforks_core::judge::parse_judge(&example("judge.toml.md", "toml example"))
        .unwrap_or_else(|f| panic!("{f:?}"));
    let answers = answers_from_args(
        &rules,
        &json!({
            "kind": {"writing": 0.82, "search": 0.12, "other": 0.06},
            "urgency": [0.15, 0.55, 0.30, 0.0],
            "polite": 0.97
        }),
    )
    .unwrap_or_else(|p| panic!("{p:?}"));
    let decision = evaluate(&rules, &answers);
    assert_eq!(decision.rule, RuleRef::Rule(2));
    let line = JudgeLog {
        caller: "reception".into(),
        judge: "triage".into(),
        rule: "2".into(),
        outcome: decision.outcome_word().into(),
        answers: answers_text(&rules, &answers),
        to: vec!["scribe".into()],
        input_tokens: 640,
        output_tokens: 48,
        bundle_chars: None,
        reason: None,
    }
    .line();
    let bodies = example_log_bodies();
    assert!(bodies.contains(&line), "{line}\nis not in\n{bodies:#?}");
}

#[tokio::test]
async fn the_log_examples_turn_lines_have_the_keys_a_real_turn_writes() {
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            wire,
            &[call(
                "c1",
                "file",
                json!({"op": "read", "path": "notes.txt", "reason": "read the notes first"}),
            )],
            U1,
        ),
        wire_replies::text(wire, "Done.", U1),
    ])
    .await;
    let v = Village::new(wire, stub.base_url(), None);
    let orch = v.open();
    orch.start_agent("a1").unwrap();
    orch.deliver_and_wait("a1", Endpoint::User, "Read the notes.")
        .await
        .unwrap();
    assert!(orch.stop_agent("a1", Duration::from_secs(5)).await);
    let real: Vec<(String, Vec<String>)> = v
        .log()
        .lines()
        .filter_map(|l| l.split_once(" [fuseforks] ").map(|(_, body)| shape(body)))
        .collect();
    let mut compared = 0;
    for body in example_log_bodies() {
        let (kind, keys) = shape(&body);
        if !["turn start", "tool", "reply", "turn"].contains(&kind.as_str()) {
            continue;
        }
        let Some((_, real_keys)) = real.iter().find(|(k, _)| *k == kind) else {
            panic!("a real turn wrote no `{kind}:` line");
        };
        assert_eq!(&keys, real_keys, "the keys of `{kind}:`");
        compared += 1;
    }
    assert_eq!(
        compared, 4,
        "turn start, tool, reply and turn are in the example"
    );
}

#[test]
fn the_audit_example_is_a_keyed_chain_that_verifies() {
    let key = AuditKey::from_hex(&"1".repeat(64)).unwrap();
    let text = example("audit.jsonl.md", "text example");
    let mut prev = fuseforks_core::safety::GENESIS.to_owned();
    for (i, line) in text.lines().enumerate() {
        let entry: AuditEntry = serde_json::from_str(line).unwrap();
        assert_eq!(entry.seq, i as u64 + 1);
        assert_eq!(entry.prev_sha256, prev);
        assert!(entry.hash_holds(), "line {}", i + 1);
        let event = AuditEvent {
            agent: entry.agent.clone(),
            causal_root: entry.causal_root.clone(),
            action: entry.action.clone(),
            target: entry.target.clone(),
            args_sha256: entry.args_sha256.clone(),
            outcome: entry.outcome.clone(),
            approved_by: ApprovedBy::parse(entry.approved_by.as_deref().unwrap()).unwrap(),
        };
        let rebuilt = AuditEntry::chain(event, entry.seq, entry.ts_ms, &prev).sign(&key);
        assert_eq!(rebuilt.line(), line, "the writer writes this very line");
        prev = entry.sha256;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("audit.jsonl"), &text).unwrap();
    let options = VerifyOptions {
        key: Some(&key),
        accept_ahead: true,
        accept_unrecorded_head: true,
        ..VerifyOptions::default()
    };
    let report = verify_keyed(dir.path(), &options).unwrap();
    assert_eq!((report.lines, report.unkeyed_lines), (6, 0));
    assert!(report.keyed);
    // One changed value breaks the chain at that line, as the page says.
    let edited = text.replacen("\"outcome\":\"failed\"", "\"outcome\":\"ok\"", 1);
    std::fs::write(dir.path().join("audit.jsonl"), edited).unwrap();
    let err = verify_keyed(dir.path(), &options).unwrap_err();
    assert!(err.to_string().contains("line 3"), "{err}");
}

#[test]
fn the_price_table_example_reads_and_fills_the_templates_of_its_models() {
    let name = "prices.json.md";
    let text = example(name, "json example");
    let table = fuseforks_core::pricing::parse_table(text.as_bytes()).unwrap();
    assert_eq!(table.as_of, "2026-11-01");
    let gpt = &table.models["gpt-5.1"];
    assert_eq!((gpt.input_per_mtok, gpt.cache_write_per_mtok), (1.25, None));
    assert_eq!(table.as_of_for(gpt), "2026-10-15");
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_documented(name, &value, &["models"]);
    for entry in value["models"].as_object().unwrap().values() {
        assert_documented(name, entry, &[]);
    }
    let mut world = World::default();
    for (id, model) in [("claude", "claude-sonnet-4-5"), ("local", "qwen3")] {
        let t = ModelTemplate::new(TemplateId::new(id).unwrap(), id, "https://x/v1", model);
        world.model_templates.push(t);
    }
    let changes = fuseforks_core::pricing::apply_prices(&mut world, &table);
    let outcomes: Vec<Value> = changes
        .iter()
        .map(|c| serde_json::to_value(c).unwrap()["outcome"].clone())
        .collect();
    assert_eq!(outcomes, [json!("updated"), json!("not_in_table")]);
    assert_eq!(world.model_templates[0].cache_write_1h_per_mtok, Some(6.0));
    assert!(!world.model_templates[1].is_priced());
    // The source file: https, or http to this machine only (the page's rule).
    let data = TempDataDir::new();
    let shelf = ShelfStore::new(data.data_dir());
    for (url, ok) in [
        ("https://prices.example/p.json", true),
        ("http://127.0.0.1:8080/p.json", true),
        ("http://prices.example/p.json", false),
    ] {
        std::fs::write(
            data.data_dir().join("pricing.json"),
            json!({"url": url}).to_string(),
        )
        .unwrap();
        assert_eq!(shelf.load_pricing_source().is_ok(), ok, "{url}");
    }
}

/// The SKILL.md example loads through `AgentFiles::load_skill` without a notice, with the terms
/// the page says, the procedure without its front matter, and every key of its front matter
/// named in the page's table.
#[test]
fn the_skill_example_loads_with_its_terms_and_every_key_is_named() {
    use fuseforks_core::village::SkillFork;
    let text = example("skill-front-matter.md", "text example");
    let (_data, store) = village_of_the_example();
    let files = store.agent_files(&AgentId::new("scribe").unwrap()).unwrap();
    files.write_skill(&text).unwrap();
    let loaded = files.load_skill().unwrap();
    assert!(loaded.notices.is_empty(), "{:?}", loaded.notices);
    let terms = &loaded.value.terms;
    assert_eq!(terms.max_loops, Some(5));
    assert_eq!(terms.fork, Some(SkillFork::Subagent));
    assert_eq!(
        terms.allowed_tools.as_deref(),
        Some(&["file".to_owned(), "run".to_owned()][..])
    );
    assert_eq!(terms.round_cap(12), 60);
    assert!(loaded.value.procedure.starts_with("# Tide table summary\n"));
    let page = page("skill-front-matter.md");
    let front = text.split("\n---\n").next().unwrap();
    for line in front.lines().skip(1) {
        let Some((key, _)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        if line.starts_with(' ') || key.starts_with('-') {
            continue;
        }
        let named = page.contains(&format!("| `{key}`")) || page.contains(&format!("| `{key}."));
        assert!(named, "the page's table names `{key}`");
    }
}
