//! `fuseforks-cli pricing fetch --data-dir D [--from FILE|URL] [--json]`: reads the static
//! price table (docs/formats/prices.json.md) from `--from` or the shelf's `pricing.json`, and
//! fills the five rates and `pricingAsOf` of every template whose model it lists, through the
//! host's one path (`fuseforks_host::pricing`, as the GUI's "Fetch prices"): the village opened
//! under its lock (exit 4 while a process holds it), `world.json` written atomically or not at
//! all. Prints each template's outcome.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use fuseforks_core::Coded;
use fuseforks_core::pricing::{FetchLimits, PriceOutcome, PricingError, Rates};
use fuseforks_core::safety::Channel;
use fuseforks_host::pricing::{PricingFailure, PricingReport, fetch_prices};
use fuseforks_host::{HostPaths, SecretSource};

use super::world_edit::{EditPlace, for_core_error, print_json};
use crate::exit;
use crate::output::Out;
use crate::terminal::for_stdout;

/// Arguments of `pricing`.
#[derive(Debug, Args)]
pub(crate) struct PricingArgs {
    #[command(subcommand)]
    pub action: PricingAction,
}

/// What `pricing` does.
#[derive(Debug, Subcommand)]
pub(crate) enum PricingAction {
    /// Fetch the price table and fill the templates of the models it lists.
    Fetch(FetchArgs),
}

/// Arguments of `pricing fetch`.
#[derive(Debug, Args)]
pub(crate) struct FetchArgs {
    /// A file, or an https:// URL (http:// only to this machine), instead of the source in
    /// DATA_DIR/pricing.json.
    #[arg(long, value_name = "FILE|URL")]
    pub from: Option<String>,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// The fetch's time limit in milliseconds, for tests (at most the 15 s default).
    #[arg(long, hide = true, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    #[command(flatten)]
    pub place: EditPlace,
}

/// Runs `pricing`.
pub(crate) fn run(args: &PricingArgs, out: &Out) -> u8 {
    let PricingAction::Fetch(args) = &args.action;
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            out.cli("error", "RUNTIME_FAILED", &e.to_string(), None);
            return exit::CORE_ERROR;
        }
    };
    let mut limits = FetchLimits::default();
    if let Some(ms) = args.timeout_ms {
        limits.timeout = limits.timeout.min(Duration::from_millis(ms));
    }
    let paths = HostPaths::new(&args.place.data_dir);
    let secrets = match args.place.secrets {
        super::headless::SecretsArg::Keyring => SecretSource::Keyring,
        super::headless::SecretsArg::Env => SecretSource::Env,
    };
    let done = runtime.block_on(async {
        let host = fuseforks_host::world_edit::open_for_edit(&paths, secrets, None)
            .map_err(|e| (exit::for_host_error(&e), Box::new(e) as Box<dyn Coded>))?;
        let data_dir: PathBuf = paths.data_dir().to_path_buf();
        let log = (&*host.log, Channel::Cli);
        fetch_prices(
            &host.orchestrator,
            &data_dir,
            args.from.as_deref(),
            limits,
            log,
        )
        .await
        .map_err(|e| (exit_for(&e), Box::new(e) as Box<dyn Coded>))
    });
    match done {
        Ok(report) if args.json => print_json(&report, out),
        Ok(report) => {
            out.result(&for_stdout(&as_text(&report)));
            exit::OK
        }
        Err((code, e)) => {
            out.error(&*e);
            code
        }
    }
}

/// A source the rule refuses is a usage error (2), a slow one timed out (7); a table that
/// does not come or does not read is 1; an unreadable `pricing.json` is 5.
fn exit_for(e: &PricingFailure) -> u8 {
    match e {
        PricingFailure::Pricing(
            PricingError::Insecure { .. } | PricingError::InvalidSource { .. },
        ) => exit::USAGE,
        PricingFailure::Pricing(PricingError::TimedOut { .. }) => exit::TIMED_OUT,
        PricingFailure::Pricing(_) => exit::CORE_ERROR,
        PricingFailure::Shelf(v) => exit::for_village_error(v),
        PricingFailure::Core(c) => for_core_error(c),
    }
}

fn as_text(report: &PricingReport) -> String {
    let mut text = format!(
        "prices from {} as of {} ({} models)\n",
        report.source, report.as_of, report.models
    );
    for t in &report.templates {
        let name = format!("{} ({})", t.template_id, t.model);
        let line = match &t.outcome {
            PriceOutcome::Updated { before, after } => {
                format!("updated {name}: {}", rate_changes(before, after))
            }
            PriceOutcome::Unchanged => format!("unchanged {name}"),
            PriceOutcome::NotInTable => format!("not in the table {name}: left as it is"),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(if report.written {
        "world.json written\n"
    } else {
        "nothing changed: world.json not written\n"
    });
    text
}

fn rate_changes(before: &Rates, after: &Rates) -> String {
    let show = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| x.to_string());
    let rates = [
        ("input", before.input_per_mtok, after.input_per_mtok),
        ("output", before.output_per_mtok, after.output_per_mtok),
        (
            "cache read",
            before.cache_read_per_mtok,
            after.cache_read_per_mtok,
        ),
        (
            "cache write",
            before.cache_write_per_mtok,
            after.cache_write_per_mtok,
        ),
        (
            "cache write 1h",
            before.cache_write_1h_per_mtok,
            after.cache_write_1h_per_mtok,
        ),
    ];
    let mut parts: Vec<String> = rates
        .into_iter()
        .filter(|(_, b, a)| b != a)
        .map(|(name, b, a)| format!("{name} {} → {} $/Mtok", show(b), show(a)))
        .collect();
    if before.pricing_as_of != after.pricing_as_of {
        let date = |d: &Option<String>| d.clone().unwrap_or_else(|| "-".into());
        parts.push(format!(
            "as of {} → {}",
            date(&before.pricing_as_of),
            date(&after.pricing_as_of)
        ));
    }
    parts.join(", ")
}
