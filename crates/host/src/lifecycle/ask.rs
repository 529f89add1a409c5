//! One request to the reception (`ask`, `demo`): the conversation chosen, the start set
//! started, the request (one turn, the answer to a waiting question, or a goal loop) answered
//! and reported before the close, which the first stop request starts at once.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fuseforks_core::events::CoreEvent;
use fuseforks_core::goal::{GoalError, GoalOutcome, GoalRequest, GoalSpec};
use fuseforks_core::llm::Usage;
use fuseforks_core::orchestrator::{ExternalOutcome, Orchestrator, PlanTaskState, RequestMode};
use fuseforks_core::preflight::HeadlessMode;
use fuseforks_core::safety::SwitchState;
use fuseforks_core::sessions::{Record, StoredRecord};
use fuseforks_core::village::Language;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::{
    Boot, CLOSE_GRACE, Closing, Failure, Headless, Interruption, Notice, OpenOptions, Opened,
    SharedWatcher, StopRequests, close, failed, finish_close, open, reached, report_close,
};

/// How long a request waits for the answer once every agent has ended (it is already there).
const ANSWER_AFTER_CLOSE: Duration = Duration::from_millis(200);

/// Which conversation the request goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConversationChoice {
    /// A new one.
    New,
    /// The current one.
    Continue,
    /// The stored conversation with this id.
    Resume(String),
}

/// One request.
#[derive(Debug, Clone)]
pub struct AskRequest {
    /// The client name the reception sees.
    pub client: String,
    /// The request's text.
    pub message: String,
    /// Where it goes.
    pub conversation: ConversationChoice,
    /// The text must answer the question the conversation waits on (`--answer`).
    pub answer: bool,
    /// A goal loop (`--accept`).
    pub goal: Option<GoalSpec>,
    /// Hand what the request does as it runs to [`super::Watcher::request`].
    pub stream: bool,
}

/// What the request waited for: one turn, or a goal loop.
#[derive(Debug)]
pub enum Asked {
    /// One turn (or the answer to a question).
    Plain(ExternalOutcome),
    /// A goal loop.
    Goal(Result<GoalOutcome, GoalError>),
}

/// The request's end, handed to the caller's report before the close.
pub struct AskAnswer {
    /// What came back.
    pub asked: Asked,
    /// The village was halted (any channel) by the time it came back.
    pub halted: bool,
    /// The village's language (the preflight's reading).
    pub language: Language,
    /// When the request was sent: wall clock, ms since the epoch (turn records at or after it
    /// are the request's).
    pub sent_at_ms: i64,
    /// When the request was sent, for the elapsed time.
    pub sent_at: Instant,
    orchestrator: Orchestrator,
}

/// When a request was sent.
#[derive(Debug, Clone, Copy)]
struct Sent {
    language: Language,
    at_ms: i64,
    at: Instant,
}

impl Sent {
    fn now(language: Language) -> Self {
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Self {
            language,
            at_ms,
            at: Instant::now(),
        }
    }
}

/// What a request spent: its turn records since it started, and `≈ $` when every model used
/// has a price.
#[derive(Debug, Clone, Default)]
pub struct Spent {
    /// Turn records.
    pub turns: u64,
    /// Their tokens.
    pub usage: Usage,
    /// `≈ $`, when every turn's model has a price.
    pub cost_usd: Option<f64>,
}

impl AskAnswer {
    /// What the turns of `session` since `since_ms` spent.
    pub fn spent(&self, session: Option<&str>, since_ms: i64) -> Spent {
        spent(&self.orchestrator, session, since_ms)
    }
}

/// What a streamed request does, as it happens.
#[derive(Debug, Clone)]
pub enum RequestEvent {
    /// A piece of an agent's answer (`restart`: its stream was sent again).
    Delta {
        /// Whose answer.
        agent_id: String,
        /// The piece.
        text: String,
        /// The stream was sent again from its start.
        restart: bool,
        /// The piece is the reception's.
        reception: bool,
    },
    /// A tool call ended (`exit_code`: a `run` call's).
    Tool {
        /// Who called it.
        agent_id: String,
        /// The tool.
        tool: String,
        /// It succeeded.
        ok: bool,
        /// A `run` call's exit code.
        exit_code: Option<i64>,
    },
}

/// How a request ended: answered (the report's value), failed (said), or interrupted before
/// anything was sent (said).
#[derive(Debug)]
pub enum Ended<R> {
    /// Answered (or not), reported: the report's value.
    Answered(R),
    /// It could not run (said).
    Failed(Failure),
    /// A stop request came before the request was sent (said).
    Interrupted(Interruption),
}

/// `ask`: the preflight, the boot, the request, its report (`report`, before the close), the
/// close. Every line is said through the watcher as it happens.
pub async fn ask<R>(
    options: OpenOptions,
    headless: Headless,
    request: AskRequest,
    watcher: SharedWatcher,
    stop: StopRequests,
    report: impl FnOnce(AskAnswer) -> R,
) -> Ended<R> {
    // Boxed: the whole run (boot, turns, tools, delegations, close) is one large future; on the
    // heap, it does not grow every future that awaits it (clippy's `large_futures`).
    Box::pin(ask_run(options, headless, request, watcher, stop, report)).await
}

async fn ask_run<R>(
    options: OpenOptions,
    headless: Headless,
    request: AskRequest,
    watcher: SharedWatcher,
    stop: StopRequests,
    report: impl FnOnce(AskAnswer) -> R,
) -> Ended<R> {
    let checked = super::preflight(&options, &headless, HeadlessMode::Ask, &watcher);
    let report_pf = match checked {
        Ok(r) => r,
        Err(f) => return Ended::Failed(f),
    };
    if *stop.borrow() > 0 {
        return interrupted(&watcher, Interruption::BeforeBoot);
    }
    let boot = Boot {
        run_schedules: false,
        door_stops: false,
        warn_unkeyed: true,
    };
    let mut opened = match open(&options, boot, &watcher).await {
        Ok(o) => o,
        Err(f) => return Ended::Failed(f),
    };
    opened.configure(Some(&report_pf), Some(&headless));
    opened.start_channels();
    let answering = match conversation(&opened, &request) {
        Ok(answering) => answering,
        Err(f) => {
            let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
            let mut quiet = stop.clone();
            close(opened.orchestrator(), &mut quiet, &watcher, cut_at).await;
            return Ended::Failed(f);
        }
    };
    if *stop.borrow() > 0 {
        return interrupted(&watcher, Interruption::StartUp);
    }
    let start: Vec<String> = report_pf.start.iter().cloned().collect();
    if let Err(f) = opened.start_agents(&start) {
        return Ended::Failed(f);
    }
    let mode = RequestMode {
        dry_run: headless.dry_run,
    };
    let language = report_pf.language;
    let code = run_request(&opened, &request, (mode, language), answering, stop, report).await;
    // The channels end after the close: a halt's answer reaches its client first.
    if let Some(channels) = opened.channels.take() {
        channels.close().await;
    }
    Ended::Answered(code)
}

fn interrupted<R>(watcher: &SharedWatcher, when: Interruption) -> Ended<R> {
    watcher.notice(Notice::Interrupted(when));
    Ended::Interrupted(when)
}

/// Sends the request (streamed when asked), reports it and closes.
async fn run_request<R>(
    opened: &Opened,
    request: &AskRequest,
    (mode, language): (RequestMode, Language),
    answering: bool,
    stop: StopRequests,
    report: impl FnOnce(AskAnswer) -> R,
) -> R {
    let orchestrator = opened.orchestrator();
    let sent = Sent::now(language);
    let streamer = request
        .stream
        .then(|| Streamer::start(orchestrator, Arc::clone(&opened.watcher)));
    let (workspace, log) = (opened.host.paths.workspace(), opened.host.log.clone());
    let watcher = Arc::clone(&opened.watcher);
    let asking = async {
        let goal = GoalRequest {
            orchestrator,
            client: &request.client,
            message: &request.message,
            workspace: &workspace,
            log: log.as_ref(),
        };
        let asked = send(goal, request.goal.as_ref(), mode, &watcher, answering).await;
        if let Some(streamer) = streamer {
            streamer.stop().await;
        }
        asked
    };
    answer_then_close(opened, asking, sent, stop, report).await
}

/// The conversation the request goes to, and whether the text answers its question.
fn conversation(opened: &Opened, request: &AskRequest) -> Result<bool, Failure> {
    let orchestrator = opened.orchestrator();
    match &request.conversation {
        ConversationChoice::Resume(id) => {
            orchestrator
                .continue_conversation(id)
                .map_err(|e| failed(&opened.watcher, Failure::UnknownConversation(e)))?;
        }
        ConversationChoice::New => orchestrator.new_conversation(),
        ConversationChoice::Continue => {}
    }
    answering(opened, request)
}

/// Whether the text answers a question: the continued conversation waits on one (without a
/// goal loop, which sends requests of its own). `--answer` on one that waits for none fails.
fn answering(opened: &Opened, request: &AskRequest) -> Result<bool, Failure> {
    let orchestrator = opened.orchestrator();
    let continued = request.conversation != ConversationChoice::New;
    let session = orchestrator.current_session();
    let (Some(session), true, None) = (session, continued, &request.goal) else {
        return Ok(false);
    };
    match orchestrator.open_question(&session) {
        Ok(Some(_)) => Ok(true),
        Ok(None) if request.answer => {
            let e = fuseforks_core::CoreError::QuestionNotPending(format!(
                "conversation {session} is not waiting for an answer: its last turn ended without a question, or the question was answered"
            ));
            Err(failed(&opened.watcher, Failure::NotPending(e)))
        }
        Ok(None) => Ok(false),
        Err(e) => Err(failed(&opened.watcher, Failure::Question(e))),
    }
}

/// The request: one turn, the answer to the conversation's question, or the goal loop (each
/// attempt said as it ends).
async fn send(
    request: GoalRequest<'_>,
    goal: Option<&GoalSpec>,
    mode: RequestMode,
    watcher: &SharedWatcher,
    answering: bool,
) -> Asked {
    let orchestrator = request.orchestrator;
    if answering {
        let answered = orchestrator
            .answer_external(request.client, request.message, mode)
            .await;
        return Asked::Plain(answered.unwrap_or_else(|e| {
            watcher.notice(Notice::Failed(&Failure::Question(e)));
            no_answer(orchestrator, PlanTaskState::Undeliverable)
        }));
    }
    let Some(spec) = goal else {
        let outcome = orchestrator
            .ask_external_in_mode(request.client, request.message, mode)
            .await;
        return Asked::Plain(outcome);
    };
    let mut tell = |a: &fuseforks_core::goal::AttemptReport| {
        watcher.notice(Notice::GoalAttempt(a));
    };
    Asked::Goal(fuseforks_core::goal::run_goal(request, spec, &mut tell).await)
}

/// Waits for `asking` while watching the stop requests, lets `report` say how it ended
/// (before the close), then closes the village. The first stop request starts the close at
/// once: every agent stops and its turn is interrupted, recording itself within the grace (or
/// its call in flight is cut when it runs out); a second one ends the wait.
async fn answer_then_close<R>(
    opened: &Opened,
    asking: impl Future<Output = Asked>,
    sent: Sent,
    mut stop: StopRequests,
    report: impl FnOnce(AskAnswer) -> R,
) -> R {
    let (orchestrator, watcher) = (opened.orchestrator(), &opened.watcher);
    tokio::pin!(asking);
    let (mut first, closer) = (stop.clone(), orchestrator.clone());
    let closing = async move {
        reached(&mut first, 1).await;
        closer.close(CLOSE_GRACE).await
    };
    tokio::pin!(closing);
    let mut closed = None;
    let asked = tokio::select! {
        result = &mut asking => result,
        () = reached(&mut stop, 1) => {
            watcher.notice(Notice::Closing(Closing::Request));
            tokio::select! {
                result = &mut asking => result,
                all = &mut closing => {
                    closed = Some(all);
                    // Every agent has ended: the answer, if any, is already there.
                    tokio::time::timeout(ANSWER_AFTER_CLOSE, &mut asking)
                        .await
                        .unwrap_or_else(|_| Asked::Plain(no_answer(orchestrator, PlanTaskState::Interrupted)))
                }
                () = reached(&mut stop, 2) => {
                    watcher.notice(Notice::CloseAborted(Closing::Request));
                    let asked = Asked::Plain(no_answer(orchestrator, PlanTaskState::Interrupted));
                    return report(answer(orchestrator, asked, sent));
                }
            }
        }
    };
    let reported = report(answer(orchestrator, asked, sent));
    let signalled = *stop.borrow() > 0;
    match closed {
        Some(all) => report_close(all, watcher),
        None if signalled => finish_close(closing, &mut stop, watcher).await,
        None => {
            let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
            close(orchestrator, &mut stop, watcher, cut_at).await;
        }
    }
    reported
}

fn answer(orchestrator: &Orchestrator, asked: Asked, sent: Sent) -> AskAnswer {
    AskAnswer {
        asked,
        halted: orchestrator.switch_state() == SwitchState::Halted,
        language: sent.language,
        sent_at_ms: sent.at_ms,
        sent_at: sent.at,
        orchestrator: orchestrator.clone(),
    }
}

/// An outcome without an answer in `state` (cut by the close, or not deliverable).
fn no_answer(orchestrator: &Orchestrator, state: PlanTaskState) -> ExternalOutcome {
    ExternalOutcome {
        answer: None,
        state,
        failure: None,
        session_id: orchestrator.current_session(),
        question: None,
        effects: Vec::new(),
    }
}

/// What the demo's request did, gathered after the close: plan waves (who sent to whom), the
/// tools each agent called (first-use order), and the conversation's turn records.
#[derive(Debug, Default)]
pub struct RunFacts {
    /// Plan waves: who sent to whom.
    pub asked: Vec<(String, Vec<String>)>,
    /// The tools each agent called, in first-use order.
    pub tools: BTreeMap<String, Vec<String>>,
    /// Turn records of the conversation.
    pub turns: usize,
    /// Their prompt tokens.
    pub prompt: u64,
    /// Their output tokens.
    pub completion: u64,
    /// The conversation.
    pub session: Option<String>,
}

/// `demo`: boots the founded village (no preflight, no channels), starts `agents` in a new
/// conversation, sends the request, reports it before the close, and gathers what happened.
/// `pace`: each demo model's wait before it answers.
pub async fn demo<R>(
    options: OpenOptions,
    agents: &[String],
    pace: Duration,
    request: AskRequest,
    watcher: SharedWatcher,
    stop: StopRequests,
    report: impl FnOnce(AskAnswer) -> R,
) -> Result<(R, RunFacts), Failure> {
    let boot = Boot {
        run_schedules: false,
        door_stops: false,
        warn_unkeyed: false,
    };
    let opened = open(&options, boot, &watcher).await?;
    opened.host.set_demo_pace(pace);
    opened.configure(None, None);
    let orchestrator = opened.orchestrator();
    let mut events = orchestrator.events();
    orchestrator.new_conversation();
    opened.start_agents(agents)?;
    let asking = async {
        Asked::Plain(
            orchestrator
                .ask_external_detailed(&request.client, &request.message)
                .await,
        )
    };
    let sent = Sent::now(orchestrator.language());
    let reported = answer_then_close(&opened, asking, sent, stop, report).await;
    Ok((reported, RunFacts::gather(orchestrator, &mut events)))
}

impl RunFacts {
    fn gather(
        orchestrator: &Orchestrator,
        events: &mut tokio::sync::broadcast::Receiver<CoreEvent>,
    ) -> Self {
        let mut facts = Self::default();
        while let Ok(event) = events.try_recv() {
            match event {
                CoreEvent::PlanWaveStarted {
                    agent_id, tasks, ..
                } => facts.asked.push((agent_id, tasks)),
                CoreEvent::ToolInvoked { agent_id, tool, .. } => {
                    let used = facts.tools.entry(agent_id).or_default();
                    if !used.contains(&tool) {
                        used.push(tool);
                    }
                }
                _ => {}
            }
        }
        facts.session = orchestrator.current_session();
        let records = facts
            .session
            .as_deref()
            .and_then(|s| orchestrator.sessions()?.records(s).ok())
            .unwrap_or_default();
        for (_, record) in records {
            if let StoredRecord::Known(Record::Turn(turn)) = record {
                facts.turns += 1;
                facts.prompt += turn.prompt;
                facts.completion += turn.completion;
            }
        }
        facts
    }
}

/// What the turns since `since` in `session` spent.
fn spent(orch: &Orchestrator, session: Option<&str>, since: i64) -> Spent {
    let (mut turns, mut usage, mut cost) = (0, Usage::default(), Some(0.0));
    let (Some(session), Some(store)) = (session, orch.sessions()) else {
        return Spent::default();
    };
    let world = orch.world();
    for (_, record) in store.records(session).unwrap_or_default() {
        let StoredRecord::Known(Record::Turn(t)) = record else {
            continue;
        };
        if t.ts_ms < since {
            continue;
        }
        let u = Usage {
            prompt: t.prompt,
            completion: t.completion,
            cache_read: t.cached,
            cache_write: t.cache_write,
            cache_write_1h: t.cache_write_1h,
            reasoning: t.reasoning,
        };
        turns += 1;
        usage.add(&u);
        let priced = world
            .model_templates
            .iter()
            .find(|m| m.model == t.model)
            .and_then(|m| fuseforks_core::stats::cost(&u, m));
        cost = cost.zip(priced).map(|(a, b)| a + b);
    }
    Spent {
        turns,
        usage,
        cost_usd: cost.filter(|_| turns > 0),
    }
}

/// The forwarder of a streamed request.
struct Streamer {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Streamer {
    fn start(orchestrator: &Orchestrator, watcher: SharedWatcher) -> Self {
        let mut events = orchestrator.events();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let orch = orchestrator.clone();
        let reception = orchestrator
            .world()
            .reception
            .map(|r| r.to_string())
            .unwrap_or_default();
        let say = move |event: &CoreEvent| {
            if let Some(e) = request_event(event, &orch, &reception) {
                watcher.request(&e);
            }
        };
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    got = events.recv() => match got {
                        Ok(event) => say(&event),
                        Err(RecvError::Lagged(_)) => continue,
                        Err(RecvError::Closed) => return,
                    },
                    _ = &mut stopped => {
                        // What was sent before the answer is said before the result.
                        loop {
                            match events.try_recv() {
                                Ok(event) => say(&event),
                                Err(TryRecvError::Lagged(_)) => continue,
                                Err(_) => return,
                            }
                        }
                    }
                }
            }
        });
        Self { stop, task }
    }

    /// Stops forwarding once what was already sent is said.
    async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

/// The request event of a core event, if it is one.
fn request_event(event: &CoreEvent, orch: &Orchestrator, reception: &str) -> Option<RequestEvent> {
    match event {
        CoreEvent::MessageDelta {
            agent_id,
            text,
            restart,
        } => Some(RequestEvent::Delta {
            agent_id: agent_id.clone(),
            text: text.clone(),
            restart: *restart,
            reception: agent_id == reception,
        }),
        CoreEvent::ToolInvoked {
            agent_id,
            tool,
            ok,
            call_id,
            ..
        } => Some(RequestEvent::Tool {
            agent_id: agent_id.clone(),
            tool: tool.clone(),
            ok: *ok,
            exit_code: (tool == "run")
                .then(|| exit_code(orch, agent_id, call_id))
                .flatten(),
        }),
        _ => None,
    }
}

/// The `exit: N` a `run` tool result begins with.
fn exit_code(orchestrator: &Orchestrator, agent: &str, call: &str) -> Option<i64> {
    let detail = orchestrator.tool_call(agent, call)?;
    let first = detail.result.lines().next()?;
    first.strip_prefix("exit: ")?.trim().parse().ok()
}
