//! A village on disk pointing at a stub LLM, and an orchestrator over it.

use std::sync::Arc;

use fuseforks_core::llm::{ApiKey, LlmClient, Wire};
use fuseforks_core::log::VillageLog;
use fuseforks_core::orchestrator::{Orchestrator, OrchestratorConfig};
use fuseforks_core::sessions::SessionStore;
use fuseforks_core::stats::{Period, aggregate};
use fuseforks_core::tools::TrashTarget;
use fuseforks_core::village::{AgentId, VillageStore, World};
use fuseforks_testkit::{TempDataDir, TestVillage};

pub(crate) const API_KEY: &str = "sk-CANARY-KEY-5f2a9c";

pub(crate) struct Village {
    pub data: TempDataDir,
}

impl Village {
    /// One agent `a1` (work folder `work/`) on a template for `wire` at `stub_base`.
    pub(crate) fn new(wire: Wire, stub_base: &str, budget: Option<u64>) -> Self {
        let data = TempDataDir::new();
        let store = TestVillage::builder()
            .stub(wire, stub_base)
            .agent_with("a1", "Ada", |a| {
                a.work_dir = Some(TestVillage::WORK.into());
                a.connected_agents = vec![AgentId::new("b2").unwrap()];
            })
            .agent("b2", "Bo")
            .reception("a1")
            .budget(budget)
            .work_file("notes.txt", "alpha\nbeta error\n")
            .write(&data);
        store.write_ordinance("Be brief.\n").unwrap();
        let files = store.agent_files(&AgentId::new("a1").unwrap()).unwrap();
        files.write_construct("You keep notes.\n").unwrap();
        files.write_skill("Check the notes first.\n").unwrap();
        Self { data }
    }

    pub(crate) fn store(&self) -> VillageStore {
        VillageStore::new(self.data.workspace())
    }

    pub(crate) fn open(&self) -> Orchestrator {
        self.open_with_secrets(&[])
    }

    /// Opens with extra secrets besides the template's key.
    pub(crate) fn open_with_secrets(&self, extra: &[(&str, &str)]) -> Orchestrator {
        let extra: Vec<(String, String)> = extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let log = Arc::new(VillageLog::open(&self.data.workspace().join("fuseforks.log")).unwrap());
        Orchestrator::bootstrap(OrchestratorConfig {
            workspace: self.data.workspace(),
            secrets: Arc::new(move |id: &str| {
                if id == "stub" {
                    return Some(ApiKey::new(API_KEY));
                }
                extra
                    .iter()
                    .find(|(k, _)| k == id)
                    .map(|(_, v)| ApiKey::new(v.clone()))
            }),
            log: log.clone(),
            llm: LlmClient::new().unwrap().with_log(log),
            os_locale: None,
            trash: TrashTarget::Folder(self.data.data_dir().join("trash")),
            mcp_child_output: None,
            tracer: None,
            audit: fuseforks_core::safety::AuditSetup::default(),
        })
        .unwrap()
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.data.workspace().join("fuseforks.log")).unwrap_or_default()
    }
}

/// Calls whose usage the store cannot attribute (an intent without its exchange).
pub(crate) fn unknown_calls(store: &SessionStore) -> u64 {
    aggregate(
        store,
        &World::default(),
        Period::All,
        &jiff::tz::TimeZone::UTC,
    )
    .unwrap()
    .totals
    .unknown_usage_calls
}
