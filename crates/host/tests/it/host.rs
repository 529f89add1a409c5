//! The host: the village lock, the secret stores (and the collision check over every key), and
//! `build_host`'s refusals.

#![allow(clippy::unwrap_used)]

use fuseforks_core::Coded;
use fuseforks_host::lock::{LOCK_FILE, LockError, VillageLock};
use fuseforks_host::{HostBootOptions, HostError, HostPaths, SecretSource, build_host};
use fuseforks_testkit::{TempDataDir, snapshot};

fn options() -> HostBootOptions {
    HostBootOptions {
        app_version: "test".into(),
        secrets: SecretSource::Env,
        open_door: false,
        door_port: None,
        log_echo: None,
        os_locale: None,
        mcp_child_output: None,
        run_schedules: false,
    }
}

#[test]
fn the_lock_is_exclusive_released_on_drop_and_never_unlinked() {
    let data = TempDataDir::with_original_village();
    let first = VillageLock::acquire(&data.workspace()).unwrap();
    assert!(matches!(
        VillageLock::acquire(&data.workspace()),
        Err(LockError::Held(_))
    ));
    drop(first);
    let again = VillageLock::acquire(&data.workspace()).unwrap();
    drop(again);
    let lock = data.workspace().join(LOCK_FILE);
    assert!(lock.exists(), "the lock file stays");
    assert_eq!(
        std::fs::metadata(&lock).unwrap().len(),
        0,
        "nothing is written in it"
    );
}

#[tokio::test]
async fn build_host_takes_the_lock_first_and_refuses_a_second_host() {
    let data = TempDataDir::with_original_village();
    let paths = HostPaths::new(data.data_dir());
    let host = build_host(&paths, options()).await.unwrap();
    assert!(host.lock_path().ends_with(LOCK_FILE));
    let log = std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap();
    assert!(log.contains("version: app=test profile=debug"), "{log}");
    let err = build_host(&paths, options()).await.err().unwrap();
    assert_eq!(err.code(), "VILLAGE_LOCKED");
    drop(host);
    assert!(
        build_host(&paths, options()).await.is_ok(),
        "free again after the first host is gone"
    );
}

#[tokio::test]
async fn a_missing_village_creates_nothing() {
    let data = TempDataDir::new();
    let before = snapshot(data.data_dir());
    let err = build_host(&HostPaths::new(data.data_dir()), options())
        .await
        .err()
        .unwrap();
    assert!(matches!(err, HostError::VillageMissing(_)));
    assert_eq!(snapshot(data.data_dir()), before);
    assert!(!data.workspace().exists());
    // Code, message and fix apart: no `[CODE]`, no `Fix:` in the text.
    let text = err.to_string();
    assert!(!text.starts_with('[') && !text.contains("Fix:"), "{text}");
    assert_eq!(Coded::code(&err), "VILLAGE_MISSING");
    assert!(Coded::fix(&err).is_some_and(|f| f.text().contains("init")));
}

#[test]
fn an_llm_client_failure_has_its_own_code() {
    let err = HostError::LlmClient(fuseforks_core::llm::LlmError::InvalidRequest(
        "cannot build the HTTP client: no TLS".into(),
    ));
    assert_eq!(err.code(), "LLM_CLIENT_FAILED");
    assert_eq!(Coded::code(&err), "LLM_CLIENT_FAILED");
}

#[tokio::test]
async fn a_store_held_without_the_lock_stops_the_boot() {
    let data = TempDataDir::with_original_village();
    // The second net: someone opened sessions.redb without the lock (an older binary).
    let held =
        fuseforks_core::sessions::SessionStore::open(&data.workspace().join("sessions.redb"))
            .unwrap();
    let err = build_host(&HostPaths::new(data.data_dir()), options())
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), "SESSION_STORE_LOCKED");
    drop(held);
}

#[tokio::test]
async fn the_collision_check_counts_mcp_header_secrets() {
    use fuseforks_core::village::{TemplateId, VillageStore};
    let data = TempDataDir::with_original_village();
    let store = VillageStore::new(data.workspace());
    let mut world = store.load_world().unwrap().value;
    let mut template = world.model_templates[0].clone();
    template.id = TemplateId::new("mcp-remote").unwrap();
    world.model_templates.push(template);
    store.save_world(&world).unwrap();
    let paths = HostPaths::new(data.data_dir());
    // Alone, the template's key is fine.
    drop(build_host(&paths, options()).await.unwrap());
    // `mcp:REMOTE` and template `mcp-remote` both read FUSEFORKS_SECRET_MCP_REMOTE.
    data.write(
        "mcp.json",
        r#"{"mcpServers": {"r": {"type": "http", "url": "https://mcp.example/mcp",
            "headers": {"Authorization": "Bearer ${secret:REMOTE}"}}}}"#,
    );
    let err = build_host(&paths, options()).await.err().unwrap();
    assert_eq!(err.code(), "SECRET_NAME_COLLISION");
    let text = err.to_string();
    assert!(
        text.contains("mcp:REMOTE") && text.contains("mcp-remote"),
        "{text}"
    );
}

/// A log that cannot be opened stops the boot with the file's path and the system's refusal
/// kept as the source (not flattened into text).
#[tokio::test]
async fn a_log_that_cannot_open_names_its_file_and_keeps_the_cause() {
    let data = TempDataDir::with_original_village();
    std::fs::create_dir(data.workspace().join("fuseforks.log")).unwrap();
    let err = build_host(&HostPaths::new(data.data_dir()), options())
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), "LOG_UNAVAILABLE");
    assert!(err.to_string().contains("fuseforks.log"), "{err}");
    let source = std::error::Error::source(&err).expect("the system's refusal");
    assert!(
        source.downcast_ref::<std::io::Error>().is_some(),
        "{source:?}"
    );
}
