//! The real image (`scripts/image.sh smoke`): a village baked on this machine runs in the
//! container `deploy/Dockerfile` makes, as deploy/README.md tells a user to run it. Skipped
//! unless `FUSEFORKS_IMAGE` names the image; `FUSEFORKS_REQUIRE_IMAGE` turns the skip into a
//! failure (`.ci/run`). Needs root (the copy is given to UID 10001, as deploy/README.md says).
//! The village's container shares this machine's network, where the stubs listen on loopback;
//! the door through a published port is compose.rs's (Caddy in front, as deployed).

mod bad_input;
mod compose;
mod engine;
mod fixture;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fuseforks_core::llm::Wire;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::{KillOnDrop, mcp_script, wire_replies, within};
use serde_json::{Value, json};

use crate::headless::U;
use engine::{Container, children, ok, process};
use fixture::{Baked, DOOR_TOKEN};

/// compose.yaml's `stop_grace_period`.
const STOP_GRACE: Duration = Duration::from_secs(40);

/// The image to try, when this run has one (and the root and Python SDK it needs).
pub(crate) fn image() -> Option<String> {
    let image = std::env::var("FUSEFORKS_IMAGE")
        .ok()
        .filter(|s| !s.is_empty());
    let what = "an image to try (scripts/image.sh smoke sets FUSEFORKS_IMAGE)";
    if !fuseforks_testkit::needs(image.is_some(), what, "FUSEFORKS_REQUIRE_IMAGE") {
        return None;
    }
    let root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    assert!(root, "the image's smoke test runs as root (chown, nsenter)");
    assert!(
        fuseforks_testkit::python_mcp(),
        "the image's smoke test needs the Python MCP SDK"
    );
    image
}

/// `door_client.py URL TOKEN args…`.
fn door_client_cmd(port: u16, token: &str, args: &[&str]) -> Command {
    let mut c = Command::new("python3");
    c.arg(mcp_script("door_client.py"))
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .arg(token)
        .args(args);
    c
}

fn door_client(port: u16, token: &str, args: &[&str]) -> Value {
    let out = door_client_cmd(port, token, args).output().unwrap();
    assert!(
        out.status.success(),
        "door client: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `serve` of the baked village in the image, detached, on a read-only root with a tmpfs /tmp,
/// the door open.
fn serve(image: &str, baked: &Baked, door: u16) -> Container {
    let container = Container::named("serve");
    let mut args: Vec<String> = ["run", "--detach", "--name", &container.0, "--read-only"]
        .map(str::to_owned)
        .into();
    args.extend(["--tmpfs".into(), "/tmp".into()]);
    args.extend(baked.run_args());
    args.push(image.to_owned());
    args.extend(crate::words(&format!(
        "serve --data-dir /data --secrets env --start batch --door-port {door}"
    )));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&args);
    container
}

/// `check --for serve` inside the image, on the same mounts: it must pass.
fn check_inside(image: &str, baked: &Baked, door: u16) {
    let mut args: Vec<String> = vec!["run".into(), "--rm".into(), "--read-only".into()];
    args.extend(baked.run_args());
    args.push(image.to_owned());
    args.extend(crate::words(&format!(
        "check --for serve --data-dir /data --secrets env --start batch --door-port {door}"
    )));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = engine::run(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "check --for serve in the image: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// PID 1 is tini, its one child fuseforks-cli, both as UID 10001: the child's host pid.
fn assert_processes(container: &Container) -> u32 {
    let pid1 = container.pid1();
    assert_eq!(process(pid1), ("tini".to_owned(), 10001));
    let kids = children(pid1);
    assert_eq!(kids.len(), 1, "tini's children: {kids:?}");
    assert_eq!(process(kids[0]), ("fuseforks-cli".to_owned(), 10001));
    kids[0]
}

/// `VmRSS` and `VmHWM` (the peak) of a process, in KiB: the figures deploy/README.md sizes a
/// Kubernetes request with.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Waits for `needle` in the village log, failing at once when the container stops first.
async fn wait_log(baked: &Baked, container: &Container, needle: &str, limit: Duration) {
    let mut polls = 0u32;
    let seen = || {
        polls += 1;
        // The engine is asked now and then (an `inspect` costs tens of ms), the file each time.
        if polls.is_multiple_of(50) {
            assert!(
                container.running(),
                "the container stopped before {needle:?}: {}\n{}",
                container.logs(),
                baked.log()
            );
        }
        baked.log().contains(needle)
    };
    if within(limit, seen).await.is_none() {
        panic!(
            "no {needle:?} within {limit:?}: {}\n{}",
            container.logs(),
            baked.log()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baked_village_runs_in_the_image_read_only_and_stops_within_the_grace() {
    let Some(image) = image() else { return };
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::text(wire, "noted", U),
        wire_replies::text(wire, "the village answers", U),
    ])
    .await;
    let (_mcp, mcp_port) = fuseforks_testkit::python_mcp_http(fixture::mcp_token()).await;
    let model_port: u16 = stub.base_url().rsplit(':').next().unwrap().parse().unwrap();
    let baked = fixture::bake(model_port, mcp_port);
    let door = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    check_inside(&image, &baked, door);

    let container = serve(&image, &baked, door);
    wait_log(&baked, &container, "mcp server: ", Duration::from_secs(60)).await;
    let serving = assert_processes(&container);
    eprintln!("figure: serve RSS at start {} KiB", memory_kib(serving).0);

    // The schedule fires in the container's TZ, after its probe ran in the container.
    let until_due = (baked.due_ms - fixture::now_ms()).max(0) as u64;
    let limit = Duration::from_millis(until_due) + Duration::from_secs(60);
    wait_log(&baked, &container, "schedule fire: id=s1 target=rec", limit).await;
    stub.wait_requests(1).await;
    let fired = stub.requests()[0].body.to_string();
    assert!(fired.contains("[Scheduled task s1]"), "{fired}");
    // The MCP server's tool reached the model: its `${secret:}` header was right.
    assert!(
        fired.contains("whisper"),
        "the MCP tool is missing: {fired}"
    );

    door_checks(door, &stub).await;
    let (rss, peak) = memory_kib(serving);
    eprintln!("figure: serve RSS after the turns {rss} KiB, peak {peak} KiB");
    stop_mid_turn(&container, &baked, &stub, door).await;
}

/// The official Python SDK asks through the door; a missing or wrong token, a foreign Host and
/// a foreign Origin are refused, and cost nothing.
async fn door_checks(door: u16, stub: &StubServer) {
    stub.wait_answers(1).await;
    let asked = door_client(door, DOOR_TOKEN, &["ask", "what is new?", "1"]);
    assert_eq!(asked["answers"], json!(["the village answers"]), "{asked}");
    let before = stub.requests().len();
    for (token, host, status) in [
        ("-", None, 401),
        ("wrong-token", None, 401),
        (DOOR_TOKEN, Some("evil.example"), 403),
    ] {
        let mut args = vec!["refused"];
        args.extend(host);
        let refused = door_client(door, token, &args);
        assert_eq!(
            refused["status"],
            json!(status),
            "{token} {host:?}: {refused}"
        );
        assert_eq!(refused["initialised"], json!(false));
    }
    let foreign = door_client(door, DOOR_TOKEN, &["origin", "https://evil.example"]);
    assert_eq!(foreign["status"], json!(403), "{foreign}");
    assert_eq!(stub.requests().len(), before, "strangers cost nothing");
}

/// SIGTERM (`stop`, compose's grace) while a turn waits for the model: the container exits 0
/// within the grace and the turn is recorded.
async fn stop_mid_turn(container: &Container, baked: &Baked, stub: &StubServer, door: u16) {
    let turns = |log: &str| log.matches("turn: agent=rec").count();
    let before = turns(&baked.log());
    let asked = stub.requests().len();
    stub.push([wire_replies::text(Wire::OpenAiCompat, "late", U).after(Duration::from_secs(3))]);
    let _asking = KillOnDrop::new(
        door_client_cmd(door, DOOR_TOKEN, &["ask", "take your time", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    stub.wait_requests(asked + 1).await;
    let started = Instant::now();
    let grace = STOP_GRACE.as_secs().to_string();
    ok(&["stop", "--time", &grace, &container.0]);
    let took = started.elapsed();
    eprintln!(
        "figure: stop with a turn in flight took {} ms",
        took.as_millis()
    );
    assert!(took < STOP_GRACE, "stop took {took:?}");
    assert_eq!(
        container.inspect("{{.State.ExitCode}}"),
        "0",
        "{}",
        container.logs()
    );
    let log = baked.log();
    assert_eq!(
        turns(&log),
        before + 1,
        "the turn in flight is recorded: {log}"
    );
    let said = container.logs();
    assert!(!said.contains(DOOR_TOKEN) && !log.contains(DOOR_TOKEN));
    // The root was read-only and /tmp a tmpfs: what the container wrote is under the mounts.
    // The engine's own files (/etc/hosts, /etc/resolv.conf, /etc/hostname) are not the
    // village's.
    let engine_files = [
        "/etc",
        "/etc/hosts",
        "/etc/resolv.conf",
        "/etc/hostname",
        "/run",
        "/run/.containerenv",
    ];
    let changed: Vec<String> = ok(&["diff", &container.0])
        .lines()
        .filter(|l| !engine_files.iter().any(|f| l.get(2..) == Some(f)))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        changed,
        Vec::<String>::new(),
        "written outside /data and /work"
    );
}
