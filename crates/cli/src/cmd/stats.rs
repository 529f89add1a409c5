//! `fuseforks-cli stats --data-dir D [--period month|all|YYYY-MM] [--by agent|model|stop]
//! [--json]`: tokens, effective tokens and `≈ $` (with how many rows had a price) from the turn
//! records of every conversation, through the core's `stats::aggregate`, grouped as asked;
//! judge rows are marked apart (`kind: judge`); the drafting assistant's calls in a table of
//! their own, outside the turns' totals but inside the money (`cost`); how old the prices behind
//! `≈ $` are (`pricingAsOf`, `pricingAgeDays`). Reads only, under the village lock (exit 4 when
//! a process holds the village: `sessions.redb` is its alone).

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use fuseforks_core::pricing::pricing_age;
use fuseforks_core::stats::{AssistRow, Period, StatsReport, StatsRow, TimeZone, aggregate};
use fuseforks_core::village::World;
use serde_json::{Value, json};

use super::sessions::open_quiet_village;
use crate::exit;
use crate::output::Out;

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum By {
    /// By agent (judges marked).
    Agent,
    /// By model.
    Model,
    /// By how the turn ended.
    Stop,
}

/// Arguments of `stats`.
#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// The data folder; the village is DATA_DIR/workspace.
    #[arg(long, value_name = "DATA_DIR")]
    pub data_dir: PathBuf,
    /// `all`, `month` (this calendar month) or a month `YYYY-MM`.
    #[arg(long, default_value = "all")]
    pub period: String,
    /// How rows are grouped.
    #[arg(long, value_enum, default_value = "agent")]
    pub by: By,
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

fn period(text: &str, zone: &TimeZone) -> Option<Period> {
    let month = |year: i16, month: i8| Period::Month {
        year,
        month,
        closing_day: 31,
    };
    match text {
        "all" => Some(Period::All),
        "month" => {
            let today = jiff::Timestamp::now()
                .to_zoned_datetime(zone.clone())
                .date();
            Some(month(today.year(), today.month()))
        }
        _ => {
            let (y, m) = text.split_once('-')?;
            let (y, m) = (y.parse::<i16>().ok()?, m.parse::<i8>().ok()?);
            (y.to_string().len() == 4 && (1..=12).contains(&m)).then(|| month(y, m))
        }
    }
}

/// One group's sums.
#[derive(Default)]
struct Group {
    kind: &'static str,
    turns: u64,
    prompt: u64,
    cached: u64,
    completion: u64,
    reasoning: u64,
    effective: u64,
    cost: f64,
    priced: usize,
    unpriced: usize,
}

fn key(row: &StatsRow, by: By, world: &World) -> (String, &'static str) {
    let judge = world.judges.iter().any(|j| j.id.as_str() == row.agent_id);
    match by {
        By::Agent => (row.agent_id.clone(), if judge { "judge" } else { "agent" }),
        By::Model => (row.model.clone(), "model"),
        By::Stop => (row.stop.clone(), "stop"),
    }
}

fn groups(report: &StatsReport, by: By, world: &World) -> BTreeMap<String, Group> {
    let mut out: BTreeMap<String, Group> = BTreeMap::new();
    for row in &report.rows {
        let (name, kind) = key(row, by, world);
        let g = out.entry(name).or_default();
        g.kind = kind;
        g.turns += row.turns;
        g.prompt += row.usage.prompt;
        g.cached += row.usage.cache_read;
        g.completion += row.usage.completion;
        g.reasoning += row.usage.reasoning;
        g.effective += row.effective;
        match row.cost_usd {
            Some(c) => {
                g.cost += c;
                g.priced += 1;
            }
            None => g.unpriced += 1,
        }
    }
    out
}

/// Runs `stats`.
pub(crate) fn run(args: &StatsArgs, out: &Out) -> u8 {
    let zone = fuseforks_host::preflight_view::process_zone()
        .map(|z| z.zone().clone())
        .unwrap_or(TimeZone::UTC);
    let Some(period) = period(&args.period, &zone) else {
        out.cli(
            "error",
            "STATS_PERIOD_INVALID",
            &format!("{:?} is not a period", args.period),
            Some("all, month, or a month as YYYY-MM (2026-11)"),
        );
        return exit::USAGE;
    };
    let village = match open_quiet_village(&args.data_dir, out) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let report = match aggregate(&village.sessions, &village.world, period, &zone) {
        Ok(r) => r,
        Err(e) => {
            out.error(&e);
            return exit::BOOT_FAILED;
        }
    };
    let groups = groups(&report, args.by, &village.world);
    let today = jiff::Timestamp::now().to_zoned_datetime(zone).date();
    let age = pricing_age(&report, &village.world, today);
    if args.json {
        let mut answer = as_json(&report, &groups);
        answer["pricingAsOf"] = json!(age.as_ref().map(|a| &a.pricing_as_of));
        answer["pricingAgeDays"] = json!(age.as_ref().map(|a| a.pricing_age_days));
        out.result(&format!("{answer}\n"));
    } else {
        out.result(&as_text(&report, &groups));
        if let Some(a) = age {
            out.result(&format!(
                "prices as of {} ({} days old; `pricing fetch` renews them)\n",
                a.pricing_as_of, a.pricing_age_days
            ));
        }
    }
    exit::OK
}

fn as_json(report: &StatsReport, groups: &BTreeMap<String, Group>) -> Value {
    let rows: Vec<Value> = groups
        .iter()
        .map(|(name, g)| {
            json!({"name": name, "kind": g.kind, "turns": g.turns, "prompt": g.prompt,
                "cached": g.cached, "completion": g.completion, "reasoning": g.reasoning,
                "effective": g.effective, "costUsd": (g.priced > 0).then_some(g.cost),
                "pricedRows": g.priced, "unpricedRows": g.unpriced})
        })
        .collect();
    let t = &report.totals;
    let slice = |a: &AssistRow| {
        json!({"turns": a.calls, "prompt": a.usage.prompt, "cached": a.usage.cache_read,
            "completion": a.usage.completion, "reasoning": a.usage.reasoning,
            "effective": a.effective, "costUsd": a.cost_usd})
    };
    let assist_rows: Vec<Value> = report
        .assist
        .rows
        .iter()
        .map(|a| {
            let mut row = slice(a);
            row["model"] = json!(a.model);
            row["templateId"] = json!(a.template_id);
            row
        })
        .collect();
    json!({
        "rows": rows,
        "assist": {"rows": assist_rows, "total": slice(&report.assist.total)},
        "totals": {"turns": t.turns, "prompt": t.usage.prompt, "cached": t.usage.cache_read,
            "completion": t.usage.completion, "reasoning": t.usage.reasoning,
            "effective": t.effective, "costUsd": t.cost_usd, "pricedRows": t.priced_rows,
            "unpricedRows": t.unpriced_rows, "unpricedModels": t.unpriced_models,
            "unknownUsageCalls": t.unknown_usage_calls},
        "cost": report.cost_usd,
    })
}

fn as_text(report: &StatsReport, groups: &BTreeMap<String, Group>) -> String {
    let mut text = format!(
        "{:<24} {:>6} {:>12} {:>10} {:>10} {:>12} {:>10}\n",
        "name", "turns", "prompt", "cached", "output", "effective", "≈ $"
    );
    for (name, g) in groups {
        let cost = if g.priced > 0 {
            format!("{:.4}", g.cost)
        } else {
            "-".into()
        };
        let shown = if g.kind == "judge" {
            format!("{name} (judge)")
        } else {
            name.clone()
        };
        text.push_str(&format!(
            "{:<24} {:>6} {:>12} {:>10} {:>10} {:>12} {:>10}\n",
            crate::terminal::for_stdout(&shown),
            g.turns,
            g.prompt,
            g.cached,
            g.completion,
            g.effective,
            cost
        ));
    }
    let t = &report.totals;
    text.push_str(&format!(
        "total: {} turns, {} effective tokens, ≈ $ {} ({} of {} rows priced",
        t.turns,
        t.effective,
        dollars(t.cost_usd),
        t.priced_rows,
        t.priced_rows + t.unpriced_rows
    ));
    if !t.unpriced_models.is_empty() {
        text.push_str(&format!("; no price for {}", t.unpriced_models.join(", ")));
    }
    text.push_str(")\n");
    if t.unknown_usage_calls > 0 {
        text.push_str(&format!(
            "{} model call(s) were sent but their usage was never recorded\n",
            t.unknown_usage_calls
        ));
    }
    text.push_str(&assist_text(report));
    text
}

/// The drafting assistant's table and total (never charged to a budget; not in the turns'
/// totals), then the money of both together.
fn assist_text(report: &StatsReport) -> String {
    let assist = &report.assist;
    if assist.rows.is_empty() {
        return String::new(); // the turns' total above is all the money
    }
    let mut text = format!(
        "\ndrafting assistant (not charged to the budget)\n{:<24} {:>6} {:>12} {:>10} {:>10} {:>12} {:>10}\n",
        "model (template)", "calls", "prompt", "cached", "output", "effective", "≈ $"
    );
    for a in &assist.rows {
        let name = format!("{} ({})", a.model, a.template_id);
        text.push_str(&format!(
            "{:<24} {:>6} {:>12} {:>10} {:>10} {:>12} {:>10}\n",
            crate::terminal::for_stdout(&name),
            a.calls,
            a.usage.prompt,
            a.usage.cache_read,
            a.usage.completion,
            a.effective,
            dollars(a.cost_usd)
        ));
    }
    text.push_str(&format!(
        "drafting assistant total: {} calls, {} effective tokens, ≈ $ {}\n\
         ≈ $ spent in all: {} (turns {} + drafting assistant {})\n",
        assist.total.calls,
        assist.total.effective,
        dollars(assist.total.cost_usd),
        dollars(report.cost_usd),
        dollars(report.totals.cost_usd),
        dollars(assist.total.cost_usd)
    ));
    text
}

fn dollars(usd: Option<f64>) -> String {
    usd.map_or_else(|| "-".into(), |c| format!("{c:.4}"))
}
