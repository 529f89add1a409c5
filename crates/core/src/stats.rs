//! Stats and pricing (original Specs 39-42): `turn` records aggregated by conversation × agent
//! × model × stop kind, in tokens and effective tokens, priced from the model's template
//! (missing rates fall back one level: 1-hour writes → writes → input, cache reads → input;
//! input and output are both required), filtered by period (all, or a month by closing day).
//! An `intent` record that no `turn` record of its agent completes (one that follows it in the
//! conversation and started at or before it) is a paid call whose usage is unknown (the process
//! died between payment and record): counted apart. The drafting assistant's `assist` records
//! are summed apart too, by model × template with their own total (`turns` = model calls): never
//! in the turns' `totals`, always in the report's `≈ $` (`cost_usd`) — they are paid, though
//! never charged to a budget (docs/decisions/0010-assist.md).

use std::collections::BTreeMap;

use jiff::civil::Date;
/// The time zone periods are cut in (re-exported so callers need not name `jiff`).
pub use jiff::tz::TimeZone;

use crate::budget::effective_tokens;
use crate::llm::Usage;
use crate::sessions::{Record, SessionError, SessionStore, StoredRecord, TurnRecord};
use crate::village::{ModelTemplate, World};

/// Which turns count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// Every turn.
    All,
    /// The month `year-month` closing on `closing_day` (1-31): from the day after the previous
    /// month's closing day to this month's, inclusive, in local time. 31 = calendar months.
    Month {
        /// Year.
        year: i16,
        /// Month, 1-12.
        month: i8,
        /// Closing day, 1-31 (clamped to the month's last day).
        closing_day: i8,
    },
}

impl Period {
    /// The `[start, end)` of the period in ms since the epoch; `None` for all time.
    pub fn bounds(&self, tz: &TimeZone) -> Option<(i64, i64)> {
        let Self::Month {
            year,
            month,
            closing_day,
        } = *self
        else {
            return None;
        };
        let closing = |y: i16, m: i8| -> Option<Date> {
            let first = Date::new(y, m, 1).ok()?;
            let day = closing_day.clamp(1, first.days_in_month());
            Date::new(y, m, day).ok()
        };
        let (py, pm) = if month == 1 {
            (year - 1, 12)
        } else {
            (year, month - 1)
        };
        let start = closing(py, pm)?.tomorrow().ok()?;
        let end = closing(year, month)?.tomorrow().ok()?;
        let ms = |d: Date| {
            d.to_zoned_datetime(tz.clone())
                .ok()
                .map(|z| z.timestamp().as_millisecond())
        };
        Some((ms(start)?, ms(end)?))
    }
}

/// One row: a conversation × agent × model × stop kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsRow {
    /// Conversation.
    pub session_id: String,
    /// Agent.
    pub agent_id: String,
    /// Model.
    pub model: String,
    /// Stop kind (`completed`, `tool_limit`, `failed`, …).
    pub stop: String,
    /// Turns.
    pub turns: u64,
    /// Tokens.
    pub usage: Usage,
    /// Effective tokens.
    pub effective: u64,
    /// `≈ $`, when the model's template is priced.
    pub cost_usd: Option<f64>,
}

/// The sums over the rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsTotals {
    /// Turns.
    pub turns: u64,
    /// Tokens.
    pub usage: Usage,
    /// Effective tokens.
    pub effective: u64,
    /// `≈ $` of the priced rows; `None` when no row has a price (unknown is not zero).
    pub cost_usd: Option<f64>,
    /// Rows with a price.
    pub priced_rows: usize,
    /// Rows without one.
    pub unpriced_rows: usize,
    /// Models that had no price (both input and output rates are needed).
    pub unpriced_models: Vec<String>,
    /// Model calls sent whose usage was never recorded (open intents).
    pub unknown_usage_calls: u64,
}

/// A model call that was sent but whose usage was never recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownUsage {
    /// Conversation.
    pub session_id: String,
    /// Agent.
    pub agent_id: String,
    /// Model.
    pub model: String,
    /// When it was about to be sent, ms since the epoch.
    pub ts_ms: i64,
    /// What the budget reserved for it, effective tokens.
    pub reserved: u64,
}

/// A slice of the drafting assistant's calls: one model × template, or all of them (never
/// charged to a budget, counted apart from the turns).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssistRow {
    /// Model (empty in the total).
    pub model: String,
    /// Template (empty in the total).
    pub template_id: String,
    /// Model calls (a slice's `turns`: the assistant has no turns, each call counts one).
    pub calls: u64,
    /// Tokens.
    pub usage: Usage,
    /// Effective tokens.
    pub effective: u64,
    /// `≈ $` of the priced calls; `None` when none is priced (unknown is not zero).
    pub cost_usd: Option<f64>,
}

/// The drafting assistant's part of a report: its rows and their sum.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssistStats {
    /// By model and template.
    pub rows: Vec<AssistRow>,
    /// The sum of the rows.
    pub total: AssistRow,
}

/// A stats report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatsReport {
    /// Rows, ordered by conversation, agent, model, stop.
    pub rows: Vec<StatsRow>,
    /// The drafting assistant's calls (not in `totals`, which are the turns alone).
    pub assist: AssistStats,
    /// Totals of the turns.
    pub totals: StatsTotals,
    /// The `≈ $` of the money spent: the turns' and the assistant's together (the assistant is
    /// never charged to a budget, but it is paid); `None` when nothing is priced.
    pub cost_usd: Option<f64>,
    /// The calls of unknown usage, in conversation order.
    pub unknown_usage: Vec<UnknownUsage>,
}

fn stop_kind(turn: &TurnRecord) -> String {
    serde_json::to_value(&turn.stop)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}

fn usage_of(turn: &TurnRecord) -> Usage {
    Usage {
        prompt: turn.prompt,
        completion: turn.completion,
        cache_read: turn.cached,
        cache_write: turn.cache_write,
        cache_write_1h: turn.cache_write_1h,
        reasoning: turn.reasoning,
    }
}

/// The `≈ $` of some tokens at a template's prices; `None` when input or output is unpriced.
pub fn cost(usage: &Usage, template: &ModelTemplate) -> Option<f64> {
    let input = template.input_per_mtok?;
    let output = template.output_per_mtok?;
    let read = template.cache_read_per_mtok.unwrap_or(input);
    let write = template.cache_write_per_mtok.unwrap_or(input);
    let write_1h = template
        .cache_write_1h_per_mtok
        .or(template.cache_write_per_mtok)
        .unwrap_or(input);
    let uncached = usage
        .prompt
        .saturating_sub(usage.cache_read + usage.cache_write);
    let write_5m = usage.cache_write.saturating_sub(usage.cache_write_1h);
    let micros = uncached as f64 * input
        + usage.cache_read as f64 * read
        + write_5m as f64 * write
        + usage.cache_write_1h as f64 * write_1h
        + usage.completion as f64 * output;
    Some(to_nano_usd(micros / 1_000_000.0))
}

/// Dollars rounded to a billionth: far below any price's precision, and free of the binary
/// fractions a sum of floats leaves (`0.0010240000000000002`).
fn to_nano_usd(usd: f64) -> f64 {
    (usd * 1e9).round() / 1e9
}

/// Aggregates every conversation's `turn` records in the period.
pub fn aggregate(
    store: &SessionStore,
    world: &World,
    period: Period,
    tz: &TimeZone,
) -> Result<StatsReport, SessionError> {
    let bounds = period.bounds(tz);
    let within = |ts: i64| bounds.is_none_or(|(start, end)| ts >= start && ts < end);
    let mut rows: BTreeMap<(String, String, String, String), StatsRow> = BTreeMap::new();
    let mut unknown = Vec::new();
    let mut assist: BTreeMap<(String, String), AssistRow> = BTreeMap::new();
    for (session, meta) in store.list()? {
        let mut open: BTreeMap<String, Vec<UnknownUsage>> = BTreeMap::new();
        // A fork's records before its fork point are copies: their calls were paid, and are
        // counted, in the conversation they were copied from.
        let copied = meta.forked_at_seq.unwrap_or(0);
        let own = store
            .records(&session)?
            .into_iter()
            .filter(|(seq, _)| *seq >= copied);
        for (_, record) in own {
            let Some(turn) = take_record(&session, record, &mut open, &mut assist, &within) else {
                continue;
            };
            if !within(turn.ts_ms) {
                continue;
            }
            let key = (
                session.clone(),
                turn.agent_id.clone(),
                turn.model.clone(),
                stop_kind(&turn),
            );
            let row = rows.entry(key.clone()).or_insert_with(|| StatsRow {
                session_id: key.0,
                agent_id: key.1,
                model: key.2,
                stop: key.3,
                ..StatsRow::default()
            });
            row.turns += 1;
            row.usage.add(&usage_of(&turn));
        }
        let mut left: Vec<UnknownUsage> = open.into_values().flatten().collect();
        left.retain(|u| within(u.ts_ms));
        left.sort_by_key(|u| u.ts_ms);
        unknown.extend(left);
    }
    let mut report = StatsReport {
        totals: StatsTotals {
            unknown_usage_calls: unknown.len() as u64,
            ..StatsTotals::default()
        },
        unknown_usage: unknown,
        ..StatsReport::default()
    };
    for (_, mut row) in rows {
        row.effective = effective_tokens(&row.usage);
        row.cost_usd = world
            .model_templates
            .iter()
            .find(|t| t.model == row.model)
            .and_then(|t| cost(&row.usage, t));
        let totals = &mut report.totals;
        totals.turns += row.turns;
        totals.usage.add(&row.usage);
        totals.effective += row.effective;
        match row.cost_usd {
            Some(c) => {
                totals.cost_usd = Some(to_nano_usd(totals.cost_usd.unwrap_or(0.0) + c));
                totals.priced_rows += 1;
            }
            None => {
                totals.unpriced_rows += 1;
                if !totals.unpriced_models.contains(&row.model) {
                    totals.unpriced_models.push(row.model.clone());
                }
            }
        }
        report.rows.push(row);
    }
    report.assist = assist_stats(assist.into_values(), world);
    report.cost_usd = add_costs(report.totals.cost_usd, report.assist.total.cost_usd);
    Ok(report)
}

/// Two `≈ $` figures added; unknown only when both are.
fn add_costs(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(to_nano_usd(a.unwrap_or(0.0) + b.unwrap_or(0.0))),
    }
}

/// The assistant's rows priced at their templates, and their sum.
fn assist_stats(rows: impl Iterator<Item = AssistRow>, world: &World) -> AssistStats {
    let mut stats = AssistStats::default();
    for mut row in rows {
        row.effective = effective_tokens(&row.usage);
        row.cost_usd = world
            .model_templates
            .iter()
            .find(|t| t.id.as_str() == row.template_id)
            .and_then(|t| cost(&row.usage, t));
        let total = &mut stats.total;
        total.calls += row.calls;
        total.usage.add(&row.usage);
        total.effective += row.effective;
        total.cost_usd = add_costs(total.cost_usd, row.cost_usd);
        stats.rows.push(row);
    }
    stats
}

/// Takes one record of a conversation: an intent opens a call, an assistant call is counted
/// (within the period), and a turn completes its calls and is returned to be counted.
fn take_record(
    session: &str,
    record: StoredRecord,
    open: &mut BTreeMap<String, Vec<UnknownUsage>>,
    assist: &mut BTreeMap<(String, String), AssistRow>,
    within: &dyn Fn(i64) -> bool,
) -> Option<TurnRecord> {
    let turn = match record {
        StoredRecord::Known(Record::Turn(turn)) => turn,
        StoredRecord::Known(Record::Intent(intent)) => {
            open.entry(intent.agent_id.clone())
                .or_default()
                .push(UnknownUsage {
                    session_id: session.to_owned(),
                    agent_id: intent.agent_id,
                    model: intent.model,
                    ts_ms: intent.ts_ms,
                    reserved: intent.reserved,
                });
            return None;
        }
        StoredRecord::Known(Record::Assist(a)) => {
            if within(a.ts_ms) {
                add_assist(assist, &a);
            }
            return None;
        }
        _ => return None,
    };
    // The turn completes its own calls: those sent since it started. An older open intent
    // belongs to a turn that never recorded itself (a crash) and stays open. A turn cut at the
    // close's hard stop leaves its last call open.
    if let Some(calls) = open.get_mut(&turn.agent_id) {
        let cut = calls
            .iter()
            .filter(|u| turn.usage_unknown && u.ts_ms >= turn.ts_ms)
            .max_by_key(|u| u.ts_ms)
            .cloned();
        calls.retain(|u| u.ts_ms < turn.ts_ms);
        calls.extend(cut);
    }
    Some(turn)
}

/// Tokens per local day (`YYYY-MM-DD` → prompt + output of the turns that started that day),
/// for the charts of the stats page; the assistant's calls are not in it.
pub fn daily_tokens(
    store: &SessionStore,
    period: Period,
    tz: &TimeZone,
) -> Result<BTreeMap<String, u64>, SessionError> {
    let bounds = period.bounds(tz);
    let mut days = BTreeMap::new();
    for (session, _) in store.list()? {
        for (_, record) in store.records(&session)? {
            let StoredRecord::Known(Record::Turn(turn)) = record else {
                continue;
            };
            if bounds.is_some_and(|(start, end)| turn.ts_ms < start || turn.ts_ms >= end) {
                continue;
            }
            let Ok(at) = jiff::Timestamp::from_millisecond(turn.ts_ms) else {
                continue;
            };
            let day = at.to_zoned_datetime(tz.clone()).date().to_string();
            *days.entry(day).or_insert(0) += turn.prompt + turn.completion;
        }
    }
    Ok(days)
}

fn add_assist(rows: &mut BTreeMap<(String, String), AssistRow>, a: &crate::sessions::AssistRecord) {
    let key = (a.model.clone(), a.template_id.clone());
    let row = rows.entry(key).or_insert_with(|| AssistRow {
        model: a.model.clone(),
        template_id: a.template_id.clone(),
        ..AssistRow::default()
    });
    row.calls += 1;
    row.usage.add(&Usage {
        prompt: a.prompt,
        completion: a.completion,
        cache_read: a.cache_read,
        cache_write: a.cache_write,
        cache_write_1h: a.cache_write_1h,
        reasoning: a.reasoning,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::village::TemplateId;

    #[test]
    fn prices_fall_back_one_level() {
        let mut t = ModelTemplate::new(TemplateId::new("t").unwrap(), "t", "u", "m");
        let u = Usage {
            prompt: 1_000_000,
            cache_read: 400_000,
            cache_write: 200_000,
            cache_write_1h: 100_000,
            completion: 100_000,
            reasoning: 0,
        };
        assert_eq!(cost(&u, &t), None, "unpriced");
        t.input_per_mtok = Some(3.0);
        assert_eq!(cost(&u, &t), None, "output is required too");
        t.output_per_mtok = Some(15.0);
        // every input kind at 3.0: 1.0 M × 3 + 0.1 M × 15
        assert!((cost(&u, &t).unwrap() - 4.5).abs() < 1e-9);
        t.cache_read_per_mtok = Some(0.3);
        t.cache_write_per_mtok = Some(3.75);
        // 0.4 M uncached × 3 + 0.4 M × 0.3 + 0.1 M × 3.75 + 0.1 M × 3.75 (1 h falls back to writes) + 1.5
        assert!((cost(&u, &t).unwrap() - (1.2 + 0.12 + 0.375 + 0.375 + 1.5)).abs() < 1e-9);
        t.cache_write_1h_per_mtok = Some(6.0);
        assert!((cost(&u, &t).unwrap() - (1.2 + 0.12 + 0.375 + 0.6 + 1.5)).abs() < 1e-9);
    }

    #[test]
    fn a_cost_is_written_as_the_decimal_it_is() {
        let mut t = ModelTemplate::new(TemplateId::new("t").unwrap(), "t", "u", "m");
        t.input_per_mtok = Some(0.1);
        t.output_per_mtok = Some(15.0);
        let u = Usage {
            prompt: 7,
            completion: 7,
            ..Usage::default()
        };
        // 7 × 0.1 + 7 × 15 µ$ = 0.0001057 $, which plain float arithmetic writes as
        // 0.00010570000000000001.
        assert_eq!(cost(&u, &t).unwrap().to_string(), "0.0001057");
    }

    #[test]
    fn the_assistant_has_its_total_and_its_money_is_added() {
        assert_eq!(add_costs(None, None), None, "unknown is not zero");
        assert_eq!(add_costs(Some(0.5), None), Some(0.5));
        assert_eq!(add_costs(None, Some(0.25)), Some(0.25));
        assert_eq!(add_costs(Some(0.1), Some(0.2)), Some(0.3));
        let mut world = World::default();
        let mut priced = ModelTemplate::new(TemplateId::new("p").unwrap(), "p", "u", "m");
        (priced.input_per_mtok, priced.output_per_mtok) = (Some(3.0), Some(15.0));
        world.model_templates.push(priced);
        let row = |template: &str, calls: u64| AssistRow {
            model: "m".into(),
            template_id: template.into(),
            calls,
            usage: Usage {
                prompt: 1_000_000,
                completion: 100_000,
                ..Usage::default()
            },
            ..AssistRow::default()
        };
        let stats = assist_stats([row("p", 2), row("unpriced", 1)].into_iter(), &world);
        assert_eq!(stats.rows[0].cost_usd, Some(4.5));
        assert_eq!(stats.rows[1].cost_usd, None);
        assert_eq!(
            (
                stats.total.calls,
                stats.total.usage.prompt,
                stats.total.cost_usd
            ),
            (3, 2_000_000, Some(4.5)),
            "the priced rows' money; every row's calls and tokens"
        );
    }

    #[test]
    fn month_periods_close_on_the_closing_day() {
        let tz = TimeZone::UTC;
        let (start, end) = Period::Month {
            year: 2026,
            month: 3,
            closing_day: 20,
        }
        .bounds(&tz)
        .unwrap();
        let day = |m: i8, d: i8| {
            Date::new(2026, m, d)
                .unwrap()
                .to_zoned_datetime(TimeZone::UTC)
                .unwrap()
                .timestamp()
                .as_millisecond()
        };
        assert_eq!((start, end), (day(2, 21), day(3, 21)));
        let (start, end) = Period::Month {
            year: 2026,
            month: 2,
            closing_day: 31,
        }
        .bounds(&tz)
        .unwrap();
        assert_eq!(
            (start, end),
            (day(2, 1), day(3, 1)),
            "31 = calendar month, clamped to February's end"
        );
        assert_eq!(Period::All.bounds(&tz), None);
    }
}
