//! deploy/compose.yaml with compose.door.yaml, brought up with podman-compose as deploy/README.md
//! says: the door answers the official Python SDK through Caddy on the published HTTPS port
//! (Caddy's own CA), then `down` leaves no container, network or volume behind.

use std::path::Path;
use std::process::Command;

use std::time::Duration;

use fuseforks_testkit::{eventually, on_a_free_port};
use serde_json::{Value, json};

use super::engine::ok;
use super::fixture::{self, DOOR_TOKEN};

/// The project name the test's compose runs under (its containers, network and volumes).
fn project() -> String {
    format!("fuseforks-smoke-{}", std::process::id())
}

/// `podman-compose` on the two files in `dir`, under the test's project name.
fn compose_command(dir: &Path) -> Command {
    let mut c = Command::new("podman-compose");
    c.current_dir(dir).args([
        "--project-name",
        &project(),
        "-f",
        "compose.yaml",
        "-f",
        "compose.door.yaml",
    ]);
    c
}

fn compose(dir: &Path, args: &[&str]) -> std::process::Output {
    compose_command(dir).args(args).output().unwrap()
}

/// Takes the project down (and its volumes) when dropped, whatever happened.
struct Down<'a>(&'a Path);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = compose(self.0, &["down", "--volumes", "--timeout", "40"]);
    }
}

/// What the engine holds of the project: its containers, networks and volumes, by kind.
fn held() -> [Vec<String>; 3] {
    let label = format!("label=io.podman.compose.project={}", project());
    [&["ps", "--all"][..], &["network", "ls"], &["volume", "ls"]].map(|kind| {
        let mut args = kind.to_vec();
        args.extend(["--filter", &label, "--quiet"]);
        ok(&args).lines().map(str::to_owned).collect()
    })
}

/// `door_client.py` through Caddy; `None` while nothing answers yet (Caddy or the door starting).
fn door_client(url: &str, ca: &Path, token: &str, args: &[&str]) -> Option<Value> {
    let out = Command::new("python3")
        .arg(fuseforks_testkit::mcp_script("door_client.py"))
        .arg(url)
        .arg(token)
        .args(args)
        .env("DOOR_CLIENT_CA", ca)
        .output()
        .unwrap();
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("ConnectError"), "door client: {said}");
        return None;
    }
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// Brings the project up with its images and host ports: `None` when a port was taken
/// meanwhile.
fn up(dir: &Path, image: &str, caddy: &str, https: u16) -> Option<()> {
    let http = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let out = compose_command(dir)
        .args(["up", "--detach", "--no-build"])
        .env("FUSEFORKS_IMAGE", image)
        .env("CADDY_IMAGE", caddy)
        .env("FUSEFORKS_HTTPS_PORT", https.to_string())
        .env("FUSEFORKS_HTTP_PORT", http.to_string())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    if said.contains("address already in use") {
        let _ = compose(dir, &["down", "--volumes"]);
        return None;
    }
    assert!(out.status.success(), "compose up: {said}");
    Some(())
}

/// Caddy's root certificate (its own CA issues `localhost`'s), once Caddy has made it.
async fn caddy_root(dest: &Path) {
    let proxy = format!("{}_proxy_1", project());
    let source = format!("{proxy}:/data/caddy/pki/authorities/local/root.crt");
    let copied = || {
        super::engine::run(&["cp", &source, &dest.display().to_string()])
            .status
            .success()
    };
    eventually("Caddy's root certificate", Duration::from_secs(60), copied).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compose_opens_the_door_behind_caddy_and_down_leaves_nothing() {
    let Some(image) = super::image() else { return };
    let caddy = std::env::var("FUSEFORKS_CADDY_IMAGE").unwrap_or_else(|_| "caddy:2.8".into());
    let baked = fixture::bake(9, 9);
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy");
    for file in ["compose.yaml", "compose.door.yaml", "Caddyfile"] {
        std::fs::copy(deploy.join(file), baked.root().join(file)).unwrap();
    }
    let _down = Down(baked.root());
    let dir = baked.root().to_owned();
    let ((), port) = on_a_free_port("compose", async |p| up(&dir, &image, &caddy, p)).await;
    // The filter sees what `up` made (so that an empty answer after `down` means something):
    // two containers, the project's network, Caddy's two volumes.
    let made = held().map(|kind| kind.len());
    assert_eq!(made, [2, 1, 2], "containers, networks, volumes");
    let ca = baked.root().join("caddy-root.crt");
    caddy_root(&ca).await;
    let url = format!("https://localhost:{port}/mcp");
    let reached = || {
        door_client(&url, &ca, DOOR_TOKEN, &["refused"]).filter(|a| a["initialised"] == json!(true))
    };
    let reached = eventually("the door through Caddy", Duration::from_secs(60), reached).await;
    assert_eq!(reached["status"], json!(200), "{reached}");
    // Caddy holds no secret: the door itself refuses a missing token and a foreign Origin.
    let stranger = door_client(&url, &ca, DOOR_TOKEN, &["origin", "https://evil.example"]);
    assert_eq!(stranger.unwrap()["status"], json!(403));
    let tokenless = door_client(&url, &ca, "-", &["refused"]).unwrap();
    assert_eq!(tokenless["status"], json!(401), "{tokenless}");
    let down = compose(baked.root(), &["down", "--volumes", "--timeout", "40"]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert_eq!(held(), <[Vec<String>; 3]>::default(), "left after down");
}
