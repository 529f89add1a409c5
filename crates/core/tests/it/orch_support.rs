//! A village on disk pointing at a stub LLM, and an orchestrator over it.

use std::sync::Arc;

use fuseforks_core::llm::{ApiKey, LlmClient, Wire};
use fuseforks_core::log::VillageLog;
use fuseforks_core::orchestrator::{Orchestrator, OrchestratorConfig};
use fuseforks_core::tools::TrashTarget;
use fuseforks_core::village::{
    AgentId, AgentSpec, Credential, Language, LanguageTag, ModelTemplate, TemplateId, VillageStore,
    World,
};
use fuseforks_testkit::TempDataDir;

use crate::llm_support::provider;

pub const API_KEY: &str = "sk-CANARY-KEY-5f2a9c";

pub struct Village {
    pub data: TempDataDir,
}

impl Village {
    /// One agent `a1` (work folder `work/`) on a template for `wire` at `stub_base`.
    pub fn new(wire: Wire, stub_base: &str, budget: Option<u64>) -> Self {
        let data = TempDataDir::new();
        let work = data.data_dir().join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("notes.txt"), "alpha\nbeta error\n").unwrap();
        let prefix = if wire == Wire::Gemini {
            "/v1beta"
        } else {
            "/v1"
        };
        let mut template = ModelTemplate::new(
            TemplateId::new("stub").unwrap(),
            "stub",
            format!("{stub_base}{prefix}"),
            "stub-model",
        );
        template.provider = Some(provider(wire));
        template.credential = Credential::Keyring;
        template.max_retries = 1;
        let mut agent = AgentSpec::new(
            AgentId::new("a1").unwrap(),
            "Ada",
            TemplateId::new("stub").unwrap(),
        );
        agent.work_dir = Some(work.display().to_string());
        let mut peer = AgentSpec::new(
            AgentId::new("b2").unwrap(),
            "Bo",
            TemplateId::new("stub").unwrap(),
        );
        peer.order = 1;
        agent.connected_agents = vec![AgentId::new("b2").unwrap()];
        let world = World {
            agents: vec![agent, peer],
            model_templates: vec![template],
            token_budget: budget,
            language: Some(LanguageTag::of(Language::En)),
            reception: Some(AgentId::new("a1").unwrap()),
            ..World::default()
        };
        let store = VillageStore::new(data.workspace());
        store.save_world(&world).unwrap();
        store.write_ordinance("Be brief.\n").unwrap();
        let files = store.agent_files(&AgentId::new("a1").unwrap()).unwrap();
        files.write_construct("You keep notes.\n").unwrap();
        files.write_skill("Check the notes first.\n").unwrap();
        Self { data }
    }

    pub fn store(&self) -> VillageStore {
        VillageStore::new(self.data.workspace())
    }

    pub fn open(&self) -> Orchestrator {
        self.open_with_secrets(&[])
    }

    /// Opens with extra secrets besides the template's key.
    pub fn open_with_secrets(&self, extra: &[(&str, &str)]) -> Orchestrator {
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
        })
        .unwrap()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data.workspace().join("fuseforks.log")).unwrap_or_default()
    }
}
