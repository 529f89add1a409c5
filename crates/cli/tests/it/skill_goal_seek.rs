//! A goal-seeking SKILL.md runs as written, through the binary: its front matter read (one
//! fresh context, `max_loops`, `allowed-tools`), its records written by the model through the
//! file tools, and its `python3 - <<'PY'` check run through `run` under Landlock — also when
//! `python3` is a version manager's shim on `PATH` (`docs/threat-model.md`).

use std::path::{Path, PathBuf};
use std::process::Output;

use fuseforks_core::llm::Wire;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{TempDataDir, fixture_bytes};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::headless::{U, command, stub_village};
use crate::{stderr, stdout, words};

const WIRE: Wire = Wire::OpenAiCompat;
const GOAL_SPEC: &str = "eval-log/goal-spec.json";
const ROWS: &str = "eval-log/intermediate.jsonl";
const GOAL: &str = "Rebuild the config of the lantern-festival notice; the page stays as it is.";

/// The skill of these tests (`crates/testkit/fixtures/skills/goal-seek/SKILL.md`).
fn skill() -> String {
    String::from_utf8(fixture_bytes("skills/goal-seek/SKILL.md")).unwrap()
}

/// The skill's check as written: the arguments after `python3` and the heredoc's body.
fn skill_check() -> (Vec<String>, String) {
    let text = skill();
    let start = text.find("python3 - ").expect("the skill's check line");
    let line_end = start + text[start..].find('\n').unwrap();
    let line = &text[start..line_end];
    let args: Vec<String> = line["python3 ".len()..line.find(" <<'PY'").unwrap()]
        .split_whitespace()
        .map(|a| a.trim_matches('"').to_owned())
        .collect();
    let body_end = line_end + text[line_end..].find("\nPY\n").unwrap();
    (args, text[line_end + 1..=body_end].to_owned())
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One row of the intermediate record, with `hash` as its `original_goal_hash`.
fn row(hash: &str, directive: &str) -> String {
    let row = json!({
        "original_goal": GOAL,
        "original_goal_hash": hash,
        "current_goal_snapshot": GOAL,
        "delta_from_original": "none",
        "merged_directive_for_next": directive,
        "drift_signal": false,
    });
    format!("{row}\n")
}

fn call(id: &str, name: &str, args: Value) -> ScriptCall {
    ScriptCall {
        id: id.into(),
        name: name.into(),
        args,
    }
}

/// The `run` call of the skill's check.
fn check_call(id: &str) -> ScriptCall {
    let (args, body) = skill_check();
    call(
        id,
        "run",
        json!({"command": "python3", "args": args, "stdin": body}),
    )
}

/// A village whose reception has `skill` as its SKILL.md and a work folder (returned), with
/// `run.json` allowing `allow`.
fn village(data: &TempDataDir, stub: &str, skill: &str, allow: &[&str]) -> TempDataDir {
    let work = TempDataDir::new();
    let at = work.data_dir().display().to_string();
    stub_village(stub)
        .world(|w| w.agents[0].work_dir = Some(at))
        .write(data);
    data.write("agents/rec/SKILL.md", skill);
    data.write(
        "agents/rec/run.json",
        json!({"version": 1, "allow": allow, "deny": []}).to_string(),
    );
    work
}

/// `ask … hi` with `PATH` set to `path`.
fn ask(data: &TempDataDir, path: &str) -> Output {
    command(
        words(&format!(
            "ask --data-dir {} --start reception --secrets env hi",
            data.data_dir().display()
        )),
        true,
    )
    .env("PATH", path)
    .output()
    .unwrap()
}

/// The text of the `tool` message answering call `id`, from any request the stub got.
fn tool_result(stub: &StubServer, id: &str) -> String {
    stub.requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

/// A pyenv-like tree: `shims/python3` a shell script that runs `versions/3.0/bin/python3`,
/// itself a script that runs the system's `/usr/bin/python3`. Returns the tree's root.
fn fake_version_manager(root: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let version_bin = root.join("versions/3.0/bin");
    std::fs::create_dir_all(&version_bin).unwrap();
    std::fs::create_dir_all(root.join("shims")).unwrap();
    let scripts = [
        (
            root.join("shims/python3"),
            format!(
                "#!/bin/sh\nexec \"{}\" \"$@\"\n",
                version_bin.join("python3").display()
            ),
        ),
        (
            version_bin.join("python3"),
            "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n".to_owned(),
        ),
    ];
    for (path, text) in scripts {
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    root.to_path_buf()
}

/// The skill's check through `run`, with `python3` a version manager's shim on `PATH`: it
/// was refused (exit 126: the shim's target, beneath the manager's root, was not executable
/// under Landlock); now it runs (exit 0), while writing into the manager's tree stays refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_skill_check_runs_through_a_version_manager_shim_under_landlock() {
    if !fuseforks_testkit::landlock(1) || !Path::new("/usr/bin/python3").exists() {
        eprintln!("skipped: needs Landlock and /usr/bin/python3");
        return;
    }
    let manager = TempDataDir::new();
    let root = fake_version_manager(manager.data_dir());
    let planted = root.join("versions/3.0/bin/planted");
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(
            WIRE,
            &[
                check_call("c1"),
                call(
                    "c2",
                    "run",
                    json!({"command": "sh", "args": ["-c", format!("echo x > {}", planted.display())]}),
                ),
            ],
            U,
        ),
        wire_replies::text(WIRE, "checked", U),
    ])
    .await;
    let data = TempDataDir::new();
    let work = village(&data, stub.base_url(), "Run the check.\n", &["python3 *", "sh *"]);
    let work_file = |relative: &str, text: &str| {
        let path = work.data_dir().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    work_file(GOAL_SPEC, &json!({ "original_goal": GOAL }).to_string());
    work_file(ROWS, &row(&sha256_hex(GOAL), "next"));
    let path = format!("{}:/usr/bin:/bin", root.join("shims").display());
    let out = ask(&data, &path);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "checked");
    let check = tool_result(&stub, "c1");
    assert!(
        check.starts_with("exit: 0\n"),
        "the check through the shim: {check}"
    );
    let write = tool_result(&stub, "c2");
    assert!(!write.starts_with("exit: 0\n"), "{write}");
    assert!(!planted.exists(), "run wrote into the toolchain folder");
}
