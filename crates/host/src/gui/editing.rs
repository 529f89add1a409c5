//! The editors' API: a village file read as text (only the files `EditableFile` names), checked
//! as the person types (the same parsers as a save, timed), saved through the core's store
//! (atomic; JSON through its typed save; refused with its findings), the drafting assistant's
//! exchanges, and the stats page's numbers (the rows, the assistant's table, tokens per day).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Path, State};
use axum::http::{StatusCode, Uri};
use fuseforks_core::assist::{AssistRequest, total_usage};
use fuseforks_core::events::AgentStatus;
use fuseforks_core::log::LogSink as _;
use fuseforks_core::stats::{AssistRow, Period, StatsRow, TimeZone, aggregate, daily_tokens};
use fuseforks_core::village::{EditError, EditableFile, VillageStore};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::GuiState;
use super::contract::{
    AgentCost, AssistAnswer, AssistReplyView, AssistSlice, AssistSliceRow, AssistTable,
    AssistUsage, Checked, CommandAnswer, DayTokens, FileEntry, FileList, FileText, NextDue,
    OwnedFile, Reply, SecretRef, SecretStored, Stats, StatsRowView, StatsTotalsView, VillageFile,
    Written,
};
use super::error::ApiError;

type Answer<T> = Result<Reply<T>, ApiError>;

fn store(state: &GuiState) -> VillageStore {
    VillageStore::new(state.paths.workspace())
}

/// The editable file of a path, or 404 (nothing else of the disk can be named).
fn editable(state: &GuiState, path: &str) -> Result<EditableFile, ApiError> {
    EditableFile::parse(path)
        .filter(|f| f.exists_in(&state.orchestrator.world()))
        .ok_or_else(|| {
            ApiError::new(StatusCode::NOT_FOUND, "FILE_NOT_EDITABLE", format!("{path:?} is not an editable file of this village"))
                .with_fix("Ordinance.md, schedules.json, mcp.json, agents/<id>/{Construct.md,SKILL.md,Memory.md,mcp.json,run.json} or judges/<id>/judge.toml")
        })
}

/// `GET /api/files`: every editable file of the village, with the kind the assistant drafts
/// (`skill`, `construct`, `judge`) where it has one.
pub(super) async fn files(State(state): State<Arc<GuiState>>) -> Answer<FileList> {
    let world = state.orchestrator.world();
    let mut list: Vec<FileEntry> = ["world.json", "Ordinance.md", "schedules.json", "mcp.json"]
        .into_iter()
        .map(|path| FileEntry::Village(VillageFile { path: path.into() }))
        .collect();
    for a in &world.agents {
        for (name, kind) in [
            ("Construct.md", Some("construct")),
            ("SKILL.md", Some("skill")),
            ("Memory.md", None),
            ("mcp.json", None),
            ("run.json", None),
        ] {
            list.push(FileEntry::Owned(OwnedFile {
                path: format!("agents/{}/{name}", a.id),
                owner: a.id.as_str().to_owned(),
                owner_name: a.name.clone(),
                draft: kind,
                judge: false,
            }));
        }
    }
    for j in &world.judges {
        list.push(FileEntry::Owned(OwnedFile {
            path: format!("judges/{}/judge.toml", j.id),
            owner: j.id.as_str().to_owned(),
            owner_name: j.name.clone(),
            draft: Some("judge"),
            judge: true,
        }));
    }
    Ok(Reply(FileList { files: list }))
}

/// Whether a file is an `mcp.json` (its plain values are hidden from the page).
fn is_mcp(file: &EditableFile) -> bool {
    matches!(file, EditableFile::SharedMcp | EditableFile::AgentMcp(_))
}

/// `GET /api/files/{*path}`: the text (an `mcp.json`'s plain values masked), its hash (a save
/// names it), its problems, and for an `mcp.json` the `${secret:NAME}`s its headers reference
/// with whether a value is stored (never the value).
pub(super) async fn file(
    State(state): State<Arc<GuiState>>,
    Path(path): Path<String>,
) -> Answer<FileText> {
    let file = editable(&state, &path)?;
    let store = store(&state);
    let on_disk = store.read_editable(&file)?;
    let world = state.orchestrator.world();
    let mut findings = store.check_editable(&file, &on_disk, &world);
    let text = match is_mcp(&file) {
        false => on_disk.clone(),
        true => super::file_guard::masked(&on_disk).unwrap_or_else(|| {
            findings.insert(0, fuseforks_core::village::TextFinding {
                line: 1,
                col: 1,
                message: "this mcp.json does not parse, and it may hold secret values: it is not shown".into(),
                fix: "correct it in an editor on this machine".into(),
            });
            String::new()
        }),
    };
    let secrets = secret_names(&file, &on_disk, &store)
        .into_iter()
        .map(|name| {
            let has_value = state
                .secrets
                .get(&format!("mcp:{name}"))
                .ok()
                .flatten()
                .is_some();
            SecretRef { name, has_value }
        })
        .collect();
    Ok(Reply(FileText {
        path: file.path(),
        text,
        hash: super::file_guard::hash(&on_disk),
        findings,
        secrets,
    }))
}

/// The `${secret:NAME}`s the headers of an `mcp.json` reference, as the core resolves them.
fn secret_names(file: &EditableFile, text: &str, store: &VillageStore) -> Vec<String> {
    if !is_mcp(file) || text.trim().is_empty() {
        return Vec::new();
    }
    let path = store.path(&file.path());
    let Ok(config) = fuseforks_core::village::McpConfig::from_text(&path, text) else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for name in config.secret_names() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// `setMcpSecret`: stores the value of a `${secret:NAME}` that an `mcp.json` of the village
/// references, under `mcp:NAME` as the runtime reads it (write-only: the value never comes
/// back; the log says which name was stored, never the value).
pub(super) fn set_mcp_secret(
    state: &GuiState,
    name: &str,
    value: &str,
) -> Result<CommandAnswer, ApiError> {
    let store = store(state);
    let world = state.orchestrator.world();
    let mut files = vec![EditableFile::SharedMcp];
    files.extend(
        world
            .agents
            .iter()
            .map(|a| EditableFile::AgentMcp(a.id.clone())),
    );
    let referenced = files.iter().any(|f| {
        store
            .read_editable(f)
            .is_ok_and(|text| secret_names(f, &text, &store).iter().any(|n| n == name))
    });
    if !referenced {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "SECRET_NOT_REFERENCED",
            format!("no mcp.json header references ${{secret:{name}}}"),
        )
        .with_fix("write ${secret:NAME} in an mcp.json header first, and save it"));
    }
    if let Some(why) = crate::secrets::value_problem(value) {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "SECRET_VALUE_INVALID",
            format!("the value {why}"),
        )
        .with_fix("paste the value alone: one line, no spaces or control characters"));
    }
    state.secrets.set(&format!("mcp:{name}"), value)?;
    state
        .log
        .line(&format!("secret stored: name=mcp:{name} from=gui"));
    Ok(CommandAnswer::SecretStored(SecretStored {
        name: name.to_owned(),
    }))
}

/// `checkFile`: the problems of a text not saved, and how long the check took on the server;
/// for `schedules.json`, each task's next due time in the process zone.
pub(super) fn check(state: &GuiState, path: &str, text: &str) -> Result<CommandAnswer, ApiError> {
    let file = editable(state, path)?;
    let started = Instant::now();
    let findings = store(state).check_editable(&file, text, &state.orchestrator.world());
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    let next_due = (file == EditableFile::Schedules && findings.is_empty()).then(|| next_due(text));
    Ok(CommandAnswer::Checked(Checked {
        findings,
        check_micros: micros,
        next_due,
    }))
}

/// Each task's next due instant after now, in the process zone (`null` when none).
fn next_due(text: &str) -> Vec<NextDue> {
    let Ok(schedules) = serde_json::from_str::<fuseforks_core::village::Schedules>(text) else {
        return Vec::new();
    };
    let zone = crate::preflight_view::process_zone()
        .map(|z| z.zone().clone())
        .unwrap_or(TimeZone::UTC);
    let now = jiff::Timestamp::now().as_millisecond();
    schedules
        .0
        .iter()
        .map(|t| {
            let due =
                fuseforks_core::schedule::next_due(&t.recurrence, t.created_at_ms, &zone, now);
            let shown = due
                .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
                .map(|ts| {
                    ts.to_zoned_datetime(zone.clone())
                        .strftime("%Y-%m-%d %H:%M %Z")
                        .to_string()
                });
            NextDue {
                id: t.id.clone(),
                to: t.to.as_str().to_owned(),
                enabled: t.enabled,
                next_due_ms: due,
                next_due: shown,
            }
        })
        .collect()
}

/// `saveFile`: saved when it passes; its findings otherwise (422, nothing written).
pub(super) async fn save(
    state: &GuiState,
    path: &str,
    text: &str,
    base_hash: Option<&str>,
) -> Result<CommandAnswer, ApiError> {
    let file = editable(state, path)?;
    let store = store(state);
    let on_disk = store.read_editable(&file)?;
    super::file_guard::unchanged(base_hash, &on_disk)?;
    if file == EditableFile::World {
        return save_world(state, text).await;
    }
    let text = match is_mcp(&file) {
        true => super::file_guard::unmasked(text, &on_disk)?,
        false => text.to_owned(),
    };
    match store.save_editable(&file, &text, &state.orchestrator.world()) {
        Ok(()) => {
            super::commands::saved(state, &file.path()).await;
            Ok(written(&store, &file))
        }
        Err(EditError::Findings(findings)) => Err(invalid(&findings[0])),
        Err(EditError::Village(e)) => Err(ApiError::from(e)),
    }
}

/// The refusal of a text with problems: the first one's place, nothing saved.
fn invalid(first: &fuseforks_core::village::TextFinding) -> ApiError {
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "FILE_INVALID",
        format!(
            "{}:{}: {} (nothing was saved)",
            first.line, first.col, first.message
        ),
    )
    .with_fix(first.fix.clone())
}

/// `world.json`: checked as a save would, then put in effect and written through the running
/// village's `update_world` (one edit at a time).
async fn save_world(state: &GuiState, text: &str) -> Result<CommandAnswer, ApiError> {
    let store = store(state);
    let findings = store.check_editable(&EditableFile::World, text, &state.orchestrator.world());
    if let Some(first) = findings.first() {
        return Err(invalid(first));
    }
    let world = store.parse_world_text(text)?;
    let orch = &state.orchestrator;
    orch.update_world(|w| {
        // A servant that runs is stopped before it leaves the village (as a delete asks).
        for gone in w.agents.iter().filter(|a| world.agent(&a.id).is_none()) {
            let status = orch.status(gone.id.as_str());
            if !matches!(status, AgentStatus::Idle | AgentStatus::Failed) {
                return Err(fuseforks_core::CoreError::StillRunning(gone.id.to_string()));
            }
        }
        *w = world;
        Ok(())
    })?;
    super::commands::saved(state, "world.json").await;
    Ok(written(&store, &EditableFile::World))
}

/// What a save answers: the file as it is on disk now — its hash (the next save names it) and
/// its text as the page is shown it (the village writes JSON files in its own layout, so the
/// editor takes this text, not the one it sent).
fn written(store: &VillageStore, file: &EditableFile) -> CommandAnswer {
    let now = store.read_editable(file).unwrap_or_default();
    let shown = match is_mcp(file) {
        true => super::file_guard::masked(&now),
        false => Some(now.clone()),
    };
    CommandAnswer::Written(Written {
        path: file.path(),
        hash: super::file_guard::hash(&now),
        text: shown,
    })
}

/// `text` with every "quoted" part shown as "…".
fn unquoted(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('"').enumerate() {
        out.push_str(if i % 2 == 1 { "…" } else { part });
        out.push('"');
    }
    out.pop();
    out
}

/// `assist`: one exchange of the drafting assistant, with its usage. A request of the wrong
/// shape (an unknown kind, a missing field) is `422 INVALID_ASSIST_REQUEST`, as the core's own
/// refusals are.
pub(super) async fn assist(state: &GuiState, request: &Value) -> Result<CommandAnswer, ApiError> {
    let request: AssistRequest = serde_json::from_value(request.clone()).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "INVALID_ASSIST_REQUEST",
            // Quoted values are left out: they may be the editor's text.
            format!("the request does not read: {}", unquoted(&e.to_string())),
        )
        .with_fix("send {target: {kind: skill|construct|judge, id}, templateId, history, input?, forceDraft, current}")
    })?;
    let request = &request;
    let outcome = state
        .orchestrator
        .assist_draft(request, CancellationToken::new())
        .await?;
    let u = total_usage(&outcome.calls);
    let usage = AssistUsage {
        prompt: u.prompt,
        cached: u.cache_read,
        completion: u.completion,
        reasoning: u.reasoning,
        calls: outcome.calls.len(),
    };
    Ok(CommandAnswer::Assist(AssistAnswer {
        reply: AssistReplyView {
            reply: outcome.reply,
            usage,
        },
    }))
}

/// `GET /api/stats[?period=YYYY-MM]`: the rows, the assistant's table and total, the turns'
/// totals, the money of both (`cost`), tokens per day, `≈ $` per servant, and the age of the
/// prices behind it.
pub(super) async fn stats(State(state): State<Arc<GuiState>>, uri: Uri) -> Answer<Stats> {
    let Some(sessions) = state.orchestrator.sessions() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "SESSION_STORE_UNAVAILABLE",
            "sessions.redb is not open in this run",
        ));
    };
    let period = period_of(uri.query().unwrap_or(""))?;
    let zone = crate::preflight_view::process_zone()
        .map(|z| z.zone().clone())
        .unwrap_or(TimeZone::UTC);
    let world = state.orchestrator.world();
    let report = aggregate(sessions, &world, period, &zone)?;
    let days = daily_tokens(sessions, period, &zone)?;
    let mut per_agent: std::collections::BTreeMap<String, (u64, f64)> = Default::default();
    for row in &report.rows {
        let entry = per_agent.entry(row.agent_id.clone()).or_default();
        entry.0 += row.usage.prompt + row.usage.completion;
        entry.1 += row.cost_usd.unwrap_or(0.0);
    }
    let rows = report.rows.iter().map(stats_row).collect();
    let assist = report
        .assist
        .rows
        .iter()
        .map(|a| AssistSliceRow {
            slice: slice(a),
            model: a.model.clone(),
            template_id: a.template_id.clone(),
        })
        .collect();
    let today = jiff::Timestamp::now().to_zoned_datetime(zone).date();
    let age = fuseforks_core::pricing::pricing_age(&report, &world, today);
    let t = &report.totals;
    Ok(Reply(Stats {
        pricing_as_of: age.as_ref().map(|a| a.pricing_as_of.clone()),
        pricing_age_days: age.as_ref().map(|a| a.pricing_age_days),
        rows,
        assist: AssistTable {
            rows: assist,
            total: slice(&report.assist.total),
        },
        cost: report.cost_usd,
        totals: StatsTotalsView {
            turns: t.turns,
            prompt: t.usage.prompt,
            completion: t.usage.completion,
            effective: t.effective,
            cost_usd: t.cost_usd,
            priced_rows: t.priced_rows,
            unpriced_rows: t.unpriced_rows,
            unknown_usage_calls: t.unknown_usage_calls,
        },
        days: days
            .into_iter()
            .map(|(day, tokens)| DayTokens { day, tokens })
            .collect(),
        judges: world
            .judges
            .iter()
            .map(|j| j.id.as_str().to_owned())
            .collect(),
        agents: per_agent
            .into_iter()
            .map(|(agent_id, (tokens, cost_usd))| AgentCost {
                agent_id,
                tokens,
                cost_usd,
            })
            .collect(),
    }))
}

/// A turn row of the stats page.
fn stats_row(r: &StatsRow) -> StatsRowView {
    StatsRowView {
        session_id: r.session_id.clone(),
        agent_id: r.agent_id.clone(),
        model: r.model.clone(),
        stop: r.stop.clone(),
        turns: r.turns,
        prompt: r.usage.prompt,
        cached: r.usage.cache_read,
        completion: r.usage.completion,
        effective: r.effective,
        cost_usd: r.cost_usd,
    }
}

/// A slice of the assistant's calls (`turns` = its model calls), by template and in all.
fn slice(a: &AssistRow) -> AssistSlice {
    AssistSlice {
        turns: a.calls,
        prompt: a.usage.prompt,
        completion: a.usage.completion,
        effective: a.effective,
        cost_usd: a.cost_usd,
    }
}

fn period_of(query: &str) -> Result<Period, ApiError> {
    let param = |key: &str| {
        query
            .split('&')
            .find_map(|p| p.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
    };
    let value = param("period").unwrap_or("all");
    if value == "all" || value.is_empty() {
        return Ok(Period::All);
    }
    let bad = || {
        ApiError::bad_request(format!("period {value:?}"))
            .with_fix("all, or a month as YYYY-MM (closing=1-31 for a closing day)")
    };
    let (y, m) = value.split_once('-').ok_or_else(bad)?;
    let year: i16 = y.parse().map_err(|_| bad())?;
    let month: i8 = m
        .parse()
        .ok()
        .filter(|m| (1..=12).contains(m))
        .ok_or_else(bad)?;
    let closing_day: i8 = match param("closing").filter(|c| !c.is_empty()) {
        None => 31,
        Some(c) => c
            .parse()
            .ok()
            .filter(|d| (1..=31).contains(d))
            .ok_or_else(bad)?,
    };
    Ok(Period::Month {
        year,
        month,
        closing_day,
    })
}
