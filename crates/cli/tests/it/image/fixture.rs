//! The smoke test's village, made as a user makes one: two servants on a model stub, a
//! schedule due within two minutes with an approved probe, an http MCP server whose header is a
//! `${secret:}`; then `fuseforks-cli bake` with `--env-out`, and the copy given to UID 10001.

use std::path::{Path, PathBuf};
use std::process::Command;

use fuseforks_core::probe::approve_probe;
use fuseforks_core::village::{ScheduleProbe, ShelfStore, VillageStore};
use fuseforks_testkit::{TempDataDir, TestVillage};
use serde_json::{Value, json};

use super::engine::give_to_image_user;
use crate::headless::KEY;
use crate::{stderr, words};

/// The door's token, given to the container in its `.env`.
pub(crate) const DOOR_TOKEN: &str = "door-smoke-TOKEN-5c1e";
/// The MCP server's bearer token (`mcp:SMOKE`).
const MCP_TOKEN: &str = "mcp-smoke-TOKEN-77ab";
/// Where the container finds the stubs: it shares this machine's network (`--network host`),
/// so this machine's loopback is its own (http MCP servers must be https or loopback).
const HOST_LOOPBACK: &str = "127.0.0.1";
/// The probe the schedule runs first: a command both images carry, with a stable first line.
const PROBE: &str =
    r#"{"command": "tini", "args": ["--version"], "expect": "tini version 0.19.0"}"#;

/// A baked copy: `village/` (for /data), `work/` (for /work) and `.env`, in one folder.
pub(crate) struct Baked {
    root: tempfile::TempDir,
    /// The schedule's due time (ms since the epoch, UTC).
    pub(crate) due_ms: i64,
}

impl Baked {
    pub(crate) fn village(&self) -> PathBuf {
        self.root.path().join("village")
    }
    pub(crate) fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }
    pub(crate) fn env_file(&self) -> PathBuf {
        self.root.path().join(".env")
    }
    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }
    /// The village log the container writes.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.village().join("workspace/fuseforks.log")).unwrap_or_default()
    }
    /// The engine arguments that mount the copy, give it its `.env`, and share this machine's
    /// network (the model and MCP stubs listen on its loopback).
    pub(crate) fn run_args(&self) -> Vec<String> {
        vec![
            "--network".into(),
            "host".into(),
            "--volume".into(),
            format!("{}:/data", self.village().display()),
            "--volume".into(),
            format!("{}:/work", self.work().display()),
            "--env-file".into(),
            self.env_file().display().to_string(),
        ]
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A daily schedule to `rec` at the next whole minute (UTC) that is at least 20 s away, with
/// the probe; and its due time.
fn schedule_due_soon() -> (Value, i64) {
    let now = now_ms();
    let mut due = (now / 60_000 + 1) * 60_000;
    if due - now < 20_000 {
        due += 60_000;
    }
    let schedule = json!({
        "id": "s1", "to": "rec", "message": "Write the daily note.",
        "recurrence": {"kind": "daily", "hour": due / 3_600_000 % 24, "minute": due / 60_000 % 60},
        "createdAtMs": now - 86_400_000,
        "probe": serde_json::from_str::<Value>(PROBE).unwrap(),
    });
    (schedule, due)
}

/// The village on the GUI machine, written into `src`: `model` and `mcp` are the stubs'
/// ports on the host's loopback.
fn design(src: &TempDataDir, model: u16, mcp: u16) -> i64 {
    TestVillage::builder()
        .stub(
            fuseforks_core::llm::Wire::OpenAiCompat,
            &format!("http://{HOST_LOOPBACK}:{model}"),
        )
        .agent("rec", "Reception")
        .agent("helper", "Helper")
        .reception("rec")
        .write(src);
    src.write(
        "agents/rec/mcp.json",
        json!({"mcpServers": {"echo": {"type": "http",
            "url": format!("http://{HOST_LOOPBACK}:{mcp}/mcp"),
            "headers": {"Authorization": "Bearer ${secret:SMOKE}"}}}})
        .to_string(),
    );
    let (schedule, due) = schedule_due_soon();
    src.write("schedules.json", json!([schedule]).to_string());
    // The GUI gives every village an id; approvals are keyed with it (bake carries them).
    let village_id = VillageStore::new(src.workspace()).village_id().unwrap();
    let probe: ScheduleProbe = serde_json::from_str(PROBE).unwrap();
    approve_probe(&ShelfStore::new(src.data_dir()), &probe, &village_id).unwrap();
    due
}

/// Designs the village and bakes it as deploy/README.md says, with the secrets in this
/// process's environment (`--secrets env`) and TZ=UTC.
pub(crate) fn bake(model: u16, mcp: u16) -> Baked {
    let src = TempDataDir::new();
    let due_ms = design(&src, model, mcp);
    let root = tempfile::tempdir().unwrap();
    let baked = Baked { root, due_ms };
    std::fs::create_dir(baked.work()).unwrap();
    let line = format!(
        "bake --data-dir {} --out {} --env-out {} --secrets env",
        src.data_dir().display(),
        baked.village().display(),
        baked.env_file().display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(words(&line))
        .env("LANG", "C.UTF-8")
        .env("TZ", "UTC")
        .env("FUSEFORKS_SECRET_STUB", KEY)
        .env("FUSEFORKS_SECRET_MCP_SMOKE", MCP_TOKEN)
        .env("FUSEFORKS_SECRET_DOOR_TOKEN", DOOR_TOKEN)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "bake: {}", stderr(&out));
    give_to_image_user(baked.root());
    baked
}

/// The MCP server's token, for the stub that checks it.
pub(crate) fn mcp_token() -> &'static str {
    MCP_TOKEN
}
