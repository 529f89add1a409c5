//! `bake` through the binary: every refusal exits with its code and
//! writes nothing (the destination tree hashed before and after), the first bake, the
//! `--update` round trip keeping container state, probe approvals re-keyed (SHA-256 computed
//! here independently), `--env-out`, and the original's fixture village baked then checked as
//! the image's CMD would.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use fuseforks_testkit::TempDataDir;
use serde_json::{Value, json};

use crate::{stderr, stdout, words};

const KEY: &str = "sk-bake-test-VALUE-7f3a";
/// The `village_id` of the testkit fixture `original-village`.
const VID: &str = "7c41d2e9-5b08-4f6a-a3d1-90e2b6f4c815";

/// A source village (the original's fixture, grown) and a destination folder.
struct Fx {
    src: TempDataDir,
    dest: tempfile::TempDir,
}

impl Fx {
    /// The original's village with one agent given Windows paths, files of every place of the
    /// D1 table, a schedule with both probes, and runtime files that must never travel.
    fn new() -> Self {
        let src = TempDataDir::with_original_village();
        src.edit_world(|w| {
            let a = &mut w.agents[0];
            a.work_dir = Some(r"D:\Github\Outcasts-MathLab".into());
            a.rag_sources = vec![r"d:\manualerag\Docs".into()];
        });
        // An unknown field the copy must keep.
        let world = src.workspace().join("world.json");
        let mut value: Value = serde_json::from_slice(&std::fs::read(&world).unwrap()).unwrap();
        value["futureField"] = json!({"kept": true});
        std::fs::write(&world, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
        src.write("agents/agent_1/Construct.md", "I am the reception.\n");
        src.write("agents/agent_1/SKILL.md", "Notes live in D:\\Notes\\x.md\n");
        src.write("agents/agent_1/Memory.md", "remembered at the GUI\n");
        src.write("agents/agent_1/icon.webp", b"RIFF\x00\x01webp");
        src.write(
            "agents/agent_1/run.json",
            r#"{"version":1,"allow":["git status","make *"],"deny":[],"pending":[{"command":"ls","args":[],"firstRequestedAtMs":5,"count":1}]}"#,
        );
        src.write(
            "agents/agent_1/mcp.json",
            r#"{"mcpServers":{"memo":{"command":"C:\\tools\\memo.exe","args":[],"env":{}},
            "remote":{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${secret:REMOTE}","Accept":"x"}}}}"#,
        );
        src.write("Ordinance.md", "Be kind.\n");
        src.write(
            "schedules.json",
            r#"[{"id":"s-1","to":"agent_1","message":"daily check","recurrence":{"kind":"daily","hour":9,"minute":0},
              "createdAtMs":1000,"lastConsumedDueMs":123456,
              "probe":{"command":"git","args":["status","--short"],"expect":"clean","cwd":"D:\\Github\\Outcasts-MathLab\\repo"},
              "acceptance":{"command":"test","args":["-f","done"],"expect":"ok","cwd":"D:\\Github\\Outcasts-MathLab"}}]"#,
        );
        src.write("sessions.redb", b"not copied");
        src.write("fuseforks.log", b"not copied");
        std::fs::write(
            src.data_dir().join("mcp_server.json"),
            r#"{"enabled":true,"token":"door-secret"}"#,
        )
        .unwrap();
        std::fs::write(
            src.data_dir().join("jev.json"),
            r#"{"enabled":false,"accountId":"acc"}"#,
        )
        .unwrap();
        let dest = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dest.path().join("work/mathlab")).unwrap();
        Self { src, dest }
    }

    fn out(&self) -> PathBuf {
        self.dest.path().join("copy")
    }

    fn maps(&self) -> String {
        let work = self.dest.path().join("work");
        format!(
            r"--map D:\Github=/work --map D:\Github\Outcasts-MathLab={}/mathlab --map D:\ManualeRAG=/rag",
            work.display()
        )
    }

    /// `bake --data-dir SRC --out OUT <extra>` with `envs` (and TZ=Asia/Tokyo unless given).
    fn bake(&self, extra: &str, envs: &[(&str, &str)]) -> Output {
        let line = format!(
            "bake --data-dir {} --out {} {extra}",
            self.src.data_dir().display(),
            self.out().display()
        );
        let mut c = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"));
        c.args(words(&line))
            .env("LANG", "C.UTF-8")
            .env("TZ", "Asia/Tokyo")
            .env_remove("FUSEFORKS_SECRET_STUB");
        for (k, v) in envs {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn copy_json(&self, rel: &str) -> Value {
        serde_json::from_slice(&std::fs::read(self.out().join(rel)).unwrap()).unwrap()
    }
}

/// A digest of every entry under `root` (names of files and folders, and file bytes).
fn tree_digest(root: &Path) -> u64 {
    fn walk(dir: &Path, h: &mut DefaultHasher) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            e.file_name().hash(h);
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            if meta.is_dir() {
                walk(&e.path(), h);
            } else if meta.is_file() {
                std::fs::read(e.path()).unwrap().hash(h);
            }
        }
    }
    let mut h = DefaultHasher::new();
    walk(root, &mut h);
    h.finish()
}

/// Runs `bake` and asserts its exit code and that nothing under the destination changed.
fn refused(fx: &Fx, extra: &str, envs: &[(&str, &str)], code: i32, text: &str) {
    let before = tree_digest(fx.dest.path());
    let out = fx.bake(extra, envs);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{extra}: {err}");
    assert!(err.contains(text), "{extra}: {err}");
    assert_eq!(
        tree_digest(fx.dest.path()),
        before,
        "{extra}: the destination changed"
    );
}

#[test]
fn every_refusal_has_its_code_and_writes_nothing() {
    let fx = Fx::new();
    let maps = fx.maps();
    // 2: arguments.
    refused(&fx, "--map relative=/work", &[], 2, "BAKE_MAP_INVALID");
    refused(&fx, r"--map D:\x=/a --map d:/X/=/b", &[], 2, "twice");
    refused(&fx, r"--map D:\x=", &[], 2, "empty side");
    refused(
        &fx,
        &format!("{maps} --source-time-zone Not/AZone"),
        &[],
        2,
        "BAKE_TIME_ZONE_UNREADABLE",
    );
    refused(
        &fx,
        &maps,
        &[("TZ", "Bogus/Zone")],
        2,
        "BAKE_TIME_ZONE_UNREADABLE",
    );
    std::fs::write(fx.dest.path().join("file"), "x").unwrap();
    let as_file = format!(
        "bake --data-dir {} --out {} {maps}",
        fx.src.data_dir().display(),
        fx.dest.path().join("file").display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(words(&as_file))
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a file"));
    let inside = format!(
        "bake --data-dir {} --out {} {maps}",
        fx.src.data_dir().display(),
        fx.src.data_dir().join("inner").display()
    );
    let before = tree_digest(fx.src.data_dir());
    let out = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(words(&inside))
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("inside the source"));
    assert_eq!(tree_digest(fx.src.data_dir()), before);
    // 3: an absolute path no map covers, named with its field.
    refused(
        &fx,
        r"--map D:\Github=/work",
        &[],
        3,
        r"agents[agent_1].ragSources[0] = d:\manualerag\Docs",
    );
    // 10: a credential-like header in plaintext, in a disabled server too; the value unsaid.
    fx.src.write(
        "mcp.json",
        r#"{"mcpServers":{"off":{"type":"http","url":"https://x.example/mcp","headers":{"X-Api-Key":"plain-VALUE-1"},"enabled":false}}}"#,
    );
    let before = tree_digest(fx.dest.path());
    let out = fx.bake(&maps, &[]);
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    assert!(stderr(&out).contains("mcp.json: off / X-Api-Key"));
    assert!(!stderr(&out).contains("plain-VALUE-1") && !stdout(&out).contains("plain-VALUE-1"));
    assert_eq!(tree_digest(fx.dest.path()), before);
    std::fs::remove_file(fx.src.workspace().join("mcp.json")).unwrap();
    // 4: the source is open elsewhere.
    {
        let _held = fuseforks_host::lock::VillageLock::acquire(&fx.src.workspace()).unwrap();
        refused(&fx, &maps, &[], 4, "VILLAGE_LOCKED");
    }
    // 5: a source file that does not read, or is a link.
    let construct = fx.src.workspace().join("agents/agent_1/Construct.md");
    std::fs::remove_file(&construct).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", &construct).unwrap();
    refused(&fx, &maps, &[], 5, "symbolic link");
    std::fs::remove_file(&construct).unwrap();
    std::fs::write(&construct, "I am the reception.\n").unwrap();
    let world = fx.src.workspace().join("world.json");
    let good = std::fs::read(&world).unwrap();
    std::fs::write(&world, b"{ broken").unwrap();
    refused(&fx, &maps, &[], 5, "VILLAGE_FILE_INVALID");
    std::fs::write(&world, &good).unwrap();
    // 11: --update of a folder bake did not make; --env-out that exists.
    std::fs::create_dir_all(fx.out().join("workspace")).unwrap();
    refused(
        &fx,
        &format!("{maps} --update"),
        &[],
        11,
        "BAKE_OUT_NOT_A_COPY",
    );
    std::fs::write(fx.out().join("workspace/x"), "x").unwrap();
    refused(&fx, &maps, &[], 11, "BAKE_OUT_NOT_EMPTY");
    std::fs::remove_dir_all(fx.out()).unwrap();
    let env = fx.dest.path().join(".env");
    std::fs::write(&env, "TZ=UTC\n").unwrap();
    let env_arg = format!("{maps} --secrets env --env-out {}", env.display());
    refused(&fx, &env_arg, &[], 11, "BAKE_ENV_OUT_EXISTS");
    // 2: an --env-out inside the copy would put the secrets into the container's /data.
    let inside = format!("{maps} --secrets env --env-out {}/.env", fx.out().display());
    std::fs::create_dir_all(fx.out()).unwrap();
    refused(&fx, &inside, &[], 2, "inside the copy");
    std::fs::remove_dir_all(fx.out()).unwrap();
    // And the same village bakes once the causes are gone.
    std::fs::remove_file(&env).unwrap();
    let out = fx.bake(&maps, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_first_bake_rewrites_the_three_fields_and_copies_by_the_table() {
    let fx = Fx::new();
    let out = fx.bake(&format!("{} --json", fx.maps()), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["rewrittenFields"], 4);
    let world = fx.copy_json("workspace/world.json");
    let work = fx.dest.path().join("work/mathlab");
    assert_eq!(world["agents"][0]["workDir"], work.display().to_string());
    assert_eq!(world["agents"][0]["ragSources"][0], "/rag/Docs");
    assert_eq!(world["futureField"]["kept"], true, "unknown fields kept");
    let schedules = fx.copy_json("workspace/schedules.json");
    assert_eq!(
        schedules[0]["probe"]["cwd"],
        format!("{}/repo", work.display())
    );
    assert_eq!(
        schedules[0]["acceptance"]["cwd"],
        work.display().to_string()
    );
    assert!(
        schedules[0].get("lastConsumedDueMs").is_none(),
        "records stay at the GUI"
    );
    let run = fx.copy_json("workspace/agents/agent_1/run.json");
    assert_eq!(run["allow"], json!(["git status", "make *"]));
    assert_eq!(run["pending"], json!([]));
    let ws = fx.out().join("workspace");
    assert_eq!(
        std::fs::read_to_string(ws.join("agents/agent_1/Memory.md")).unwrap(),
        "remembered at the GUI\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("village_id"))
            .unwrap()
            .trim(),
        VID
    );
    assert_eq!(
        std::fs::read(ws.join("agents/agent_1/icon.webp")).unwrap(),
        b"RIFF\x00\x01webp"
    );
    for never in [
        "workspace/sessions.redb",
        "workspace/fuseforks.log",
        "mcp_server.json",
    ] {
        assert!(!fx.out().join(never).exists(), "{never} must not travel");
    }
    assert!(fx.out().join("jev.json").exists());
    let record = fx.copy_json("bake.json");
    assert_eq!(record["sourceVillageId"], VID);
    assert_eq!(record["sourceTimeZone"], "Asia/Tokyo");
    assert_eq!(record["maps"].as_array().unwrap().len(), 3);
    assert!(record["bakedAtMs"].as_i64().unwrap() > 1_700_000_000_000);
    let err = stderr(&out);
    assert!(
        err.contains("[FREE_TEXT_WINDOWS_PATH] agents/agent_1/SKILL.md"),
        "{err}"
    );
    assert!(
        err.contains("[FREE_TEXT_WINDOWS_PATH] agents/agent_1/mcp.json: memo.command"),
        "{err}"
    );
    // No staging folder is left beside the copy.
    let left: Vec<_> = std::fs::read_dir(fx.dest.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn update_keeps_the_containers_state_and_brings_design_changes() {
    let fx = Fx::new();
    assert_eq!(fx.bake(&fx.maps(), &[]).status.code(), Some(0));
    let ws = fx.out().join("workspace");
    // The container lives: consumes the schedule, grows pending and Memory, auto-approves.
    let mut s = fx.copy_json("workspace/schedules.json");
    s[0]["lastConsumedDueMs"] = json!(777_000);
    s.as_array_mut().unwrap().push(json!({"id":"gone","to":"agent_1","message":"m","recurrence":{"kind":"interval","everyMinutes":5},"lastConsumedDueMs":9}));
    std::fs::write(ws.join("schedules.json"), serde_json::to_vec(&s).unwrap()).unwrap();
    std::fs::write(
        ws.join("agents/agent_1/run.json"),
        r#"{"version":1,"allow":["git status","make *","cargo build"],"deny":[],"pending":[
          {"command":"python3","args":["x.py"],"firstRequestedAtMs":7,"count":2},
          {"command":"rm","args":["-rf","/"],"firstRequestedAtMs":8,"count":1}]}"#,
    )
    .unwrap();
    std::fs::write(
        ws.join("agents/agent_1/Memory.md"),
        "grown in the container\n",
    )
    .unwrap();
    std::fs::write(ws.join("sessions.redb"), "container conversations").unwrap();
    // The GUI changes the design: a new persona, a deny line that settles one pending line.
    fx.src
        .write("agents/agent_1/Construct.md", "A new persona.\n");
    fx.src.write(
        "agents/agent_1/run.json",
        r#"{"version":1,"allow":["git status","make *"],"deny":["rm *"]}"#,
    );
    std::fs::remove_file(fx.src.workspace().join("Ordinance.md")).unwrap();
    let out = fx.bake("--update", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("[CONSUMED_RECORD_DROPPED]") && err.contains("gone"),
        "{err}"
    );
    assert!(
        err.contains("[ALLOW_LINE_DROPPED]") && err.contains("\"cargo build\""),
        "{err}"
    );
    let s = fx.copy_json("workspace/schedules.json");
    assert_eq!(s.as_array().unwrap().len(), 1);
    assert_eq!(
        s[0]["lastConsumedDueMs"], 777_000,
        "the container's record survives"
    );
    let run = fx.copy_json("workspace/agents/agent_1/run.json");
    assert_eq!(run["deny"], json!(["rm *"]));
    let pending: Vec<&str> = run["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["command"].as_str().unwrap())
        .collect();
    assert_eq!(pending, ["python3"], "open lines kept, settled ones pruned");
    assert_eq!(
        std::fs::read_to_string(ws.join("agents/agent_1/Memory.md")).unwrap(),
        "grown in the container\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("sessions.redb")).unwrap(),
        "container conversations"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("agents/agent_1/Construct.md")).unwrap(),
        "A new persona.\n"
    );
    assert!(
        !ws.join("Ordinance.md").exists(),
        "design files are mirrored"
    );
    // The maps of the first bake were kept (no --map given), and paths still rewritten.
    assert_eq!(
        fx.copy_json("bake.json")["maps"].as_array().unwrap().len(),
        3
    );
    assert_eq!(
        fx.copy_json("workspace/world.json")["agents"][0]["ragSources"][0],
        "/rag/Docs"
    );
    // A new --map set replaces the old one and is named on stdout.
    let out = fx.bake(r"--update --map D:\=/d", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(r"map added: D:\=/d"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains(r"map removed: D:\Github=/work"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        fx.copy_json("workspace/world.json")["agents"][0]["workDir"],
        "/d/Github/Outcasts-MathLab"
    );
    // While the container runs (its lock held), --update stops at 4 and writes nothing.
    let _held = fuseforks_host::lock::VillageLock::acquire(&ws).unwrap();
    refused(&fx, "--update", &[], 4, "VILLAGE_LOCKED");
}

/// SHA-256 hex of `text`, by `sha256sum` (not the product's code).
fn sha256(text: &str) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn probe_approvals_are_rekeyed_only_for_what_the_source_approved() {
    let fx = Fx::new();
    let key = |args: &str, command: &str, cwd: &str| {
        sha256(&format!(
            r#"{{"args":{args},"command":"{command}","cwd":{cwd},"villageId":"{VID}"}}"#
        ))
    };
    let pre_src = key(
        r#"["status","--short"]"#,
        "git",
        r#""D:\\Github\\Outcasts-MathLab\\repo""#,
    );
    std::fs::write(
        fx.src.data_dir().join("probe_approvals.json"),
        json!({"hashes": [pre_src]}).to_string(),
    )
    .unwrap();
    let out = fx.bake(&fx.maps(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let work = fx.dest.path().join("work/mathlab");
    let pre_copy = key(
        r#"["status","--short"]"#,
        "git",
        &format!(r#""{}/repo""#, work.display()),
    );
    let acc_copy = key(
        r#"["-f","done"]"#,
        "test",
        &format!(r#""{}""#, work.display()),
    );
    let approvals = fx.copy_json("probe_approvals.json");
    assert_eq!(
        approvals["hashes"],
        json!([pre_copy]),
        "the pre-check carried, the unapproved acceptance not"
    );
    assert!(
        !approvals["hashes"]
            .as_array()
            .unwrap()
            .contains(&json!(acc_copy))
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(fx.out().join("probe_approvals.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// The `NAME=value` lines of an env file.
fn env_lines(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('='))
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned())))
        .collect()
}

#[test]
fn the_original_village_bakes_and_the_images_cmd_checks_it_with_the_env_file() {
    let fx = Fx::new();
    let env = fx.dest.path().join(".env");
    let extra = format!("{} --secrets env --env-out {}", fx.maps(), env.display());
    let out = fx.bake(
        &extra,
        &[
            ("FUSEFORKS_SECRET_STUB", KEY),
            ("FUSEFORKS_SECRET_MCP_REMOTE", "remote-VALUE"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for text in [stdout(&out), stderr(&out)] {
        assert!(
            !text.contains(KEY) && !text.contains("remote-VALUE"),
            "a value was printed: {text}"
        );
    }
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&env).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let vars = env_lines(&env);
    assert!(
        vars.contains(&("TZ".into(), "Asia/Tokyo".into())),
        "{vars:?}"
    );
    assert!(
        vars.contains(&("FUSEFORKS_SECRET_STUB".into(), KEY.into())),
        "{vars:?}"
    );
    // What the image's CMD runs, with the .env as its environment.
    let line = format!(
        "check --for serve --data-dir {} --secrets env --start batch",
        fx.out().display()
    );
    let mut check = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"));
    check
        .args(words(&line))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("LANG", "C.UTF-8");
    check.envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let out = check.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    // Without the key the same check rejects (the file is what makes it pass).
    let mut bare = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"));
    bare.args(words(&line))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("TZ", "Asia/Tokyo");
    assert_eq!(bare.output().unwrap().status.code(), Some(3));
    // --update refreshes the file: other lines kept, changes named, never a value.
    let mut text = std::fs::read_to_string(&env)
        .unwrap()
        .replace("TZ=Asia/Tokyo", "TZ=UTC");
    text.push_str("FUSEFORKS_SECRET_OLD=x\nOTHER=1\n");
    std::fs::write(&env, text).unwrap();
    let out = fx.bake(
        &format!("--update --secrets env --env-out {}", env.display()),
        &[("FUSEFORKS_SECRET_STUB", "sk-new-VALUE")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    for code in ["ENV_TZ_DIFFERS", "ENV_VALUE_DIFFERS", "ENV_UNUSED"] {
        assert!(err.contains(code), "{code}: {err}");
    }
    assert!(!err.contains("sk-new-VALUE") && !err.contains(KEY));
    let vars = env_lines(&env);
    assert!(vars.contains(&("FUSEFORKS_SECRET_STUB".into(), "sk-new-VALUE".into())));
    assert!(vars.contains(&("OTHER".into(), "1".into())));
    assert!(
        vars.contains(&("FUSEFORKS_SECRET_MCP_REMOTE".into(), "remote-VALUE".into())),
        "the operator's value stays"
    );
}

#[test]
fn the_pristine_original_village_bakes_to_an_equal_world() {
    let src = TempDataDir::with_original_village();
    let dest = tempfile::tempdir().unwrap();
    let out_dir = dest.path().join("copy");
    let line = format!(
        "bake --data-dir {} --out {} --source-time-zone Europe/Berlin",
        src.data_dir().display(),
        out_dir.display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(words(&line))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let read = |p: &Path| -> Value { serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap() };
    // Written through the core: not byte-identical, but equal as values.
    assert_eq!(
        read(&out_dir.join("workspace/world.json")),
        read(&src.workspace().join("world.json"))
    );
    assert_eq!(
        read(&out_dir.join("bake.json"))["sourceTimeZone"],
        "Europe/Berlin"
    );
}

#[test]
fn a_sigkill_during_a_first_bake_leaves_no_half_copy_at_out() {
    let src = TempDataDir::with_original_village();
    src.edit_world(|w| {
        let template = w.agents[0].clone();
        for i in 0..120 {
            let mut a = template.clone();
            a.id = fuseforks_core::village::AgentId::new(format!("a{i}")).unwrap();
            a.name = format!("agent {i}");
            w.agents.push(a);
        }
    });
    for i in 0..120 {
        src.write(&format!("agents/a{i}/Construct.md"), "x".repeat(64 * 1024));
        src.write(&format!("agents/a{i}/Memory.md"), "y".repeat(64 * 1024));
    }
    let dest = tempfile::tempdir().unwrap();
    let out_dir = dest.path().join("copy");
    let line = format!(
        "bake --data-dir {} --out {}",
        src.data_dir().display(),
        out_dir.display()
    );
    let mut killed_before_done = 0;
    // Kill once the write has visibly started: at --out itself, or in a staging folder beside
    // it holding `agents` folders already.
    for written in [1usize, 40, 100] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
            .args(words(&line))
            .env("TZ", "UTC")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(60) {
            if progress(dest.path()) >= written || out_dir.exists() {
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            // Look again at once: the kill must land while the copy is under way.
            std::thread::yield_now();
        }
        let _ = child.kill(); // SIGKILL
        if child.wait().unwrap().code().is_none() {
            killed_before_done += 1;
        }
        // Whole or absent: a copy at --out always has its bake.json and every agent.
        if out_dir.exists() {
            assert!(
                out_dir.join("bake.json").is_file(),
                "a half copy at --out after {written} agent folders"
            );
            assert!(out_dir.join("workspace/agents/a119/Memory.md").is_file());
            std::fs::remove_dir_all(&out_dir).unwrap();
        }
    }
    assert!(
        killed_before_done > 0,
        "no bake was interrupted; the village is too small to test this"
    );
    // What a kill leaves beside --out never blocks the next bake.
    let out = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(words(&line))
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// How many agent folders a bake has written under `dest` so far (in a staging folder or in
/// the copy).
fn progress(dest: &Path) -> usize {
    std::fs::read_dir(dest)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| std::fs::read_dir(e.path().join("workspace/agents")).ok())
                .map(|agents| agents.count())
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}

/// `--allow-plaintext-headers` copies a credential-like header with a warning naming server and
/// header (never the value); `--env-out` comments out a key the store lacks and a value it
/// cannot write plainly, each named in a warning; a second first bake onto the copy is 11.
#[test]
fn allowed_plaintext_headers_and_env_lines_are_warned_by_name_only() {
    let fx = Fx::new();
    fx.src.write(
        "mcp.json",
        r#"{"mcpServers":{"remote":{"type":"http","url":"https://x.example/mcp","headers":{"Authorization":"Bearer ${secret:REMOTE}","X-Api-Key":"plain-VALUE-1"}}}}"#,
    );
    let env = fx.dest.path().join(".env");
    let extra = format!(
        "{} --allow-plaintext-headers --secrets env --env-out {}",
        fx.maps(),
        env.display()
    );
    // The template's key is missing from the store; the MCP secret holds a space.
    let out = fx.bake(&extra, &[("FUSEFORKS_SECRET_MCP_REMOTE", "two words")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("PLAINTEXT_HEADER_COPIED") && err.contains("remote / X-Api-Key"),
        "{err}"
    );
    assert!(
        err.contains("ENV_COMMENTED_OUT") && err.contains("FUSEFORKS_SECRET_STUB"),
        "{err}"
    );
    assert!(
        err.contains("ENV_VALUE_UNWRITABLE") && err.contains("FUSEFORKS_SECRET_MCP_REMOTE"),
        "{err}"
    );
    for text in [stdout(&out), err.clone()] {
        assert!(
            !text.contains("plain-VALUE-1") && !text.contains("two words"),
            "{text}"
        );
    }
    let copied = std::fs::read_to_string(fx.out().join("workspace/mcp.json")).unwrap();
    assert!(copied.contains("plain-VALUE-1"), "copied as allowed");
    let written = std::fs::read_to_string(&env).unwrap();
    assert!(written.contains("# FUSEFORKS_SECRET_STUB="), "{written}");
    assert!(
        !written.contains("\nFUSEFORKS_SECRET_MCP_REMOTE=two words"),
        "{written}"
    );
    // A second first bake onto the copy: 11, nothing touched.
    std::fs::remove_file(&env).unwrap();
    refused(&fx, &fx.maps(), &[], 11, "BAKE_OUT_NOT_EMPTY");
}

/// A template on this machine's loopback is copied with `BAKE_LOOPBACK_ENDPOINT` (inside a
/// container it would be the container); judges on a model template need no Jev token, so
/// `--env-out` neither asks for it nor warns about it.
#[test]
fn a_loopback_model_is_warned_and_model_judges_need_no_jev_token() {
    let fx = Fx::new();
    fx.src.edit_world(|w| {
        w.model_templates[0].base_url = "http://127.0.0.1:8080/v1".into();
        let template = w.model_templates[0].id.clone();
        w.judges = vec![fuseforks_testkit::judge_spec("gate", "Gate", true)];
        w.judges[0].model_template_id = Some(template);
    });
    let env = fx.dest.path().join(".env");
    let extra = format!("{} --secrets env --env-out {}", fx.maps(), env.display());
    let out = fx.bake(&extra, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("BAKE_LOOPBACK_ENDPOINT") && err.contains("http://127.0.0.1:8080"),
        "{err}"
    );
    assert_eq!(err.matches("BAKE_LOOPBACK_ENDPOINT").count(), 1, "{err}");
    assert!(!err.contains("JEV_API_TOKEN"), "{err}");
}
