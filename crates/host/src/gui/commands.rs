//! The one command type of the GUI (`POST /api/commands`): every user action is one variant,
//! handled in one `match` that calls the core (or the host's secret store and shelf) exactly as
//! the CLI would, so the same audit and log lines come out. Bodies that are not one known
//! command are 400; refused values are the core's coded errors.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use fuseforks_core::log::LogSink;
use fuseforks_core::orchestrator::{PendingDecision, PlanTask, RequestMode};
use fuseforks_core::safety::{Channel, SwitchCommand};
use fuseforks_core::sessions::Endpoint;
use fuseforks_core::tools::RunApproval;
use fuseforks_core::village::{AgentId, ShelfStore};
use serde::Deserialize;
use serde_json::Value;

use super::GuiState;
use super::contract::{
    CommandAnswer, Done, DoorSaved, Forked, InGrace, KeyStored, PendingLeft, Reply, Started,
    SwitchMoved,
};
use super::error::ApiError;

/// The answer of a command that answers nothing but `ok`.
const EMPTY: CommandAnswer = CommandAnswer::Empty {};

/// How long stopping one agent waits for its turn to record itself.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// A task of an edited plan wave.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskEdit {
    to: String,
    message: String,
}

/// Which allow line an approval adds.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The exact command line.
    Exact,
    /// `command *`.
    Pattern,
}

/// Every user action of the GUI (each variant is one row of docs/gui-api.md); on the wire the
/// variant is the object's `type` (`decode.rs` moves it out).
#[allow(missing_docs)]
#[derive(Debug, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum Command {
    StartAgent {
        agent_id: String,
    },
    StopAgent {
        agent_id: String,
    },
    StartBatch {},
    SetGroupBatchStart {
        group_id: String,
        enabled: bool,
    },
    SendMessage {
        agent_id: String,
        text: String,
        /// A dry-run request (the page's Dry-run switch); the effects come as `dryRunEffect`
        /// events.
        #[serde(default)]
        dry_run: bool,
    },
    Interrupt {
        agent_id: String,
    },
    NewConversation {},
    OpenConversation {
        session_id: String,
    },
    ForkConversation {
        session_id: String,
        at_seq: u64,
    },
    DeleteConversation {
        session_id: String,
    },
    ApproveRun {
        agent_id: String,
        command: String,
        args: Vec<String>,
        scope: Scope,
        #[serde(default, rename = "continue")]
        and_continue: bool,
    },
    RejectRun {
        agent_id: String,
        command: String,
        args: Vec<String>,
    },
    DispatchPlan {
        plan_id: String,
        #[serde(default)]
        tasks: Option<Vec<TaskEdit>>,
    },
    DiscardPlan {
        plan_id: String,
    },
    AnswerQuestion {
        question_id: String,
        answer: String,
    },
    SetRunApproval {
        mode: String,
    },
    SetPlanReviewBypass {
        enabled: bool,
    },
    KillSwitch {
        command: String,
    },
    SetApiKey {
        template_id: String,
        value: String,
    },
    DeleteApiKey {
        template_id: String,
    },
    SetDoor {
        enabled: bool,
        port: u16,
    },
    SetVillageLimits {
        token_budget: Option<u64>,
        ask_timeout_secs: Option<u64>,
    },
    SetPosition {
        agent_id: String,
        x: f64,
        y: f64,
    },
    CheckFile {
        path: String,
        text: String,
    },
    SaveFile {
        path: String,
        text: String,
        #[serde(default)]
        base_hash: Option<String>,
    },
    Assist {
        /// Read by `editing::assist`, so that a malformed one is `INVALID_ASSIST_REQUEST`.
        request: Value,
    },
    Cast {
        edit: super::cast::CastEdit,
    },
    TryJudge {
        judge_id: String,
        text: String,
    },
    SetMcpSecret {
        name: String,
        value: String,
    },
    FetchPrices {},
}

/// `POST /api/commands`.
pub(super) async fn handle(
    State(state): State<Arc<GuiState>>,
    body: Bytes,
) -> Result<Reply<Done>, ApiError> {
    let command: Command = super::decode::decode(&body)?;
    Ok(Reply(execute(&state, command).await?.into()))
}

fn known_agent(state: &GuiState, id: &str) -> Result<(), ApiError> {
    let world = state.orchestrator.world();
    match AgentId::new(id).ok().filter(|a| world.agent(a).is_some()) {
        Some(_) => Ok(()),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "AGENT_NOT_FOUND",
            format!("no agent {id}"),
        )),
    }
}

/// Runs one command.
pub async fn execute(state: &GuiState, command: Command) -> Result<CommandAnswer, ApiError> {
    let orch = &state.orchestrator;
    let answer = match command {
        Command::StartAgent { agent_id } => orch.start_agent(&agent_id).map(|()| EMPTY)?,
        Command::StopAgent { agent_id } => {
            known_agent(state, &agent_id)?;
            CommandAnswer::InGrace(InGrace {
                in_grace: orch.stop_agent(&agent_id, STOP_GRACE).await,
            })
        }
        Command::StartBatch {} => CommandAnswer::Started(Started {
            started: orch.start_batch()?,
        }),
        Command::SetGroupBatchStart { group_id, enabled } => {
            set_group(state, &group_id, enabled).await?
        }
        Command::SendMessage {
            agent_id,
            text,
            dry_run,
        } => send(state, agent_id, text, RequestMode { dry_run })?,
        Command::Interrupt { agent_id } => {
            known_agent(state, &agent_id)?;
            orch.interrupt(&agent_id);
            EMPTY
        }
        Command::NewConversation {} => {
            orch.new_conversation();
            EMPTY
        }
        Command::OpenConversation { session_id } => {
            orch.continue_conversation(&session_id).map(|()| EMPTY)?
        }
        Command::ForkConversation { session_id, at_seq } => fork(state, &session_id, at_seq)?,
        Command::DeleteConversation { session_id } => delete(state, &session_id)?,
        Command::ApproveRun {
            agent_id,
            command,
            args,
            scope,
            and_continue,
        } => approve_run(state, &agent_id, &command, &args, scope, and_continue).await?,
        Command::RejectRun {
            agent_id,
            command,
            args,
        } => {
            let left = orch
                .decide_pending(
                    &agent_id,
                    &command,
                    &args,
                    PendingDecision::Reject,
                    Channel::Gui,
                )
                .await?;
            CommandAnswer::PendingLeft(PendingLeft { pending_left: left })
        }
        Command::DispatchPlan { plan_id, tasks } => dispatch(state, &plan_id, tasks)?,
        Command::DiscardPlan { plan_id } => {
            orch.discard_plan(&plan_id, Channel::Gui).map(|()| EMPTY)?
        }
        Command::AnswerQuestion {
            question_id,
            answer,
        } => answer_question(state, &question_id, &answer)?,
        Command::SetRunApproval { mode } => {
            orch.set_run_approval(approval_mode(&mode)?, Channel::Gui);
            EMPTY
        }
        Command::SetPlanReviewBypass { enabled } => {
            orch.set_plan_review_bypass(enabled, Channel::Gui);
            EMPTY
        }
        Command::KillSwitch { command } => kill_switch(state, &command).await?,
        Command::SetApiKey { template_id, value } => {
            set_key(state, &template_id, Some(&value)).await?
        }
        Command::DeleteApiKey { template_id } => set_key(state, &template_id, None).await?,
        Command::SetDoor { enabled, port } => set_door(state, enabled, port).await?,
        Command::SetPosition { agent_id, x, y } => set_position(state, &agent_id, x, y).await?,
        Command::CheckFile { path, text } => super::editing::check(state, &path, &text)?,
        Command::SaveFile {
            path,
            text,
            base_hash,
        } => super::editing::save(state, &path, &text, base_hash.as_deref()).await?,
        Command::Assist { request } => super::editing::assist(state, &request).await?,
        Command::Cast { edit } => super::cast::edit(state, edit).await?,
        Command::SetMcpSecret { name, value } => {
            super::editing::set_mcp_secret(state, &name, &value)?
        }
        Command::FetchPrices {} => fetch_prices(state).await?,
        Command::TryJudge { judge_id, text } => {
            super::cast::try_judge(state, &judge_id, &text).await?
        }
        Command::SetVillageLimits {
            token_budget,
            ask_timeout_secs,
        } => set_limits(state, token_budget, ask_timeout_secs).await?,
    };
    Ok(answer)
}

/// `approveRun`: the person's decision on a pending command, written to `run.json`, and with
/// `andContinue` the agent told to go on.
async fn approve_run(
    state: &GuiState,
    agent_id: &str,
    command: &str,
    args: &[String],
    scope: Scope,
    and_continue: bool,
) -> Result<CommandAnswer, ApiError> {
    let orch = &state.orchestrator;
    let decision = match scope {
        Scope::Exact => PendingDecision::ApproveExact,
        Scope::Pattern => PendingDecision::ApprovePattern,
    };
    let left = orch
        .decide_pending(agent_id, command, args, decision, Channel::Gui)
        .await?;
    if and_continue {
        orch.resume_after_approval(agent_id).await?;
    }
    Ok(CommandAnswer::PendingLeft(PendingLeft {
        pending_left: left,
    }))
}

/// `dispatchPlan`: a proposed wave sent, as proposed or with the person's edits.
fn dispatch(
    state: &GuiState,
    plan_id: &str,
    tasks: Option<Vec<TaskEdit>>,
) -> Result<CommandAnswer, ApiError> {
    let edited = tasks.map(|t| {
        t.into_iter()
            .map(|t| PlanTask {
                to: t.to,
                message: t.message,
            })
            .collect()
    });
    state
        .orchestrator
        .dispatch_plan(plan_id, edited, Channel::Gui)?;
    Ok(EMPTY)
}

/// `answerQuestion`: the person's answer to a question a turn waits on.
fn answer_question(
    state: &GuiState,
    question_id: &str,
    answer: &str,
) -> Result<CommandAnswer, ApiError> {
    if answer.trim().is_empty() {
        return Err(ApiError::bad_request("the answer is empty"));
    }
    state.orchestrator.answer_question(question_id, answer)?;
    Ok(EMPTY)
}

/// `setVillageLimits`: the token budget and the ask timeout, written to `world.json`.
async fn set_limits(
    state: &GuiState,
    token_budget: Option<u64>,
    ask_timeout_secs: Option<u64>,
) -> Result<CommandAnswer, ApiError> {
    state
        .orchestrator
        .update_world(|w| {
            w.token_budget = token_budget;
            w.ask_timeout_secs = ask_timeout_secs;
            Ok(())
        })
        .map_err(at_world_field)?;
    saved(state, "world.json").await;
    Ok(EMPTY)
}

/// A refused `world.json` value, about the command's field of the same name (the limits'
/// fields are named as in `world.json`).
fn at_world_field(e: fuseforks_core::CoreError) -> ApiError {
    let field = match &e {
        fuseforks_core::CoreError::Village(v) => v.field().map(str::to_owned),
        _ => None,
    };
    let api = ApiError::from(e);
    match field {
        Some(f) if f == "tokenBudget" || f == "askTimeoutSecs" => api.at(f),
        _ => api,
    }
}

fn approval_mode(mode: &str) -> Result<RunApproval, ApiError> {
    [
        RunApproval::Required,
        RunApproval::AutoApprove,
        RunApproval::NoApproval,
    ]
    .into_iter()
    .find(|m| m.as_str() == mode)
    .ok_or_else(|| {
        ApiError::bad_request(format!("unknown mode {mode:?}"))
            .with_fix("required, auto_approve or no_approval")
    })
}

/// The audit line of a file the GUI saved (`file_save`, from the GUI).
pub(super) async fn saved(state: &GuiState, file: &str) {
    crate::world_edit::audit_saved(&state.orchestrator, file, Channel::Gui).await;
}

async fn set_group(
    state: &GuiState,
    group_id: &str,
    enabled: bool,
) -> Result<CommandAnswer, ApiError> {
    if !state
        .orchestrator
        .world()
        .groups
        .iter()
        .any(|g| g.id == group_id)
    {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "GROUP_NOT_FOUND",
            format!("no group {group_id}"),
        ));
    }
    state.orchestrator.update_world(|w| {
        for g in w.groups.iter_mut().filter(|g| g.id == group_id) {
            g.batch_start = enabled;
        }
        Ok(())
    })?;
    saved(state, "world.json").await;
    Ok(EMPTY)
}

/// A node's place on the connection map (`world.json` `topologyPositions`, judges too).
async fn set_position(
    state: &GuiState,
    id: &str,
    x: f64,
    y: f64,
) -> Result<CommandAnswer, ApiError> {
    let world = state.orchestrator.world();
    let known = world.agents.iter().any(|a| a.id.as_str() == id)
        || world.judges.iter().any(|j| j.id.as_str() == id);
    if !known {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "AGENT_NOT_FOUND",
            format!("no agent or judge {id}"),
        ));
    }
    if !(x.is_finite() && y.is_finite()) {
        return Err(ApiError::bad_request("x and y must be numbers"));
    }
    let (width, height) = super::views::MAP_SIZE;
    state.orchestrator.update_world(|w| {
        let place = w.topology_positions.entry(id.to_owned()).or_default();
        // Kept inside the map the page draws.
        place.x = x.clamp(0.0, width);
        place.y = y.clamp(0.0, height);
        Ok(())
    })?;
    saved(state, "world.json").await;
    Ok(EMPTY)
}

/// Sends the user's text as a new causal root in `mode`; the reply comes as a `messageSent`
/// event (a dry-run's effects as `dryRunEffect` events).
fn send(
    state: &GuiState,
    agent_id: String,
    text: String,
    mode: RequestMode,
) -> Result<CommandAnswer, ApiError> {
    known_agent(state, &agent_id)?;
    if text.trim().is_empty() {
        return Err(ApiError::bad_request("the message is empty"));
    }
    if state.orchestrator.status(&agent_id) != fuseforks_core::events::AgentStatus::Running {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "NOT_RUNNING",
            format!("agent {agent_id} is not running"),
        )
        .with_fix("start it first (Start on the village page)"));
    }
    let orch = state.orchestrator.clone();
    tokio::spawn(async move {
        // The outcome reaches the page as events (messageSent, agentFailed, turnInterrupted).
        let _ = orch
            .deliver_and_wait_in_mode(&agent_id, Endpoint::User, &text, mode)
            .await;
    });
    Ok(EMPTY)
}

fn fork(state: &GuiState, session_id: &str, at_seq: u64) -> Result<CommandAnswer, ApiError> {
    let store = state
        .orchestrator
        .sessions()
        .ok_or_else(|| ApiError::not_found("conversation store"))?;
    let now = now_ms();
    let forked = store.fork(session_id, at_seq, now)?;
    state.orchestrator.continue_conversation(&forked)?;
    Ok(CommandAnswer::Forked(Forked { session_id: forked }))
}

fn delete(state: &GuiState, session_id: &str) -> Result<CommandAnswer, ApiError> {
    if state.orchestrator.current_session().as_deref() == Some(session_id) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "SESSION_IS_CURRENT",
            "the current conversation cannot be deleted",
        )
        .with_fix("start a new conversation or open another one first"));
    }
    let store = state
        .orchestrator
        .sessions()
        .ok_or_else(|| ApiError::not_found("conversation store"))?;
    store.delete(session_id)?;
    Ok(EMPTY)
}

async fn kill_switch(state: &GuiState, command: &str) -> Result<CommandAnswer, ApiError> {
    let command = SwitchCommand::parse(command).ok_or_else(|| {
        ApiError::bad_request(format!("unknown command {command:?}"))
            .with_fix("pause, resume, abort or halt")
    })?;
    let to = crate::control::apply(
        &state.orchestrator,
        state.paths.data_dir(),
        command,
        Channel::Gui,
        &*state.log,
    )
    .await;
    Ok(CommandAnswer::SwitchMoved(SwitchMoved {
        state: to.as_str(),
    }))
}

/// Stores (or removes) a template's key; the value goes to the store and nowhere else.
async fn set_key(
    state: &GuiState,
    template_id: &str,
    value: Option<&str>,
) -> Result<CommandAnswer, ApiError> {
    let world = state.orchestrator.world();
    if !world
        .model_templates
        .iter()
        .any(|t| t.id.as_str() == template_id)
    {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "MODEL_TEMPLATE_MISSING",
            format!("no model template {template_id}"),
        ));
    }
    match value {
        Some(value) => {
            if let Some(why) = crate::secrets::value_problem(value) {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "SECRET_VALUE_INVALID",
                    format!("the key {why}"),
                )
                .with_fix("paste the key alone: one line, no spaces or control characters"));
            }
            state.secrets.set(template_id, value)?;
        }
        None => state.secrets.delete(template_id)?,
    }
    let word = if value.is_some() { "stored" } else { "deleted" };
    state.log.line(&format!(
        "secret {word}: key={template_id} store={} from=gui",
        state.secrets.name()
    ));
    Ok(CommandAnswer::KeyStored(KeyStored {
        store: state.secrets.name().to_owned(),
    }))
}

/// "Fetch prices": the shelf's price table, through the CLI's path (`crate::pricing`).
async fn fetch_prices(state: &GuiState) -> Result<CommandAnswer, ApiError> {
    let log: &dyn LogSink = &*state.log;
    let report = crate::pricing::fetch_prices(
        &state.orchestrator,
        state.paths.data_dir(),
        None,
        fuseforks_core::pricing::FetchLimits::default(),
        (log, Channel::Gui),
    )
    .await?;
    Ok(CommandAnswer::Prices(report))
}

async fn set_door(state: &GuiState, enabled: bool, port: u16) -> Result<CommandAnswer, ApiError> {
    if port == 0 {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "INVALID_DOOR_PORT",
            "port 0 is not a port",
        )
        .with_fix("a port from 1 to 65535")
        .at("port"));
    }
    let shelf = ShelfStore::new(state.paths.data_dir());
    let mut door = shelf.load_door()?.value;
    door.enabled = enabled;
    door.port = port;
    if door.token.is_none() {
        door.token = Some(super::guard::random_secret());
    }
    shelf.save_door(&door)?;
    saved(state, "mcp_server.json").await;
    Ok(CommandAnswer::DoorSaved(DoorSaved {
        restart_needed: true,
    }))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
