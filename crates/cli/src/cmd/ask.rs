//! `fuseforks-cli ask …`: one request to the reception, the answer alone on stdout, and an exit
//! code for the outcome. A new conversation by default. The run is the host's `lifecycle::ask`,
//! called once; this module parses, and says the answer its report callback gets.

use std::io::Read;
use std::sync::Arc;

use clap::Args;

use fuseforks_core::goal::{GoalOutcome, GoalSpec, GoalVerdict};
use fuseforks_core::orchestrator::{ExternalOutcome, PendingQuestion, PlanTaskState, TurnFailure};
use fuseforks_core::village::Language;
use fuseforks_host::door::DoorAsked;
use fuseforks_host::lifecycle::{self, AskAnswer, AskRequest, Asked, ConversationChoice, Ended};

use super::headless::{Common, open_options};
use super::render::Renderer;
use crate::exit;
use crate::output::Out;
use crate::signals::SignalCount;

/// `--output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputArg {
    /// The answer alone (or the no-answer line).
    Text,
    /// One JSON object: answer, outcome, exit code, session, turns, usage, ≈ $, elapsed.
    Json,
    /// JSON lines as the request runs (answer pieces, tool calls), then the result object.
    StreamJson,
}

/// How the outcome is shown.
#[derive(Clone, Copy)]
struct Shown<'a> {
    /// The result object (`--output json|stream-json`).
    json: bool,
    /// The result object carries `"type": "result"` (stream-json).
    tagged: bool,
    /// The answer was printed piece by piece already (`--stream`).
    streamed: Option<&'a std::sync::atomic::AtomicBool>,
    /// A dry-run: the result object lists the effects.
    dry_run: bool,
}

/// Arguments of `ask`.
#[derive(Debug, Args)]
pub(crate) struct AskArgs {
    #[command(flatten)]
    pub common: Common,
    /// Continue the current conversation instead of starting a new one.
    #[arg(long, conflicts_with = "resume")]
    pub continue_session: bool,
    /// Continue the conversation ID (see `sessions list`); an unknown id is exit 2. When it
    /// ended with a question (exit 15), the text is the answer and the turn goes on.
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// The text must answer the question the --resume conversation waits on; one that waits
    /// for none is refused (QUESTION_NOT_PENDING, exit 2) and nothing is sent.
    #[arg(long, requires = "resume", conflicts_with = "accept")]
    pub answer: bool,
    /// What stdout carries.
    #[arg(long, value_enum, default_value = "text")]
    pub output: OutputArg,
    /// Print the reception's answer as it is written (templates with `streaming`; text output).
    #[arg(long)]
    pub stream: bool,
    /// The client name the reception sees (the village's externalName wins).
    #[arg(long, default_value = "fuseforks-cli")]
    pub client: String,
    /// Also print info findings and log lines.
    #[arg(long)]
    pub verbose: bool,
    /// Models are called as usual, but every side-effecting tool stops at its side effect and
    /// answers `dry-run: would …` (audited as dry_run); `--output json` lists the effects it
    /// would have had (`effects`: `{tool, target, argumentsDigest}`), `--events jsonl` says
    /// each as a `dryRunEffect` event.
    #[arg(long)]
    pub dry_run: bool,
    /// A goal loop: after the answer, run CMD (no shell, cwd = the village's workspace folder,
    /// PATH only) and compare its first stdout line with --expect; while it differs, send the
    /// request again with the output, up to --max-attempts, within one token budget. Every
    /// attempt is a line of workspace/goals/<goal-id>.jsonl. Not reached: exit 12.
    #[arg(long, value_name = "CMD", requires = "expect")]
    pub accept: Option<String>,
    /// An argument of the --accept command (repeat for more, in order).
    #[arg(
        long = "accept-arg",
        value_name = "A",
        requires = "accept",
        allow_hyphen_values = true
    )]
    pub accept_args: Vec<String>,
    /// The first stdout line (trimmed) of the --accept command that means the goal is reached.
    #[arg(long, value_name = "LINE", requires = "accept")]
    pub expect: Option<String>,
    /// Attempts of the goal loop, 1 to 5 [default: 2].
    #[arg(long, value_name = "N", requires = "accept",
          value_parser = clap::value_parser!(u8).range(1..=5))]
    pub max_attempts: Option<u8>,
    /// The request, or `-` to read it from stdin.
    pub message: String,
}

/// Runs `ask`: parses, opens the host's lifecycle once (the request answered and reported
/// before the close), and gives the exit code.
pub(crate) async fn run(args: &AskArgs, out: &Out, signals: SignalCount) -> u8 {
    let message = match request_text(args, out) {
        Ok(text) => text,
        Err(code) => return code,
    };
    let stream = match (args.output, args.stream) {
        (OutputArg::StreamJson, _) => Some(super::ask_stream::Mode::Json),
        (OutputArg::Text, true) => Some(super::ask_stream::Mode::Text),
        _ => None,
    };
    let (renderer, printed) = Renderer::new(*out, &args.common.data_dir)
        .verbose(args.verbose)
        .streaming(stream);
    let options = open_options(
        &args.common.data_dir,
        args.common.secret_source(),
        DoorAsked::default(),
        out.log_echo(),
        out,
    );
    let request = AskRequest {
        client: args.client.clone(),
        message,
        conversation: match (&args.resume, args.continue_session) {
            (Some(id), _) => ConversationChoice::Resume(id.clone()),
            (None, true) => ConversationChoice::Continue,
            (None, false) => ConversationChoice::New,
        },
        answer: args.answer,
        goal: goal_spec(args),
        stream: stream.is_some(),
    };
    let shown = Shown {
        json: args.output != OutputArg::Text,
        tagged: args.output == OutputArg::StreamJson,
        streamed: printed.as_deref(),
        dry_run: args.dry_run,
    };
    let headless = args.common.headless(args.dry_run);
    let ended = lifecycle::ask(
        options,
        headless,
        request,
        Arc::new(renderer),
        signals,
        |answer| {
            let halted = answer.halted;
            let code = report_asked(answer, out, shown);
            if halted {
                return report_halted(&args.common.data_dir, out);
            }
            code
        },
    )
    .await;
    match ended {
        Ended::Answered(code) => code,
        Ended::Failed(failure) => super::render::exit_code(&failure),
        Ended::Interrupted(_) => exit::INTERRUPTED,
    }
}

/// Says the village was halted while the request ran (exit 14).
fn report_halted(data_dir: &std::path::Path, out: &Out) -> u8 {
    out.cli(
        "error",
        "VILLAGE_HALTED",
        "village halted by the kill switch",
        Some(&super::render::resume_command(data_dir)),
    );
    exit::HALTED
}

/// The request: the last argument, or stdin for `-`; an empty or blank one is a usage error
/// before anything starts (a model call on nothing would still be paid).
fn request_text(args: &AskArgs, out: &Out) -> Result<String, u8> {
    let (text, empty) = if args.message == "-" {
        let mut text = String::new();
        let read = std::io::stdin().read_to_string(&mut text).is_ok();
        // `echo … | ask -` ends the text with a line end that is not part of the request.
        let text = text.trim_end_matches(['\n', '\r']).to_owned();
        (
            text,
            if read {
                "the request on stdin is empty"
            } else {
                "no request on stdin"
            },
        )
    } else {
        (args.message.clone(), "the request is empty")
    };
    if text.trim().is_empty() {
        out.cli(
            "error",
            "USAGE",
            &format!("{empty}: nothing would be asked, and the model call would still be paid"),
            Some("give the request's text as the last argument (quoted), or `-` and pipe it into stdin"),
        );
        return Err(exit::USAGE);
    }
    Ok(text)
}

/// Prints the answer (or the no-answer line) and how the goal loop ended; gives the exit code.
fn report_asked(answer: AskAnswer, out: &Out, shown: Shown<'_>) -> u8 {
    let json = shown.json;
    let language = answer.language;
    let (outcome, goal) = match &answer.asked {
        Asked::Plain(outcome) => (outcome.clone(), None),
        Asked::Goal(Ok(goal)) => (goal.last.clone(), Some(Ok(goal))),
        Asked::Goal(Err(e)) => {
            out.error(e);
            let none = ExternalOutcome {
                answer: None,
                state: PlanTaskState::NoAnswer,
                failure: None,
                session_id: None,
                question: None,
                effects: Vec::new(),
            };
            (none, Some(Err(())))
        }
    };
    let streamed = shown
        .streamed
        .is_some_and(|p| p.load(std::sync::atomic::Ordering::SeqCst));
    if !json {
        match &outcome.answer {
            // Its pieces are on the screen already: end the line.
            Some(_) if streamed => crate::outln!(),
            Some(text) => crate::outln!("{}", crate::terminal::for_stdout(text)),
            None => match &outcome.question {
                Some(question) => print_question(question),
                None => crate::outln!("{}", outcome.state.no_answer_line(language)),
            },
        }
    }
    report_outcome(&outcome, out);
    let code = match &goal {
        None => exit::for_outcome(outcome.state),
        Some(Ok(goal)) => report_goal(goal, language, out, json),
        Some(Err(())) => exit::CORE_ERROR,
    };
    if json {
        let mut result = super::ask_result::result(&answer, &outcome, code);
        if shown.tagged {
            result["type"] = serde_json::json!("result");
        }
        if shown.dry_run {
            result["effects"] = serde_json::to_value(&outcome.effects).unwrap_or_default();
        }
        out.result(&format!("{result}\n"));
    }
    code
}

/// The goal loop of `--accept`, when given.
fn goal_spec(args: &AskArgs) -> Option<GoalSpec> {
    let (command, expect) = (args.accept.clone()?, args.expect.clone()?);
    Some(GoalSpec {
        command,
        args: args.accept_args.clone(),
        expect,
        max_attempts: args
            .max_attempts
            .unwrap_or(fuseforks_core::goal::DEFAULT_ATTEMPTS),
        timeout_secs: fuseforks_core::goal::DEFAULT_TIMEOUT_SECS,
    })
}

/// Says how a goal loop ended (stderr; a fixed line on stdout when not reached) and gives the
/// exit code: the turn's when it did not answer, 12 when the goal was not reached or could
/// not be checked, 0 only when the check matched.
fn report_goal(goal: &GoalOutcome, language: Language, out: &Out, quiet: bool) -> u8 {
    let (id, n) = (&goal.goal_id, goal.attempts);
    let log = format!("workspace/goals/{id}.jsonl");
    match &goal.verdict {
        GoalVerdict::Reached => {
            out.cli(
                "info",
                "GOAL_REACHED",
                &format!("goal id={id} reached at attempt {n} ({log})"),
                None,
            );
            exit::for_outcome(goal.last.state)
        }
        GoalVerdict::NoAnswer => {
            out.cli(
                "info",
                "GOAL_NO_ANSWER",
                &format!("goal id={id}: attempt {n} gave no answer; nothing was checked ({log})"),
                None,
            );
            exit::for_outcome(goal.last.state)
        }
        GoalVerdict::NotReached => {
            if !quiet {
                crate::outln!(
                    "{}",
                    language.pick(
                        format!("（{n} 回試しましたが、ゴールに届きませんでした）"),
                        format!(
                            "(Goal not reached after {n} attempt{}.)",
                            if n == 1 { "" } else { "s" }
                        ),
                    )
                );
            }
            out.cli(
                "error",
                "GOAL_NOT_REACHED",
                &format!("goal id={id}: the --accept command's first line differed from --expect at each of {n} attempts ({log})"),
                Some("refine the request, or allow more attempts with --max-attempts (up to 5)"),
            );
            exit::GOAL_NOT_REACHED
        }
        GoalVerdict::CheckFailed { outcome, reason } => {
            crate::outln!(
                "{}",
                language.pick(
                    format!("（ゴールを確かめられませんでした: 確認コマンドが {outcome} で終わりました）"),
                    format!("(Goal not checked: the acceptance command ended with {outcome}.)"),
                )
            );
            out.cli(
                "error",
                "GOAL_CHECK_FAILED",
                &format!("goal id={id}: the --accept command ended with {outcome} at attempt {n}: {reason}; not retried ({log})"),
                Some("the command runs without a shell, in the village's workspace folder, with PATH only; give a program on PATH or a path to it"),
            );
            exit::GOAL_NOT_REACHED
        }
    }
}

/// Says on stderr, once, why a turn gave no answer (the code, the HTTP status or network
/// class, the template and the endpoint's host; never a key or a body), and which stored
/// conversation the request was recorded under.
pub(crate) fn report_outcome(outcome: &ExternalOutcome, out: &Out) {
    if let Some(failure) = &outcome.failure {
        report_failure(failure, out);
    } else if let Some((code, message, fix)) = village_limit(outcome.state) {
        out.cli("error", code, message, Some(fix));
    }
    if let Some(session) = &outcome.session_id {
        out.cli(
            "info",
            "SESSION",
            &format!("recorded under session {session}"),
            None,
        );
    }
    if let Some(question) = &outcome.question {
        report_question(question, out);
    }
}

/// The question on stdout: its text, then one `- choice` line per choice.
fn print_question(question: &PendingQuestion) {
    crate::outln!("{}", crate::terminal::for_stdout(&question.question));
    for choice in &question.choices {
        crate::outln!("- {}", crate::terminal::for_stdout(choice));
    }
}

/// Exit 15's cause on stderr: who asks, in which conversation, and how to answer; under
/// `--events jsonl` also the typed `questionAsked` event (question, choices, session).
fn report_question(question: &PendingQuestion, out: &Out) {
    let session = question.session_id.as_deref().unwrap_or("-");
    out.cli(
        "info",
        "NEEDS_INPUT",
        &format!(
            "agent {} asks a question (on stdout) in conversation {session}; the turn waits for the answer",
            question.agent_id
        ),
        Some(&format!(
            "answer with `fuseforks-cli ask --data-dir D --resume {session} \"ANSWER\"` (add --answer to refuse a conversation no longer waiting)"
        )),
    );
    out.event(&fuseforks_core::events::CoreEvent::QuestionAsked {
        question: question.clone(),
    });
}

/// Why a request stopped at one of the village's own limits (no turn failed: the limit was
/// reached), with what to change.
fn village_limit(state: PlanTaskState) -> Option<(&'static str, &'static str, &'static str)> {
    match state {
        PlanTaskState::BudgetExhausted => Some((
            "BUDGET_EXHAUSTED",
            "the request stopped at the village's token budget (tokenBudget): the next model call's reservation, the request as sent plus the template's whole output cap, did not fit in what was left",
            "raise tokenBudget (world.json, or the GUI's Settings), or lower the template's maxOutputTokens; the `budget stop:` line of fuseforks.log has the figures",
        )),
        PlanTaskState::TimedOut => Some((
            "ASK_TIMED_OUT",
            "no answer came within the village's askTimeoutSecs",
            "raise askTimeoutSecs (world.json, 30 to 3600 s), or find why the model is slow: the turn's lines in fuseforks.log say where the time went",
        )),
        _ => None,
    }
}

/// One failed turn on stderr (`{"type":"cli",…}` under `--events jsonl`).
pub(crate) fn report_failure(failure: &TurnFailure, out: &Out) {
    out.cli(
        "error",
        &failure.code,
        &failure.message,
        failure.fix.as_deref(),
    );
}
