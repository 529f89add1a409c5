//! `fuseforks-cli init` through the binary: a working village, the refusal, usage errors.

use std::fs;

use fuseforks_core::village::{Credential, Language, Provider, VillageStore};
use fuseforks_testkit::{TempDataDir, snapshot};

use crate::{cli, stderr, stdout};

#[test]
fn init_founds_a_village_that_loads_and_says_what_to_do_next() {
    let data = TempDataDir::new();
    let dir = data.data_dir().join("nested/new");
    let out = cli(&format!(
        "init --data-dir {} --language en --provider anthropic",
        dir.to_str().unwrap()
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("FUSEFORKS_SECRET_ANTHROPIC"), "{text}");
    assert!(text.contains("fuseforks-cli ask --data-dir"), "{text}");
    assert!(text.contains("--start reception"), "{text}");
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));

    let store = VillageStore::new(dir.join("workspace"));
    let world = store.load_world().unwrap().value;
    assert_eq!(world.language(), Some(Language::En));
    let template = &world.model_templates[0];
    assert_eq!(
        (template.provider(), template.credential),
        (Provider::Anthropic, Credential::Keyring)
    );
    let reception = world.reception.clone().unwrap();
    assert_eq!(world.agents[0].id, reception);
    let files = store.agent_files(&reception).unwrap();
    assert!(files.read_construct().unwrap().contains("reception"));
    assert!(
        files
            .read_skill()
            .unwrap()
            .starts_with("# Reception procedure")
    );
    assert!(store.read_village_id().unwrap().is_some());
    assert!(store.read_ordinance().unwrap().starts_with("# Ordinance"));
}

#[test]
fn init_in_japanese_with_a_local_model_needs_no_key() {
    let data = TempDataDir::new();
    let dir = data.data_dir().to_str().unwrap();
    let out = cli(&format!(
        "init --data-dir {dir} --language ja --provider ollama"
    ));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !stdout(&out).contains("FUSEFORKS_SECRET_"),
        "{}",
        stdout(&out)
    );
    let store = VillageStore::new(data.workspace());
    let world = store.load_world().unwrap().value;
    assert_eq!(world.language(), Some(Language::Ja));
    assert_eq!(world.model_templates[0].credential, Credential::NotRequired);
    assert_eq!(world.agents[0].name, "受付");
    assert!(store.read_ordinance().unwrap().starts_with("# 条例"));
}

#[test]
fn the_language_defaults_to_the_os_locale() {
    let data = TempDataDir::new();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(["init", "--data-dir", data.data_dir().to_str().unwrap()])
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "ja_JP.UTF-8")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let world = VillageStore::new(data.workspace())
        .load_world()
        .unwrap()
        .value;
    assert_eq!(world.language(), Some(Language::Ja));
    assert_eq!(
        world.model_templates[0].id.as_str(),
        "openai",
        "openai is the default provider"
    );
}

#[test]
fn init_refuses_an_existing_village_with_exit_11_and_touches_nothing() {
    let data = TempDataDir::with_original_village();
    let before = snapshot(data.data_dir());
    let out = cli(&format!(
        "init --data-dir {} --provider gemini",
        data.data_dir().to_str().unwrap()
    ));
    assert_eq!(out.status.code(), Some(11));
    let err = stderr(&out);
    assert!(
        err.contains("VILLAGE_EXISTS") && err.contains("world.json"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
    assert_eq!(snapshot(data.data_dir()), before);

    // The same for a village this binary founded.
    let fresh = TempDataDir::new();
    let dir = fresh.data_dir().to_str().unwrap();
    assert_eq!(
        cli(&format!("init --data-dir {dir}")).status.code(),
        Some(0)
    );
    let before = snapshot(fresh.data_dir());
    assert_eq!(
        cli(&format!("init --data-dir {dir} --language ja"))
            .status
            .code(),
        Some(11)
    );
    assert_eq!(snapshot(fresh.data_dir()), before);
}

#[test]
fn usage_errors_exit_2_and_write_nothing() {
    let data = TempDataDir::new();
    let dir = data.data_dir().to_str().unwrap();
    for args in [
        "init".to_owned(),
        format!("init --data-dir {dir} --provider openia"),
        format!("init --data-dir {dir} --language fr"),
        "frobnicate".to_owned(),
    ] {
        let out = cli(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty());
    }
    assert!(
        fs::read_dir(data.data_dir()).unwrap().next().is_none(),
        "nothing was written"
    );
}

#[test]
fn a_write_failure_exits_5_and_leaves_no_half_village() {
    let data = TempDataDir::new();
    // A file where the data folder should be: nothing can be created under it.
    let blocker = data.data_dir().join("blocker");
    fs::write(&blocker, b"x").unwrap();
    let out = cli(&format!(
        "init --data-dir {}",
        blocker.join("dir").to_str().unwrap()
    ));
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("VILLAGE_WRITE_FAILED"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs::read(&blocker).unwrap(), b"x");
}

#[test]
fn version_and_help_with_examples() {
    let out = cli("--version");
    assert_eq!(out.status.code(), Some(0));
    let version = crate::binary_version();
    assert_eq!(stdout(&out), format!("fuseforks-cli {version}\n"));
    crate::assert_version_form(&version);
    let out = cli("--help");
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("Examples:") && stdout(&out).contains("init"));
    let out = cli("init --help");
    assert_eq!(out.status.code(), Some(0));
    let help = stdout(&out);
    assert!(
        help.contains("--data-dir") && help.contains("Examples:") && help.contains("ollama"),
        "{help}"
    );
}

/// `--events jsonl` covers `init` too: its refusals are `{"type":"cli",…}` lines
/// with the code and the fix apart, and its summary stays on stdout.
#[test]
fn init_refusals_are_json_lines_under_events_jsonl() {
    let data = TempDataDir::new();
    let dir = data.data_dir().join("v");
    let dir = dir.to_str().unwrap();
    let first = cli(&format!("--events jsonl init --data-dir {dir}"));
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(stdout(&first).starts_with("Founded a village"));
    assert!(stderr(&first).is_empty(), "{}", stderr(&first));
    for (args, code, status) in [
        (vec!["init", "--data-dir", dir], "VILLAGE_EXISTS", 11),
        (
            vec![
                "init",
                "--data-dir",
                "/nowhere/else",
                "--base-url",
                "http://10.0.0.2/v1",
                "--model",
                "m",
            ],
            "ENDPOINT_INSECURE",
            2,
        ),
    ] {
        let mut all = vec!["--events", "jsonl"];
        all.extend(args);
        let out = cli(&all.join(" "));
        assert_eq!(out.status.code(), Some(status), "{}", stderr(&out));
        let lines: Vec<serde_json::Value> = stderr(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
            .collect();
        assert_eq!(lines.len(), 1, "{}", stderr(&out));
        let line = &lines[0];
        assert_eq!(
            (line["type"].as_str(), line["code"].as_str()),
            (Some("cli"), Some(code))
        );
        let message = line["message"].as_str().unwrap();
        assert!(
            !message.contains("Fix:") && !message.starts_with('['),
            "{message}"
        );
        assert!(
            line["fix"].as_str().is_some_and(|f| !f.is_empty()),
            "{line}"
        );
    }
}
