//! Escape attempts against the file tools: every one refused, nothing read or written outside
//! the work folder.

use std::os::unix::fs::symlink;

use fuseforks_core::tools::WriteMode;
use fuseforks_testkit::snapshot;
use serde_json::json;

use crate::tools_support::{Agent, CANARY};

#[tokio::test]
async fn every_escape_attempt_is_refused() {
    let agent = Agent::new();
    symlink(agent.outside(), agent.work().join("link_to_outside")).unwrap();
    symlink("/etc", agent.work().join("etc")).unwrap();
    symlink(
        agent.outside().join("secret.txt"),
        agent.work().join("secret_link.txt"),
    )
    .unwrap();
    let outside = agent.outside().join("secret.txt").display().to_string();
    let attempts = [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        outside.as_str(),
        "/etc/passwd",
        "etc/passwd",
        "link_to_outside/secret.txt",
        "secret_link.txt",
        "notes\0.txt",
        "notes\u{202E}txt.txt",
        "sub/\u{200B}x.txt",
        "..",
        "*/../../outside/secret.txt",
        "sub/**/../../../outside/secret.txt",
    ];
    let before = snapshot(&agent.outside());
    for path in attempts {
        let read = agent
            .call("file", json!({"op": "read", "path": path}))
            .await;
        assert!(!read.ok, "read {path:?}: {}", read.body);
        assert!(
            !read.body.contains(CANARY) && !read.body.contains("root:"),
            "read {path:?} leaked"
        );
        let write = agent
            .call(
                "file",
                json!({"op": "write", "path": path, "content": "pwned", "overwrite": true}),
            )
            .await;
        assert!(!write.ok, "write {path:?}: {}", write.body);
        let append = agent
            .call(
                "file",
                json!({"op": "append", "path": path, "content": "pwned"}),
            )
            .await;
        assert!(!append.ok, "append {path:?}");
        let remove = agent
            .call("file", json!({"op": "remove", "path": path}))
            .await;
        assert!(!remove.ok, "remove {path:?}");
        let moved = agent
            .call(
                "file",
                json!({"op": "move", "path": "notes.txt", "to": path}),
            )
            .await;
        assert!(!moved.ok, "move to {path:?}");
        let grep = agent
            .call("grep", json!({"pattern": "CANARY", "path": path}))
            .await;
        assert!(!grep.body.contains(CANARY), "grep {path:?}");
        let diff = agent
            .call("diff", json!({"old_path": "notes.txt", "new_path": path}))
            .await;
        assert!(!diff.ok && !diff.body.contains(CANARY), "diff {path:?}");
        let sd = agent
            .call(
                "sd",
                json!({"path": path, "pattern": "C", "replacement": "X", "apply": true}),
            )
            .await;
        assert!(!sd.ok, "sd {path:?}");
    }
    // grep over the whole folder does not follow the links out.
    let all = agent.call("grep", json!({"pattern": "CANARY"})).await;
    assert!(!all.body.contains(CANARY), "{}", all.body);
    assert_eq!(
        snapshot(&agent.outside()),
        before,
        "nothing outside changed"
    );
    assert!(
        agent.work().join("notes.txt").exists(),
        "the file was not moved out"
    );
}

#[tokio::test]
async fn a_folder_swapped_for_a_link_is_not_followed() {
    let agent = Agent::new();
    let jail = agent.ctx.work_dir.clone().unwrap();
    std::fs::create_dir_all(agent.work().join("dir")).unwrap();
    std::fs::write(agent.work().join("dir/secret.txt"), "inside").unwrap();
    assert!(jail.open_read("dir/secret.txt").is_ok());
    // The folder becomes a link to the outside after the jail was made.
    std::fs::rename(agent.work().join("dir"), agent.work().join("dir.old")).unwrap();
    symlink(agent.outside(), agent.work().join("dir")).unwrap();
    assert!(
        jail.open_read("dir/secret.txt").is_err(),
        "the opened file lies outside"
    );
    assert!(
        jail.create_file("dir/secret.txt", WriteMode::Append)
            .is_err()
    );
    assert_eq!(
        std::fs::read_to_string(agent.outside().join("secret.txt")).unwrap(),
        CANARY
    );
}

#[tokio::test]
async fn fenced_folders_refuse_writes() {
    let agent = Agent::new();
    std::fs::create_dir_all(agent.work().join("blackboard/doing")).unwrap();
    let out = agent
        .call(
            "file",
            json!({"op": "write", "path": "blackboard/doing/x.md", "content": "note"}),
        )
        .await;
    assert!(!out.ok && out.body.contains("blackboard/"), "{}", out.body);
    let out = agent.call("sd", json!({"path": "blackboard/doing/x.md", "pattern": "a", "replacement": "b", "apply": true})).await;
    assert!(!out.ok);
    assert!(!agent.work().join("blackboard/doing/x.md").exists());
}
