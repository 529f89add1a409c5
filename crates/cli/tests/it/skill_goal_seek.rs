//! A goal-seeking SKILL.md runs as written, through the binary: its front matter read (one
//! fresh context, `max_loops`, `allowed-tools`), its records written by the model through the
//! file tools, and its `python3 - <<'PY'` check run through `run` under Landlock — also when
//! `python3` is a version manager's shim on `PATH` (`docs/threat-model.md`).

use std::path::{Path, PathBuf};
use std::process::Output;

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{Record, SessionStore, StoredRecord, TurnRecord};
use fuseforks_core::village::SkillFork;
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
        .world(|w| {
            w.agents[0].work_dir = Some(at);
            w.agents[0].enabled_tools = Some(["file", "grep", "run"].map(str::to_owned).to_vec());
        })
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
    if !fuseforks_testkit::landlock(1) || !fuseforks_testkit::system_python() {
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
    let work = village(
        &data,
        stub.base_url(),
        "Run the check.\n",
        &["python3 *", "sh *"],
    );
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

/// The `turn` records of the village's conversations, as stored.
fn turn_records(data: &TempDataDir) -> Vec<TurnRecord> {
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let mut turns = Vec::new();
    for (id, _) in store.list().unwrap() {
        for (_, record) in store.records(&id).unwrap() {
            if let StoredRecord::Known(Record::Turn(t)) = record {
                turns.push(t);
            }
        }
    }
    turns
}

/// The model's script of the skill: the goal written, then two loops, each appending its row
/// (`hashes[i]` as its `original_goal_hash`) and running the skill's check; then `answer`.
fn goal_seek_script(hashes: [&str; 2], answer: &str) -> Vec<fuseforks_testkit::stub::StubReply> {
    let goal_spec = json!({ "original_goal": GOAL }).to_string();
    let mut replies = vec![wire_replies::tool_calls(
        WIRE,
        &[
            call("mk", "file", json!({"op": "mkdir", "path": "eval-log"})),
            call(
                "spec",
                "file",
                json!({"op": "write", "path": GOAL_SPEC, "content": goal_spec}),
            ),
        ],
        U,
    )];
    for (i, hash) in hashes.iter().enumerate() {
        let directive = format!("loop {} done; next: the open checklist items", i + 1);
        replies.push(wire_replies::tool_calls(
            WIRE,
            &[
                call(
                    &format!("row{i}"),
                    "file",
                    json!({"op": "append", "path": ROWS, "content": row(hash, &directive)}),
                ),
                check_call(&format!("check{i}")),
            ],
            U,
        ));
    }
    replies.push(wire_replies::text(WIRE, answer, U));
    replies
}

/// `python3` as this machine has it first on `PATH` (a pyenv shim here), then the system's.
fn path_with_python() -> String {
    format!(
        "{}:/usr/bin:/bin",
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A goal-seeking skill end to end: the model writes the goal, appends two rows with the
/// goal's SHA-256 and runs the skill's own check through `run` after each (exit 0). The
/// front matter is honoured (tools offered: `file` and `run`; 5 loops of 12 calls; a fresh
/// context) and said in the turn record; it never reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_seeking_skill_runs_as_written_and_its_check_passes() {
    if !fuseforks_testkit::system_python() {
        return;
    }
    let good = sha256_hex(GOAL);
    let stub = StubServer::start(goal_seek_script([&good, &good], "two loops, check passed")).await;
    let data = TempDataDir::new();
    let work = village(&data, stub.base_url(), &skill(), &["python3 *"]);
    let out = ask(&data, &path_with_python());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "two loops, check passed");
    for id in ["check0", "check1"] {
        let result = tool_result(&stub, id);
        assert!(result.starts_with("exit: 0\n"), "{id}: {result}");
    }
    let rows = std::fs::read_to_string(work.data_dir().join(ROWS)).unwrap();
    assert_eq!(rows.lines().count(), 2, "append-only: {rows}");
    let first = &stub.requests()[0].body;
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["file", "run"]);
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("# Rebuild a notice page's config") && !system.contains("max_loops: 5"),
        "the procedure, not the front matter: {system}"
    );
    let turns = turn_records(&data);
    assert_eq!(turns.len(), 1, "{turns:?}");
    let skill = turns[0]
        .skill
        .clone()
        .expect("the turn record says the skill");
    assert_eq!(
        (skill.terms.max_loops, skill.round_cap, skill.terms.fork),
        (Some(5), 60, Some(SkillFork::Subagent))
    );
    assert_eq!(turns[0].rounds, 4);
}

/// The same skill where the second loop's row carries a wrong hash: the skill's check fails
/// (exit 1, the assertion of line 10 — the hash — named), and the tool result the model reads
/// says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_with_a_wrong_goal_hash_fails_the_skills_check() {
    if !fuseforks_testkit::system_python() {
        return;
    }
    let good = sha256_hex(GOAL);
    let wrong = sha256_hex("a drifted goal");
    let stub = StubServer::start(goal_seek_script([&good, &wrong], "the check failed")).await;
    let data = TempDataDir::new();
    let _work = village(&data, stub.base_url(), &skill(), &["python3 *"]);
    let out = ask(&data, &path_with_python());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let passed = tool_result(&stub, "check0");
    assert!(passed.starts_with("exit: 0\n"), "{passed}");
    let failed = tool_result(&stub, "check1");
    assert!(
        failed.starts_with("exit: 1\n")
            && failed.contains("AssertionError")
            && failed.contains("line 10"),
        "{failed}"
    );
}

/// A front matter the village cannot take as written is said, never refused: `check` lists
/// an unknown key and a `max_loops` above the cap as warnings naming SKILL.md and the key,
/// and `ask` says them on stderr and still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_key_and_max_loops_over_the_cap_are_warnings() {
    let stub = StubServer::start(vec![wire_replies::text(WIRE, "still here", U)]).await;
    let data = TempDataDir::new();
    let text = "---\nmax_loops: 50\ncontext: fork\n---\nAnswer.\n";
    let _work = village(&data, stub.base_url(), text, &[]);
    let dir = data.data_dir().display().to_string();
    let check = command(
        words(&format!(
            "check --for ask --data-dir {dir} --secrets env --json"
        )),
        true,
    )
    .output()
    .unwrap();
    let report: Value = serde_json::from_str(&stdout(&check)).unwrap();
    let findings = report["findings"].as_array().unwrap();
    for (code, field) in [
        ("VALUE_CLAMPED", "max_loops"),
        ("SKILL_KEY_UNKNOWN", "context"),
    ] {
        let f = findings
            .iter()
            .find(|f| f["code"] == code && f["field"] == field)
            .unwrap_or_else(|| panic!("{code} {field}: {findings:#?}"));
        assert_eq!(
            (f["level"].as_str(), f["file"].as_str()),
            (Some("warn"), Some("workspace/agents/rec/SKILL.md")),
            "{f}"
        );
    }
    let out = ask(&data, &path_with_python());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "still here");
    let err = stderr(&out);
    assert!(
        err.contains("SKILL_KEY_UNKNOWN")
            && err.contains("`context`")
            && err.contains("VALUE_CLAMPED"),
        "{err}"
    );
    let skill = turn_records(&data)[0].skill.clone().unwrap();
    assert_eq!((skill.terms.max_loops, skill.round_cap), (Some(20), 240));
}
