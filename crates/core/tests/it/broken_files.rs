//! A corpus of broken files, one per rule: each yields its stable code, names the file (and
//! the field or position where known), and leaves the file's bytes unchanged — also after a
//! write is attempted over it.

use std::fs;
use std::path::PathBuf;

use fuseforks_core::village::CommandPolicy;
use fuseforks_core::village::McpConfig;
use fuseforks_core::village::Schedules;
use fuseforks_core::village::{AgentId, ShelfStore, VillageError, VillageStore, World};
use fuseforks_core::village::{DoorSettings, JevSettings, PricingSource, ProbeApprovals};
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::maximal::maximal_world;
use serde_json::{Value, json};

/// Which file a case breaks; decides how it is read and how a write over it is attempted.
#[derive(Clone, Copy, Debug)]
enum Kind {
    World,
    Schedules,
    RunPolicy,
    AgentMcp,
    Door,
    Pricing,
    Approvals,
    Jev,
}

impl Kind {
    fn relative(self) -> &'static str {
        match self {
            Kind::World => "workspace/world.json",
            Kind::Schedules => "workspace/schedules.json",
            Kind::RunPolicy => "workspace/agents/a1/run.json",
            Kind::AgentMcp => "workspace/agents/a1/mcp.json",
            Kind::Door => "mcp_server.json",
            Kind::Pricing => "pricing.json",
            Kind::Approvals => "probe_approvals.json",
            Kind::Jev => "jev.json",
        }
    }

    fn load(self, data: &TempDataDir) -> Result<(), VillageError> {
        let village = VillageStore::new(data.workspace());
        let shelf = ShelfStore::new(data.data_dir());
        let agent = || village.agent_files(&AgentId::new("a1").unwrap()).unwrap();
        match self {
            Kind::World => village.load_world().map(drop),
            Kind::Schedules => village.load_schedules().map(drop),
            Kind::RunPolicy => agent().load_run_policy().map(drop),
            Kind::AgentMcp => agent().load_mcp().map(drop),
            Kind::Door => shelf.load_door().map(drop),
            Kind::Pricing => shelf.load_pricing_source().map(drop),
            Kind::Approvals => shelf.load_probe_approvals().map(drop),
            Kind::Jev => shelf.load_jev().map(drop),
        }
    }

    /// Tries to write a valid value over the broken file.
    fn save_valid(self, data: &TempDataDir) -> Result<(), VillageError> {
        let village = VillageStore::new(data.workspace());
        let shelf = ShelfStore::new(data.data_dir());
        let agent = || village.agent_files(&AgentId::new("a1").unwrap()).unwrap();
        match self {
            Kind::World => village.save_world(&World::default()),
            Kind::Schedules => village.save_schedules(&Schedules::default()),
            Kind::RunPolicy => agent().save_run_policy(&CommandPolicy::default()),
            Kind::AgentMcp => agent().save_mcp(&McpConfig::default()),
            Kind::Door => shelf.save_door(&DoorSettings::default()),
            Kind::Pricing => shelf.save_pricing_source(&PricingSource::default()),
            Kind::Approvals => shelf.save_probe_approvals(&ProbeApprovals::default()),
            Kind::Jev => shelf.save_jev(&JevSettings::default()),
        }
    }
}

struct Case {
    name: &'static str,
    kind: Kind,
    bytes: Vec<u8>,
    code: &'static str,
    field: Option<&'static str>,
    /// Expect a line and column (parser errors).
    positioned: bool,
}

fn world_with(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut world = maximal_world();
    edit(&mut world);
    serde_json::to_vec_pretty(&world).unwrap()
}

fn case(
    name: &'static str,
    kind: Kind,
    bytes: Vec<u8>,
    code: &'static str,
    field: Option<&'static str>,
    positioned: bool,
) -> Case {
    Case {
        name,
        kind,
        bytes,
        code,
        field,
        positioned,
    }
}

fn corpus() -> Vec<Case> {
    use Kind::*;
    const INVALID: &str = "VILLAGE_FILE_INVALID";
    let schedule = |recurrence: Value| {
        serde_json::to_vec(&json!([{ "id": "s1", "to": "a1", "message": "go", "recurrence": recurrence, "createdAtMs": 1 }])).unwrap()
    };
    vec![
        case(
            "syntax: missing comma",
            World,
            br#"{"agents": [] "modelTemplates": []}"#.to_vec(),
            INVALID,
            None,
            true,
        ),
        case(
            "syntax: truncated",
            World,
            {
                let mut b = world_with(|_| {});
                b.truncate(b.len() / 2);
                b
            },
            INVALID,
            None,
            true,
        ),
        case("syntax: empty file", World, Vec::new(), INVALID, None, true),
        case(
            "syntax: trailing garbage",
            World,
            b"{} {}".to_vec(),
            INVALID,
            None,
            true,
        ),
        case(
            "not UTF-8",
            World,
            b"{\"userName\": \"\xff\xfe\"}".to_vec(),
            INVALID,
            None,
            true,
        ),
        case(
            "top level is not an object",
            World,
            b"[]".to_vec(),
            INVALID,
            None,
            true,
        ),
        case(
            "wrong type: order",
            World,
            world_with(|w| w["agents"][0]["order"] = json!("first")),
            INVALID,
            Some("agents[0].order"),
            true,
        ),
        case(
            "wrong type: tokenBudget negative",
            World,
            world_with(|w| w["tokenBudget"] = json!(-5)),
            INVALID,
            Some("tokenBudget"),
            true,
        ),
        case(
            "overflow: maxToolIterations",
            World,
            world_with(|w| w["agents"][0]["maxToolIterations"] = json!(300)),
            INVALID,
            Some("agents[0].maxToolIterations"),
            true,
        ),
        case(
            "missing field: agent id",
            World,
            world_with(|w| {
                w["agents"][0].as_object_mut().unwrap().remove("id");
            }),
            INVALID,
            Some("agents[0]"),
            true,
        ),
        case(
            "unknown enum: provider",
            World,
            world_with(|w| w["modelTemplates"][0]["provider"] = json!("openai")),
            INVALID,
            Some("modelTemplates[0].provider"),
            true,
        ),
        case(
            "unknown enum: credential",
            World,
            world_with(|w| w["modelTemplates"][0]["credential"] = json!("vault")),
            INVALID,
            Some("modelTemplates[0].credential"),
            true,
        ),
        case(
            "unknown enum: effort",
            World,
            world_with(|w| w["modelTemplates"][1]["effort"] = json!("extreme")),
            INVALID,
            Some("modelTemplates[1].effort"),
            true,
        ),
        case(
            "unknown enum: role color",
            World,
            world_with(|w| w["roles"][0]["color"] = json!("black")),
            INVALID,
            Some("roles[0].color"),
            true,
        ),
        case(
            "duplicate agent id",
            World,
            world_with(|w| w["agents"][1]["id"] = json!("coordinator")),
            "DUPLICATE_AGENT",
            Some("agents[1].id"),
            false,
        ),
        case(
            "judge id taken by an agent",
            World,
            world_with(|w| w["judges"][0]["id"] = json!("writer")),
            "DUPLICATE_AGENT",
            Some("judges[0].id"),
            false,
        ),
        case(
            "duplicate agent name",
            World,
            world_with(|w| w["agents"][1]["name"] = json!("Coordinator")),
            "DUPLICATE_AGENT_NAME",
            Some("agents[1].name"),
            false,
        ),
        case(
            "judge name taken by an agent",
            World,
            world_with(|w| w["judges"][0]["name"] = json!("書き手")),
            "DUPLICATE_AGENT_NAME",
            Some("judges[0].name"),
            false,
        ),
        case(
            "empty agent name",
            World,
            world_with(|w| w["agents"][0]["name"] = json!("  ")),
            "INVALID_NAME",
            Some("agents[0].name"),
            false,
        ),
        case(
            "unsafe agent id",
            World,
            world_with(|w| {
                w["agents"][1]["id"] = json!("../escape");
            }),
            "INVALID_ID",
            Some("agents[1].id"),
            false,
        ),
        case(
            "agent id too long",
            World,
            world_with(|w| w["agents"][1]["id"] = json!("a".repeat(65))),
            "INVALID_ID",
            Some("agents[1].id"),
            false,
        ),
        case(
            "unsafe edge target",
            World,
            world_with(|w| w["agents"][0]["connectedAgents"] = json!(["a b"])),
            "INVALID_ID",
            Some("agents[0].connectedAgents[0]"),
            false,
        ),
        case(
            "duplicate template id",
            World,
            world_with(|w| w["modelTemplates"][1]["id"] = json!("claude")),
            "DUPLICATE_ID",
            Some("modelTemplates[1].id"),
            false,
        ),
        case(
            "duplicate group id",
            World,
            world_with(|w| {
                let g = w["groups"][0].clone();
                w["groups"].as_array_mut().unwrap().push(g);
            }),
            "DUPLICATE_ID",
            Some("groups[1].id"),
            false,
        ),
        case(
            "schedule: hour 24",
            Schedules,
            schedule(json!({"kind": "daily", "hour": 24, "minute": 0})),
            "INVALID_VALUE",
            Some("[0].recurrence"),
            false,
        ),
        case(
            "schedule: interval 0",
            Schedules,
            schedule(json!({"kind": "interval", "everyMinutes": 0})),
            "INVALID_VALUE",
            Some("[0].recurrence.everyMinutes"),
            false,
        ),
        case(
            "schedule: unknown kind",
            Schedules,
            schedule(json!({"kind": "monthly", "day": 1})),
            INVALID,
            Some("[0].recurrence.kind"),
            true,
        ),
        case(
            "schedule: unknown weekday",
            Schedules,
            schedule(json!({"kind": "weekly", "weekday": "funday", "hour": 1, "minute": 2})),
            INVALID,
            Some("[0].recurrence"),
            true,
        ),
        case(
            "run.json: allow is not a list",
            RunPolicy,
            br#"{"version":1,"allow":"git *"}"#.to_vec(),
            INVALID,
            Some("allow"),
            true,
        ),
        case(
            "mcp.json: sse refused by name",
            AgentMcp,
            br#"{"mcpServers":{"legacy":{"type":"sse","url":"https://x/sse"}}}"#.to_vec(),
            INVALID,
            Some("mcpServers.legacy"),
            true,
        ),
        case(
            "mcp_server.json: port out of range",
            Door,
            br#"{"enabled":true,"port":70000,"token":"t"}"#.to_vec(),
            INVALID,
            Some("port"),
            true,
        ),
        case(
            "pricing.json: http source",
            Pricing,
            br#"{"url":"http://prices.example/p.json"}"#.to_vec(),
            "INVALID_VALUE",
            Some("url"),
            false,
        ),
        case(
            "probe_approvals.json: not a hash",
            Approvals,
            br#"{"hashes":["abc"]}"#.to_vec(),
            "INVALID_VALUE",
            Some("hashes[0]"),
            false,
        ),
        case(
            "jev.json: wrong type",
            Jev,
            br#"{"enabled":"yes"}"#.to_vec(),
            INVALID,
            Some("enabled"),
            true,
        ),
    ]
}

#[test]
fn every_broken_file_gives_its_code_names_the_file_and_stays_unchanged() {
    let mut failures = Vec::new();
    for case in corpus() {
        let data = TempDataDir::new();
        let path: PathBuf = data.data_dir().join(case.kind.relative());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, &case.bytes).unwrap();

        let err = match case.kind.load(&data) {
            Ok(()) => {
                failures.push(format!("{}: read succeeded", case.name));
                continue;
            }
            Err(e) => e,
        };
        let text = err.to_string();
        let mut problems = Vec::new();
        if err.code() != case.code {
            problems.push(format!("code {} (want {})", err.code(), case.code));
        }
        if err.file() != path {
            problems.push(format!("file {}", err.file().display()));
        }
        if !text.contains(&path.display().to_string()) {
            problems.push(format!("message lacks the file: {text}"));
        }
        // The code comes from `code()`; the edge prints it once.
        if text.contains(&format!("[{}]", case.code)) {
            problems.push(format!("message holds its code: {text}"));
        }
        if err.field() != case.field {
            problems.push(format!("field {:?} (want {:?})", err.field(), case.field));
        }
        if let VillageError::Invalid(invalid) = &err {
            if invalid.line.is_some() != case.positioned {
                problems.push(format!("line {:?}", invalid.line));
            }
            if invalid.fix.is_empty() {
                problems.push("no fix".into());
            }
        }
        // The fix comes from `fix()`, apart from the message.
        if text.contains("Fix:") {
            problems.push(format!("message holds its fix: {text}"));
        }
        if fuseforks_core::Coded::fix(&err).is_none_or(|f| f.text().is_empty()) {
            problems.push("no fix".into());
        }
        // The store never writes over a file it could not read.
        match case.kind.save_valid(&data) {
            Err(e) if e.code() == "VILLAGE_WRITE_REFUSED" => {}
            other => problems.push(format!("write over it: {other:?}")),
        }
        if fs::read(&path).unwrap() != case.bytes {
            problems.push("the file's bytes changed".into());
        }
        if !problems.is_empty() {
            failures.push(format!("{}: {}", case.name, problems.join("; ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn an_agent_on_a_missing_template_is_read_with_a_notice_and_refused_on_write() {
    let data = TempDataDir::new();
    let path = data.workspace().join("world.json");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(
        &path,
        world_with(|w| w["agents"][1]["modelTemplateId"] = json!("nope")),
    )
    .unwrap();
    let store = VillageStore::new(data.workspace());
    let loaded = store.load_world().unwrap();
    let notice = loaded
        .notices
        .iter()
        .find(|n| n.code.as_str() == "MODEL_TEMPLATE_MISSING")
        .unwrap();
    assert_eq!(notice.field, "agents[1].modelTemplateId");
    let err = store.save_world(&loaded.value).unwrap_err();
    assert_eq!(err.code(), "MODEL_TEMPLATE_MISSING");
    assert_eq!(err.field(), Some("agents[1].modelTemplateId"));
}

#[test]
fn a_missing_world_is_named() {
    let data = TempDataDir::new();
    let err = VillageStore::new(data.workspace())
        .load_world()
        .unwrap_err();
    assert_eq!(err.code(), "VILLAGE_MISSING");
    assert_eq!(err.file(), data.workspace().join("world.json"));
}

#[test]
fn errors_of_files_that_may_hold_secrets_never_quote_values() {
    let data = TempDataDir::new();
    let secret = "sk-live-0123456789abcdef";
    let shelf = ShelfStore::new(data.data_dir());
    fs::write(
        shelf.path("mcp_server.json"),
        format!(r#"{{"enabled":true,"port":"{secret}"}}"#),
    )
    .unwrap();
    let err = shelf.load_door().unwrap_err();
    assert_eq!(err.field(), Some("port"));
    assert!(!format!("{err} {err:?}").contains(secret), "{err}");

    let agent = VillageStore::new(data.workspace())
        .agent_files(&AgentId::new("a1").unwrap())
        .unwrap();
    fs::create_dir_all(agent.dir()).unwrap();
    let body = format!(
        r#"{{"mcpServers":{{"remote":{{"type":"http","url":"https://x/mcp","headers":{{"Authorization":["{secret}"]}}}}}}}}"#
    );
    fs::write(agent.path("mcp.json"), body).unwrap();
    let err = agent.load_mcp().unwrap_err();
    assert!(!format!("{err} {err:?}").contains(secret), "{err}");
    let body = format!(
        r#"{{"mcpServers":{{"remote":{{"type":"http","url":"https://x/mcp","enabled":"{secret}"}}}}}}"#
    );
    fs::write(agent.path("mcp.json"), body).unwrap();
    let err = agent.load_mcp().unwrap_err();
    assert!(!format!("{err} {err:?}").contains(secret), "{err}");

    // In files without secrets the value is shown, because it helps.
    let store = VillageStore::new(data.workspace());
    fs::write(store.path("world.json"), r#"{"modelTemplates":[{"id":"t","name":"t","baseUrl":"u","model":"m","provider":"opnai"}]}"#).unwrap();
    let err = store.load_world().unwrap_err();
    assert!(err.to_string().contains("opnai"), "{err}");
}

#[test]
fn invalid_values_are_refused_on_write() {
    let data = TempDataDir::new();
    let store = VillageStore::new(data.workspace());
    let good: World = serde_json::from_value(maximal_world()).unwrap();
    type Edit = Box<dyn Fn(&mut World)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "INVALID_TOKEN_BUDGET",
            Box::new(|w| w.token_budget = Some(0)),
        ),
        (
            "INVALID_ASK_TIMEOUT",
            Box::new(|w| w.ask_timeout_secs = Some(3601)),
        ),
        (
            "INVALID_NAME",
            Box::new(|w| w.user_name = Some(" padded ".into())),
        ),
        (
            "DUPLICATE_AGENT",
            Box::new(|w| {
                let again = w.agents[0].clone();
                w.agents.push(again);
            }),
        ),
        (
            "MODEL_TEMPLATE_MISSING",
            Box::new(|w| w.model_templates.truncate(1)),
        ),
    ];
    store.save_world(&good).unwrap();
    let before = fs::read(store.path("world.json")).unwrap();
    for (code, edit) in cases {
        let mut world = good.clone();
        edit(&mut world);
        let err = store.save_world(&world).unwrap_err();
        assert_eq!(err.code(), code);
        assert_eq!(
            fs::read(store.path("world.json")).unwrap(),
            before,
            "{code}"
        );
    }
}
