//! The demo village, founded through the core's founding and store API (never hand-built
//! JSON): a `demo` template on the embedded demo model, the reception connected to two
//! servants, each with a work folder outside the data folder. Layout under the demo's root
//! folder (a temporary one, or `demo --keep DIR`):
//!
//! ```text
//! ROOT/village/            the data folder (`--data-dir` for ask / check / serve)
//! ROOT/work/servant-a/     the writer's work folder (it writes hello.md here)
//! ROOT/work/servant-b/     the searcher's work folder (notes.md, which it greps)
//! ```

use std::path::{Path, PathBuf};

use fuseforks_core::village::{
    AgentId, AgentSpec, Credential, FoundingReport, Language, ModelTemplate, Provider, TemplateId,
    VillageError, VillageStore, found_village_with,
};

use crate::paths::HostPaths;

/// The writer's id.
pub const WRITER_ID: &str = "servant-a";
/// The searcher's id.
pub const SEARCHER_ID: &str = "servant-b";
/// The demo template's id.
pub const TEMPLATE_ID: &str = "demo";
/// The file the writer writes.
pub const GREETING_FILE: &str = "hello.md";
/// The demo template's request timeout (`requestTimeoutSecs`), above the longest pace.
pub const DEMO_REQUEST_TIMEOUT_SECS: u64 = 30;
/// The file the searcher greps.
pub const NOTES_FILE: &str = "notes.md";

/// Where a demo's folders are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoLayout {
    /// The root folder.
    pub root: PathBuf,
    /// The data folder (the village is its `workspace/`).
    pub data_dir: PathBuf,
    /// The writer's work folder.
    pub writer_dir: PathBuf,
    /// The searcher's work folder.
    pub searcher_dir: PathBuf,
}

impl DemoLayout {
    /// The layout under `root` (absolute: work folders must be).
    pub fn under(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            data_dir: root.join("village"),
            writer_dir: root.join("work").join(WRITER_ID),
            searcher_dir: root.join("work").join(SEARCHER_ID),
        }
    }

    /// The servants' work folders' parent (`ROOT/work`).
    pub fn work_dir(&self) -> &Path {
        self.writer_dir.parent().unwrap_or(&self.root)
    }

    /// The file the writer is asked to write.
    pub fn greeting(&self) -> PathBuf {
        self.writer_dir.join(GREETING_FILE)
    }
}

/// The demo template on `127.0.0.1:port`: no key, free, provider `demo`.
pub fn demo_template(port: u16, language: Language) -> Result<ModelTemplate, VillageError> {
    let id = TemplateId::new(TEMPLATE_ID).map_err(|e| constant(&e.to_string()))?;
    let name = language.pick(
        "デモモデル（台本どおり、AI ではありません）",
        "Demo model (scripted, not an AI)",
    );
    let mut t = ModelTemplate::new(
        id,
        name,
        format!("http://127.0.0.1:{port}/v1"),
        "demo-scripted",
    );
    t.provider = Some(Provider::Demo);
    t.credential = Credential::NotRequired;
    t.input_per_mtok = Some(0.0);
    t.output_per_mtok = Some(0.0);
    t.request_timeout_secs = DEMO_REQUEST_TIMEOUT_SECS;
    t.max_retries = 1;
    Ok(t)
}

/// Founds the demo village in `layout` (refusing, touching nothing, when a village is already
/// at its root or data folder: [`VillageError::AlreadyExists`]).
pub fn found_demo_village(
    layout: &DemoLayout,
    language: Language,
    port: u16,
) -> Result<FoundingReport, VillageError> {
    for (file, data_dir_is_workspace) in [
        (
            HostPaths::new(&layout.root).workspace().join("world.json"),
            false,
        ),
        (layout.root.join("world.json"), false),
    ] {
        if file.exists() {
            return Err(VillageError::AlreadyExists {
                file,
                data_dir_is_workspace,
            });
        }
    }
    let store = HostPaths::new(&layout.data_dir).village();
    let report = found_village_with(&store, language, &demo_template(port, language)?)?;
    for dir in [&layout.writer_dir, &layout.searcher_dir] {
        std::fs::create_dir_all(dir).map_err(|e| write_failed(dir, e))?;
    }
    let notes = layout.searcher_dir.join(NOTES_FILE);
    if !notes.exists() {
        std::fs::write(&notes, notes_text(language)).map_err(|e| write_failed(&notes, e))?;
    }
    add_servants(&store, layout, language, &report)?;
    Ok(report)
}

/// The two servants, connected to the reception, with their text files.
fn add_servants(
    store: &VillageStore,
    layout: &DemoLayout,
    language: Language,
    report: &FoundingReport,
) -> Result<(), VillageError> {
    let l = language;
    let mut world = store.load_world()?.value;
    let servants = [
        (
            WRITER_ID,
            l.pick("書き手（A）", "Servant A (writer)"),
            &layout.writer_dir,
            "file",
            l.pick(
                "あなたは書き手です。頼まれたものを file ツールで作業フォルダに書きます。",
                "You are the writer. You write what you are asked for into your work folder with the file tool.",
            ),
        ),
        (
            SEARCHER_ID,
            l.pick("探し手（B）", "Servant B (searcher)"),
            &layout.searcher_dir,
            "grep",
            l.pick(
                "あなたは探し手です。作業フォルダのファイルを grep ツールで調べて答えます。",
                "You are the searcher. You answer by searching the files of your work folder with the grep tool.",
            ),
        ),
    ];
    let mut ids = Vec::new();
    for (order, (id, name, dir, tool, construct)) in (1u32..).zip(servants) {
        let id = AgentId::new(id).map_err(|e| constant(&e.to_string()))?;
        let mut agent = AgentSpec::new(id.clone(), name, report.template_id.clone());
        agent.order = order;
        agent.work_dir = Some(dir.to_string_lossy().into_owned());
        agent.enabled_tools = Some(vec![tool.to_owned()]);
        agent.hears_room_log = false;
        agent.uses_blackboard = false;
        agent.allow_handoff = false;
        store.agent_files(&id)?.write_construct(&construct)?;
        world.agents.push(agent);
        ids.push(id);
    }
    if let Some(reception) = world.agents.iter_mut().find(|a| a.id == report.reception) {
        reception.connected_agents = ids;
        reception.allow_handoff = false;
    }
    store.save_world(&world)
}

/// What the searcher's notes say (one line per fact; grep finds the ones about agents).
fn notes_text(language: Language) -> String {
    language.pick(
        "Fuseforks はこの機械で AI の村を営みます。\n受付 (agent: reception) は、つながった個体へ依頼の波を並行して送ります。\n各個体 (agent) は自分の作業フォルダだけで働きます。\n話したことはすべて sessions.redb に残ります。\n",
        "Fuseforks keeps a village of AI agents on this machine.\nThe reception agent sends waves of requests to the agents it is connected to, in parallel.\nEach agent works only in its own work folder.\nEverything said is recorded in sessions.redb.\n",
    )
}

fn write_failed(file: &Path, source: std::io::Error) -> VillageError {
    VillageError::WriteFailed {
        file: file.to_path_buf(),
        source,
    }
}

/// A constant of this file that the core's rules refuse (a bug, never input).
fn constant(reason: &str) -> VillageError {
    write_failed(Path::new("."), std::io::Error::other(reason.to_owned()))
}
