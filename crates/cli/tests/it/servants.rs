//! `servants` and `templates` through the binary on a temporary village: added, listed (table
//! and `--json`), connected, disconnected, set and removed, each in `world.json`; refusals
//! that write nothing (an id taken: exit 11; an unknown template, a bad id, a work folder
//! inside the village, a template in use: exit 2 naming the field); and every change refused
//! with exit 4 while a process holds the village, as the GUI refuses a village open elsewhere
//! (README "Servants and templates").

use fuseforks_testkit::TempDataDir;
use serde_json::Value;

use crate::headless::stub_village;
use crate::{cli, stderr, stdout};

/// A village (template `stub`, reception `rec`); the data folder and its `--data-dir` words
/// (keys from the environment, so that no keyring is touched).
fn village() -> (TempDataDir, String) {
    let data = TempDataDir::new();
    stub_village("http://127.0.0.1:9/v1").write(&data);
    let place = format!("--data-dir {} --secrets env", data.data_dir().display());
    (data, place)
}

fn world_bytes(data: &TempDataDir) -> Vec<u8> {
    std::fs::read(data.workspace().join("world.json")).unwrap()
}

/// Runs `line`, asserts its exit code, and gives stderr.
fn exits(line: &str, code: i32) -> String {
    let out = cli(line);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{line}: {err}");
    err
}

fn json_of(line: &str) -> Value {
    let out = cli(line);
    assert_eq!(out.status.code(), Some(0), "{line}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// The servant `id` of `servants list --json`.
fn servant(data: &TempDataDir, id: &str) -> Option<Value> {
    let list = json_of(&format!(
        "servants list --json --data-dir {}",
        data.data_dir().display()
    ));
    list["servants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .cloned()
}

#[test]
fn servants_are_added_listed_connected_set_and_removed() {
    let (data, place) = village();
    let outside = tempfile::tempdir().unwrap();
    let work = outside.path().join("texts");
    exits(
        &format!(
            "servants add writer --name Writer --template stub --work-dir {} --tools file,grep {place}",
            work.display()
        ),
        0,
    );
    let writer = servant(&data, "writer").expect("listed");
    assert_eq!(
        (&writer["name"], &writer["templateId"], &writer["workDir"]),
        (
            &Value::from("Writer"),
            &Value::from("stub"),
            &Value::from(work.display().to_string())
        )
    );
    assert_eq!(writer["enabledTools"], serde_json::json!(["file", "grep"]));
    let on_disk: Value = serde_json::from_slice(&world_bytes(&data)).unwrap();
    assert!(
        on_disk["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == "writer")
    );
    assert!(data.workspace().join("agents/writer/SKILL.md").exists());
    let table = cli(&format!(
        "servants list --data-dir {}",
        data.data_dir().display()
    ));
    assert!(
        stdout(&table).contains("writer  Writer  template: stub"),
        "{}",
        stdout(&table)
    );

    exits(&format!("servants connect rec writer {place}"), 0);
    assert_eq!(
        servant(&data, "rec").unwrap()["connected"],
        serde_json::json!(["writer"])
    );
    exits(&format!("servants disconnect rec writer {place}"), 0);
    assert_eq!(
        servant(&data, "rec").unwrap()["connected"],
        serde_json::json!([])
    );
    let unknown = exits(&format!("servants connect rec nobody {place}"), 2);
    assert!(unknown.contains("[AGENT_NOT_FOUND]"), "{unknown}");

    exits(
        &format!(
            "servants set writer --name Scribe --max-tool-rounds 7 --plan-review true --no-work-dir {place}"
        ),
        0,
    );
    let writer = servant(&data, "writer").unwrap();
    assert_eq!(
        (
            &writer["name"],
            &writer["maxToolIterations"],
            &writer["planReview"],
            &writer["workDir"]
        ),
        (
            &Value::from("Scribe"),
            &Value::from(7),
            &Value::from(true),
            &Value::Null
        )
    );
    let zero = exits(
        &format!("servants set writer --max-tool-rounds 0 {place}"),
        2,
    );
    assert!(zero.contains("--max-tool-rounds"), "{zero}");

    exits(&format!("servants remove writer {place}"), 0);
    assert!(servant(&data, "writer").is_none());
    assert!(!data.workspace().join("agents/writer").exists());
    let gone = exits(&format!("servants remove writer {place}"), 2);
    assert!(gone.contains("[AGENT_NOT_FOUND]"), "{gone}");
    // Each change is audited as a save from the CLI.
    let audit = std::fs::read_to_string(data.workspace().join("audit.jsonl")).unwrap();
    assert!(
        audit.contains("file_save") && audit.contains("\"cli\""),
        "{audit}"
    );
}

#[test]
fn refused_adds_name_the_field_and_write_nothing() {
    let (data, place) = village();
    let before = world_bytes(&data);
    let taken = exits(&format!("servants add rec --name Again {place}"), 11);
    assert!(
        taken.contains("[INVALID_CAST_CHANGE] id: rec is taken"),
        "{taken}"
    );
    assert_eq!(world_bytes(&data), before, "byte-identical");
    let template = exits(
        &format!("servants add w2 --name W2 --template nope {place}"),
        2,
    );
    assert!(
        template.contains("modelTemplateId: no model template nope"),
        "{template}"
    );
    let bad_id = exits(&format!("servants add 'a b' --name Ab {place}"), 2);
    assert!(bad_id.contains("] id: "), "{bad_id}");
    let inside = data.workspace().join("notes");
    let near = exits(
        &format!(
            "servants add w3 --name W3 --work-dir {} {place}",
            inside.display()
        ),
        2,
    );
    assert!(
        near.contains("workDir: ") && near.contains("inside"),
        "{near}"
    );
    assert_eq!(world_bytes(&data), before, "nothing written");
    for id in ["w2", "w3"] {
        assert!(!data.workspace().join("agents").join(id).exists(), "{id}");
    }
}

#[test]
fn templates_are_added_set_and_removed_unless_in_use() {
    let (data, place) = village();
    let dir = data.data_dir().display().to_string();
    exits(
        &format!("templates add local --base-url http://127.0.0.1:8080/v1 --model qwen3 {place}"),
        0,
    );
    let list = json_of(&format!("templates list --json --data-dir {dir}"));
    let local = list["templates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "local")
        .unwrap()
        .clone();
    assert_eq!(
        (&local["wire"], &local["credential"], &local["model"]),
        (
            &Value::from("open_ai_compat"),
            &Value::from("not_required"),
            &Value::from("qwen3")
        )
    );
    let before = world_bytes(&data);
    exits(
        &format!("templates add local --base-url http://127.0.0.1:1/v1 --model m {place}"),
        11,
    );
    let insecure = exits(
        &format!("templates add lan --base-url http://10.0.0.5/v1 --model m {place}"),
        2,
    );
    assert!(insecure.contains("baseUrl"), "{insecure}");
    // Keys never go on the command line.
    exits(
        &format!("templates add k --base-url https://x.example/v1 --model m --api-key sk {place}"),
        2,
    );
    assert_eq!(world_bytes(&data), before, "nothing written");

    exits(
        &format!("templates set local --model qwen3.5 --context-length 32000 {place}"),
        0,
    );
    let on_disk: Value = serde_json::from_slice(&world_bytes(&data)).unwrap();
    let local = on_disk["modelTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "local")
        .unwrap()
        .clone();
    assert_eq!(
        (&local["model"], &local["contextLength"]),
        (&Value::from("qwen3.5"), &Value::from(32000))
    );
    exits(&format!("servants set rec --template local {place}"), 0);
    let before = world_bytes(&data);
    let in_use = exits(&format!("templates remove local {place}"), 2);
    assert!(
        in_use.contains("[TEMPLATE_IN_USE]") && in_use.contains("in use by rec"),
        "{in_use}"
    );
    assert_eq!(world_bytes(&data), before);
    exits(&format!("templates remove stub {place}"), 0);
    let list = json_of(&format!("templates list --json --data-dir {dir}"));
    assert_eq!(list["templates"].as_array().unwrap().len(), 1);
}

#[test]
fn changes_while_the_village_runs_are_refused_as_the_gui_refuses() {
    let (data, place) = village();
    let before = world_bytes(&data);
    // A running `serve` or GUI holds the village lock.
    let _held = fuseforks_host::lock::VillageLock::acquire(&data.workspace()).unwrap();
    for line in [
        format!("servants add w --name W {place}"),
        format!("servants connect rec rec {place}"),
        format!("servants remove rec {place}"),
        format!("templates add t --base-url http://127.0.0.1:1/v1 --model m {place}"),
    ] {
        let err = exits(&line, 4);
        assert!(
            err.contains("[VILLAGE_LOCKED]") && err.contains("Fix: close that one first"),
            "{line}: {err}"
        );
    }
    assert_eq!(world_bytes(&data), before);
    // Reading needs no lock.
    assert!(servant(&data, "rec").is_some());
}

/// Every refusal of these commands is `error: [CODE] message` then a `Fix:` line (README
/// "Errors and exit codes").
fn has_fix(err: &str) -> bool {
    err.lines().any(|l| l.starts_with("Fix: "))
}

#[test]
fn removing_the_reception_is_said_and_set_again_from_the_cli() {
    let (data, place) = village();
    let dir = data.data_dir().display().to_string();
    exits(&format!("servants add helper --name Helper {place}"), 0);
    let out = cli(&format!("servants remove rec {place}"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warned = stderr(&out);
    assert!(
        warned.contains("warning: [RECEPTION_REMOVED]")
            && warned.contains("Fix: ")
            && warned.contains("servants set ID --reception"),
        "{warned}"
    );
    // No `schedules []` when nothing names it.
    assert!(!stdout(&out).contains("[]"), "{}", stdout(&out));
    let list = json_of(&format!("servants list --json --data-dir {dir}"));
    assert_eq!(list["reception"], Value::Null);
    let check = cli(&format!("check --for ask --data-dir {dir} --secrets env"));
    assert!(
        stdout(&check).contains("RECEPTION_UNSET") || stderr(&check).contains("RECEPTION_UNSET")
    );

    let unknown = exits(&format!("servants set nobody --reception {place}"), 2);
    assert!(
        unknown.contains("[AGENT_NOT_FOUND]") && has_fix(&unknown),
        "{unknown}"
    );
    exits(&format!("servants set helper --reception {place}"), 0);
    let list = json_of(&format!("servants list --json --data-dir {dir}"));
    assert_eq!(list["reception"], Value::from("helper"));
    let on_disk: Value = serde_json::from_slice(&world_bytes(&data)).unwrap();
    assert_eq!(on_disk["reception"], Value::from("helper"));
    let check = cli(&format!("check --for ask --data-dir {dir} --secrets env"));
    let said = format!("{}{}", stdout(&check), stderr(&check));
    assert!(!said.contains("RECEPTION_UNSET"), "{said}");
    // Another servant removed: no word of the reception.
    exits(&format!("servants add other --name Other {place}"), 0);
    let quiet = exits(&format!("servants remove other {place}"), 0);
    assert!(!quiet.contains("RECEPTION_REMOVED"), "{quiet}");
}

#[test]
fn refusals_state_the_rule_and_the_fix() {
    let (data, place) = village();
    let before = world_bytes(&data);
    let bad_id = exits(&format!("servants add 'bad/id' --name B {place}"), 2);
    assert!(
        bad_id.contains("A-Z a-z 0-9 _ -") && bad_id.contains("64") && has_fix(&bad_id),
        "{bad_id}"
    );
    let tools = exits(
        &format!("servants add t1 --name T --tools nosuch {place}"),
        2,
    );
    assert!(
        tools.contains("no bundled tool nosuch")
            && tools.contains("Fix: ")
            && tools.contains("grep"),
        "{tools}"
    );
    let relative = exits(
        &format!("servants add t2 --name T --work-dir relative/dir {place}"),
        2,
    );
    assert!(
        relative.contains("workDir: ") && relative.contains("absolute") && has_fix(&relative),
        "{relative}"
    );
    let inside = data.workspace().join("notes");
    let near = exits(
        &format!(
            "servants add t3 --name T --work-dir {} {place}",
            inside.display()
        ),
        2,
    );
    assert!(has_fix(&near), "{near}");
    let missing = exits(&format!("servants set nobody --name N {place}"), 2);
    assert!(has_fix(&missing), "{missing}");
    let template = exits(
        &format!("servants add t4 --name T --template nope {place}"),
        2,
    );
    assert!(has_fix(&template), "{template}");
    let taken = exits(&format!("servants add rec --name Again {place}"), 11);
    assert!(has_fix(&taken), "{taken}");
    let itself = exits(&format!("servants connect rec rec {place}"), 2);
    assert!(has_fix(&itself), "{itself}");

    let context = exits(&format!("templates set stub --context-length 0 {place}"), 2);
    assert!(
        context.contains("contextLength: ")
            && !context.contains("maxOutputTokens")
            && has_fix(&context),
        "{context}"
    );
    let retries = exits(&format!("templates set stub --max-retries 0 {place}"), 2);
    assert!(
        retries.contains("maxRetries: ") && !retries.contains("requestTimeoutSecs"),
        "{retries}"
    );
    let lan = exits(
        &format!("templates add lan --base-url http://192.168.1.5:8080/v1 --model m {place}"),
        2,
    );
    assert!(
        lan.contains("ENDPOINT_INSECURE")
            && lan.contains("Fix: ")
            && lan.contains("--allow-insecure-http true"),
        "{lan}"
    );
    let unknown = exits(&format!("templates set nope --model m {place}"), 2);
    assert!(has_fix(&unknown), "{unknown}");
    assert_eq!(world_bytes(&data), before, "nothing written");
}

#[test]
fn zero_tool_rounds_is_refused_by_the_parser_and_groups_are_listed_by_name() {
    let (data, place) = village();
    let dir = data.data_dir().display().to_string();
    let zero = exits(&format!("servants set rec --max-tool-rounds 0 {place}"), 2);
    assert!(
        zero.contains("[USAGE]") && zero.contains("1..=255"),
        "{zero}"
    );
    exits(&format!("servants set rec --max-tool-rounds 1 {place}"), 0);

    let path = data.workspace().join("world.json");
    let mut world: Value = serde_json::from_slice(&world_bytes(&data)).unwrap();
    let group = "5b0c1a52-6d1e-4c57-9a59-3d1b2f0c9e11";
    world["groups"] = serde_json::json!([{"id": group, "name": "Core team"}]);
    std::fs::write(&path, serde_json::to_vec_pretty(&world).unwrap()).unwrap();
    exits(&format!("servants set rec --group {group} {place}"), 0);
    let table = stdout(&cli(&format!("servants list --data-dir {dir}")));
    assert!(
        table.contains("group: Core team") && !table.contains(group),
        "{table}"
    );
    assert_eq!(
        servant(&data, "rec").unwrap()["groupId"],
        Value::from(group),
        "--json keeps the id"
    );
}
