//! Blackboard ownership: everyone reads, an agent writes only its own notes, write only
//! creates, done is frozen, size is capped, and the other write tools are fenced out.

use serde_json::json;

use super::support::TempDataDir;
use crate::tools::blackboard::{Outcome, run};
use crate::tools::{RunApproval, ToolContext, TrashTarget, WorkDir};
use crate::village::{AgentId, Language, VillageStore};

fn ctx(data: &TempDataDir, agent: &str) -> ToolContext {
    ToolContext {
        agent_id: agent.into(),
        work_dir: Some(WorkDir::new(&data.data_dir().join("work")).unwrap()),
        agent_files: VillageStore::new(data.workspace())
            .agent_files(&AgentId::new(agent).unwrap())
            .unwrap(),
        rag_sources: Vec::new(),
        approval: RunApproval::Required,
        language: Language::En,
        trash: TrashTarget::Folder(data.data_dir().join("trash")),
        dry_run: false,
    }
}

#[tokio::test]
async fn ownership_creation_freezing_and_caps() {
    let data = TempDataDir::new();
    std::fs::create_dir_all(data.data_dir().join("work")).unwrap();
    let (a, b) = (ctx(&data, "a1"), ctx(&data, "b2"));
    let board = data.data_dir().join("work/blackboard");
    let op = |c: &ToolContext, args: serde_json::Value| run(&args, c).1;

    assert_eq!(
        op(
            &a,
            json!({"op": "write", "name": "report", "body": "draft\n"})
        ),
        Outcome::Ok
    );
    assert!(board.join("doing/a1 - report.md").is_file());
    assert_eq!(
        op(
            &a,
            json!({"op": "write", "name": "report", "body": "again"})
        ),
        Outcome::Exists,
        "write only creates"
    );
    assert_eq!(
        op(
            &a,
            json!({"op": "append", "name": "report", "body": "more\n"})
        ),
        Outcome::Ok
    );
    assert_eq!(
        std::fs::read_to_string(board.join("doing/a1 - report.md")).unwrap(),
        "draft\nmore\n"
    );
    assert_eq!(
        op(
            &b,
            json!({"op": "append", "name": "report", "owner": "a1", "body": "x"})
        ),
        Outcome::NotOwner
    );
    assert_eq!(
        op(&b, json!({"op": "read", "name": "report", "owner": "a1"})),
        Outcome::Ok,
        "everyone reads"
    );
    assert_eq!(
        run(&json!({"op": "list"}), &b).0.body,
        "doing/a1 - report.md"
    );
    assert_eq!(
        op(
            &a,
            json!({"op": "append", "name": "report", "body": "y".repeat(12_001)})
        ),
        Outcome::TooLarge
    );
    assert_eq!(
        op(&a, json!({"op": "move", "name": "report", "to": "done"})),
        Outcome::Ok
    );
    assert_eq!(
        op(
            &a,
            json!({"op": "append", "name": "report", "body": "late"})
        ),
        Outcome::Frozen
    );
    assert_eq!(
        op(&a, json!({"op": "remove", "name": "report"})),
        Outcome::Frozen
    );
    assert_eq!(
        op(&a, json!({"op": "write", "name": "../escape", "body": "x"})),
        Outcome::NotFound,
        "names cannot hold paths"
    );
    assert_eq!(
        op(&a, json!({"op": "read", "name": "nothing"})),
        Outcome::NotFound
    );

    // The file tool cannot write there.
    let out = crate::tools::run_tool(
        "file",
        &json!({"op": "write", "path": "blackboard/doing/a1 - forged.md", "content": "x"}),
        &a,
    )
    .await;
    assert!(!out.ok);
    assert!(!board.join("doing/a1 - forged.md").exists());
}
