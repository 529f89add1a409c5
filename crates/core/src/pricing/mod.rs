//! Price tables (docs/formats/prices.json.md): a static JSON table of per-model rates fetched
//! from the shelf's `pricing.json` source (or a file), bounded in size and time; and how it
//! fills the model templates' five rates and `pricingAsOf` (templates whose model the table
//! lacks are left as they are, and named); and how old the prices behind a stats report are.

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
