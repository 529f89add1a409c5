//! Test support for Fuseforks: the in-repo fixtures (`fixtures/`: a village in the original's
//! format, wire replies per protocol) and the optional outside cross-check, temporary villages,
//! the stub village builder (`TestVillage::builder()`), the "maximal" `world.json`, loopback
//! stub servers for every LLM wire (scripted replies in each wire's JSON, the wire fixtures,
//! captured requests), a log capture, and the MCP peers in `mcp/` (Python). A dev-dependency
//! only.
//!
//! # Parts
//!
//! Test support, a dev-dependency only: the fixtures in `fixtures/` (a village in the original's
//! format, every wire's replies and streams; `fixture`, `original_village`) and the optional
//! cross-check material (`shared_reference`: only where `FUSEFORKS_SHARED` names it), temporary
//! `data_dir`s, snapshots of a folder, the maximal `world.json`, the helper binaries in `bin/`:
//! `village-writer`, which the crash test kills, and `tool-call` (one bundled tool call in its own
//! process, printing its peak memory, for the memory tests), the loopback stub server for every LLM
//! wire (`stub.rs`: scripted replies with delays and retry hints, the wire fixtures, captured
//! requests, a body cut short — the connection broken or stalled — with `stop_at`), replies in each
//! wire's JSON (`wire_replies.rs`) and the same replies cut into each wire's stream
//! (`wire_streams.rs`, for the streamed-equals-whole conformance), an OTLP/HTTP receiver in Python
//! (`otlp/receiver.py`, decoding with `opentelemetry-proto`), Jev's replies and a `jev.json`
//! pointing at the stub (`jev.rs`), a log capture (`log_capture.rs`), the waits (`wait.rs`:
//! `eventually` and its async and blocking kin poll a condition to a deadline and name what was
//! awaited; `spawn_started`; a retried free port for a child told its port; `ClosedPort`), the stub village
//! (`village.rs`: `TestVillage::builder()` with `stub_template(wire, base)`, agents, reception,
//! budget and a work folder, used by every test and bench that needs a village on a stub;
//! `TempDataDir::edit_world` for later changes), and MCP peers written with the official Python SDK
//! (`mcp/echo_stdio.py`, `mcp/echo_http.py` servers; `mcp/door_client.py`, a client of the door),
//! plus `mcp/child_stdio.py`, a standard-library stdio server for the child-process tests (dumps
//! its environment, starts a helper, ignores stdin, or never answers). **Invariant: no product
//! crate depends on testkit.**

// Test support, never in the binary: a helper fails the test that called it with a panic that
// says why, and a skipped test says so on stderr, as a `#[test]` function itself would.
#![allow(
    clippy::panic,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test support: a failed setup panics in the calling test; skips are said on stderr"
)]

use std::fs;
use std::path::{Path, PathBuf};

pub mod jev;
pub mod log_capture;
pub mod maximal;
pub mod stub;
pub mod village;
pub mod wait;
pub mod wire_replies;
pub mod wire_streams;

pub use village::{TestVillage, TestVillageBuilder, judge_spec, provider, stub_template};
pub use wait::{
    DEADLINE, eventually, eventually_async, eventually_blocking, on_a_free_port, spawn_started,
    within,
};

/// A file or folder under `crates/testkit/fixtures/` (see its README): written by us from the
/// formats in `docs/` and the wire documentation, part of the repository, so a test that reads
/// it runs on a fresh clone. Checked to exist so that a wrong name fails loudly.
pub fn fixture(relative: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(relative);
    assert!(
        path.exists(),
        "fixture {} is missing from crates/testkit/fixtures",
        path.display()
    );
    path
}

/// The bytes of [`fixture`]`(relative)`.
pub fn fixture_bytes(relative: &str) -> Vec<u8> {
    let path = fixture(relative);
    fs::read(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The environment variable naming a folder of outside reference material (holding
/// `reference/`) for the optional cross-checks.
pub const SHARED_ENV: &str = "FUSEFORKS_SHARED";

/// A path under `$FUSEFORKS_SHARED/reference/`, for a test that additionally cross-checks
/// against outside reference material: `None` when the variable is unset or empty (the test
/// says `skipped` and passes on the in-repo fixtures alone). When it is set, the path must
/// exist; give it absolute, as each test binary runs in its own crate's folder. No other place
/// is ever looked at: the suite never requires anything beside the repository.
pub fn shared_reference(relative: &str) -> Option<PathBuf> {
    let Some(dir) = std::env::var_os(SHARED_ENV).filter(|d| !d.is_empty()) else {
        eprintln!("skipped: {SHARED_ENV} is not set; no cross-check against {relative}");
        return None;
    };
    let path = PathBuf::from(dir).join("reference").join(relative);
    assert!(
        path.exists(),
        "{SHARED_ENV} is set but {} is missing",
        path.display()
    );
    Some(path)
}

/// A village in the original Fuseforks' format (`data_dir` holding `workspace/`), ours:
/// `fixtures/original-village`.
pub fn original_village() -> PathBuf {
    fixture("original-village")
}

/// A test MCP server script written with the official Python SDK (`crates/testkit/mcp/`).
/// Needs `python3` with the `mcp` package (`.ci/run` installs it).
pub fn mcp_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp").join(name)
}

/// `mcp/echo_http.py TOKEN` (the official Python SDK's Streamable HTTP server, answering 401
/// without `Bearer TOKEN`) on a port it chose, once it listens: the process and the port.
pub async fn python_mcp_http(token: &str) -> (KillOnDrop, u16) {
    use std::io::BufRead;
    let mut child = std::process::Command::new("python3")
        .arg(mcp_script("echo_http.py"))
        .arg(token)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("python3 echo_http.py: {e}"));
    let stdout = child
        .stdout
        .take()
        .unwrap_or_else(|| panic!("echo_http.py has no stdout"));
    let server = KillOnDrop::new(child);
    // Its first line says the port, once it listens (or nothing, when it ended first).
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .map(|_| line)
    })
    .await
    .unwrap_or_else(|e| panic!("reading echo_http.py: {e}"))
    .unwrap_or_else(|e| panic!("reading echo_http.py: {e}"));
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the Python HTTP server did not start: {line:?}"));
    (server, port)
}

/// Whether this kernel enforces Landlock at ABI `min_abi` or later, for a test that needs it.
/// Without it the test says `skipped` and returns early — unless `FUSEFORKS_REQUIRE_LANDLOCK`
/// names an ABI of at least `min_abi` (`.ci/run` sets it to the ABI the kernel reports), where
/// a missing Landlock fails the test instead.
pub fn landlock(min_abi: i32) -> bool {
    use fuseforks_core::process::{LandlockSupport, landlock_support};
    let present = matches!(landlock_support(), LandlockSupport::Available(abi) if abi >= min_abi);
    if !present {
        let required = std::env::var("FUSEFORKS_REQUIRE_LANDLOCK")
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok());
        assert!(
            required.is_none_or(|abi| abi < min_abi),
            "Landlock ABI {min_abi} is required (FUSEFORKS_REQUIRE_LANDLOCK is set); this kernel has {:?}",
            landlock_support()
        );
        eprintln!("skipped: this kernel has no Landlock ABI {min_abi}");
    }
    present
}

/// Whether `python3` with the official MCP SDK is here for the interop tests. Without it the
/// tests skip with a line on stderr, so the README's test command works with only the Rust
/// toolchain; `.ci/run` sets `FUSEFORKS_REQUIRE_PYTHON_MCP=1`, which turns a missing SDK into a
/// failure instead.
pub fn python_mcp() -> bool {
    static PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let present = *PRESENT.get_or_init(|| {
        std::process::Command::new("python3")
            .args([
                "-c",
                "import mcp.client.streamable_http, mcp.server.mcpserver",
            ])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    });
    if !present {
        assert!(
            std::env::var_os("FUSEFORKS_REQUIRE_PYTHON_MCP").is_none(),
            "python3 with the `mcp` package is required (python3 -m pip install 'mcp==2.3.0')"
        );
        eprintln!("skipped: python3 with the `mcp` package is not installed");
    }
    present
}

/// Whether what a test needs from this machine is here (`present`): without it the test says
/// `skipped: needs {what}` and returns early — unless the environment variable `require`
/// (a `FUSEFORKS_REQUIRE_…`, set by `.ci/run`) is set, where the absence fails the test.
pub fn needs(present: bool, what: &str, require: &str) -> bool {
    if !present {
        assert!(
            std::env::var_os(require).is_none_or(|v| v.is_empty()),
            "{require} is set but this machine lacks {what}"
        );
        eprintln!("skipped: needs {what}");
    }
    present
}

/// `/usr/bin/python3` (a test that must not meet a version manager's shim), or `skipped`;
/// `FUSEFORKS_REQUIRE_SYSTEM_PYTHON` turns its absence into a failure.
pub fn system_python() -> bool {
    let present = Path::new("/usr/bin/python3").exists();
    needs(
        present,
        "/usr/bin/python3",
        "FUSEFORKS_REQUIRE_SYSTEM_PYTHON",
    )
}

/// The OTLP/HTTP trace receiver script (`crates/testkit/otlp/receiver.py`).
pub fn otlp_receiver_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("otlp")
        .join("receiver.py")
}

/// Whether `python3` with `opentelemetry-proto` is here for the trace export test; as
/// [`python_mcp`], `FUSEFORKS_REQUIRE_PYTHON_OTLP` turns its absence into a failure.
pub fn python_otlp() -> bool {
    let present = std::process::Command::new("python3")
        .args([
            "-c",
            "from opentelemetry.proto.collector.trace.v1 import trace_service_pb2",
        ])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !present {
        assert!(
            std::env::var_os("FUSEFORKS_REQUIRE_PYTHON_OTLP").is_none(),
            "python3 with opentelemetry-proto is required (python3 -m pip install 'opentelemetry-proto==1.45.2')"
        );
        eprintln!("skipped: python3 with opentelemetry-proto is not installed");
    }
    present
}

/// A spawned child process that is killed and reaped when dropped, so a test that panics
/// leaves no server behind (dropping a `std::process::Child` does not kill it).
pub struct KillOnDrop(pub Option<std::process::Child>);

impl KillOnDrop {
    /// Guards `child`.
    pub fn new(child: std::process::Child) -> Self {
        Self(Some(child))
    }

    /// Takes the child out, for a test that ends it itself.
    pub fn take(&mut self) -> std::process::Child {
        self.0
            .take()
            .unwrap_or_else(|| panic!("the child was already taken"))
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A loopback port that refuses connections for as long as the guard lives: bound (so no
/// other process takes it) but never listening, for a test of a server that is not there.
pub struct ClosedPort(tokio::net::TcpSocket);

impl ClosedPort {
    /// Binds a port the kernel chooses, without listening on it.
    pub fn new() -> Self {
        let socket = tokio::net::TcpSocket::new_v4()
            .and_then(|s| {
                s.bind((std::net::Ipv4Addr::LOCALHOST, 0).into())
                    .map(|()| s)
            })
            .unwrap_or_else(|e| panic!("no loopback port to hold closed: {e}"));
        Self(socket)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.0
            .local_addr()
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("local address: {e}"))
    }
}

impl Default for ClosedPort {
    fn default() -> Self {
        Self::new()
    }
}

/// A `data_dir` in a temporary folder, removed on drop.
pub struct TempDataDir {
    dir: tempfile::TempDir,
}

impl TempDataDir {
    /// An empty `data_dir` (the folder exists; `workspace/` does not).
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("fuseforks-test-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temp dir: {e}"));
        Self { dir }
    }

    /// A `data_dir` holding a copy of the village in the original's format ([`original_village`]).
    pub fn with_original_village() -> Self {
        let data = Self::new();
        copy_tree(&original_village().join("workspace"), &data.workspace());
        data
    }

    /// The `data_dir`.
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// `data_dir/workspace`.
    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("workspace")
    }

    /// Loads `workspace/world.json`, lets `edit` change it, and saves it.
    pub fn edit_world(&self, edit: impl FnOnce(&mut fuseforks_core::village::World)) {
        let store = fuseforks_core::village::VillageStore::new(self.workspace());
        let mut world = store
            .load_world()
            .unwrap_or_else(|e| panic!("load world.json: {e}"))
            .value;
        edit(&mut world);
        store
            .save_world(&world)
            .unwrap_or_else(|e| panic!("save world.json: {e}"));
    }

    /// Writes a file under `workspace/`, creating folders.
    pub fn write(&self, relative: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.workspace().join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("mkdir {}: {e}", parent.display()));
        }
        fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }
}

impl Default for TempDataDir {
    fn default() -> Self {
        Self::new()
    }
}

/// Copies a folder tree (files and folders only).
pub fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap_or_else(|e| panic!("mkdir {}: {e}", to.display()));
    let entries = fs::read_dir(from).unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target)
                .unwrap_or_else(|e| panic!("copy {}: {e}", entry.path().display()));
        }
    }
}

/// Every file under `root` with its bytes, sorted by path: a snapshot to prove nothing changed.
pub fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    collect(root, root, &mut out);
    out.sort();
    out
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            let bytes = fs::read(&path).unwrap_or_default();
            let relative = path
                .strip_prefix(root)
                .map(Path::to_path_buf)
                .unwrap_or(path);
            out.push((relative, bytes));
        }
    }
}

/// The two worlds the crash test alternates between.
pub mod crash_worlds {
    use fuseforks_core::village::{ModelTemplate, Provider, TemplateId, World};

    use crate::TestVillage;

    fn world(agents: usize) -> World {
        let template = TemplateId::new("stub").unwrap_or_else(|e| panic!("{e}"));
        let mut model = ModelTemplate::new(template, "stub", "http://127.0.0.1:9/v1", "m");
        // Written explicitly so that the world read back equals this one.
        model.provider = Some(Provider::OpenAiCompat);
        let mut village = TestVillage::builder().language(None).template(model);
        for i in 0..agents {
            village = village.agent(
                &format!("agent_{i}"),
                &format!("Agent {i} {}", "x".repeat(200)),
            );
        }
        village.to_world()
    }

    /// One agent.
    pub fn small() -> World {
        world(1)
    }

    /// Enough agents that a write takes several hundred kilobytes.
    pub fn large() -> World {
        world(300)
    }
}

/// An orchestrator over the village written in `data`, as the benchmarks open it: every
/// template's key is `k`, the log is the workspace's `fuseforks.log`, the trash a folder of
/// `data`, spans to `tracer` when given.
pub fn bench_orchestrator(
    data: &TempDataDir,
    tracer: Option<std::sync::Arc<dyn fuseforks_core::trace::Tracer>>,
) -> fuseforks_core::orchestrator::Orchestrator {
    use fuseforks_core::llm::{ApiKey, LlmClient};
    use std::sync::Arc;
    let log = Arc::new(
        fuseforks_core::log::VillageLog::open(&data.workspace().join("fuseforks.log"))
            .unwrap_or_else(|e| panic!("{e}")),
    );
    fuseforks_core::orchestrator::Orchestrator::bootstrap(
        fuseforks_core::orchestrator::OrchestratorConfig {
            workspace: data.workspace(),
            secrets: Arc::new(|_| Some(ApiKey::new("k"))),
            log: log.clone(),
            llm: LlmClient::new()
                .unwrap_or_else(|e| panic!("{e}"))
                .with_log(log),
            os_locale: None,
            trash: fuseforks_core::tools::TrashTarget::Folder(data.data_dir().join("trash")),
            mcp_child_output: None,
            tracer,
            audit: fuseforks_core::safety::AuditSetup::default(),
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}
