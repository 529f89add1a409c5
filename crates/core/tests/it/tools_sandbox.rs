//! Escape attempts against the file tools: every one refused, nothing read or written outside
//! the work folder.

use std::os::unix::fs::symlink;

use fuseforks_core::tools::WriteMode;
use fuseforks_testkit::snapshot;
use serde_json::json;

use crate::tools_support::{Agent, CANARY};

#[tokio::test]
async fn every_escape_attempt_is_refused() {
    let mut cases = Vec::new();
    for agent in Agent::each() {
        cases.push((agent.resolver(), escapes_refused(&agent).await));
    }
    eprintln!("figure: escape cases refused per resolver (0 escapes): {cases:?}");
}

/// Every escape path through every path-taking operation (read, write, append, remove, move,
/// grep, diff, sd), all refused, nothing outside read or changed; returns the cases tried.
async fn escapes_refused(agent: &Agent) -> usize {
    let mut tried = 0;
    {
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
            tried += 8;
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
    tried + 1
}

#[tokio::test]
async fn a_folder_swapped_for_a_link_is_not_followed() {
    for agent in Agent::each() {
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
}

#[tokio::test]
async fn fenced_folders_refuse_writes() {
    for agent in Agent::each() {
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
}

/// A write never passes through a link, even one that stays inside the work folder; a read
/// may follow such a link with the kernel's resolver (the portable walk refuses every link).
#[tokio::test]
async fn a_write_through_an_inner_folder_link_is_refused_while_a_read_may_follow_it() {
    for agent in Agent::each() {
        std::fs::create_dir_all(agent.work().join("real")).unwrap();
        std::fs::write(agent.work().join("real/inside.txt"), "inner text").unwrap();
        symlink("real", agent.work().join("alias")).unwrap();
        let jail = agent.ctx.work_dir.clone().unwrap();
        let read = jail.read_text("alias/inside.txt", 1024);
        if jail.kernel_resolves() {
            assert_eq!(read.unwrap().text, "inner text", "{}", agent.resolver());
        } else {
            assert!(read.is_err(), "the walk follows no link");
        }
        for mode in [WriteMode::CreateNew, WriteMode::Replace, WriteMode::Append] {
            assert!(
                jail.create_file("alias/new.txt", mode).is_err(),
                "{}: a write through the link ({mode:?})",
                agent.resolver()
            );
        }
        let write = agent
            .call(
                "file",
                json!({"op": "write", "path": "alias/inside.txt", "content": "x", "overwrite": true}),
            )
            .await;
        assert!(!write.ok, "{}: {}", agent.resolver(), write.body);
        assert_eq!(
            std::fs::read_to_string(agent.work().join("real/inside.txt")).unwrap(),
            "inner text"
        );
        assert!(!agent.work().join("real/new.txt").exists());
    }
}

/// A child started while the jail holds descriptors (the folder's handle, an open file, a
/// folder opened for a write) inherits none of them: read from `/proc/self/fd` in a real child.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_inherits_no_descriptor_of_the_work_folder() {
    use tokio::io::AsyncReadExt;
    for agent in Agent::each() {
        let jail = agent.ctx.work_dir.clone().unwrap();
        let _file = jail.open_read("notes.txt").unwrap();
        let _created = jail.create_file("held.txt", WriteMode::CreateNew).unwrap();
        let _folder = jail.writable_entry("sub/x.txt").unwrap();
        let mut command = tokio::process::Command::new("sh");
        command
            .args(["-c", "for f in /proc/self/fd/*; do readlink \"$f\"; done"])
            .stdout(std::process::Stdio::piped());
        let mut child = fuseforks_core::process::spawn(command, None).unwrap();
        let mut listed = String::new();
        let mut stdout = child.child_mut().stdout.take().unwrap();
        stdout.read_to_string(&mut listed).await.unwrap();
        let _ = child.child_mut().wait().await;
        let work = agent.work().canonicalize().unwrap();
        assert!(listed.contains("pipe:"), "the listing ran: {listed}");
        assert!(
            !listed.contains(work.to_str().unwrap()),
            "{}: the child inherited a descriptor of the work folder:\n{listed}",
            agent.resolver()
        );
    }
}

/// The name of the variable that makes [`escapes_hold_where_openat2_is_refused`] the child.
const SECCOMP_CHILD: &str = "FUSEFORKS_TEST_OPENAT2_REFUSED_CHILD";

/// On a host whose kernel or container runtime answers `openat2` with `ENOSYS` (kernels
/// before 5.6, some seccomp profiles), the jail falls back to the portable walk and still
/// refuses every escape: this test runs itself again as a child under a seccomp filter that
/// does exactly that, where the jail's default resolver must report the fallback.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_hold_where_openat2_is_refused() {
    if std::env::var_os(SECCOMP_CHILD).is_some() {
        let agent = Agent::new();
        let jail = agent.ctx.work_dir.clone().unwrap();
        assert!(!jail.kernel_resolves(), "openat2 was not refused");
        assert_eq!(
            jail.read_text("notes.txt", 1024).unwrap().text,
            "alpha\nbeta error\ngamma\n",
            "the fallback still opens what is inside"
        );
        let tried = escapes_refused(&agent).await;
        println!("seccomp child: openat2 refused, {tried} escape cases, 0 escapes");
        return;
    }
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "tools_sandbox::escapes_hold_where_openat2_is_refused",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SECCOMP_CHILD, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = fuseforks_core::process::spawn_without_openat2(command).unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    let run = async {
        use tokio::io::AsyncReadExt;
        let child = child.child_mut();
        let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let _ = tokio::join!(
            stdout.read_to_string(&mut out),
            stderr.read_to_string(&mut err)
        );
        child.wait().await.unwrap()
    };
    let status = tokio::time::timeout(std::time::Duration::from_secs(120), run)
        .await
        .expect("the child ran within 120 s");
    assert!(status.success(), "the child failed:\n{out}\n{err}");
    let said = out
        .lines()
        .find_map(|l| l.find("seccomp child:").map(|at| &l[at..]))
        .unwrap_or_else(|| panic!("the child ran no escape: {out}"));
    eprintln!("figure: {said}");
}
