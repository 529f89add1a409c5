//! How stale the `≈ $` of a stats report is: the oldest `pricingAsOf` among the templates that
//! priced one of its rows (turn rows by model, the assistant's rows by template, as
//! `stats::aggregate` prices them), and its age in days.

use jiff::civil::Date;
use serde::Serialize;

use crate::stats::StatsReport;
use crate::village::{ModelTemplate, World};

/// The oldest price date behind a report's `≈ $`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PricingAge {
    /// The oldest `pricingAsOf` used (`YYYY-MM-DD`).
    pub pricing_as_of: String,
    /// Whole days from it to `today` (0 when it is today or later).
    pub pricing_age_days: i64,
}

/// The age of the prices behind `report`'s costs on `today`; `None` when no priced row's
/// template carries a date (`pricingAsOf` absent or not a `YYYY-MM-DD` date).
pub fn pricing_age(report: &StatsReport, world: &World, today: Date) -> Option<PricingAge> {
    let by_model = |model: &str| world.model_templates.iter().find(|t| t.model == model);
    let by_id = |id: &str| world.model_templates.iter().find(|t| t.id.as_str() == id);
    let turns = report
        .rows
        .iter()
        .filter(|r| r.cost_usd.is_some())
        .filter_map(|r| by_model(&r.model));
    let assist = report
        .assist
        .rows
        .iter()
        .filter(|a| a.cost_usd.is_some())
        .filter_map(|a| by_id(&a.template_id));
    let oldest = turns.chain(assist).filter_map(dated).min()?;
    let days = (today - oldest).get_days();
    Some(PricingAge {
        pricing_as_of: oldest.to_string(),
        pricing_age_days: i64::from(days.max(0)),
    })
}

/// A template's price date, read from the start of `pricingAsOf` (`2026-11-01`, or a longer
/// timestamp that begins with a date).
fn dated(t: &ModelTemplate) -> Option<Date> {
    let text = t.pricing_as_of.as_deref()?.trim();
    text.get(..10)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::StatsRow;
    use crate::village::TemplateId;

    #[test]
    fn the_oldest_date_of_a_template_that_priced_a_row_counts() {
        let mut world = World::default();
        for (id, model, date) in [
            ("a", "m1", "2026-11-01"),
            ("b", "m2", "2026-01-01"),
            ("c", "m3", "2025-01-01"),
        ] {
            let mut t = ModelTemplate::new(TemplateId::new(id).unwrap(), id, "https://x/v1", model);
            t.pricing_as_of = Some(date.into());
            world.model_templates.push(t);
        }
        let row = |model: &str, cost: Option<f64>| StatsRow {
            model: model.into(),
            cost_usd: cost,
            ..StatsRow::default()
        };
        let report = StatsReport {
            // m3 has the oldest date but priced nothing: it does not count.
            rows: vec![row("m1", Some(1.0)), row("m2", Some(0.5)), row("m3", None)],
            ..StatsReport::default()
        };
        let today: Date = "2026-12-03".parse().unwrap();
        let age = pricing_age(&report, &world, today).unwrap();
        assert_eq!(
            (age.pricing_as_of.as_str(), age.pricing_age_days),
            ("2026-01-01", 336)
        );
        assert_eq!(pricing_age(&StatsReport::default(), &world, today), None);
    }
}
