//! `fuseforks-cli check --for ask|serve …`: the preflight alone. It calls no model, connects
//! no MCP server, writes nothing and takes no lock. Exit 0 without rejections, 3 with.
//! `--probe-endpoints` adds one request per template (`probe.rs`).

use clap::{Args, ValueEnum};
use fuseforks_core::preflight::HeadlessMode;
use serde_json::json;

use super::headless::Common;
use crate::exit;
use crate::output::Out;

/// Which command to check for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ForArg {
    /// `ask`.
    Ask,
    /// `serve`.
    Serve,
}

/// Arguments of `check`.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The command the village is checked for.
    #[arg(long = "for", value_enum)]
    pub for_command: ForArg,
    #[command(flatten)]
    pub common: Common,
    /// The port `serve --door-port` would open.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub door_port: Option<u16>,
    /// Print `{"findings":[…],"start":[…]}` on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also send one cheap authenticated request per template of the start set (a models
    /// list, or a 1-token call): ENDPOINT_OK with the latency, or ENDPOINT_AUTH_FAILED /
    /// ENDPOINT_STATUS / ENDPOINT_UNREACHABLE, which reject (exit 3). Off by default: plain
    /// `check` calls nothing.
    #[arg(long)]
    pub probe_endpoints: bool,
}

/// Runs `check`.
pub(crate) fn run(args: &CheckArgs, out: &Out) -> u8 {
    let mode = match args.for_command {
        ForArg::Ask => HeadlessMode::Ask,
        ForArg::Serve => HeadlessMode::Serve,
    };
    let mut report = match args.common.preflight(mode, args.door_port, out) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let switch = super::control::switch_findings(&args.common.data_dir, report.language);
    report.findings.extend(switch);
    report.findings.sort_by_key(|f| f.level);
    for f in &mut report.findings {
        f.fix = crate::remedy::finding_fix(f, report.language);
        f.remedy = None;
    }
    if args.probe_endpoints {
        super::probe::run(&args.common, &mut report, out);
    }
    if args.json {
        crate::outln!(
            "{}",
            json!({"findings": report.findings, "start": report.start})
        );
    } else {
        crate::outp!("{}", human_report(&report));
    }
    if report.passes() {
        exit::OK
    } else {
        exit::REJECTED
    }
}

/// `check`'s human report in the village language: the start set, each finding as
/// `level [CODE] message` and `Fix: …`, and the count.
fn human_report(report: &fuseforks_host::preflight_view::PreflightReport) -> String {
    use fuseforks_core::preflight::Level;
    let l = report.language;
    let start: Vec<&str> = report.start.iter().map(String::as_str).collect();
    let start = if start.is_empty() {
        l.pick("（なし）", "(none)")
    } else {
        start.join(", ")
    };
    let mut text = l.pick(format!("起動: {start}\n"), format!("start: {start}\n"));
    for f in &report.findings {
        let level = match f.level {
            Level::Reject => l.pick("拒否", "reject"),
            Level::Warn => l.pick("警告", "warn"),
            Level::Info => l.pick("情報", "info"),
        };
        let fix_word = l.pick("直し方", "Fix");
        let shown = format!("{level} [{}] {}\n{fix_word}: {}", f.code, f.message, f.fix);
        text.push_str(&crate::terminal::for_stdout(&shown));
        text.push('\n');
    }
    let rejects = report
        .findings
        .iter()
        .filter(|f| f.level == Level::Reject)
        .count();
    let total = report.findings.len();
    text.push_str(&l.pick(
        format!("指摘 {total} 件、うち拒否 {rejects} 件\n"),
        format!("{total} finding(s), {rejects} rejecting\n"),
    ));
    text
}
