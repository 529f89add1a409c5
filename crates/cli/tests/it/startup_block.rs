//! The startup block of `fuseforks.log`: its lines, their order and their form, in the
//! village's language (`docs/formats/log-lines.md`, "The startup block"), and the door opened
//! inside the boot, before any agent starts.

use fuseforks_core::llm::Wire;
use fuseforks_core::village::Language;
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;

use crate::headless::{
    U, ask_args, command, log, run, serve_on_a_port, signal_and_wait, stub_village, wait_log,
};
use crate::{assert_version_form, binary_version, stderr, words};

/// The log lines without their time stamp and frame.
fn bodies(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.split_once(" [fuseforks] ").map(|(_, b)| b.to_owned()))
        .collect()
}

/// The `version:` line: the binary's version (the form `--version` gives) and its profile.
fn assert_version_line(line: &str) {
    let rest = line
        .strip_prefix("version: app=")
        .unwrap_or_else(|| panic!("{line}"));
    let (version, profile) = rest.split_once(" profile=").unwrap();
    assert!(profile == "debug" || profile == "release", "{line}");
    assert_version_form(version);
    assert_eq!(version, binary_version(), "one version on every surface");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_writes_the_six_lines_in_order_with_the_door_before_any_agent() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let dir = data.data_dir().display().to_string();
    let listening = |port| format!("mcp server: 127.0.0.1:{port}/mcp");
    let (mut serving, port) = serve_on_a_port(&data, listening, |port| {
        command(
            words(&format!(
                "serve --data-dir {dir} --start batch --secrets env --door-port {port}"
            )),
            true,
        )
        .env("FUSEFORKS_SECRET_DOOR_TOKEN", "door-startup-token-5c1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
    })
    .await;
    wait_log(&data, "schedule runner").await;
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = bodies(&log(&data));
    assert_eq!(lines[0], "started");
    assert_version_line(&lines[1]);
    assert_eq!(lines[2], "session: none (the first record creates one)");
    assert_eq!(
        lines[3],
        "attachment gc: removed=0 remaining=0 bytes=0 kinds=image:0,audio:0,video:0,pdf:0"
    );
    assert_eq!(
        lines[4],
        format!("mcp server: 127.0.0.1:{port}/mcp listening")
    );
    assert_eq!(lines[5], "jev: enabled=false active=false blocked=false");
    let door = 4;
    let first_agent = lines
        .iter()
        .position(|l| l.starts_with("agent started:"))
        .expect("the reception started");
    assert!(door < first_agent, "the door opens in the boot: {lines:#?}");
}

#[tokio::test]
async fn ask_in_a_japanese_village_writes_the_block_in_japanese_without_a_door() {
    let stub = StubServer::start(vec![
        wire_replies::text(Wire::OpenAiCompat, "一つ目", U),
        wire_replies::text(Wire::OpenAiCompat, "二つ目", U),
    ])
    .await;
    let data = TempDataDir::new();
    stub_village(stub.base_url())
        .language(Some(Language::Ja))
        .write(&data);
    std::fs::create_dir(data.workspace().join("attachments")).unwrap();
    std::fs::write(data.workspace().join("attachments/a.webp"), [0u8; 12]).unwrap();
    let dir = data.data_dir().display().to_string();
    for message in ["one", "two"] {
        let out = run(ask_args(&dir, &[], message), true).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let text = log(&data);
    let lines = bodies(&text);
    let second_run = lines
        .iter()
        .rposition(|l| l == "起動しました")
        .expect("two runs");
    let block = &lines[second_run..second_run + 5];
    assert_version_line(&block[1]);
    let (id, count) = block[2]
        .strip_prefix("session: ")
        .and_then(|rest| rest.strip_suffix(" 件）"))
        .and_then(|rest| rest.split_once(" を開きました（記録 "))
        .unwrap_or_else(|| panic!("the first run's conversation, continued: {block:#?}"));
    assert!(
        !id.is_empty() && count.parse::<u32>().unwrap() > 0,
        "{block:#?}"
    );
    assert_eq!(
        block[3],
        "attachment gc: removed=0 remaining=1 bytes=12 kinds=image:12,audio:0,video:0,pdf:0"
    );
    assert_eq!(block[4], "jev: enabled=false active=false blocked=false");
    assert_eq!(lines[0], "起動しました");
    assert_eq!(lines[2], "session: なし（最初の記録で作ります）");
    assert!(!text.contains("mcp server:"), "ask opens no door");
}
