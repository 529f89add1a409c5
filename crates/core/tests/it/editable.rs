//! The editable village files: only the listed paths can be named (no traversal), a JSON
//! text's problem comes with its line and column, a judge text's with the parser's place, a
//! save of a broken text writes nothing, a JSON save keeps the fields this version does not
//! know, and text files are written as given.

use fuseforks_core::llm::Wire;
use fuseforks_core::village::{EditError, EditableFile, VillageStore};

use crate::orch_support::Village;

fn setup() -> (Village, VillageStore, fuseforks_core::village::World) {
    let v = Village::new(Wire::OpenAiCompat, "http://127.0.0.1:9/v1", None);
    v.data.edit_world(|w| {
        w.judges.push(
            serde_json::from_value(
                serde_json::json!({"id": "gate", "name": "Gate", "order": 0, "enabled": false}),
            )
            .unwrap(),
        );
    });
    let store = v.store();
    let world = store.load_world().unwrap().value;
    (v, store, world)
}

#[test]
fn only_the_listed_files_can_be_named() {
    for bad in [
        "world.jsonx",
        "../x",
        "agents/../world.json",
        "agents/a1/../../x/SKILL.md",
        "agents/a1/notes.md",
        "/etc/passwd",
        "judges/gate/other.toml",
        "",
    ] {
        assert_eq!(EditableFile::parse(bad), None, "{bad}");
    }
    let (_v, _s, world) = setup();
    assert!(
        EditableFile::parse("agents/a1/SKILL.md")
            .unwrap()
            .exists_in(&world)
    );
    assert!(
        !EditableFile::parse("agents/zz/SKILL.md")
            .unwrap()
            .exists_in(&world),
        "no agent zz"
    );
    assert!(
        EditableFile::parse("judges/gate/judge.toml")
            .unwrap()
            .exists_in(&world)
    );
}

#[test]
fn problems_come_with_their_place_and_a_broken_text_is_never_written() {
    let (v, store, world) = setup();
    let run = EditableFile::parse("agents/a1/run.json").unwrap();
    let findings = store.check_editable(&run, "{\n  \"version\": 1,\n  \"allow\": [\n}", &world);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].line, 4, "{findings:?}");
    let judge = EditableFile::parse("judges/gate/judge.toml").unwrap();
    let findings = store.check_editable(&judge, "[questions.kind]\ntype = 7\n", &world);
    assert!(
        findings[0].line >= 1 && findings[0].message.contains("type"),
        "{findings:?}"
    );
    let before = std::fs::read(v.data.workspace().join("agents/a1/run.json")).ok();
    let err = store.save_editable(&run, "{ not json", &world).unwrap_err();
    assert!(matches!(err, EditError::Findings(_)));
    assert_eq!(fuseforks_core::Coded::code(&err), "FILE_INVALID");
    assert_eq!(
        std::fs::read(v.data.workspace().join("agents/a1/run.json")).ok(),
        before,
        "nothing written"
    );
    // A judge naming a servant the village lacks is refused too (the roster is checked).
    let text =
        fuseforks_core::judge::starter_template("nobody", fuseforks_core::village::Language::En);
    assert!(!store.check_editable(&judge, &text, &world).is_empty());
    let good = fuseforks_core::judge::starter_template("a1", fuseforks_core::village::Language::En);
    assert!(store.check_editable(&judge, &good, &world).is_empty());
    store.save_editable(&judge, &good, &world).unwrap();
    assert_eq!(store.read_editable(&judge).unwrap(), good);
}

#[test]
fn a_json_save_keeps_unknown_fields_and_text_is_written_as_given() {
    let (_v, store, world) = setup();
    let mcp = EditableFile::parse("mcp.json").unwrap();
    store
        .save_editable(&mcp, r#"{"mcpServers": {"echo": {"command": "echo", "futureField": 7}}, "alsoUnknown": true}"#, &world)
        .unwrap();
    let back: serde_json::Value =
        serde_json::from_str(&store.read_editable(&mcp).unwrap()).unwrap();
    assert_eq!(back["alsoUnknown"], true);
    assert_eq!(back["mcpServers"]["echo"]["futureField"], 7);
    let skill = EditableFile::parse("agents/a1/SKILL.md").unwrap();
    store
        .save_editable(&skill, "  1. keep  \n\n", &world)
        .unwrap();
    assert_eq!(store.read_editable(&skill).unwrap(), "  1. keep  \n\n");
    let big = "a".repeat(fuseforks_core::village::MAX_EDIT_BYTES + 1);
    assert!(
        store.save_editable(&skill, &big, &world).is_err(),
        "over the limit"
    );
}

#[test]
fn every_listed_path_names_its_own_file() {
    let paths = [
        "world.json",
        "Ordinance.md",
        "schedules.json",
        "mcp.json",
        "agents/a1/Construct.md",
        "agents/a1/SKILL.md",
        "agents/a1/Memory.md",
        "agents/a1/mcp.json",
        "agents/a1/run.json",
        "judges/gate/judge.toml",
    ];
    let files: Vec<EditableFile> = paths
        .iter()
        .map(|p| EditableFile::parse(p).unwrap())
        .collect();
    for (file, path) in files.iter().zip(paths) {
        assert_eq!(file.path(), path);
    }
    for (i, a) in files.iter().enumerate() {
        for b in &files[i + 1..] {
            assert_ne!(a, b, "each path is a file of its own");
        }
    }
}

#[test]
fn each_json_kind_is_checked_by_its_own_model_and_the_size_cap_is_exact() {
    let (v, store, world) = setup();
    let check = |path: &str, text: &str| {
        store.check_editable(&EditableFile::parse(path).unwrap(), text, &world)
    };
    assert!(
        !check("schedules.json", r#"[{"id": 1}]"#).is_empty(),
        "a task without its fields"
    );
    assert!(check("schedules.json", "[]").is_empty());
    assert!(
        !check("mcp.json", r#"{"mcpServers": {"x": {"type": "http"}}}"#).is_empty(),
        "no url"
    );
    assert!(!check("agents/a1/mcp.json", r#"{"mcpServers": 3}"#).is_empty());
    let world_text = std::fs::read_to_string(v.data.workspace().join("world.json")).unwrap();
    assert!(check("world.json", &world_text).is_empty());
    let missing = world_text.replacen("\"stub\"", "\"nope\"", 1);
    assert!(
        !check("world.json", &missing).is_empty(),
        "a template that does not exist"
    );
    assert!(!check("world.json", "{").is_empty());
    let limit = fuseforks_core::village::MAX_EDIT_BYTES;
    assert!(
        check("Ordinance.md", &"a".repeat(limit)).is_empty(),
        "exactly the cap"
    );
    assert!(!check("Ordinance.md", &"a".repeat(limit + 1)).is_empty());
    let ordinance = EditableFile::parse("Ordinance.md").unwrap();
    std::fs::write(v.data.workspace().join("Ordinance.md"), "a".repeat(limit)).unwrap();
    assert_eq!(store.read_editable(&ordinance).unwrap().len(), limit);
    std::fs::write(
        v.data.workspace().join("Ordinance.md"),
        "a".repeat(limit + 1),
    )
    .unwrap();
    assert!(
        store.read_editable(&ordinance).is_err(),
        "over the cap is not read"
    );
    assert!(
        store
            .save_editable(&EditableFile::World, &world_text, &world)
            .is_err(),
        "world.json goes through update_world"
    );
}

#[test]
fn a_fifo_or_a_folder_where_a_file_should_be_is_refused_at_once() {
    let (v, store, _world) = setup();
    let skill = v.data.workspace().join("agents/a1/SKILL.md");
    std::fs::remove_file(&skill).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&skill)
        .status()
        .unwrap();
    assert!(made.success());
    let file = EditableFile::parse("agents/a1/SKILL.md").unwrap();
    let started = std::time::Instant::now();
    assert!(store.read_editable(&file).is_err(), "a FIFO is not read");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(1),
        "and nothing waits on it"
    );
    std::fs::remove_file(&skill).unwrap();
    std::fs::create_dir(&skill).unwrap();
    assert!(store.read_editable(&file).is_err(), "a folder is not read");
}
