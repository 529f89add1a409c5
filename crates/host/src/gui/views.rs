//! The API's reads: the village with its servants' live facts, one servant's chat, the
//! approvals waiting for a human, conversations (list, one, export), settings (never a secret
//! value: `hasKey` only) and the log's tail. Each is one handler over the orchestrator, the
//! village's files and the live view; none writes.

use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use fuseforks_core::orchestrator::{ToolCallDetail, WaveStatus};
use fuseforks_core::sessions::{AgentMessage, Record, SessionError, SessionStore, StoredRecord};
use fuseforks_core::village::{AgentId, AgentSpec, ShelfStore, World};

use super::GuiState;
use super::contract::{
    AgentStatsView, Approvals, Chat, Conversation, ConversationList, DoorLink, DoorProblem,
    DoorSettingsRow, DoorView, ExportLine, LastTool, LogTail, MapEdge, MapNode, MapView, Message,
    PendingRun, ProblemWords, ProposedWave, Questions, Reply, SessionRow, SettingsView,
    TemplateRow, Village, VillageAgent, VillageGroup, WaveTask, unserializable,
};
use super::error::ApiError;

/// The most log lines one read returns, and how much of the file's end it reads.
const MAX_LOG_LINES: usize = 500;
const LOG_TAIL_BYTES: u64 = 256 * 1024;

type Answer<T> = Result<Reply<T>, ApiError>;

/// A servant as the village page shows it, with its live facts.
fn village_agent(state: &GuiState, world: &World, a: &AgentSpec) -> VillageAgent {
    let id = a.id.as_str();
    let template = world.template(&a.model_template_id);
    let live = state.live.agent(id);
    let cache_rate =
        (live.prompt_tokens > 0).then(|| live.cached_tokens as f64 / live.prompt_tokens as f64);
    VillageAgent {
        id: id.to_owned(),
        name: a.name.clone(),
        status: state.orchestrator.status(id),
        template_id: a.model_template_id.as_str().to_owned(),
        model: template.map(|t| t.model.clone()),
        batch_start: a.batch_start,
        group_id: a.group_id.clone(),
        connected: ids(&a.connected_agents),
        typing: live.typing,
        last_tool: live.last_tool.map(|(tool, ok)| LastTool { tool, ok }),
        stats: AgentStatsView {
            uptime_secs: live.uptime_secs,
            total_tokens: live.total_tokens,
            prompt_tokens: live.prompt_tokens,
            cached_tokens: live.cached_tokens,
            cache_rate,
            last_prompt_tokens: live.last_prompt_tokens,
            context_limit: template.map(|t| t.context_length),
        },
    }
}

/// Agent ids as the page reads them.
pub(super) fn ids(list: &[AgentId]) -> Vec<String> {
    list.iter().map(|c| c.as_str().to_owned()).collect()
}

/// `GET /api/village`.
pub(super) async fn village(State(state): State<Arc<GuiState>>) -> Answer<Village> {
    let orch = &state.orchestrator;
    let world = orch.world();
    let agents = world
        .agents
        .iter()
        .map(|a| village_agent(&state, &world, a))
        .collect();
    let groups = world
        .groups
        .iter()
        .map(|g| VillageGroup {
            id: g.id.clone(),
            name: g.name.clone(),
            batch_start: g.batch_start,
        })
        .collect();
    Ok(Reply(Village {
        language: orch.language().as_str(),
        version: state.version.clone(),
        agents,
        groups,
        switch: orch.switch_state().as_str(),
        run_approval: orch.run_approval().as_str(),
        plan_review_bypass: orch.plan_review_bypass(),
        pending_count: pending_runs(&state, &world).len() + proposed(&state).len(),
        door: DoorLink {
            open: state.door_url.is_some(),
            url: state.door_url.clone(),
        },
        roots: orch.running_roots(),
        map: map(&world),
    }))
}

/// The map's drawing area (SVG user units): width, height.
pub(super) const MAP_SIZE: (f64, f64) = (800.0, 500.0);
const MAP_W: f64 = MAP_SIZE.0;
const MAP_H: f64 = MAP_SIZE.1;

/// The connection map, laid out here: servants and judges at their `topologyPositions`, the
/// others on a circle in list order; an edge per connection.
fn map(world: &World) -> MapView {
    let mut ids: Vec<(&str, &str, &str)> = world
        .agents
        .iter()
        .map(|a| (a.id.as_str(), a.name.as_str(), "servant"))
        .collect();
    ids.extend(
        world
            .judges
            .iter()
            .map(|j| (j.id.as_str(), j.name.as_str(), "judge")),
    );
    let n = ids.len().max(1) as f64;
    let nodes = ids
        .iter()
        .enumerate()
        .map(|(i, (id, name, kind))| {
            let (x, y) = match world.topology_positions.get(*id) {
                Some(p) => (p.x.clamp(0.0, MAP_W), p.y.clamp(0.0, MAP_H)),
                None => {
                    let angle = std::f64::consts::TAU * i as f64 / n - std::f64::consts::FRAC_PI_2;
                    (
                        MAP_W / 2.0 + 180.0 * angle.cos(),
                        MAP_H / 2.0 + 180.0 * angle.sin(),
                    )
                }
            };
            MapNode {
                id: (*id).to_owned(),
                name: (*name).to_owned(),
                kind,
                x: x.round(),
                y: y.round(),
            }
        })
        .collect();
    let edges = world
        .agents
        .iter()
        .flat_map(|a| {
            a.connected_agents.iter().map(move |c| MapEdge {
                from: a.id.as_str().to_owned(),
                to: c.as_str().to_owned(),
            })
        })
        .collect();
    MapView {
        width: MAP_W,
        height: MAP_H,
        nodes,
        edges,
    }
}

/// `GET /api/tools/{agentId}/{callId}`: a tool call's arguments and result, while in memory.
pub(super) async fn tool_call(
    State(state): State<Arc<GuiState>>,
    Path((agent, call)): Path<(String, String)>,
) -> Answer<ToolCallDetail> {
    let detail = state.orchestrator.tool_call(&agent, &call).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "TOOL_CALL_GONE",
            "the call is no longer in memory (the last 200 are kept)",
        )
    })?;
    Ok(Reply(detail))
}

fn message(seq: u64, m: &AgentMessage) -> Message {
    Message {
        id: m.id.clone(),
        from: m.from.label(),
        to: m.to.label(),
        content: m.content.clone(),
        ts_ms: m.ts_ms,
        seq,
    }
}

fn store(state: &GuiState) -> Result<&SessionStore, ApiError> {
    state.orchestrator.sessions().ok_or_else(|| {
        ApiError::new(
            StatusCode::CONFLICT,
            "SESSION_STORE_UNAVAILABLE",
            "sessions.redb is not open in this run",
        )
    })
}

/// The messages of a stored conversation, with their sequence numbers.
fn messages(store: &SessionStore, session: &str) -> Result<Vec<(u64, AgentMessage)>, ApiError> {
    Ok(store
        .records(session)?
        .into_iter()
        .filter_map(|(seq, r)| match r {
            StoredRecord::Known(Record::Message(m)) => Some((seq, m)),
            _ => None,
        })
        .collect())
}

/// `GET /api/chat/{agentId}`: the current conversation's messages to or from that agent.
pub(super) async fn chat(
    State(state): State<Arc<GuiState>>,
    Path(agent): Path<String>,
) -> Answer<Chat> {
    let world = state.orchestrator.world();
    if AgentId::new(&agent)
        .ok()
        .and_then(|id| world.agent(&id).cloned())
        .is_none()
    {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "AGENT_NOT_FOUND",
            format!("no agent {agent}"),
        ));
    }
    let label = format!("agent:{agent}");
    let session = state.orchestrator.current_session();
    let list = match (&session, state.orchestrator.sessions()) {
        // A new current conversation is written with its first records: until then, none.
        (Some(id), Some(store)) if !matches!(store.meta(id), Err(SessionError::NotFound(_))) => {
            messages(store, id)?
                .into_iter()
                .filter(|(_, m)| m.from.label() == label || m.to.label() == label)
                .map(|(seq, m)| message(seq, &m))
                .collect()
        }
        _ => Vec::new(),
    };
    Ok(Reply(Chat {
        session_id: session,
        messages: list,
    }))
}

/// Every agent's pending `run` requests.
fn pending_runs(state: &GuiState, world: &World) -> Vec<PendingRun> {
    let village = state.paths.village();
    world
        .agents
        .iter()
        .filter_map(|a| {
            Some((
                a.id.as_str(),
                village
                    .agent_files(&a.id)
                    .ok()?
                    .load_run_policy()
                    .ok()?
                    .value,
            ))
        })
        .flat_map(|(id, policy)| {
            policy.pending.into_iter().map(move |p| PendingRun {
                agent_id: id.to_owned(),
                command: p.command,
                args: p.args,
                count: p.count,
                first_requested_at_ms: p.first_requested_at_ms,
            })
        })
        .collect()
}

fn proposed(state: &GuiState) -> Vec<ProposedWave> {
    state
        .orchestrator
        .plans()
        .into_iter()
        .filter(|w| w.status == WaveStatus::Proposed)
        .map(|w| ProposedWave {
            tasks: w
                .tasks
                .into_iter()
                .map(|t| WaveTask {
                    to: t.to,
                    message: t.message,
                })
                .collect(),
            plan_id: w.plan_id,
            agent_id: w.agent_id,
            wave: w.wave,
        })
        .collect()
}

/// `GET /api/approvals`.
pub(super) async fn approvals(State(state): State<Arc<GuiState>>) -> Answer<Approvals> {
    let world = state.orchestrator.world();
    Ok(Reply(Approvals {
        runs: pending_runs(&state, &world),
        plans: proposed(&state),
        run_approval: state.orchestrator.run_approval().as_str(),
        plan_review_bypass: state.orchestrator.plan_review_bypass(),
    }))
}

/// `GET /api/questions`: the questions (`ask_user`) waiting for the person now.
pub(super) async fn questions(State(state): State<Arc<GuiState>>) -> Reply<Questions> {
    Reply(Questions {
        questions: state.orchestrator.pending_questions(),
    })
}

/// `GET /api/conversations`: newest first.
pub(super) async fn conversations(State(state): State<Arc<GuiState>>) -> Answer<ConversationList> {
    let store = store(&state)?;
    let mut list = store.list()?;
    list.sort_by_key(|(_, meta)| std::cmp::Reverse(meta.created_at));
    let sessions = list
        .into_iter()
        .map(|(id, meta)| SessionRow {
            id,
            title: meta.title,
            created_at_ms: meta.created_at,
        })
        .collect();
    Ok(Reply(ConversationList {
        current: state.orchestrator.current_session(),
        sessions,
    }))
}

/// `GET /api/conversations/{id}`.
pub(super) async fn conversation(
    State(state): State<Arc<GuiState>>,
    Path(id): Path<String>,
) -> Answer<Conversation> {
    let store = store(&state)?;
    let messages = messages(store, &id)?
        .into_iter()
        .map(|(seq, m)| message(seq, &m))
        .collect();
    Ok(Reply(Conversation { id, messages }))
}

/// `GET /api/conversations/{id}/export`: JSON lines, one record each, as a download.
pub(super) async fn export(
    State(state): State<Arc<GuiState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let store = store(&state)?;
    let mut body = String::new();
    for (seq, record) in store.records(&id)? {
        if let StoredRecord::Known(record) = record {
            let line = ExportLine {
                record: &record,
                seq,
            };
            body.push_str(&serde_json::to_string(&line).map_err(|e| unserializable(&e))?);
            body.push('\n');
        }
    }
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let disposition = format!("attachment; filename=\"conversation-{safe}.jsonl\"");
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/x-ndjson".to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

/// `GET /api/settings`: templates (with `hasKey`, never a value), the door, the limits.
pub(super) async fn settings(State(state): State<Arc<GuiState>>) -> Answer<SettingsView> {
    let world = state.orchestrator.world();
    let templates = world
        .model_templates
        .iter()
        .map(|t| TemplateRow {
            id: t.id.as_str().to_owned(),
            name: t.name.clone(),
            provider: t.provider,
            model: t.model.clone(),
            base_url: t.base_url.clone(),
            credential: t.credential,
            has_key: state.secrets.get(t.id.as_str()).ok().flatten().is_some(),
            use_tools: t.use_tools,
        })
        .collect();
    let door = ShelfStore::new(state.paths.data_dir())
        .load_door()
        .map(|l| {
            DoorView::Read(DoorSettingsRow {
                enabled: l.value.enabled,
                port: l.value.port,
                has_token: l.value.token.is_some(),
            })
        })
        .unwrap_or_else(|e| {
            DoorView::Unreadable(DoorProblem {
                error: ProblemWords {
                    code: fuseforks_core::Coded::code(&e).to_owned(),
                    message: e.to_string(),
                },
            })
        });
    Ok(Reply(SettingsView {
        templates,
        secret_store: state.secrets.name().to_owned(),
        door,
        token_budget: world.token_budget,
        ask_timeout_secs: world.ask_timeout_secs(),
    }))
}

/// `GET /api/log?lines=N`: the log's last lines, from at most its last 256 KiB.
pub(super) async fn log(State(state): State<Arc<GuiState>>, uri: Uri) -> Answer<LogTail> {
    let wanted = uri
        .query()
        .and_then(|q| q.split('&').find_map(|p| p.strip_prefix("lines=")))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(200)
        .min(MAX_LOG_LINES);
    let path = state.paths.workspace().join("fuseforks.log");
    let text = tail(&path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(wanted);
    Ok(Reply(LogTail {
        lines: lines[from..].iter().map(|l| (*l).to_owned()).collect(),
    }))
}

/// The last [`LOG_TAIL_BYTES`] of a file, from the first whole line.
fn tail(path: &std::path::Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(LOG_TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(LOG_TAIL_BYTES).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(if start > 0 {
        text.split_once('\n')
            .map_or(String::new(), |(_, rest)| rest.to_owned())
    } else {
        text
    })
}
