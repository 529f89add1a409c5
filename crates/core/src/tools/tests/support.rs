//! A temporary agent with a work folder, an outside folder holding a canary, and a context (as
//! `crates/core/tests/it/tools_support.rs` builds one, from inside the crate).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::tools::{RunApproval, ToolContext, ToolOutput, TrashTarget, WorkDir, run_tool};
use crate::village::{AgentId, Language, VillageStore};

pub(super) const CANARY: &str = "CANARY-outside-the-work-folder-7d1e";

/// A `data_dir` in a temporary folder, removed on drop.
pub(super) struct TempDataDir(tempfile::TempDir);

impl TempDataDir {
    pub(super) fn new() -> Self {
        Self(
            tempfile::Builder::new()
                .prefix("fuseforks-test-")
                .tempdir()
                .unwrap(),
        )
    }

    pub(super) fn data_dir(&self) -> &Path {
        self.0.path()
    }

    pub(super) fn workspace(&self) -> PathBuf {
        self.0.path().join("workspace")
    }
}

pub(super) struct Agent {
    pub(super) data: TempDataDir,
    pub(super) ctx: ToolContext,
}

impl Agent {
    pub(super) fn new() -> Self {
        let data = TempDataDir::new();
        std::fs::create_dir_all(data.data_dir().join("work/sub")).unwrap();
        std::fs::create_dir_all(data.data_dir().join("outside")).unwrap();
        std::fs::write(data.data_dir().join("outside/secret.txt"), CANARY).unwrap();
        std::fs::write(
            data.data_dir().join("work/notes.txt"),
            "alpha\nbeta error\ngamma\n",
        )
        .unwrap();
        let store = VillageStore::new(data.workspace());
        let agent_files = store.agent_files(&AgentId::new("a1").unwrap()).unwrap();
        let ctx = ToolContext {
            agent_id: "a1".into(),
            work_dir: Some(WorkDir::new(&data.data_dir().join("work")).unwrap()),
            agent_files,
            rag_sources: Vec::new(),
            approval: RunApproval::Required,
            language: Language::En,
            trash: TrashTarget::Folder(data.data_dir().join("trash")),
            dry_run: false,
        };
        Self { data, ctx }
    }

    /// One agent per resolver of the jail: the kernel's (`openat2`) and the portable walk,
    /// so that every escape test runs against both.
    pub(super) fn each() -> [Self; 2] {
        let mut portable = Self::new();
        portable.ctx.work_dir = portable
            .ctx
            .work_dir
            .map(|jail| jail.with_portable_resolver());
        [Self::new(), portable]
    }

    pub(super) fn work(&self) -> PathBuf {
        self.data.data_dir().join("work")
    }

    pub(super) fn outside(&self) -> PathBuf {
        self.data.data_dir().join("outside")
    }

    pub(super) async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        run_tool(tool, &args, &self.ctx).await
    }
}
