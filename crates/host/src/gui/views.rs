//! The API's reads: the village with its servants' live facts, one servant's chat, the
//! approvals waiting for a human, conversations (list, one, export), settings (never a secret
//! value: `hasKey` only) and the log's tail. Each is one handler over the orchestrator, the
//! village's files and the live view; none writes.

use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use fuseforks_core::events::AgentStatus;
use fuseforks_core::orchestrator::WaveStatus;
use fuseforks_core::sessions::{AgentMessage, Record, SessionStore, StoredRecord};
use fuseforks_core::village::{AgentId, ShelfStore, World};
use serde_json::{Value, json};

use super::GuiState;
use super::error::ApiError;

/// The most log lines one read returns, and how much of the file's end it reads.
const MAX_LOG_LINES: usize = 500;
const LOG_TAIL_BYTES: u64 = 256 * 1024;

type Answer = Result<Json<Value>, ApiError>;

fn status_word(status: AgentStatus) -> Value {
    serde_json::to_value(status).unwrap_or(Value::Null)
}

/// `GET /api/village`.
pub async fn village(State(state): State<Arc<GuiState>>) -> Answer {
    let orch = &state.orchestrator;
    let world = orch.world();
    let agents: Vec<Value> = world
        .agents
        .iter()
        .map(|a| {
            let id = a.id.as_str();
            let template = world.template(&a.model_template_id);
            let live = state.live.agent(id);
            let cache_rate = (live.prompt_tokens > 0)
                .then(|| live.cached_tokens as f64 / live.prompt_tokens as f64);
            json!({
                "id": id, "name": a.name, "status": status_word(orch.status(id)),
                "templateId": a.model_template_id.as_str(),
                "model": template.map(|t| t.model.clone()),
                "batchStart": a.batch_start, "groupId": a.group_id,
                "connected": a.connected_agents.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
                "typing": live.typing,
                "lastTool": live.last_tool.as_ref().map(|(tool, ok)| json!({"tool": tool, "ok": ok})),
                "stats": {
                    "uptimeSecs": live.uptime_secs, "totalTokens": live.total_tokens,
                    "promptTokens": live.prompt_tokens, "cachedTokens": live.cached_tokens,
                    "cacheRate": cache_rate, "lastPromptTokens": live.last_prompt_tokens,
                    "contextLimit": template.map(|t| t.context_length),
                },
            })
        })
        .collect();
    let groups: Vec<Value> = world
        .groups
        .iter()
        .map(|g| json!({"id": g.id, "name": g.name, "batchStart": g.batch_start}))
        .collect();
    Ok(Json(json!({
        "language": orch.language().as_str(),
        "version": state.version,
        "agents": agents,
        "groups": groups,
        "switch": orch.switch_state().as_str(),
        "runApproval": orch.run_approval().as_str(),
        "planReviewBypass": orch.plan_review_bypass(),
        "pendingCount": pending_runs(&state, &world).len() + proposed(&state).len(),
        "door": {"open": state.door_url.is_some(), "url": state.door_url},
        "roots": orch.running_roots(),
        "map": map(&world),
    })))
}

/// The map's drawing area (SVG user units): width, height.
pub const MAP_SIZE: (f64, f64) = (800.0, 500.0);
const MAP_W: f64 = MAP_SIZE.0;
const MAP_H: f64 = MAP_SIZE.1;

/// The connection map, laid out here: servants and judges at their `topologyPositions`, the
/// others on a circle in list order; an edge per connection.
fn map(world: &World) -> Value {
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
    let nodes: Vec<Value> = ids
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
            json!({"id": id, "name": name, "kind": kind, "x": x.round(), "y": y.round()})
        })
        .collect();
    let edges: Vec<Value> = world
        .agents
        .iter()
        .flat_map(|a| {
            a.connected_agents
                .iter()
                .map(move |c| json!({"from": a.id.as_str(), "to": c.as_str()}))
        })
        .collect();
    json!({"width": MAP_W, "height": MAP_H, "nodes": nodes, "edges": edges})
}

/// `GET /api/tools/{agentId}/{callId}`: a tool call's arguments and result, while in memory.
pub async fn tool_call(
    State(state): State<Arc<GuiState>>,
    Path((agent, call)): Path<(String, String)>,
) -> Answer {
    let detail = state.orchestrator.tool_call(&agent, &call).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "TOOL_CALL_GONE",
            "the call is no longer in memory (the last 200 are kept)",
        )
    })?;
    Ok(Json(serde_json::to_value(detail).unwrap_or(Value::Null)))
}

fn message_json(seq: Option<u64>, m: &AgentMessage) -> Value {
    let mut v = json!({"id": m.id, "from": m.from.label(), "to": m.to.label(),
        "content": m.content, "tsMs": m.ts_ms});
    if let Some(seq) = seq {
        v["seq"] = json!(seq);
    }
    v
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
pub async fn chat(State(state): State<Arc<GuiState>>, Path(agent): Path<String>) -> Answer {
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
        (Some(id), Some(store)) => messages(store, id)?
            .into_iter()
            .filter(|(_, m)| m.from.label() == label || m.to.label() == label)
            .map(|(seq, m)| message_json(Some(seq), &m))
            .collect(),
        _ => Vec::new(),
    };
    Ok(Json(json!({"sessionId": session, "messages": list})))
}

/// Every agent's pending `run` requests.
fn pending_runs(state: &GuiState, world: &World) -> Vec<Value> {
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
            policy.pending.into_iter().map(move |p| {
                json!({"agentId": id, "command": p.command, "args": p.args, "count": p.count,
                    "firstRequestedAtMs": p.first_requested_at_ms})
            })
        })
        .collect()
}

fn proposed(state: &GuiState) -> Vec<Value> {
    state
        .orchestrator
        .plans()
        .into_iter()
        .filter(|w| w.status == WaveStatus::Proposed)
        .map(|w| {
            let tasks: Vec<Value> = w
                .tasks
                .iter()
                .map(|t| json!({"to": t.to, "message": t.message}))
                .collect();
            json!({"planId": w.plan_id, "agentId": w.agent_id, "wave": w.wave, "tasks": tasks})
        })
        .collect()
}

/// `GET /api/approvals`.
pub async fn approvals(State(state): State<Arc<GuiState>>) -> Answer {
    let world = state.orchestrator.world();
    Ok(Json(json!({
        "runs": pending_runs(&state, &world),
        "plans": proposed(&state),
        "runApproval": state.orchestrator.run_approval().as_str(),
        "planReviewBypass": state.orchestrator.plan_review_bypass(),
    })))
}

/// `GET /api/questions`: the questions (`ask_user`) waiting for the person now.
pub async fn questions(State(state): State<Arc<GuiState>>) -> Json<Questions> {
    Json(Questions {
        questions: state.orchestrator.pending_questions(),
    })
}

/// The body of `GET /api/questions`.
#[derive(Debug, serde::Serialize)]
pub struct Questions {
    /// In a stable order (by id).
    questions: Vec<fuseforks_core::orchestrator::PendingQuestion>,
}

/// `GET /api/conversations`: newest first.
pub async fn conversations(State(state): State<Arc<GuiState>>) -> Answer {
    let store = store(&state)?;
    let mut list = store.list()?;
    list.sort_by_key(|(_, meta)| std::cmp::Reverse(meta.created_at));
    let sessions: Vec<Value> = list
        .into_iter()
        .map(|(id, meta)| json!({"id": id, "title": meta.title, "createdAtMs": meta.created_at}))
        .collect();
    Ok(Json(
        json!({"current": state.orchestrator.current_session(), "sessions": sessions}),
    ))
}

/// `GET /api/conversations/{id}`.
pub async fn conversation(State(state): State<Arc<GuiState>>, Path(id): Path<String>) -> Answer {
    let store = store(&state)?;
    let list: Vec<Value> = messages(store, &id)?
        .into_iter()
        .map(|(seq, m)| message_json(Some(seq), &m))
        .collect();
    Ok(Json(json!({"id": id, "messages": list})))
}

/// `GET /api/conversations/{id}/export`: JSON lines, one record each, as a download.
pub async fn export(
    State(state): State<Arc<GuiState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let store = store(&state)?;
    let mut body = String::new();
    for (seq, record) in store.records(&id)? {
        if let StoredRecord::Known(record) = record {
            let mut line = serde_json::to_value(&record).unwrap_or(Value::Null);
            line["seq"] = json!(seq);
            body.push_str(&line.to_string());
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
pub async fn settings(State(state): State<Arc<GuiState>>) -> Answer {
    let world = state.orchestrator.world();
    let templates: Vec<Value> = world
        .model_templates
        .iter()
        .map(|t| {
            let has_key = state.secrets.get(t.id.as_str()).ok().flatten().is_some();
            json!({"id": t.id.as_str(), "name": t.name, "provider": t.provider, "model": t.model,
                "baseUrl": t.base_url, "credential": t.credential, "hasKey": has_key, "useTools": t.use_tools})
        })
        .collect();
    let door = ShelfStore::new(state.paths.data_dir())
        .load_door()
        .map(|l| json!({"enabled": l.value.enabled, "port": l.value.port, "hasToken": l.value.token.is_some()}))
        .unwrap_or_else(|e| json!({"error": {"code": fuseforks_core::Coded::code(&e), "message": e.to_string()}}));
    Ok(Json(json!({
        "templates": templates,
        "secretStore": state.secrets.name(),
        "door": door,
        "tokenBudget": world.token_budget,
        "askTimeoutSecs": world.ask_timeout_secs(),
    })))
}

/// `GET /api/log?lines=N`: the log's last lines, from at most its last 256 KiB.
pub async fn log(State(state): State<Arc<GuiState>>, uri: Uri) -> Answer {
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
    Ok(Json(json!({"lines": &lines[from..]})))
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
