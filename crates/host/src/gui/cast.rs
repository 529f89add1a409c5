//! The GUI's servant and judge controls: create, rename, delete (its folder to the trash),
//! connect and disconnect, a servant's settings, a judge's switch — each through the core's
//! cast edit and audited as a `world.json` save — and "Try", the `judge try` call: the judge's
//! backend on a text, nothing delivered, the rule it would take.

use fuseforks_core::judge::{BackendSetup, ask_backend, evaluate, judge_states};
use fuseforks_core::llm::LlmClient;
use fuseforks_core::safety::Channel;
use fuseforks_core::village::{Language, VillageStore};
use tokio_util::sync::CancellationToken;

pub(super) use crate::world_edit::CastEdit;
use crate::world_edit::{EditDone, apply_cast};

use super::GuiState;
use super::contract::{
    CastDone, CastJudge, CastView, CommandAnswer, NamedItem, Reply, Servant, TryJudge, TryTokens,
};
use super::error::ApiError;

/// `GET /api/cast`: the servants with their settings and what names each outside `world.json`
/// (schedule tasks, judge routes), the roles, the groups, the judges.
pub(super) async fn cast(
    axum::extract::State(state): axum::extract::State<std::sync::Arc<GuiState>>,
) -> Result<Reply<CastView>, ApiError> {
    let world = state.orchestrator.world();
    let named = state.orchestrator.all_servant_references();
    let servants = world
        .agents
        .iter()
        .map(|a| Servant {
            id: a.id.as_str().to_owned(),
            name: a.name.clone(),
            role_id: a.role_id.clone(),
            group_id: a.group_id.clone(),
            work_dir: a.work_dir.clone(),
            enabled_tools: a.enabled_tools.clone(),
            max_tool_iterations: a.max_tool_iterations,
            connected: super::views::ids(&a.connected_agents),
            status: state.orchestrator.status(a.id.as_str()),
            named_by: named.get(a.id.as_str()).cloned().unwrap_or_default(),
        })
        .collect();
    let judges = world
        .judges
        .iter()
        .map(|j| CastJudge {
            id: j.id.as_str().to_owned(),
            name: j.name.clone(),
            enabled: j.enabled,
        })
        .collect();
    let named_item = |id: &str, name: &str| NamedItem {
        id: id.to_owned(),
        name: name.to_owned(),
    };
    Ok(Reply(CastView {
        servants,
        judges,
        roles: world
            .roles
            .iter()
            .map(|r| named_item(&r.id, &r.name))
            .collect(),
        groups: world
            .groups
            .iter()
            .map(|g| named_item(&g.id, &g.name))
            .collect(),
        tools: fuseforks_core::tools::BUNDLED_TOOL_NAMES.to_vec(),
    }))
}

/// Applies one edit through the host's one path (`world_edit::apply_cast`); `world.json` is
/// audited as saved from the GUI.
pub(super) async fn edit(state: &GuiState, edit: CastEdit) -> Result<CommandAnswer, ApiError> {
    let done = apply_cast(&state.orchestrator, edit, Channel::Gui).await?;
    Ok(CommandAnswer::Cast(match done {
        EditDone::Created { agent_id } => CastDone::Created { agent_id },
        EditDone::Deleted {
            trashed,
            named_by,
            was_reception,
        } => CastDone::Deleted {
            trashed,
            named_by,
            was_reception,
        },
        EditDone::Changed => CastDone::Changed {},
    }))
}

/// `tryJudge`: the judge's answers on `text` and the rule it would take (nothing delivered).
pub(super) async fn try_judge(
    state: &GuiState,
    judge_id: &str,
    text: &str,
) -> Result<CommandAnswer, ApiError> {
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
            return Ok(CommandAnswer::TryJudge(TryJudge::Invalid {
                outcome: "invalid",
                detail: first,
            }));
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
    let tokens = TryTokens {
        input: usage.prompt,
        output: usage.completion,
    };
    Ok(CommandAnswer::TryJudge(match &reply.answers {
        Err(u) => TryJudge::Undecided {
            outcome: "undecided",
            reason: u.reason,
            detail: u.detail.clone(),
            tokens,
        },
        Ok(answers) => {
            let decision = evaluate(rules, answers);
            TryJudge::Decided {
                outcome: decision.outcome_word(),
                rule: decision.rule.log_text(),
                answers: fuseforks_core::judge::answers_text(rules, answers),
                tokens,
            }
        }
    }))
}
