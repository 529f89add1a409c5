//! What a price table does to the model templates: a template whose `model` the table names
//! gets the entry's five rates (a rate the entry lacks is cleared, so the documented fallback
//! applies) and its `pricingAsOf`; any other template is left exactly as it is.

use serde::Serialize;

use super::table::PriceTable;
use crate::village::{ModelTemplate, World};

/// A template's five rates and their date.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rates {
    /// Input, $/Mtok.
    pub input_per_mtok: Option<f64>,
    /// Output, $/Mtok.
    pub output_per_mtok: Option<f64>,
    /// Cache reads, $/Mtok.
    pub cache_read_per_mtok: Option<f64>,
    /// Cache writes (5 minutes), $/Mtok.
    pub cache_write_per_mtok: Option<f64>,
    /// Cache writes (1 hour), $/Mtok.
    #[serde(rename = "cacheWrite1hPerMtok")]
    pub cache_write_1h_per_mtok: Option<f64>,
    /// When they were taken.
    pub pricing_as_of: Option<String>,
}

impl Rates {
    /// The rates a template holds.
    pub fn of(t: &ModelTemplate) -> Self {
        Self {
            input_per_mtok: t.input_per_mtok,
            output_per_mtok: t.output_per_mtok,
            cache_read_per_mtok: t.cache_read_per_mtok,
            cache_write_per_mtok: t.cache_write_per_mtok,
            cache_write_1h_per_mtok: t.cache_write_1h_per_mtok,
            pricing_as_of: t.pricing_as_of.clone(),
        }
    }

    fn put(&self, t: &mut ModelTemplate) {
        t.input_per_mtok = self.input_per_mtok;
        t.output_per_mtok = self.output_per_mtok;
        t.cache_read_per_mtok = self.cache_read_per_mtok;
        t.cache_write_per_mtok = self.cache_write_per_mtok;
        t.cache_write_1h_per_mtok = self.cache_write_1h_per_mtok;
        t.pricing_as_of.clone_from(&self.pricing_as_of);
    }
}

/// What the table does to one template.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum PriceOutcome {
    /// New rates or a new date.
    Updated {
        /// Before.
        before: Box<Rates>,
        /// After.
        after: Box<Rates>,
    },
    /// The table holds what the template already has.
    Unchanged,
    /// The table has no entry for the template's model: left as it is.
    NotInTable,
}

/// One template's line of the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceChange {
    /// The template.
    pub template_id: String,
    /// Its model.
    pub model: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: PriceOutcome,
}

/// What `table` would do to each template of `world`, in the templates' order.
pub fn plan_prices(world: &World, table: &PriceTable) -> Vec<PriceChange> {
    world
        .model_templates
        .iter()
        .map(|t| PriceChange {
            template_id: t.id.as_str().to_owned(),
            model: t.model.clone(),
            outcome: outcome(t, table),
        })
        .collect()
}

fn outcome(t: &ModelTemplate, table: &PriceTable) -> PriceOutcome {
    let Some(price) = table.models.get(t.model.trim()) else {
        return PriceOutcome::NotInTable;
    };
    let after = Rates {
        input_per_mtok: Some(price.input_per_mtok),
        output_per_mtok: Some(price.output_per_mtok),
        cache_read_per_mtok: price.cache_read_per_mtok,
        cache_write_per_mtok: price.cache_write_per_mtok,
        cache_write_1h_per_mtok: price.cache_write_1h_per_mtok,
        pricing_as_of: Some(table.as_of_for(price).to_owned()),
    };
    let before = Rates::of(t);
    if before == after {
        PriceOutcome::Unchanged
    } else {
        PriceOutcome::Updated {
            before: Box::new(before),
            after: Box::new(after),
        }
    }
}

/// Applies `table` to `world`'s templates; gives what it did (as [`plan_prices`]).
pub fn apply_prices(world: &mut World, table: &PriceTable) -> Vec<PriceChange> {
    let changes = plan_prices(world, table);
    for (t, change) in world.model_templates.iter_mut().zip(&changes) {
        if let PriceOutcome::Updated { after, .. } = &change.outcome {
            after.put(t);
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::parse_table;
    use crate::village::TemplateId;

    #[test]
    fn only_templates_of_listed_models_change() {
        let mut world = World::default();
        for (id, model) in [("a", "m1"), ("b", "absent"), ("c", "m2")] {
            let t = ModelTemplate::new(TemplateId::new(id).unwrap(), id, "https://x/v1", model);
            world.model_templates.push(t);
        }
        world.model_templates[2].input_per_mtok = Some(1.0);
        world.model_templates[2].output_per_mtok = Some(2.0);
        world.model_templates[2].pricing_as_of = Some("2026-01-01".into());
        let table = parse_table(
            br#"{"asOf": "2026-11-01", "models": {
            "m1": {"inputPerMtok": 3, "outputPerMtok": 15, "cacheReadPerMtok": 0.3},
            "m2": {"inputPerMtok": 1, "outputPerMtok": 2, "asOf": "2026-01-01"}}}"#,
        )
        .unwrap();
        let before_b = world.model_templates[1].clone();
        let changes = apply_prices(&mut world, &table);
        assert!(matches!(changes[0].outcome, PriceOutcome::Updated { .. }));
        assert_eq!(changes[1].outcome, PriceOutcome::NotInTable);
        assert_eq!(changes[2].outcome, PriceOutcome::Unchanged);
        let a = &world.model_templates[0];
        assert_eq!(
            (
                a.input_per_mtok,
                a.cache_read_per_mtok,
                a.cache_write_per_mtok
            ),
            (Some(3.0), Some(0.3), None)
        );
        assert_eq!(a.pricing_as_of.as_deref(), Some("2026-11-01"));
        assert_eq!(world.model_templates[1], before_b);
    }
}
