//! Regressions of an attacker's findings against the blackboard (the orchestrator's tool, not
//! reached through `run_tool`): no link is followed, a hard link to an outside file is never
//! written through, a listing is bounded. The work-folder tools' own regressions are in
//! `crates/core/tests/it/tools_hardening.rs`.

use std::os::unix::fs::symlink;

use fuseforks_testkit::snapshot;
use serde_json::json;

use super::support::{Agent, CANARY};
use crate::tools::blackboard;

#[tokio::test]
async fn the_blackboard_follows_no_link() {
    for agent in Agent::each() {
        let before = snapshot(&agent.outside());
        std::fs::create_dir_all(agent.work().join("blackboard")).unwrap();
        symlink(agent.outside(), agent.work().join("blackboard/doing")).unwrap();
        let call = |args: serde_json::Value| blackboard::run(&args, &agent.ctx).0;
        assert!(!call(json!({"op": "write", "name": "job", "body": "pwned"})).ok);
        assert!(!call(json!({"op": "append", "name": "secret", "body": "pwned"})).ok);
        let listed = call(json!({"op": "list"}));
        assert!(!listed.body.contains("secret"), "{}", listed.body);
        assert_eq!(snapshot(&agent.outside()), before, "the outside changed");

        // A note that is itself a link to an outside file is neither read nor listed.
        std::fs::remove_file(agent.work().join("blackboard/doing")).unwrap();
        std::fs::create_dir_all(agent.work().join("blackboard/on-hold")).unwrap();
        symlink(
            agent.outside().join("secret.txt"),
            agent.work().join("blackboard/on-hold/a1 - leak.md"),
        )
        .unwrap();
        let read = call(json!({"op": "read", "name": "leak"}));
        assert!(!read.ok && !read.body.contains(CANARY), "{}", read.body);
        assert!(!call(json!({"op": "list"})).body.contains("leak"));
        assert!(!call(json!({"op": "append", "name": "leak", "body": "pwned"})).ok);
        assert_eq!(snapshot(&agent.outside()), before, "the outside changed");
    }
}

/// A hard link in the work folder (or on the blackboard) to a file outside it is a link too:
/// writing through it changes the outside file (found by an attack re-run; the
/// `fstat` of `regular()` sees `st_nlink > 1` but does not refuse). Writes, appends, a
/// replacing copy and `sd` apply must all refuse it and leave the outside file unchanged.
#[tokio::test]
async fn writes_never_go_through_a_hard_link_to_an_outside_file() {
    for agent in Agent::each() {
        let secret = agent.outside().join("secret.txt");
        std::fs::hard_link(&secret, agent.work().join("hard.txt")).unwrap();
        std::fs::create_dir_all(agent.work().join("blackboard/doing")).unwrap();
        std::fs::hard_link(&secret, agent.work().join("blackboard/doing/a1 - hard.md")).unwrap();
        let before = snapshot(&agent.outside());
        for args in [
            json!({"op": "append", "path": "hard.txt", "content": "pwned"}),
            json!({"op": "write", "path": "hard.txt", "content": "pwned", "overwrite": true}),
            json!({"op": "copy", "path": "notes.txt", "to": "hard.txt", "overwrite": true}),
        ] {
            let out = agent.call("file", args.clone()).await;
            assert!(!out.ok, "{args}: {}", out.body);
        }
        let sd = agent
            .call(
                "sd",
                json!({"path": "hard.txt", "pattern": "CANARY", "replacement": "pwned", "apply": true}),
            )
            .await;
        assert!(!sd.ok, "sd: {}", sd.body);
        let bb = blackboard::run(
            &json!({"op": "append", "name": "hard", "body": "pwned"}),
            &agent.ctx,
        )
        .0;
        assert!(!bb.ok, "blackboard: {}", bb.body);
        assert_eq!(
            std::fs::read_to_string(&secret).unwrap(),
            CANARY,
            "the outside file was written through a hard link"
        );
        assert_eq!(snapshot(&agent.outside()), before, "the outside changed");
    }
}

/// `blackboard list` is not capped: every note name of every folder (up to 10,000 per folder,
/// names up to 255 bytes) comes back whole — 2.1 MB for 20,000 notes of 200-character names —
/// where every other tool answer is cut to 12,000 characters (`tools/blackboard.rs`, `run`:
/// `lines.join("\n")` without `cap`). The blackboard is shared: any agent, or a `run` command
/// (Landlock lets it write `blackboard/`), fills the next lister's paid context. Found by a
/// second attack re-run.
#[tokio::test]
async fn a_blackboard_listing_is_bounded() {
    let agent = Agent::new();
    let doing = agent.work().join("blackboard/doing");
    std::fs::create_dir_all(&doing).unwrap();
    for i in 0..3_000 {
        std::fs::write(doing.join(format!("a1 - {}{i}.md", "n".repeat(200))), "").unwrap();
    }
    let listed = blackboard::run(&json!({"op": "list"}), &agent.ctx).0;
    assert!(listed.ok, "{}", listed.body);
    assert!(
        listed.body.chars().count() < 13_000,
        "the listing holds {} characters",
        listed.body.chars().count()
    );
}
