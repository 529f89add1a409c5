//! The stub village: `TestVillage::builder()` writes a `world.json` whose templates point at a
//! loopback stub (`stub_template`), with agents, a reception, a budget and a work folder, in one
//! chain. Every test and bench that needs a village on a stub builds it here.

use fuseforks_core::llm::Wire;
use fuseforks_core::village::{
    AgentId, AgentSpec, Credential, Language, LanguageTag, ModelTemplate, Provider, TemplateId,
    VillageStore, World,
};

use crate::TempDataDir;

/// The provider that speaks `wire`.
pub fn provider(wire: Wire) -> Provider {
    match wire {
        Wire::OpenAiCompat => Provider::OpenAiCompat,
        Wire::Anthropic => Provider::Anthropic,
        Wire::Gemini => Provider::Gemini,
        Wire::OpenAiResponses => Provider::OpenAiResponses,
        Wire::XaiResponses => Provider::XaiResponses,
        Wire::MetaResponses => Provider::MetaResponses,
        Wire::PerplexityResponses => Provider::PerplexityResponses,
        Wire::OllamaNative => Provider::Ollama,
    }
}

/// A judge `id` named `name` of `world.json` (order 0), switched on or off; its `judge.toml` is
/// the test's to write.
pub fn judge_spec(id: &str, name: &str, enabled: bool) -> fuseforks_core::village::JudgeSpec {
    let spec = serde_json::json!({"id": id, "name": name, "order": 0, "enabled": enabled});
    serde_json::from_value(spec).expect("a judge's fields")
}

/// Template `stub` (model `stub-model`) for `wire` at a stub's base URL, with the API prefix
/// the real service has; the key comes from the secret store (none for Ollama); one retry.
pub fn stub_template(wire: Wire, stub_base: &str) -> ModelTemplate {
    let prefix = match wire {
        Wire::Gemini => "/v1beta",
        Wire::OllamaNative => "",
        _ => "/v1",
    };
    let mut t = ModelTemplate::new(
        id(TemplateId::new("stub")),
        "stub",
        format!("{stub_base}{prefix}"),
        "stub-model",
    );
    t.provider = Some(provider(wire));
    t.credential = if wire == Wire::OllamaNative {
        Credential::NotRequired
    } else {
        Credential::Keyring
    };
    t.max_retries = 1;
    t
}

fn id<T, E: std::fmt::Display>(made: Result<T, E>) -> T {
    made.unwrap_or_else(|e| panic!("{e}"))
}

/// Builds a village on disk; see [`TestVillageBuilder`].
pub struct TestVillage;

impl TestVillage {
    /// Agents' `workDir` placeholder: replaced by `data_dir/work` when the village is written.
    pub const WORK: &'static str = "<work>";

    /// An empty builder: no template, no agent, language `en`.
    pub fn builder() -> TestVillageBuilder {
        TestVillageBuilder {
            world: World {
                language: Some(LanguageTag::of(Language::En)),
                ..World::default()
            },
            work_files: Vec::new(),
        }
    }
}

/// A world and the work folder's files, written by [`TestVillageBuilder::write`].
#[must_use]
pub struct TestVillageBuilder {
    world: World,
    work_files: Vec<(String, String)>,
}

impl TestVillageBuilder {
    /// Adds a template; agents added after it use it.
    pub fn template(mut self, template: ModelTemplate) -> Self {
        self.world.model_templates.push(template);
        self
    }

    /// Adds [`stub_template`] for `wire` at `stub_base`.
    pub fn stub(self, wire: Wire, stub_base: &str) -> Self {
        self.template(stub_template(wire, stub_base))
    }

    /// Adds agent `id` on the last template added (order = its position).
    pub fn agent(self, id: &str, name: &str) -> Self {
        self.agent_with(id, name, |_| {})
    }

    /// Adds agent `id` as [`Self::agent`] does, then lets `edit` change it
    /// (`a.work_dir = Some(TestVillage::WORK.into())` puts it in the work folder).
    pub fn agent_with(mut self, id: &str, name: &str, edit: impl FnOnce(&mut AgentSpec)) -> Self {
        let template = self
            .world
            .model_templates
            .last()
            .map(|t| t.id.clone())
            .unwrap_or_else(|| self::id(TemplateId::new("stub")));
        let mut agent = AgentSpec::new(self::id(AgentId::new(id)), name, template);
        agent.order = u32::try_from(self.world.agents.len()).unwrap_or(u32::MAX);
        edit(&mut agent);
        self.world.agents.push(agent);
        self
    }

    /// The reception agent.
    pub fn reception(mut self, id: &str) -> Self {
        self.world.reception = Some(self::id(AgentId::new(id)));
        self
    }

    /// The village's token budget.
    pub fn budget(mut self, budget: Option<u64>) -> Self {
        self.world.token_budget = budget;
        self
    }

    /// The village's language (`None`: unset, the OS locale decides).
    pub fn language(mut self, language: Option<Language>) -> Self {
        self.world.language = language.map(LanguageTag::of);
        self
    }

    /// Any other change to the world.
    pub fn world(mut self, edit: impl FnOnce(&mut World)) -> Self {
        edit(&mut self.world);
        self
    }

    /// A file in the work folder `data_dir/work/`.
    pub fn work_file(mut self, name: &str, text: &str) -> Self {
        self.work_files.push((name.to_owned(), text.to_owned()));
        self
    }

    /// The world as built so far (the work placeholder not yet resolved).
    pub fn to_world(&self) -> World {
        self.world.clone()
    }

    /// Writes `world.json` (and the work folder) into `data`; returns the store.
    pub fn write(self, data: &TempDataDir) -> VillageStore {
        let work = data.data_dir().join("work");
        let uses_work = self
            .world
            .agents
            .iter()
            .any(|a| a.work_dir.as_deref() == Some(TestVillage::WORK));
        if uses_work || !self.work_files.is_empty() {
            std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("mkdir work: {e}"));
        }
        for (name, text) in &self.work_files {
            std::fs::write(work.join(name), text).unwrap_or_else(|e| panic!("write {name}: {e}"));
        }
        let mut world = self.world;
        for agent in &mut world.agents {
            if agent.work_dir.as_deref() == Some(TestVillage::WORK) {
                agent.work_dir = Some(work.display().to_string());
            }
        }
        let store = VillageStore::new(data.workspace());
        store
            .save_world(&world)
            .unwrap_or_else(|e| panic!("save world.json: {e}"));
        store
    }

    /// Writes the village into a new temporary `data_dir`.
    pub fn build(self) -> TempDataDir {
        let data = TempDataDir::new();
        self.write(&data);
        data
    }
}
