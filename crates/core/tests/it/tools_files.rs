//! The file, search and edit tools doing their jobs inside the work folder.

use serde_json::json;

use crate::tools_support::Agent;

#[tokio::test]
async fn file_operations_and_their_diffs() {
    let agent = Agent::new();
    let w = agent
        .call(
            "file",
            json!({"op": "write", "path": "sub/new.md", "content": "one\ntwo\n"}),
        )
        .await;
    assert!(w.ok && w.body.contains("+one"), "{}", w.body);
    let again = agent
        .call(
            "file",
            json!({"op": "write", "path": "sub/new.md", "content": "x"}),
        )
        .await;
    assert!(!again.ok, "no silent overwrite");
    let a = agent
        .call(
            "file",
            json!({"op": "append", "path": "sub/new.md", "content": "three\n"}),
        )
        .await;
    assert!(a.ok && a.body.contains("+three"), "{}", a.body);
    let r = agent
        .call("file", json!({"op": "read", "path": "sub/new.md"}))
        .await;
    assert_eq!(r.body, "one\ntwo\nthree\n");
    assert!(
        agent
            .call("file", json!({"op": "mkdir", "path": "deep/er"}))
            .await
            .ok
    );
    assert!(
        agent
            .call(
                "file",
                json!({"op": "copy", "path": "sub/new.md", "to": "deep/er/copy.md"})
            )
            .await
            .ok
    );
    assert!(
        agent
            .call(
                "file",
                json!({"op": "move", "path": "deep/er/copy.md", "to": "moved.md"})
            )
            .await
            .ok
    );
    assert!(
        agent.work().join("moved.md").exists() && !agent.work().join("deep/er/copy.md").exists()
    );
    let rm = agent
        .call("file", json!({"op": "remove", "path": "moved.md"}))
        .await;
    assert!(rm.ok, "{}", rm.body);
    assert!(!agent.work().join("moved.md").exists());
    assert!(
        agent.data.data_dir().join("trash/moved.md").exists(),
        "removed files go to the trash"
    );
    let big = "x".repeat(20_000);
    agent
        .call(
            "file",
            json!({"op": "write", "path": "big.txt", "content": big}),
        )
        .await;
    let r = agent
        .call("file", json!({"op": "read", "path": "big.txt"}))
        .await;
    assert!(
        r.body.starts_with(&"x".repeat(12_000)) && r.body.contains("8000 more characters"),
        "read is capped"
    );
}

#[tokio::test]
async fn grep_fd_diff() {
    let agent = Agent::new();
    std::fs::write(agent.work().join("sub/log.txt"), "ok\nERROR disk\nok\n").unwrap();
    let g = agent
        .call(
            "grep",
            json!({"pattern": "error", "case_insensitive": true}),
        )
        .await;
    assert!(
        g.body.contains("notes.txt:2: beta error") && g.body.contains("sub/log.txt:2: ERROR disk"),
        "{}",
        g.body
    );
    let c = agent.call("grep", json!({"pattern": "error", "case_insensitive": true, "count_only": true, "include": "^log"})).await;
    assert_eq!(c.body, "sub/log.txt: 1");
    let ctx = agent
        .call("grep", json!({"pattern": "beta", "context": 1}))
        .await;
    assert!(
        ctx.body.contains("notes.txt-1- alpha") && ctx.body.contains("notes.txt-3- gamma"),
        "{}",
        ctx.body
    );
    let f = agent.call("fd", json!({"pattern": "LOG"})).await;
    assert_eq!(f.body, "sub/log.txt");
    let d = agent
        .call(
            "diff",
            json!({"old_path": "notes.txt", "new_path": "sub/log.txt"}),
        )
        .await;
    assert!(
        d.ok && d.body.contains("-alpha") && d.body.contains("+ERROR disk"),
        "{}",
        d.body
    );
}

#[tokio::test]
async fn grep_takes_a_file_as_its_path_and_refuses_a_link_out() {
    let agent = Agent::new();
    std::fs::write(agent.work().join("sub/log.txt"), "ok\nERROR disk\n").unwrap();
    let one = agent
        .call("grep", json!({"pattern": "ERROR", "path": "sub/log.txt"}))
        .await;
    assert!(
        one.ok && one.body == "sub/log.txt:2: ERROR disk",
        "{}",
        one.body
    );
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "ERROR outside\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        agent.work().join("link.txt"),
    )
    .unwrap();
    let link = agent
        .call("grep", json!({"pattern": "ERROR", "path": "link.txt"}))
        .await;
    assert!(!link.body.contains("outside"), "{}", link.body);
}

#[tokio::test]
async fn sd_and_yq_preview_unless_applied() {
    let agent = Agent::new();
    let preview = agent
        .call(
            "sd",
            json!({"path": "notes.txt", "pattern": "(b)eta", "replacement": "${1}ETA"}),
        )
        .await;
    assert!(
        preview.ok && preview.body.contains("+bETA error"),
        "{}",
        preview.body
    );
    assert!(
        std::fs::read_to_string(agent.work().join("notes.txt"))
            .unwrap()
            .contains("beta"),
        "preview writes nothing"
    );
    let applied = agent
        .call(
            "sd",
            json!({"path": "notes.txt", "pattern": "beta", "replacement": "BETA", "apply": true}),
        )
        .await;
    assert!(applied.ok);
    assert!(
        std::fs::read_to_string(agent.work().join("notes.txt"))
            .unwrap()
            .contains("BETA")
    );
    let many = agent
        .call(
            "sd",
            json!({"paths": ["notes.txt"], "pattern": "a", "replacement": "b", "apply": true}),
        )
        .await;
    assert!(!many.ok, "paths is preview-only");

    std::fs::write(
        agent.work().join("c.toml"),
        "# settings\n[server]\nport = 80 # keep\n",
    )
    .unwrap();
    let get = agent
        .call(
            "yq",
            json!({"path": "c.toml", "op": "get", "key": "server.port"}),
        )
        .await;
    assert_eq!(get.body, "80");
    let set = agent
        .call(
            "yq",
            json!({"path": "c.toml", "op": "set", "key": "server.port", "value": 8080}),
        )
        .await;
    assert!(set.body.contains("+port = 8080"), "{}", set.body);
    assert!(
        std::fs::read_to_string(agent.work().join("c.toml"))
            .unwrap()
            .contains("port = 80 "),
        "preview only"
    );
    agent.call("yq", json!({"path": "c.toml", "op": "set", "key": "server.port", "value": 8080, "apply": true})).await;
    let text = std::fs::read_to_string(agent.work().join("c.toml")).unwrap();
    assert!(
        text.contains("# settings") && text.contains("8080"),
        "{text}"
    );

    std::fs::write(
        agent.work().join("c.json"),
        r#"{"a": {"list": [1, 2, 3]}, "z": true}"#,
    )
    .unwrap();
    let rm = agent
        .call(
            "yq",
            json!({"path": "c.json", "op": "remove", "key": "a.list[1]", "apply": true}),
        )
        .await;
    assert!(rm.ok, "{}", rm.body);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(agent.work().join("c.json")).unwrap())
            .unwrap();
    assert_eq!(v, json!({"a": {"list": [1, 3]}, "z": true}));
}

#[tokio::test]
async fn remember_appends_short_notes() {
    let agent = Agent::new();
    assert!(
        agent
            .call(
                "remember",
                json!({"note": "The user prefers metric units."})
            )
            .await
            .ok
    );
    assert!(
        agent
            .call("remember", json!({"note": "Deploys happen on Fridays."}))
            .await
            .ok
    );
    assert_eq!(
        agent.ctx.agent_files.read_memory().unwrap(),
        "- The user prefers metric units.\n- Deploys happen on Fridays.\n"
    );
    assert!(
        !agent
            .call("remember", json!({"note": "x".repeat(501)}))
            .await
            .ok
    );
    assert!(!agent.call("remember", json!({})).await.ok);
}

#[tokio::test]
async fn rag_reads_only_its_sources() {
    let mut agent = Agent::new();
    let docs = agent.data.data_dir().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("guide.md"),
        "# Guide\nintro\n## Install\nrun make\n## Use\nrun it\n",
    )
    .unwrap();
    agent.ctx.rag_sources = vec![docs.clone()];
    let outline = agent
        .call("rag", json!({"op": "outline", "path": "guide.md"}))
        .await;
    assert_eq!(outline.body, "Guide\n  Install\n  Use");
    let read = agent
        .call(
            "rag",
            json!({"op": "read", "path": "guide.md", "section": "Install"}),
        )
        .await;
    assert_eq!(read.body, "## Install\nrun make");
    let search = agent
        .call("rag", json!({"op": "search", "pattern": "make"}))
        .await;
    assert!(
        search.body.contains("[Install] run make"),
        "{}",
        search.body
    );
    let outside = agent.outside().join("secret.txt").display().to_string();
    for path in [outside.as_str(), "../outside/secret.txt"] {
        let r = agent
            .call("rag", json!({"op": "read", "path": path, "section": "x"}))
            .await;
        assert!(
            !r.ok && !r.body.contains(crate::tools_support::CANARY),
            "{path}"
        );
    }
}
