//! What a turn reads before its first round: the agent and its template, the endpoint and its
//! key, the agent's files, the work folder, the offered tools (bundled, synthetic, MCP), the
//! roster and the system prompt; and what each round sends (`request_for`, `intent`).

use std::collections::HashMap;

use super::super::delegation::{Synthetic, synthetic_tools};
use super::super::failure::TurnFailure;
use super::super::{Inner, TurnControl, now_ms};
use crate::llm::{ChatMessage, ChatRequest, Endpoint as LlmEndpoint, InFlight, ToolSpec, Wire};
use crate::mcp::McpConnections;
use crate::model_endpoint::{endpoint_of, skills_of, wire_of};
use crate::prompt::{PromptParts, RosterEntry, SystemPrompt, compose_system_prompt};
use crate::sessions::{IntentRecord, Record};
use crate::tools::{ToolContext, WorkDir, offered_tools};
use crate::village::{AgentId, AgentSpec, ModelTemplate, SkillTerms, World};

/// What a turn runs with.
pub(super) struct Prepared {
    pub agent: AgentSpec,
    pub template: ModelTemplate,
    pub wire: Wire,
    pub endpoint: LlmEndpoint,
    pub tools: ToolContext,
    pub system: SystemPrompt,
    pub specs: Vec<ToolSpec>,
    pub synthetic: HashMap<String, Synthetic>,
    pub roster: Vec<RosterEntry>,
    /// What `SKILL.md`'s front matter asks of the turn (its notices are said by the preflight).
    pub skill: SkillTerms,
}

impl Prepared {
    /// The most model calls of this turn: `maxToolIterations`, times the skill's `max_loops`.
    pub(super) fn round_cap(&self) -> u32 {
        self.skill.round_cap(self.agent.max_tool_iterations())
    }
}

/// Reads what a turn needs (`dry_run`: the request is a dry-run); an `Err` says why a turn
/// cannot run.
pub(super) fn prepare(
    inner: &Inner,
    world: &World,
    agent_id: &str,
    mcp: &McpConnections,
    dry_run: bool,
) -> Result<Prepared, Box<TurnFailure>> {
    let missing = || {
        TurnFailure::setup(
            agent_id,
            "AGENT_NOT_FOUND",
            format!("agent {agent_id} is not in world.json"),
            None,
        )
    };
    let id = AgentId::new(agent_id).map_err(|_| missing())?;
    let agent = world.agent(&id).cloned().ok_or_else(missing)?;
    let template = world
        .template(&agent.model_template_id)
        .cloned()
        .ok_or_else(|| {
            TurnFailure::setup(
                agent_id,
                "MODEL_TEMPLATE_MISSING",
                format!(
                    "agent {agent_id} names model template {}, which is not in world.json",
                    agent.model_template_id
                ),
                Some("add the template, or choose another for the agent".to_owned()),
            )
        })?;
    let key = inner.secret(template.id.as_str());
    let endpoint =
        endpoint_of(&template, key).map_err(|e| TurnFailure::llm(agent_id, &template, &e))?;
    let files = inner.store().agent_files(&id).map_err(|e| {
        TurnFailure::setup(
            agent_id,
            e.code(),
            e.to_string(),
            crate::error::Coded::fix(&e).map(|f| f.text()),
        )
    })?;
    let work_dir = agent
        .work_dir
        .as_deref()
        .and_then(|d| WorkDir::new(std::path::Path::new(d)).ok())
        // The village's data folder (its files and the shelf) is fenced when a work folder
        // holds it (the preflight refuses that, WORK_DIR_CONTAINS_VILLAGE; this is the
        // second net).
        .map(|j| match inner.store().workspace().parent() {
            Some(data_dir) => j.fence(data_dir),
            None => j.fence(inner.store().workspace()),
        });
    let approval = inner.approval();
    let language = inner.language();
    let mut specs = offered_tools(&agent, work_dir.is_some(), approval, language);
    let (extra_specs, mut synthetic) = synthetic_tools(&agent, world, language, work_dir.is_some());
    specs.extend(extra_specs);
    let (judge_specs, judges) =
        super::super::judge_route::judge_tools(inner, world, &agent, language);
    specs.extend(judge_specs);
    synthetic.extend(judges);
    specs.extend(mcp.specs());
    let skill = files.load_skill().map(|l| l.value).unwrap_or_default();
    // `allowed-tools` narrows every kind of tool offered: bundled, synthetic, judges, MCP.
    specs.retain(|s| skill.terms.allows(&s.name));
    let roster = roster(inner, world, &agent);
    let parts = PromptParts {
        ordinance: inner.store().read_ordinance().unwrap_or_default(),
        agent_id: agent_id.into(),
        agent_name: agent.name.clone(),
        work_dir: agent.work_dir.clone(),
        grounding: template.google_search && wire_of(&template) == Wire::Gemini,
        construct: files.read_construct().unwrap_or_default(),
        skill: skill.procedure,
        roster: roster.clone(),
        memory: files.read_memory().unwrap_or_default(),
    };
    let system = compose_system_prompt(&parts, language);
    let tools = ToolContext {
        agent_id: agent_id.into(),
        work_dir,
        agent_files: files,
        rag_sources: agent
            .rag_sources
            .iter()
            .map(std::path::PathBuf::from)
            .collect(),
        approval,
        language,
        trash: inner.trash().clone(),
        dry_run: dry_run || inner.safety().dry_run(),
    };
    Ok(Prepared {
        wire: wire_of(&template),
        agent,
        template,
        endpoint,
        tools,
        system,
        specs,
        synthetic,
        roster,
        skill: skill.terms,
    })
}

/// The agent's connected peers as its prompt lists them, with their running state now.
fn roster(inner: &Inner, world: &World, agent: &AgentSpec) -> Vec<RosterEntry> {
    agent
        .connected_agents
        .iter()
        .filter_map(|peer| world.agent(peer))
        .map(|peer| RosterEntry {
            id: peer.id.to_string(),
            name: peer.name.clone(),
            running: inner.is_running(peer.id.as_str()),
        })
        .collect()
}

/// The model request of one round: the template's settings, the turn's tokens.
pub(super) fn request_for(
    p: &Prepared,
    messages: &[ChatMessage],
    control: &TurnControl,
) -> ChatRequest {
    let mut request =
        ChatRequest::new(p.template.model.clone(), messages.to_vec(), control.token());
    request.tools = p.specs.clone();
    request.temperature = p.template.temperature;
    request.max_output_tokens = p.template.max_output_tokens;
    request.effort = p.template.effort;
    request.cacheable_prefix_len = p.system.cacheable_prefix_len;
    request.skills = skills_of(&p.template);
    request.in_flight = InFlight::Finish;
    request.stream_cut = control.stream_cut();
    request.abort = control.abort.clone();
    request
}

/// The `intent` record of the call about to be sent.
pub(super) fn intent(agent_id: &str, p: &Prepared, round: u32, reserved: u64) -> Record {
    Record::Intent(IntentRecord {
        agent_id: agent_id.into(),
        ts_ms: now_ms(),
        round,
        model: p.template.model.clone(),
        backend: p.wire.as_str().to_owned(),
        reserved,
    })
}
