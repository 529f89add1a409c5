//! `fuseforks-cli ask …`: one request to the reception, the answer alone on stdout, and an exit
//! code for the outcome (seed 001 D7, D10). A new conversation by default.

use std::io::Read;

use clap::Args;
use fuseforks_core::orchestrator::{ExternalOutcome, PlanTaskState, TurnFailure};
use fuseforks_core::preflight::HeadlessMode;

use super::headless::{
    CLOSE_GRACE, Common, boot, close, configure, finish_close, report_close, report_findings,
    start_agents,
};
use crate::exit;
use crate::output::Out;
use crate::signals::{SignalCount, reached};

/// How long `ask` waits for the answer once every agent has ended (it is already there).
const ANSWER_AFTER_CLOSE: std::time::Duration = std::time::Duration::from_millis(200);

/// Arguments of `ask`.
#[derive(Debug, Args)]
pub struct AskArgs {
    #[command(flatten)]
    pub common: Common,
    /// Continue the current conversation instead of starting a new one.
    #[arg(long)]
    pub continue_session: bool,
    /// The client name the reception sees (the village's externalName wins).
    #[arg(long, default_value = "fuseforks-cli")]
    pub client: String,
    /// Also print info findings and log lines.
    #[arg(long)]
    pub verbose: bool,
    /// The request, or `-` to read it from stdin.
    pub message: String,
}

/// Runs `ask`.
pub async fn run(args: &AskArgs, out: &Out, mut signals: SignalCount) -> u8 {
    let message = if args.message == "-" {
        let mut text = String::new();
        if std::io::stdin().read_to_string(&mut text).is_err() || text.trim().is_empty() {
            out.cli(
                "error",
                "USAGE",
                "no request on stdin",
                Some("pipe the request's text into `ask … -`, or give it as the last argument"),
            );
            return exit::USAGE;
        }
        text
    } else {
        args.message.clone()
    };
    let report = match args.common.preflight(HeadlessMode::Ask, None, out) {
        Ok(r) => r,
        Err(code) => return code,
    };
    if report_findings(&report, out, args.verbose) {
        return exit::REJECTED;
    }
    if *signals.borrow() > 0 {
        out.cli(
            "info",
            "INTERRUPTED",
            "interrupted before anything was sent",
            None,
        );
        return exit::INTERRUPTED;
    }
    let host = match boot(&args.common, out, false, None) {
        Ok(h) => h,
        Err(code) => return code,
    };
    let orchestrator = host.orchestrator.clone();
    configure(&orchestrator, &args.common, *out);
    if !args.continue_session {
        orchestrator.new_conversation();
    }
    if *signals.borrow() > 0 {
        out.cli(
            "info",
            "INTERRUPTED",
            "interrupted during start-up; nothing was sent",
            None,
        );
        return exit::INTERRUPTED;
    }
    if let Err(code) = start_agents(&orchestrator, &report, out) {
        return code;
    }
    let asking = orchestrator.ask_external_detailed(&args.client, &message);
    tokio::pin!(asking);
    // The close, started by the first signal (or after the answer): one deadline for all of it.
    let (mut first_signal, closer) = (signals.clone(), orchestrator.clone());
    let closing = async move {
        reached(&mut first_signal, 1).await;
        closer.close(CLOSE_GRACE).await
    };
    tokio::pin!(closing);
    let mut closed = None;
    let outcome = tokio::select! {
        result = &mut asking => result,
        () = reached(&mut signals, 1) => {
            // First signal: every agent stops and its turn is interrupted at once; the turn
            // records itself within the grace, or its call in flight is cut when it runs out.
            tokio::select! {
                result = &mut asking => result,
                all = &mut closing => {
                    closed = Some(all);
                    // Every agent has ended: the answer, if any, is already there.
                    tokio::time::timeout(ANSWER_AFTER_CLOSE, &mut asking)
                        .await
                        .unwrap_or_else(|_| interrupted(&orchestrator))
                }
                () = reached(&mut signals, 2) => {
                    out.cli("warn", "CLOSE_ABORTED", "exited without waiting: the turn's payment record may be missing", None);
                    return exit::INTERRUPTED;
                }
            }
        }
    };
    match &outcome.answer {
        Some(text) => println!("{}", crate::terminal::for_stdout(text)),
        None => println!("{}", outcome.state.no_answer_line(report.language)),
    }
    report_outcome(&outcome, out);
    let signalled = *signals.borrow() > 0;
    match closed {
        Some(all) => report_close(all, out),
        None if signalled => finish_close(closing, &mut signals, out).await,
        None => {
            let cut_at = tokio::time::Instant::now() + CLOSE_GRACE;
            close(&orchestrator, &mut signals, out, cut_at).await;
        }
    }
    drop(host);
    exit::for_outcome(outcome.state)
}

/// The outcome of an `ask` cut by the close before its turn answered.
fn interrupted(orchestrator: &fuseforks_core::orchestrator::Orchestrator) -> ExternalOutcome {
    ExternalOutcome {
        answer: None,
        state: PlanTaskState::Interrupted,
        failure: None,
        session_id: orchestrator.current_session(),
    }
}

/// Says on stderr, once, why a turn gave no answer (the code, the HTTP status or network
/// class, the template and the endpoint's host; never a key or a body), and which stored
/// conversation the request was recorded under.
pub(crate) fn report_outcome(outcome: &ExternalOutcome, out: &Out) {
    if let Some(failure) = &outcome.failure {
        report_failure(failure, out);
    }
    if let Some(session) = &outcome.session_id {
        out.cli(
            "info",
            "SESSION",
            &format!("recorded under session {session}"),
            None,
        );
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
