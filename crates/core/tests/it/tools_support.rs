//! A temporary agent with a work folder, an outside folder holding a canary, and a context.

use std::path::PathBuf;

use fuseforks_core::tools::{RunApproval, ToolContext, ToolOutput, TrashTarget, WorkDir, run_tool};
use fuseforks_core::village::{AgentId, Language, VillageStore};
use fuseforks_testkit::TempDataDir;
use serde_json::Value;

pub(crate) const CANARY: &str = "CANARY-outside-the-work-folder-7d1e";

pub(crate) struct Agent {
    pub data: TempDataDir,
    pub ctx: ToolContext,
}

impl Agent {
    pub(crate) fn new() -> Self {
        Self::with(RunApproval::Required)
    }

    /// One agent per resolver of the jail: the kernel's (`openat2`) and the portable walk,
    /// so that every escape test runs against both.
    pub(crate) fn each() -> [Self; 2] {
        [Self::new(), Self::new().portable()]
    }

    /// The same agent, its jail resolving with the portable walk.
    pub(crate) fn portable(mut self) -> Self {
        self.ctx.work_dir = self.ctx.work_dir.map(|jail| jail.with_portable_resolver());
        self
    }

    /// Which resolver the agent's jail uses, for messages.
    pub(crate) fn resolver(&self) -> &'static str {
        match &self.ctx.work_dir {
            Some(jail) if jail.kernel_resolves() => "openat2",
            _ => "walk",
        }
    }

    pub(crate) fn with(approval: RunApproval) -> Self {
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
            approval,
            language: Language::En,
            trash: TrashTarget::Folder(data.data_dir().join("trash")),
            dry_run: false,
        };
        Self { data, ctx }
    }

    pub(crate) fn work(&self) -> PathBuf {
        self.data.data_dir().join("work")
    }

    pub(crate) fn outside(&self) -> PathBuf {
        self.data.data_dir().join("outside")
    }

    pub(crate) async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        run_tool(tool, &args, &self.ctx).await
    }
}
