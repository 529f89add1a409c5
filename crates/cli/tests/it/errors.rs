//! One rendering of an error everywhere: `level: [CODE] message` and then
//! `Fix: …` on its own line; under `--events jsonl`, `{"type":"cli",level,code,message,fix}`
//! with the message free of `[CODE]` and of the fix. This file drives every error path of the
//! binary (usage, missing village, a workspace given as data dir, locked village, preflight
//! reject, broken world.json, broken mcp.json, init refusals) in both renderings and scans the
//! output. It also holds the spec fixes that surface as errors (item 9): a missing template is a
//! preflight finding (exit 3), a malformed `${secret:…}` is refused when mcp.json is read.

use std::fs::File;
use std::process::Output;

use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use serde_json::Value;

use crate::headless::{run, village};
use crate::{cli, stderr, stdout, words};

/// Whether `text` starts with `[UPPER_SNAKE]`.
fn starts_with_code(text: &str) -> bool {
    text.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(code, _)| {
            !code.is_empty()
                && code
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
}

/// Fails on a doubled code or a fix inside the message, in human or jsonl output; returns the
/// codes seen (`level:CODE`).
fn scan(what: &str, out: &Output, jsonl: bool) -> Vec<String> {
    let err = stderr(out);
    let mut seen = Vec::new();
    let lines: Vec<&str> = err.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if jsonl {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|_| panic!("{what}: a stderr line is not JSON: {line}"));
            if value["type"] != "cli" {
                continue;
            }
            let code = value["code"].as_str().unwrap();
            let message = value["message"].as_str().unwrap();
            assert!(
                !starts_with_code(message) && !message.contains(&format!("[{code}]")),
                "{what}: the JSON message holds a code: {line}"
            );
            assert!(
                !message.contains("Fix:"),
                "{what}: the fix is inside the message: {line}"
            );
            if let Some(fix) = value.get("fix") {
                assert!(
                    fix.as_str()
                        .is_some_and(|f| !f.is_empty() && !f.contains("Fix:")),
                    "{what}: {line}"
                );
            }
            seen.push(format!("{}:{code}", value["level"].as_str().unwrap()));
        } else {
            let Some((level, rest)) = line.split_once(": [") else {
                continue;
            };
            if !["error", "warn", "reject", "info"].contains(&level) {
                continue;
            }
            let (code, message) = rest.split_once("] ").unwrap();
            assert!(
                !starts_with_code(message) && !message.contains(&format!("[{code}]")),
                "{what}: doubled code: {line}"
            );
            assert!(
                !message.contains("Fix:"),
                "{what}: the fix is not on its own line: {line}"
            );
            if let Some(next) = lines.get(i + 1)
                && next.contains("Fix")
            {
                assert!(next.starts_with("Fix: "), "{what}: {next}");
            }
            seen.push(format!("{level}:{code}"));
        }
    }
    seen
}

/// Runs `list` twice (human, then `--events jsonl` where the command takes it), scans both, and
/// returns both outputs.
async fn both(what: &str, line: &str, with_key: bool) -> (Output, Output) {
    let list = words(line);
    let human = run(list.clone(), with_key).await;
    scan(what, &human, false);
    let mut jsonl = list;
    let at = if jsonl[0] == "ask" {
        jsonl.len() - 1
    } else {
        jsonl.len()
    };
    jsonl.insert(at, "--events".into());
    jsonl.insert(at + 1, "jsonl".into());
    let json = run(jsonl, with_key).await;
    scan(what, &json, true);
    assert_eq!(human.status.code(), json.status.code(), "{what}");
    (human, json)
}

fn first_cli(out: &Output) -> Value {
    stderr(out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "cli")
        .unwrap_or_else(|| panic!("no cli line: {}", stderr(out)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_error_path_prints_a_code_twice_or_a_fix_inside_the_message() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    let dir = data.data_dir().display().to_string();

    // Missing village: check, ask, serve.
    for list in [
        format!("check --for ask --data-dir {dir} --start batch"),
        format!("serve --data-dir {dir} --start batch --secrets env"),
        format!("ask --data-dir {dir} --start reception --secrets env hi"),
    ] {
        let (human, json) = both("missing village", &list, true).await;
        assert_eq!(human.status.code(), Some(5), "{}", stderr(&human));
        assert!(
            stderr(&human).contains("error: [VILLAGE_MISSING] ")
                && stderr(&human).contains("\nFix: run `fuseforks-cli init"),
            "{}",
            stderr(&human)
        );
        let line = first_cli(&json);
        assert_eq!(line["code"], "VILLAGE_MISSING");
        assert!(line["fix"].as_str().unwrap().contains("init"), "{line}");
    }

    village(&data, stub.base_url(), None);

    // Usage errors: clap's, and the start set's.
    for list in [
        String::from("check --for ask"),
        format!("check --for ask --data-dir {dir} --start batch --bogus"),
        String::from("chek"),
    ] {
        let (human, json) = both("clap usage", &list, true).await;
        assert_eq!(human.status.code(), Some(2));
        assert!(
            stderr(&human).starts_with("error: [USAGE] ")
                && stderr(&human).contains("\nFix: ")
                && stderr(&human).lines().count() == 2,
            "{}",
            stderr(&human)
        );
        assert_eq!(first_cli(&json)["code"], "USAGE");
    }
    for start in ["ghost", "rec,rec"] {
        for list in [
            format!("check --for ask --data-dir {dir} --start {start}"),
            format!("ask --data-dir {dir} --start {start} --secrets env hi"),
        ] {
            let (human, json) = both("start usage", &list, true).await;
            assert_eq!(human.status.code(), Some(2), "{list:?}");
            assert!(
                stderr(&human).starts_with("error: [USAGE] --start"),
                "{}",
                stderr(&human)
            );
            assert!(
                first_cli(&json)["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("--start"),
                "{}",
                stderr(&json)
            );
            assert!(first_cli(&json)["fix"].is_string(), "{}", stderr(&json));
        }
    }

    // Preflight reject (no key): ask's stderr and check's stdout.
    let (human, json) = both(
        "preflight reject",
        &format!("ask --data-dir {dir} --start reception --secrets env hi"),
        false,
    )
    .await;
    assert_eq!(human.status.code(), Some(3));
    assert!(
        stderr(&human).contains("reject: [SECRET_MISSING] ") && stderr(&human).contains("\nFix: "),
        "{}",
        stderr(&human)
    );
    assert_eq!(first_cli(&json)["level"], "reject");
    let check = run(
        words(&format!(
            "check --for ask --data-dir {dir} --start batch --secrets env"
        )),
        false,
    )
    .await;
    assert_eq!(check.status.code(), Some(3));
    let report = stdout(&check);
    assert!(
        report.contains("\nreject [SECRET_MISSING] No API key")
            && report.contains("\nFix: Store it with `fuseforks-cli secrets set stub")
            && !report.contains("Reject")
            && !report.contains("  fix:"),
        "{report}"
    );

    // Locked village.
    let lock = File::create(data.workspace().join(".fuseforks.lock")).unwrap();
    lock.lock().unwrap();
    for list in [
        format!("serve --data-dir {dir} --start batch --secrets env"),
        format!("ask --data-dir {dir} --start reception --secrets env hi"),
    ] {
        let (human, json) = both("locked village", &list, true).await;
        assert_eq!(human.status.code(), Some(4), "{}", stderr(&human));
        assert!(
            stderr(&human).contains("error: [VILLAGE_LOCKED] ")
                && stderr(&human).contains("\nFix: close that one first"),
            "{}",
            stderr(&human)
        );
        assert_eq!(first_cli(&json)["code"], "VILLAGE_LOCKED");
    }
    drop(lock);

    // A broken mcp.json.
    data.write(
        "mcp.json",
        r#"{"mcpServers":{"x":{"type":"sse","url":"https://x/sse"}}}"#,
    );
    let (human, json) = both(
        "broken mcp.json",
        &format!("check --for ask --data-dir {dir} --start batch --secrets env"),
        true,
    )
    .await;
    assert_eq!(human.status.code(), Some(5));
    assert!(
        stderr(&human).contains("error: [VILLAGE_FILE_INVALID] "),
        "{}",
        stderr(&human)
    );
    assert!(first_cli(&json)["fix"].is_string(), "{}", stderr(&json));
    std::fs::remove_file(data.workspace().join("mcp.json")).unwrap();

    // A broken world.json.
    data.write("world.json", "{\"agents\": [");
    for list in [
        format!("check --for serve --data-dir {dir} --start batch"),
        format!("serve --data-dir {dir} --start batch --secrets env"),
    ] {
        let (human, json) = both("broken world.json", &list, true).await;
        assert_eq!(human.status.code(), Some(5), "{}", stderr(&human));
        assert!(
            stderr(&human).contains("error: [VILLAGE_FILE_INVALID] ")
                && stderr(&human).contains("\nFix: "),
            "{}",
            stderr(&human)
        );
        assert_eq!(first_cli(&json)["code"], "VILLAGE_FILE_INVALID");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_given_as_data_dir_is_told_to_use_its_parent() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let workspace = data.workspace().display().to_string();
    for list in [
        format!("check --for ask --data-dir {workspace} --start batch"),
        format!("ask --data-dir {workspace} --start reception --secrets env hi"),
    ] {
        let (human, json) = both("workspace as data dir", &list, true).await;
        assert_eq!(human.status.code(), Some(5));
        assert!(
            stderr(&human).contains("error: [VILLAGE_MISSING] ")
                && stderr(&human).contains(
                    "\nFix: --data-dir points at a village's workspace folder; use its parent"
                ),
            "{}",
            stderr(&human)
        );
        let fix = first_cli(&json)["fix"].as_str().unwrap().to_owned();
        assert!(fix.contains("use its parent"), "{fix}");
    }
    let init = cli(&format!("init --data-dir {workspace} --language en"));
    assert_eq!(init.status.code(), Some(11), "{}", stderr(&init));
    scan("init into a workspace", &init, false);
    assert!(
        stderr(&init).contains("error: [VILLAGE_EXISTS] ")
            && stderr(&init).contains(
                "\nFix: --data-dir points at a village's workspace folder; use its parent"
            ),
        "{}",
        stderr(&init)
    );
    assert!(
        !data.workspace().join("workspace").exists(),
        "no village nested in a village"
    );
    let again = cli(&format!("init --data-dir {}", data.data_dir().display()));
    assert_eq!(again.status.code(), Some(11));
    scan("init again", &again, false);
    assert!(
        stderr(&again).starts_with("error: [VILLAGE_EXISTS] ")
            && stderr(&again).contains("\nFix: "),
        "{}",
        stderr(&again)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_naming_a_missing_template_is_a_preflight_finding() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let world_file = data.workspace().join("world.json");
    let mut world: Value = serde_json::from_slice(&std::fs::read(&world_file).unwrap()).unwrap();
    world["agents"][0]["modelTemplateId"] = "gone".into();
    std::fs::write(&world_file, world.to_string()).unwrap();
    let dir = data.data_dir().display().to_string();
    let (human, json) = both(
        "missing template",
        &format!("check --for ask --data-dir {dir} --start batch --secrets env"),
        true,
    )
    .await;
    assert_eq!(human.status.code(), Some(3), "{}", stderr(&human));
    let report = stdout(&human);
    assert!(
        report.contains(
            "reject [MODEL_TEMPLATE_MISSING] Template gone does not exist (used by rec)."
        ),
        "{report}"
    );
    assert!(stdout(&json).contains("MODEL_TEMPLATE_MISSING"));
    let ask = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hi"
        )),
        true,
    )
    .await;
    assert_eq!(ask.status.code(), Some(3), "{}", stderr(&ask));
    assert!(stderr(&ask).contains("reject: [MODEL_TEMPLATE_MISSING] "));
    assert!(stub.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_secret_reference_is_refused_when_mcp_json_is_read() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    for value in ["Bearer ${secret:bad-name}", "Bearer ${secret:OPEN"] {
        let text = serde_json::json!({"mcpServers": {"remote": {
            "type": "http", "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": value}
        }}});
        data.write("agents/rec/mcp.json", text.to_string());
        let (human, json) = both(
            "malformed secret reference",
            &format!("check --for ask --data-dir {dir} --start batch --secrets env"),
            true,
        )
        .await;
        assert_eq!(human.status.code(), Some(5), "{value}: {}", stderr(&human));
        let err = stderr(&human);
        assert!(
            err.contains("error: [VILLAGE_FILE_INVALID] ")
                && err.contains("agents/rec/mcp.json")
                && err.contains("mcpServers.remote")
                && err.contains("header `Authorization`")
                && !err.contains("Bearer"),
            "{value}: {err}"
        );
        assert!(!stderr(&json).contains("Bearer"));
    }
}
