//! What the assistant is told, assembled by the core from the target alone, in two sections:
//! the village's facts (the agent's name, its tools, MCP servers and peers, and the saved text
//! of its other file; for a judge, the servants it may route to), then what the user wrote (the
//! editor's unsaved text). The split keeps the user's text from passing for a village fact.

use super::{AssistError, DraftKind};
use crate::village::{AgentId, Language, VillageStore, World};

/// The facts section of the target, in `language`.
pub(super) fn facts(
    store: &VillageStore,
    world: &World,
    kind: DraftKind,
    id: &str,
    connected: &[(String, Vec<String>)],
    language: Language,
) -> Result<String, AssistError> {
    let unknown = |what: &str| {
        AssistError::invalid(
            "target.id",
            format!("no {what} {id:?} in world.json"),
            "name an agent (skill, construct) or a judge (judge) of the village",
        )
    };
    let agent_id = AgentId::new(id).map_err(|_| unknown("agent or judge"))?;
    let head = language.pick(
        "## 村の事実(コアが集めたもの)\n",
        "## Village facts (gathered by the core)\n",
    );
    let lang = language.pick("村の言語: 日本語\n", "Village language: English\n");
    let body = match kind {
        DraftKind::Judge => {
            let judge = world
                .judges
                .iter()
                .find(|j| j.id == agent_id)
                .ok_or_else(|| unknown("judge"))?;
            judge_facts(world, &judge.name, language)
        }
        DraftKind::Skill | DraftKind::Construct => {
            let agent = world.agent(&agent_id).ok_or_else(|| unknown("agent"))?;
            agent_facts(store, world, agent, kind, connected, language)
        }
    };
    Ok(format!("{head}{lang}{body}"))
}

fn judge_facts(world: &World, name: &str, language: Language) -> String {
    let mut text = language.pick(
        format!("判定者: {name}\n送り先にできる id:\n"),
        format!("Judge: {name}\nIds that may appear in to:\n"),
    );
    for agent in &world.agents {
        let role = agent
            .role_id
            .as_ref()
            .and_then(|r| world.roles.iter().find(|x| &x.id == r))
            .map(|r| format!(", {}", r.name))
            .unwrap_or_default();
        text.push_str(&format!("- {} ({}{role})\n", agent.id, agent.name));
    }
    text
}

fn agent_facts(
    store: &VillageStore,
    world: &World,
    agent: &crate::village::AgentSpec,
    kind: DraftKind,
    connected: &[(String, Vec<String>)],
    language: Language,
) -> String {
    let none = language.pick("(なし)", "(none)");
    let tools: Vec<String> = crate::tools::offered_tools(
        agent,
        agent.work_dir.is_some(),
        crate::tools::RunApproval::Required,
        language,
    )
    .into_iter()
    .map(|t| t.name)
    .collect();
    let mut servers: Vec<String> = Vec::new();
    if let Ok(shared) = store.load_shared_mcp() {
        servers.extend(shared.value.mcp_servers.keys().cloned());
    }
    let files = store.agent_files(&agent.id).ok();
    if let Some(own) = files.as_ref().and_then(|f| f.load_mcp().ok()) {
        servers.extend(own.value.mcp_servers.keys().cloned());
    }
    // A connected server (the agent runs) with its tools' names; the others by name only.
    let servers: Vec<String> = servers
        .into_iter()
        .map(|name| match connected.iter().find(|(n, _)| *n == name) {
            Some((_, tools)) => format!("{name} ({})", tools.join(", ")),
            None => name,
        })
        .collect();
    let peers: Vec<String> = agent
        .connected_agents
        .iter()
        .filter_map(|id| world.agent(id).map(|a| a.name.clone()))
        .collect();
    let list = |v: &[String]| {
        if v.is_empty() {
            none.clone()
        } else {
            v.join(", ")
        }
    };
    let mut text = language.pick(
        format!("エージェント: {}\n道具: {}\nMCP サーバー(接続中はかっこ内に関数名): {}\nつながっている相手: {}\n", agent.name, list(&tools), list(&servers), list(&peers)),
        format!("Agent: {}\nTools: {}\nMCP servers (when connected, their functions in brackets): {}\nConnected to: {}\n", agent.name, list(&tools), list(&servers), list(&peers)),
    );
    // The saved text of the other file, so that the two do not overlap.
    let other = files.and_then(|f| match kind {
        DraftKind::Skill => f.read_construct().ok(),
        _ => f.read_skill().ok(),
    });
    let other_name = if kind == DraftKind::Skill {
        "Construct.md"
    } else {
        "SKILL.md"
    };
    let saved = language.pick(
        format!("保存済みの {other_name}:\n"),
        format!("The saved {other_name}:\n"),
    );
    text.push_str(&format!(
        "{saved}{}\n",
        other.filter(|t| !t.trim().is_empty()).unwrap_or(none)
    ));
    text
}

/// The user's section: the editor's unsaved text.
pub(super) fn user_section(current: &str, language: Language) -> String {
    let head = language.pick(
        "## 利用者が書いたもの\n### 利用者が編集中の本文(未保存)\n",
        "## What the user wrote\n### The user's editor text (unsaved)\n",
    );
    let body = if current.trim().is_empty() {
        language.pick("(空)", "(empty)")
    } else {
        current.to_owned()
    };
    format!("{head}{body}\n")
}
