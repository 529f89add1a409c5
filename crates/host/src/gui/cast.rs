//! The GUI's servant and judge controls: create, rename, delete (its folder to the trash),
//! connect and disconnect, a servant's settings, a judge's switch — each through the core's
//! cast edit and audited as a `world.json` save — and "Try", the `judge try` call: the judge's
//! backend on a text, nothing delivered, the rule it would take.

use fuseforks_core::judge::{BackendSetup, ask_backend, evaluate, judge_states};
use fuseforks_core::llm::LlmClient;
use fuseforks_core::safety::Channel;
use fuseforks_core::village::{Language, VillageStore};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub use crate::world_edit::CastEdit;
use crate::world_edit::{EditDone, apply_cast};

use super::GuiState;
use super::error::ApiError;

/// `GET /api/cast`: the servants with their settings and what names each outside `world.json`
/// (schedule tasks, judge routes), the roles, the groups, the judges.
pub async fn cast(
    axum::extract::State(state): axum::extract::State<std::sync::Arc<GuiState>>,
) -> Result<axum::Json<Value>, ApiError> {
    let world = state.orchestrator.world();
    let named = state.orchestrator.all_servant_references();
    let servants: Vec<Value> = world.agents.iter().map(|a| json!({
        "id": a.id.as_str(), "name": a.name, "roleId": a.role_id, "groupId": a.group_id,
        "workDir": a.work_dir, "enabledTools": a.enabled_tools, "maxToolIterations": a.max_tool_iterations,
        "connected": a.connected_agents.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
        "status": serde_json::to_value(state.orchestrator.status(a.id.as_str())).unwrap_or(Value::Null),
        "namedBy": named.get(a.id.as_str()).cloned().unwrap_or_default(),
    })).collect();
    let judges: Vec<Value> = world
        .judges
        .iter()
        .map(|j| json!({"id": j.id.as_str(), "name": j.name, "enabled": j.enabled}))
        .collect();
    let roles: Vec<Value> = world
        .roles
        .iter()
        .map(|r| json!({"id": r.id, "name": r.name}))
        .collect();
    let groups: Vec<Value> = world
        .groups
        .iter()
        .map(|g| json!({"id": g.id, "name": g.name}))
        .collect();
    Ok(axum::Json(
        json!({"servants": servants, "judges": judges, "roles": roles, "groups": groups,
        "tools": fuseforks_core::tools::BUNDLED_TOOL_NAMES}),
    ))
}

/// Applies one edit through the host's one path (`world_edit::apply_cast`); `world.json` is
/// audited as saved from the GUI.
pub async fn edit(state: &GuiState, edit: CastEdit) -> Result<Value, ApiError> {
    let done = apply_cast(&state.orchestrator, edit, Channel::Gui).await?;
    Ok(match done {
        EditDone::Created { agent_id } => json!({"agentId": agent_id}),
        EditDone::Deleted {
            trashed,
            named_by,
            was_reception,
        } => json!({"trashed": trashed, "namedBy": named_by, "wasReception": was_reception}),
        EditDone::Changed => json!({}),
    })
}

/// `tryJudge`: the judge's answers on `text` and the rule it would take (nothing delivered).
pub async fn try_judge(state: &GuiState, judge_id: &str, text: &str) -> Result<Value, ApiError> {
    let world = state.orchestrator.world();
    let store = VillageStore::new(state.paths.workspace());
    let judges = judge_states(&store, &world);
    let Some(judge) = judges.iter().find(|j| j.spec.id.as_str() == judge_id) else {
        return Err(ApiError::not_found(&format!("judge {judge_id}")));
    };
    let rules = match &judge.rules {
        Ok(r) => r,
        Err(findings) => {
            let first = findings
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            return Ok(json!({"outcome": "invalid", "detail": first}));
        }
    };
    let jev = state
        .paths
        .shelf()
        .load_jev()
        .map(|l| l.value)
        .unwrap_or_default();
    let secrets = std::sync::Arc::clone(&state.secrets);
    let lookup = move |name: &str| secrets.get(name).ok().flatten();
    let client = LlmClient::new()?;
    let setup = BackendSetup {
        world: &world,
        jev: &jev,
        secret: &lookup,
        client: &client,
        language: world.language().unwrap_or(Language::En),
    };
    let reply = ask_backend(&setup, &judge.spec, rules, text, CancellationToken::new()).await;
    let usage = reply.usage.unwrap_or_default();
    let tokens = json!({"input": usage.prompt, "output": usage.completion});
    Ok(match &reply.answers {
        Err(u) => {
            json!({"outcome": "undecided", "reason": u.reason, "detail": u.detail, "tokens": tokens})
        }
        Ok(answers) => {
            let decision = evaluate(rules, answers);
            json!({"outcome": decision.outcome_word(), "rule": decision.rule.log_text(),
                "answers": fuseforks_core::judge::answers_text(rules, answers), "tokens": tokens})
        }
    })
}
