//! `fuseforks-cli ask …`: one request to the reception, the answer alone on stdout, and an exit
//! code for the outcome (seed 001 D7, D10). A new conversation by default.

use std::io::Read;

use clap::Args;
use fuseforks_core::preflight::HeadlessMode;

use super::headless::{Common, boot, close, configure, report_findings, start_agents};
use crate::exit;
use crate::output::Out;
use crate::signals::{SignalCount, reached};

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
            out.cli("error", "USAGE", "no request on stdin", None);
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
    let host = match boot(&args.common, out, false, false, None) {
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
    let asking = orchestrator.ask_external_outcome(&args.client, &message);
    tokio::pin!(asking);
    let (answer, state) = tokio::select! {
        result = &mut asking => result,
        () = reached(&mut signals, 1) => {
            // First signal: interrupt and wait for the turn to record itself.
            orchestrator.interrupt_all();
            tokio::select! {
                result = &mut asking => result,
                () = reached(&mut signals, 2) => {
                    out.cli("warn", "CLOSE_ABORTED", "exited without waiting: the turn's payment record may be missing", None);
                    return exit::INTERRUPTED;
                }
            }
        }
    };
    match &answer {
        Some(text) => println!("{text}"),
        None => println!("{}", fixed_line(state, report.language)),
    }
    close(&orchestrator, &mut signals, out).await;
    drop(host);
    exit::for_outcome(state)
}

/// The fixed line printed when there is no answer (exit codes 6-9).
fn fixed_line(
    state: fuseforks_core::orchestrator::PlanTaskState,
    language: fuseforks_core::village::Language,
) -> &'static str {
    use fuseforks_core::orchestrator::PlanTaskState as S;
    use fuseforks_core::village::Language as L;
    match (state, language) {
        (S::TimedOut, L::Ja) => "（待ちの上限を超えました）",
        (S::TimedOut, L::En) => "(The wait ran out.)",
        (S::Interrupted, L::Ja) => "（打ち切られました）",
        (S::Interrupted, L::En) => "(Interrupted.)",
        (S::BudgetExhausted, L::Ja) => "（予算の上限で止まりました）",
        (S::BudgetExhausted, L::En) => "(Stopped at the token budget.)",
        (_, L::Ja) => "（答えが返りませんでした）",
        (_, L::En) => "(No answer.)",
    }
}
