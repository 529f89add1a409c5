//! Fetching prices, the one path of the CLI's `pricing fetch` and the GUI's "Fetch prices":
//! the source (`--from`, or the shelf's `pricing.json`), the table fetched within its limits
//! and read, then the templates of listed models filled in one `update_world` (atomic, unknown
//! fields kept; nothing written when nothing changes, nor when anything is refused), its
//! audit line, and a `pricing fetch:` log line either way.

use std::path::Path;

use fuseforks_core::log::LogSink;
use fuseforks_core::orchestrator::Orchestrator;
use fuseforks_core::pricing::{
    FetchLimits, PriceChange, PriceOutcome, PricingError, apply_prices, fetch_table, parse_table,
    plan_prices, source_of,
};
use fuseforks_core::safety::Channel;
use fuseforks_core::village::{ShelfStore, VillageError};
use fuseforks_core::{Coded, CoreError};
use serde::Serialize;

/// What a fetch did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PricingReport {
    /// The source (a file's path, a URL without its query).
    pub source: String,
    /// The table's date.
    pub as_of: String,
    /// Models the table lists.
    pub models: usize,
    /// Each template, in `world.json`'s order.
    pub templates: Vec<PriceChange>,
    /// `world.json` was written (some template changed).
    pub written: bool,
}

/// Why a fetch wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum PricingFailure {
    /// The source or the table.
    #[error(transparent)]
    Pricing(#[from] PricingError),
    /// `pricing.json` does not read.
    #[error(transparent)]
    Shelf(#[from] VillageError),
    /// The write of `world.json` was refused.
    #[error(transparent)]
    Core(#[from] CoreError),
}

impl Coded for PricingFailure {
    fn code(&self) -> &'static str {
        match self {
            Self::Pricing(e) => e.code(),
            Self::Shelf(e) => e.code(),
            Self::Core(e) => e.code(),
        }
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        match self {
            Self::Pricing(e) => e.fix(),
            Self::Shelf(e) => e.fix(),
            Self::Core(e) => e.fix(),
        }
    }
}

/// Fetches the table from `from` (a URL or a file) or the shelf's source, and fills the
/// templates of the models it lists; `channel` marks the audit line.
pub async fn fetch_prices(
    orch: &Orchestrator,
    data_dir: &Path,
    from: Option<&str>,
    limits: FetchLimits,
    (log, channel): (&dyn LogSink, Channel),
) -> Result<PricingReport, PricingFailure> {
    let done = fetch_and_apply(orch, data_dir, from, limits, channel).await;
    let line = match &done {
        Ok(r) => {
            let count =
                |f: fn(&PriceOutcome) -> bool| r.templates.iter().filter(|c| f(&c.outcome)).count();
            format!(
                "pricing fetch: from={} models={} updated={} unchanged={} not_in_table={} outcome=ok",
                channel.as_str(),
                r.models,
                count(|o| matches!(o, PriceOutcome::Updated { .. })),
                count(|o| matches!(o, PriceOutcome::Unchanged)),
                count(|o| matches!(o, PriceOutcome::NotInTable)),
            )
        }
        Err(e) => format!(
            "pricing fetch: from={} outcome={}",
            channel.as_str(),
            e.code()
        ),
    };
    log.line(&line);
    done
}

async fn fetch_and_apply(
    orch: &Orchestrator,
    data_dir: &Path,
    from: Option<&str>,
    limits: FetchLimits,
    channel: Channel,
) -> Result<PricingReport, PricingFailure> {
    let shelf_url = match from {
        Some(_) => String::new(),
        None => ShelfStore::new(data_dir).load_pricing_source()?.value.url,
    };
    let source = source_of(from, &shelf_url)?;
    let bytes = fetch_table(&source, limits).await?;
    let table = parse_table(&bytes)?;
    let mut templates = plan_prices(&orch.world(), &table);
    let written = templates
        .iter()
        .any(|c| matches!(c.outcome, PriceOutcome::Updated { .. }));
    if written {
        orch.update_world(|w| {
            templates = apply_prices(w, &table);
            Ok(())
        })?;
        crate::world_edit::audit_saved(orch, "world.json", channel).await;
    }
    Ok(PricingReport {
        source: source.label(),
        as_of: table.as_of.clone(),
        models: table.models.len(),
        templates,
        written,
    })
}
