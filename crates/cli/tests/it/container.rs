//! The refusals a container user meets at boot, through the binary as the image runs it
//! (`serve --data-dir D --secrets env --start batch`): the village's keys missing from the
//! environment, a data folder that is not a bake copy under `FUSEFORKS_REQUIRE_BAKE=1`, and a
//! data folder the process cannot write (a read-only mount, a folder of another user). Each is
//! said with its code on stderr and under `--events jsonl`, and writes nothing.

use std::path::Path;
use std::process::{Command, Output};

use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::{TempDataDir, snapshot};
use serde_json::{Value, json};

use crate::headless::{KEY, command, village};
use crate::{stderr, stdout, words};

/// The variable of the stub template's key, and of the shared MCP server's header secret.
const STUB_VAR: &str = "FUSEFORKS_SECRET_STUB";
const MCP_VAR: &str = "FUSEFORKS_SECRET_MCP_REMOTE_KEY";
const MCP_VALUE: &str = "mcp-header-VALUE-a41c";

/// Runs `command` on a blocking thread.
async fn output(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// Stderr's lines under `--events jsonl`, each one JSON object.
fn json_lines(out: &Output) -> Vec<Value> {
    stderr(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l:?} ({e})")))
        .collect()
}

/// The `{"type":"cli"}` lines of `code`.
fn cli_lines<'a>(lines: &'a [Value], code: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|v| v["type"] == "cli" && v["code"] == code)
        .collect()
}

/// The image's command line on `dir`, and `extra`.
fn serve_line(dir: &str, extra: &str) -> Vec<String> {
    words(&format!(
        "serve --data-dir {dir} --secrets env --start batch {extra}"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_without_the_villages_keys_names_their_variables_and_never_a_value() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    data.write(
        "mcp.json",
        json!({"mcpServers": {"remote": {"type": "http", "url": "https://mcp.example/mcp",
            "headers": {"Authorization": "Bearer ${secret:REMOTE_KEY}"}}}})
        .to_string(),
    );
    let before = snapshot(data.data_dir());
    let dir = data.data_dir().display().to_string();

    // Neither key: both variables named, in the human lines.
    let mut neither = command(serve_line(&dir, ""), false);
    neither.env_remove(MCP_VAR);
    let out = output(neither).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.matches("reject: [SECRET_MISSING] ").count() == 2
            && err.contains(STUB_VAR)
            && err.contains(MCP_VAR),
        "{err}"
    );

    // The template's key given, the header's missing: the one variable named, as JSON lines,
    // and the value given appears nowhere.
    let mut one = command(serve_line(&dir, "--events jsonl"), true);
    one.env_remove(MCP_VAR);
    let out = output(one).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let lines = json_lines(&out);
    let missing = cli_lines(&lines, "SECRET_MISSING");
    assert_eq!(missing.len(), 1, "{lines:?}");
    assert_eq!(missing[0]["level"], "reject");
    let said = format!("{} {}", missing[0]["message"], missing[0]["fix"]);
    assert!(said.contains(MCP_VAR) && !said.contains(STUB_VAR), "{said}");
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(!stderr(&out).contains(KEY), "a key's value was printed");

    // Both given: the preflight passes, and neither value is printed.
    let mut both = command(
        words(&format!(
            "check --for serve --data-dir {dir} --secrets env --start batch --json"
        )),
        true,
    );
    both.env(MCP_VAR, MCP_VALUE);
    let out = output(both).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains(KEY) && !all.contains(MCP_VALUE), "{all}");

    assert!(stub.requests().is_empty(), "nothing was sent to the model");
    assert!(!data.workspace().join(".fuseforks.lock").exists());
    assert_eq!(
        snapshot(data.data_dir()),
        before,
        "a refusal writes nothing"
    );
}

/// The binary on `args` with the stub's key and `FUSEFORKS_REQUIRE_BAKE` as `require` says
/// (`None`: unset).
fn requiring(args: Vec<String>, require: Option<&str>) -> Command {
    let mut c = command(args, true);
    c.env("TZ", "Asia/Tokyo");
    match require {
        Some(value) => c.env("FUSEFORKS_REQUIRE_BAKE", value),
        None => c.env_remove("FUSEFORKS_REQUIRE_BAKE"),
    };
    c
}

/// The refusal of a data folder that is not a bake copy: exit 3, the code, the folder and the
/// fix naming `fuseforks-cli bake`, on stderr as a JSON line (`serve`, `ask`) or in `check`'s
/// report on stdout.
async fn assert_not_a_bake_copy(dir: &str) {
    let check = output(requiring(
        words(&format!(
            "check --for serve --data-dir {dir} --secrets env --start batch"
        )),
        Some("1"),
    ))
    .await;
    let report = stdout(&check);
    assert_eq!(check.status.code(), Some(3), "{report}{}", stderr(&check));
    assert!(
        report.contains("reject [NOT_A_BAKE_COPY] ")
            && report.contains(dir)
            && report.contains("fuseforks-cli bake --data-dir"),
        "{report}"
    );
    for args in [
        serve_line(dir, "--events jsonl"),
        words(&format!(
            "ask --data-dir {dir} --secrets env --events jsonl hi"
        )),
    ] {
        let out = output(requiring(args, Some("1"))).await;
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        let lines = json_lines(&out);
        let refusal = cli_lines(&lines, "NOT_A_BAKE_COPY");
        assert_eq!(refusal.len(), 1, "{lines:?}");
        let (message, fix) = (
            refusal[0]["message"].to_string(),
            refusal[0]["fix"].to_string(),
        );
        assert!(
            refusal[0]["level"] == "reject"
                && message.contains(dir)
                && message.contains("bake.json")
                && fix.contains("fuseforks-cli bake --data-dir")
                && fix.contains("--out"),
            "{message} {fix}"
        );
        assert!(stdout(&out).is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_bake_refuses_a_data_dir_without_bake_json_and_writes_nothing() {
    // An empty folder (the volume was not mounted), and no folder at all: neither is created
    // or filled.
    let empty = tempfile::tempdir().unwrap();
    assert_not_a_bake_copy(&empty.path().display().to_string()).await;
    assert!(std::fs::read_dir(empty.path()).unwrap().next().is_none());
    let absent = empty.path().join("data");
    assert_not_a_bake_copy(&absent.display().to_string()).await;
    assert!(!absent.exists(), "the data folder was created");

    // A village that is not a bake copy: refused under the variable, as before without it.
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let before = snapshot(data.data_dir());
    let dir = data.data_dir().display().to_string();
    assert_not_a_bake_copy(&dir).await;
    assert!(!data.workspace().join(".fuseforks.lock").exists());
    assert_eq!(
        snapshot(data.data_dir()),
        before,
        "a refusal writes nothing"
    );
    let check = format!("check --for serve --data-dir {dir} --secrets env --start batch");
    let plain = output(requiring(words(&check), None)).await;
    assert_eq!(plain.status.code(), Some(0), "{}", stdout(&plain));

    // Its bake copy passes.
    let copy = empty.path().join("copy");
    let bake = output(requiring(
        words(&format!("bake --data-dir {dir} --out {}", copy.display())),
        None,
    ))
    .await;
    assert_eq!(bake.status.code(), Some(0), "{}", stderr(&bake));
    let copy = copy.display().to_string();
    let baked = output(requiring(
        words(&format!(
            "check --for serve --data-dir {copy} --secrets env --start batch"
        )),
        Some("1"),
    ))
    .await;
    assert_eq!(baked.status.code(), Some(0), "{}", stdout(&baked));
    assert!(!stdout(&baked).contains("NOT_A_BAKE_COPY"));
    assert!(stub.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_require_bake_value_other_than_1_is_refused_by_name() {
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().join("data").display().to_string();
    for args in [
        words(&format!(
            "check --for serve --data-dir {dir} --secrets env --start batch"
        )),
        serve_line(&dir, "--events jsonl"),
        words(&format!("ask --data-dir {dir} --secrets env hi")),
    ] {
        let out = output(requiring(args, Some("yes"))).await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("REQUIRE_BAKE_INVALID")
                && err.contains("FUSEFORKS_REQUIRE_BAKE")
                && err.contains("yes"),
            "{err}"
        );
    }
    assert!(!Path::new(&dir).exists());
}

/// `wrapper` running `inner` (its program, arguments and environment) as its last arguments.
fn wrapped(mut wrapper: Command, inner: &Command) -> Command {
    wrapper.arg(inner.get_program()).args(inner.get_args());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => wrapper.env(k, v),
            None => wrapper.env_remove(k),
        };
    }
    wrapper
}

/// Whether this test runs as root (a child may then become `nobody`, or mount).
fn root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n")
}

/// Whether a private mount namespace with a read-only bind mount can be made here.
fn read_only_mounts() -> bool {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(format!(
            "mount --bind {d} {d} && mount -o remount,bind,ro {d} && ! touch {d}/x 2>/dev/null"
        ))
        .status()
        .is_ok_and(|s| s.success())
}

/// A readable village (folders 0755, files 0644, all root's) with the stub's key given.
async fn readable_village() -> (TempDataDir, StubServer) {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let chmod = Command::new("chmod")
        .args(["-R", "u=rwX,go=rX"])
        .arg(data.data_dir())
        .status()
        .unwrap();
    assert!(chmod.success());
    (data, stub)
}

/// The refusal of a data folder this process cannot write (`ask`, `serve`: exit 5, an error),
/// or `check`'s warning of it (exit 0: `check` writes nothing, so a village mounted read-only
/// may be checked): `code` naming the data folder, and `fix_has` in its fix.
fn assert_unwritable(out: &Output, checked: bool, code: &str, dir: &str, fix_has: &str) {
    let (exit, level) = if checked { (0, "warn") } else { (5, "error") };
    assert_eq!(
        out.status.code(),
        Some(exit),
        "{}{}",
        stdout(out),
        stderr(out)
    );
    let lines = if checked {
        let report: Value = serde_json::from_str(&stdout(out)).unwrap();
        report["findings"].as_array().unwrap().clone()
    } else {
        json_lines(out)
    };
    // `serve` and `ask` say their preflight's warning first, then the boot's refusal.
    let said: Vec<&Value> = if checked {
        lines.iter().filter(|v| v["code"] == code).collect()
    } else {
        cli_lines(&lines, code)
    };
    let said: Vec<&Value> = said.into_iter().filter(|v| v["level"] == level).collect();
    assert_eq!(said.len(), 1, "{lines:?}");
    let (message, fix) = (said[0]["message"].to_string(), said[0]["fix"].to_string());
    assert!(
        message.contains(dir) && fix.contains(fix_has),
        "{:?}",
        said[0]
    );
    assert!(!stderr(out).contains(KEY), "a key's value was printed");
}

/// `check`, `serve` and `ask` on a readable village, each run through `wrap` (a command that
/// takes away the right to write the data folder): `check` warns with `code`, the others
/// refuse with it and `fix_has` in the fix; nothing is written and no model is called.
async fn each_command_meets(wrap: impl Fn(&str) -> Command, code: &str, fix_has: &str) {
    let (data, stub) = readable_village().await;
    let before = snapshot(data.data_dir());
    let dir = data.data_dir().display().to_string();
    for args in [
        words(&format!(
            "check --for serve --data-dir {dir} --secrets env --start batch --json"
        )),
        serve_line(&dir, "--events jsonl"),
        words(&format!(
            "ask --data-dir {dir} --secrets env --events jsonl hi"
        )),
    ] {
        let checked = args[0] == "check";
        let out = output(wrapped(wrap(&dir), &command(args, true))).await;
        assert_unwritable(&out, checked, code, &dir, fix_has);
    }
    assert!(stub.requests().is_empty());
    assert_eq!(
        snapshot(data.data_dir()),
        before,
        "a refusal writes nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_dir_of_another_user_is_refused_with_its_code_and_the_chown() {
    let here = root() && Path::new("/usr/bin/setpriv").exists();
    if !fuseforks_testkit::needs(here, "root and /usr/bin/setpriv", "FUSEFORKS_REQUIRE_ROOT") {
        return;
    }
    // As `nobody`: the folders are root's, 0755.
    let as_nobody = |_: &str| {
        let mut c = Command::new("/usr/bin/setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
        c
    };
    each_command_meets(as_nobody, "DATA_DIR_NOT_WRITABLE", "chown -R 65534:65534").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_data_dir_is_refused_with_its_code() {
    let here = root() && read_only_mounts();
    let what = "root and a mount namespace (unshare -m, mount --bind)";
    if !fuseforks_testkit::needs(here, what, "FUSEFORKS_REQUIRE_ROOT") {
        return;
    }
    // The data folder bound read-only over itself, in a mount namespace of the child's own.
    let read_only = |dir: &str| {
        let mut c = Command::new("unshare");
        c.args(["-m", "--propagation", "private", "sh", "-c"])
            .arg(r#"mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@""#)
            .arg("sh")
            .arg(dir);
        c
    };
    each_command_meets(read_only, "DATA_DIR_READ_ONLY", "writable").await;
}
