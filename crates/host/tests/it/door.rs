//! The door opened from `mcp_server.json` (the GUI's and plain `serve`'s way): when it opens,
//! when it refuses, and a failed ask coming back as text through the Python SDK's client.

#![allow(clippy::unwrap_used)]

use std::process::Command;

use fuseforks_core::village::DoorSettings;
use fuseforks_core::village::ShelfStore;
use fuseforks_host::door::Door;
use fuseforks_host::{HostBootOptions, HostPaths, SecretSource, build_host};
use fuseforks_testkit::{ClosedPort, TempDataDir, mcp_script};
use serde_json::Value;

const TOKEN: &str = "shelf-door-CANARY-92c1";

fn options(open_door: bool) -> HostBootOptions {
    HostBootOptions {
        app_version: "test".into(),
        secrets: SecretSource::Env,
        open_door,
        door_port: None,
        log_echo: None,
        os_locale: None,
        mcp_child_output: None,
        run_schedules: false,
    }
}

fn shelf(data: &TempDataDir, enabled: bool, port: u16, token: Option<&str>) {
    let settings = DoorSettings {
        enabled,
        port,
        token: token.map(str::to_owned),
        ..DoorSettings::default()
    };
    ShelfStore::new(data.data_dir())
        .save_door(&settings)
        .unwrap();
}

async fn ask_through(door: &Door, token: &str) -> Value {
    let args = vec![
        mcp_script("door_client.py").display().to_string(),
        door.url(),
        token.to_owned(),
        "ask".to_owned(),
        "anyone there?".to_owned(),
    ];
    let out = tokio::task::spawn_blocking(move || Command::new("python3").args(&args).output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_json_opens_the_door_and_a_failed_ask_comes_back_as_text() {
    if !fuseforks_testkit::python_mcp() {
        return;
    }
    let data = TempDataDir::with_original_village();
    // The shelf names the port (0 is not one): a port taken meanwhile by another process
    // fails the bind, and another is tried.
    let ((_host, door), port) = fuseforks_testkit::on_a_free_port("the door", async |port| {
        shelf(&data, true, port, Some(TOKEN));
        let mut host = build_host(&HostPaths::new(data.data_dir()), options(true))
            .await
            .unwrap();
        match host.take_door() {
            Err(e) if e.code() == "DOOR_BIND_FAILED" => None,
            opened => Some((host, opened.unwrap().expect("enabled: open"))),
        }
    })
    .await;
    assert_eq!(door.address().to_string(), format!("127.0.0.1:{port}"));
    // No agent is running: the reception cannot take the request. The client gets a text
    // result marked as an error, not a protocol failure.
    let asked = ask_through(&door, TOKEN).await;
    assert_eq!(asked["answers"], serde_json::json!(["(No answer.)"]));
    assert_eq!(asked["is_error"], serde_json::json!([true]));
    door.close().await;
    let log = std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap();
    assert!(log.contains(&format!("mcp server: 127.0.0.1:{port}/mcp")));
    assert!(!log.contains(TOKEN));
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err(),
        "closed means closed"
    );
}

#[tokio::test]
async fn the_door_stays_shut_unless_enabled_allowed_and_keyed() {
    let data = TempDataDir::with_original_village();
    let paths = HostPaths::new(data.data_dir());
    // Absent file: no door.
    let mut host = build_host(&paths, options(true)).await.unwrap();
    assert!(host.take_door().unwrap().is_none());
    drop(host);
    // Enabled, but this host was not asked to open doors (ask, check).
    // Ports held closed: a door wrongly opened there fails its bind.
    let closed = ClosedPort::new();
    shelf(&data, true, closed.port(), Some(TOKEN));
    let mut host = build_host(&paths, options(false)).await.unwrap();
    assert!(host.take_door().unwrap().is_none());
    drop(host);
    // Disabled.
    shelf(&data, false, closed.port(), Some(TOKEN));
    let mut host = build_host(&paths, options(true)).await.unwrap();
    assert!(host.take_door().unwrap().is_none());
    drop(host);
    // Enabled without a token: refused by name, never opened keyless.
    shelf(&data, true, closed.port(), None);
    let mut host = build_host(&paths, options(true)).await.unwrap();
    let err = host.take_door().err().unwrap();
    assert_eq!(err.code(), "DOOR_TOKEN_MISSING");
    drop(host);
    // A port in use is named, with the fix.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    shelf(&data, true, port, Some(TOKEN));
    let mut host = build_host(&paths, options(true)).await.unwrap();
    let err = host.take_door().err().unwrap();
    assert_eq!(err.code(), "DOOR_BIND_FAILED");
    assert!(err.to_string().contains(&port.to_string()));
}
