//! `secrets set|delete|list` through the binary: kernel keyutils (what CI has), the store
//! `check`/`ask --secrets keyring` read, values never printed, the Secret Service against a real
//! `gnome-keyring-daemon` on a private D-Bus session bus when the binaries exist.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use fuseforks_core::llm::Wire;
use fuseforks_core::village::TemplateId;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::{
    KillOnDrop, TempDataDir, TestVillage, eventually_blocking, stub_template, wire_replies,
};

use crate::headless::U;
use crate::{stderr, stdout, words};

/// A template id of its own per test and process: keys live in one store per user.
pub(crate) fn unique_id() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "sec-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A village whose reception uses the template `id` at `base` (a key in the keyring).
pub(crate) fn village(data: &TempDataDir, id: &str, base: &str) {
    let mut t = stub_template(Wire::OpenAiCompat, base);
    t.id = TemplateId::new(id).unwrap();
    TestVillage::builder()
        .template(t)
        .agent("rec", "Reception")
        .reception("rec")
        .write(data);
}

/// The binary with `env` set on top of a clean environment for the store choice.
pub(crate) fn cli<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    env: &[(&str, &str)],
    input: Option<&str>,
) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"));
    c.args(args)
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("FUSEFORKS_KEYRING")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    if let Some(text) = input {
        // The binary may refuse and exit before it reads its input (a bad key name).
        if let Err(e) = stdin.write_all(text.as_bytes()) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

pub(crate) fn all_output(out: &Output) -> String {
    format!("{}{}", stdout(out), stderr(out))
}

pub(crate) const KEYUTILS: &[(&str, &str)] = &[("FUSEFORKS_KEYRING", "keyutils")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_then_check_and_ask_read_it_list_shows_it_delete_removes_it() {
    let value = format!("sk-keyring-VALUE-{}", unique_id());
    let stub = StubServer::start(vec![wire_replies::text(Wire::OpenAiCompat, "Hi.", U)]).await;
    let data = TempDataDir::new();
    let id = unique_id();
    village(&data, &id, stub.base_url());
    let dir = data.data_dir().display().to_string();
    let check = [
        "check",
        "--for",
        "ask",
        "--data-dir",
        &dir,
        "--start",
        "reception",
    ];
    let keyring_check = [&check[..], &["--secrets", "keyring"]].concat();
    let mut seen = String::new();

    let list = cli(
        &words(&format!("secrets list --data-dir {dir}")),
        KEYUTILS,
        None,
    );
    assert_eq!(list.status.code(), Some(0), "{}", stderr(&list));
    assert!(
        stdout(&list).contains("store: kernel keyutils"),
        "{}",
        stdout(&list)
    );
    assert!(
        stdout(&list)
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("missing"))
    );
    assert!(
        stderr(&list).contains("SECRET_STORE_NOT_PERSISTENT")
            && stderr(&list).contains("do not survive a reboot"),
        "keyutils is named as not persistent: {}",
        stderr(&list)
    );
    let before = cli(&keyring_check, KEYUTILS, None);
    assert_eq!(before.status.code(), Some(3), "{}", all_output(&before));

    let set = cli(
        &words(&format!("secrets set {id} --stdin --data-dir {dir}")),
        KEYUTILS,
        Some(&format!("{value}\n")),
    );
    assert_eq!(set.status.code(), Some(0), "{}", stderr(&set));
    assert_eq!(stdout(&set), format!("stored: {id} in kernel keyutils\n"));
    seen += &all_output(&set);

    let after = cli(&keyring_check, KEYUTILS, None);
    assert_eq!(after.status.code(), Some(0), "{}", all_output(&after));
    assert!(
        all_output(&after).contains("SECRET_STORE_NOT_PERSISTENT"),
        "check says keyutils keys do not survive a reboot: {}",
        all_output(&after)
    );
    seen += &all_output(&after);
    let list = cli(
        &words(&format!("secrets list --data-dir {dir} --json")),
        KEYUTILS,
        None,
    );
    let json: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(json["store"], "keyutils");
    assert_eq!(json["persistent"], false);
    assert_eq!(json["keys"][0]["key"], id.as_str());
    assert_eq!(json["keys"][0]["present"], true);
    seen += &all_output(&list);

    // ask reads the key through the same store, one trailing newline dropped.
    let ask = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || {
            let args = ["ask", "--data-dir", &dir, "--start", "reception", "Hello"];
            cli(&args, KEYUTILS, None)
        }
    })
    .await
    .unwrap();
    assert_eq!(ask.status.code(), Some(0), "{}", stderr(&ask));
    assert_eq!(
        stub.requests()[0].header("authorization"),
        Some(format!("Bearer {value}").as_str())
    );
    seen += &all_output(&ask);

    let delete = cli(
        &words(&format!("secrets delete {id} --data-dir {dir}")),
        KEYUTILS,
        None,
    );
    assert_eq!(delete.status.code(), Some(0), "{}", stderr(&delete));
    assert_eq!(
        stdout(&delete),
        format!("deleted: {id} in kernel keyutils\n")
    );
    let list = cli(
        &words(&format!("secrets list --data-dir {dir}")),
        KEYUTILS,
        None,
    );
    assert!(
        stdout(&list)
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("missing"))
    );
    let gone = cli(&keyring_check, KEYUTILS, None);
    assert_eq!(gone.status.code(), Some(3), "{}", all_output(&gone));
    for out in [&delete, &list, &gone] {
        seen += &all_output(out);
    }

    let log = std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap();
    assert!(
        !seen.contains(&value) && !log.contains(&value),
        "the value is never printed or logged"
    );
}

#[test]
fn set_refuses_empty_oversized_and_untyped_values_and_stores_nothing() {
    let data = TempDataDir::new();
    let id = unique_id();
    village(&data, &id, "http://127.0.0.1:9");
    let dir = data.data_dir().display().to_string();
    let set = ["secrets", "set", id.as_str(), "--stdin", "--data-dir", &dir];
    let empty = cli(&set, KEYUTILS, Some("\n"));
    assert_eq!(empty.status.code(), Some(2));
    assert!(
        stderr(&empty).contains("[SECRET_VALUE_EMPTY]"),
        "{}",
        stderr(&empty)
    );
    let big = "x".repeat(64 * 1024 + 1);
    let large = cli(&set, KEYUTILS, Some(&big));
    assert_eq!(large.status.code(), Some(2));
    assert!(
        stderr(&large).contains("[SECRET_VALUE_TOO_LARGE]"),
        "{}",
        stderr(&large)
    );
    assert!(!stderr(&large).contains("xxxx"));
    // Without --stdin the value must be typed at a terminal; a pipe is refused.
    let piped = cli(&set[..3], KEYUTILS, Some("sk-typed\n"));
    let piped_args = [&set[..3], &["--data-dir", &dir]].concat();
    let piped2 = cli(&piped_args, KEYUTILS, Some("sk-typed\n"));
    assert_eq!(piped.status.code(), Some(2), "--data-dir is required");
    assert_eq!(piped2.status.code(), Some(2));
    assert!(stderr(&piped2).contains("--stdin"), "{}", stderr(&piped2));
    let bad_key = cli(
        &words(&format!("secrets set 'a b' --stdin --data-dir {dir}")),
        KEYUTILS,
        Some("v"),
    );
    assert!(
        stderr(&bad_key).contains("[SECRET_KEY_INVALID]"),
        "{}",
        stderr(&bad_key)
    );
    let list = cli(
        &words(&format!("secrets list --data-dir {dir}")),
        KEYUTILS,
        None,
    );
    assert!(
        stdout(&list)
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("missing"))
    );
}

#[test]
fn a_bus_without_a_secret_service_falls_back_to_keyutils_and_says_so() {
    let data = TempDataDir::new();
    village(&data, &unique_id(), "http://127.0.0.1:9");
    let dir = data.data_dir().display().to_string();
    let dead = format!("unix:path={}/no-bus", data.data_dir().display());
    let list = cli(
        &words(&format!("secrets list --data-dir {dir}")),
        &[("DBUS_SESSION_BUS_ADDRESS", &dead)],
        None,
    );
    assert_eq!(list.status.code(), Some(0), "{}", stderr(&list));
    assert!(
        stdout(&list).starts_with("store: kernel keyutils"),
        "{}",
        stdout(&list)
    );
    assert!(
        stderr(&list).contains("the Secret Service did not answer")
            && stderr(&list).contains("do not survive a reboot"),
        "{}",
        stderr(&list)
    );
    // Forced, the Secret Service is not replaced silently.
    let forced = cli(
        &words(&format!("secrets list --data-dir {dir}")),
        &[
            ("DBUS_SESSION_BUS_ADDRESS", &dead),
            ("FUSEFORKS_KEYRING", "secret-service"),
        ],
        None,
    );
    assert_eq!(forced.status.code(), Some(5), "{}", stderr(&forced));
    assert!(
        stderr(&forced).contains("SECRET_STORE_UNAVAILABLE"),
        "{}",
        stderr(&forced)
    );
}

/// A private D-Bus session bus with an unlocked `gnome-keyring-daemon` on it.
struct SecretService {
    address: String,
    _bus: KillOnDrop,
    _keyring: KillOnDrop,
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// A session bus that listens in a temporary folder and never starts services on demand.
const PRIVATE_BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#;

/// Starts the bus and the keyring, or says why not (`None`): CI sets
/// `FUSEFORKS_REQUIRE_SECRET_SERVICE=1`, which turns a skip into a failure.
fn secret_service(home: &Path) -> Option<SecretService> {
    let missing: Vec<&str> = ["dbus-daemon", "gnome-keyring-daemon"]
        .into_iter()
        .filter(|p| !on_path(p))
        .collect();
    if !missing.is_empty() {
        let why = format!(
            "skipped: the Secret Service test needs {} (Debian: apt-get install dbus gnome-keyring)",
            missing.join(" and ")
        );
        assert!(
            std::env::var_os("FUSEFORKS_REQUIRE_SECRET_SERVICE").is_none(),
            "FUSEFORKS_REQUIRE_SECRET_SERVICE is set: {why}"
        );
        eprintln!("{why}");
        return None;
    }
    let runtime = home.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    // A bus of our own with no service folders: the system's session config would let the
    // first call auto-start a second keyring daemon (D-Bus activation) without `--unlock`,
    // which can win the name before ours and answer "no default collection" forever (CI, stop 23).
    let config = home.join("bus.conf");
    std::fs::write(&config, PRIVATE_BUS_CONFIG).unwrap();
    let mut bus = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .args(["--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut address = String::new();
    BufReader::new(bus.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    let bus = KillOnDrop::new(bus);
    let address = address.trim().to_owned();
    // Ask for the service before ours runs, as the CLI's first call does on a slow machine:
    // with on-demand starts this always loses the race that CI lost once.
    if on_path("dbus-send") {
        let _ = Command::new("dbus-send")
            .args([
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.secrets",
                "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.ReadAlias",
                "string:default",
            ])
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let mut keyring = Command::new("gnome-keyring-daemon")
        .args(["--foreground", "--unlock", "--components=secrets"])
        .env("DBUS_SESSION_BUS_ADDRESS", &address)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    keyring
        .stdin
        .take()
        .unwrap()
        .write_all(b"test-keyring-password")
        .unwrap();
    Some(SecretService {
        address,
        _bus: bus,
        _keyring: KillOnDrop::new(keyring),
    })
}

#[test]
fn the_secret_service_is_used_when_a_session_bus_has_one() {
    let data = TempDataDir::new();
    let id = unique_id();
    village(&data, &id, "http://127.0.0.1:9");
    let home = tempfile::tempdir().unwrap();
    let Some(service) = secret_service(home.path()) else {
        return;
    };
    let dir = data.data_dir().display().to_string();
    let env = [("DBUS_SESSION_BUS_ADDRESS", service.address.as_str())];
    let list_args = ["secrets", "list", "--data-dir", dir.as_str()];
    // Wait until the keyring answers on the bus.
    let list = eventually_blocking(
        "the Secret Service to answer",
        Duration::from_secs(15),
        || {
            let list = cli(&list_args, &env, None);
            stdout(&list)
                .starts_with("store: Secret Service")
                .then_some(list)
        },
    );
    assert!(stdout(&list).contains("(persistent)"), "{}", stdout(&list));
    assert!(
        !stderr(&list).contains("SECRET_STORE_NOT_PERSISTENT"),
        "{}",
        stderr(&list)
    );

    let value = format!("sk-secret-service-VALUE-{id}");
    let set_args = words(&format!("secrets set {id} --stdin --data-dir {dir}"));
    // A keyring that has just answered may still be creating its default collection (seen
    // under load on 2 cores): the first write can fail; it must succeed within the wait.
    let set = eventually_blocking(
        "a first write to the keyring",
        Duration::from_secs(30),
        || {
            let set = cli(&set_args, &env, Some(&format!("{value}\n")));
            (set.status.code() == Some(0)).then_some(set)
        },
    );
    assert_eq!(
        stdout(&set),
        format!("stored: {id} in Secret Service (D-Bus)\n")
    );
    let check = [
        "check",
        "--for",
        "ask",
        "--data-dir",
        &dir,
        "--start",
        "reception",
        "--secrets",
        "keyring",
    ];
    let passed = cli(&check, &env, None);
    assert_eq!(passed.status.code(), Some(0), "{}", all_output(&passed));
    assert!(
        !all_output(&passed).contains("SECRET_STORE_NOT_PERSISTENT"),
        "the Secret Service persists: {}",
        all_output(&passed)
    );
    // It is in the Secret Service, not in keyutils.
    let elsewhere = cli(&check, KEYUTILS, None);
    assert_eq!(
        elsewhere.status.code(),
        Some(3),
        "{}",
        all_output(&elsewhere)
    );
    let delete = cli(
        &words(&format!("secrets delete {id} --data-dir {dir}")),
        &env,
        None,
    );
    assert_eq!(
        stdout(&delete),
        format!("deleted: {id} in Secret Service (D-Bus)\n")
    );
    let gone = cli(&check, &env, None);
    assert_eq!(gone.status.code(), Some(3), "{}", all_output(&gone));
    for out in [&list, &set, &passed, &delete, &gone] {
        assert!(!all_output(out).contains(&value), "never printed");
    }
}
