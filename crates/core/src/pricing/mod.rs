//! Price tables (docs/formats/prices.json.md): a static JSON table of per-model rates fetched
//! from the shelf's `pricing.json` source (or a file), bounded in size and time; and how it
//! fills the model templates' five rates and `pricingAsOf` (templates whose model the table
//! lacks are left as they are, and named); and how old the prices behind a stats report are.
//!
//! # Parts
//!
//! Price tables (`docs/formats/prices.json.md`):
//!
//! - `table.rs`: `parse_table`: the table's shape, every rate finite and ≥ 0, every `asOf` a date;
//!   a refusal names the field
//! - `fetch.rs`: `source_of`: `--from` or the shelf's `pricing.json` URL under the endpoint rule —
//!   https, plain http only to loopback; `fetch_table`: no redirects, ≤ 8 MiB counted while read,
//!   15 s for connection and body together; a file under the same size limit
//! - `apply.rs`: `plan_prices` / `apply_prices`: a template whose `model` the table lists gets the
//!   entry's five rates and `pricingAsOf`, every other template is untouched
//! - `age.rs`: `pricing_age`: the oldest `pricingAsOf` of a template that priced a row of a stats
//!   report, in days
//! - `error.rs` (`PricingError`, the `PRICING_*` codes). Invariant: a refused source or table
//!   changes nothing.

mod age;
mod apply;
mod error;
mod fetch;
mod table;

pub use age::{PricingAge, pricing_age};
pub use apply::{PriceChange, PriceOutcome, Rates, apply_prices, plan_prices};
pub use error::PricingError;
pub use fetch::{FetchLimits, MAX_TABLE_BYTES, PriceSource, TIMEOUT, fetch_table, source_of};
pub use table::{ModelPrice, PriceTable, parse_table};
