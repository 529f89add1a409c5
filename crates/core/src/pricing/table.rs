//! The price table's format (docs/formats/prices.json.md): `asOf` (a date), then per model
//! name its rates in dollars per million tokens; input and output required, the three cache
//! rates optional, each entry may carry its own `asOf`. Fields this version does not know are
//! ignored (a table is read, never written back).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::error::PricingError;

/// One model's rates, dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPrice {
    /// Input (uncached prompt) tokens.
    pub input_per_mtok: f64,
    /// Output tokens.
    pub output_per_mtok: f64,
    /// Cache-read tokens (absent: priced as input).
    #[serde(default)]
    pub cache_read_per_mtok: Option<f64>,
    /// Cache-write tokens, 5 minutes (absent: priced as input).
    #[serde(default)]
    pub cache_write_per_mtok: Option<f64>,
    /// Cache-write tokens, 1 hour (absent: priced as a 5-minute write).
    #[serde(default, rename = "cacheWrite1hPerMtok")]
    pub cache_write_1h_per_mtok: Option<f64>,
    /// When these rates were taken, when not the table's date (`YYYY-MM-DD`).
    #[serde(default)]
    pub as_of: Option<String>,
}

/// A whole price table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceTable {
    /// When the table's rates were taken (`YYYY-MM-DD`).
    pub as_of: String,
    /// Rates by model name (the name a template sends as `model`).
    pub models: BTreeMap<String, ModelPrice>,
}

impl PriceTable {
    /// The date `model`'s rates were taken.
    pub fn as_of_for<'a>(&'a self, price: &'a ModelPrice) -> &'a str {
        price.as_of.as_deref().unwrap_or(&self.as_of)
    }
}

/// Reads a table from `bytes`: JSON of the documented shape, every rate a finite number of 0 or
/// more, every `asOf` a date. The refusal names the field.
pub fn parse_table(bytes: &[u8]) -> Result<PriceTable, PricingError> {
    let text =
        std::str::from_utf8(bytes).map_err(|e| malformed(None, format!("not UTF-8: {e}")))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let table: PriceTable = crate::village::doc::parse_json(Path::new("prices.json"), text, false)
        .map_err(|e| match e {
            crate::village::VillageError::Invalid(invalid) => PricingError::Malformed {
                field: invalid.field,
                line: invalid.line,
                column: invalid.column,
                reason: invalid.reason,
            },
            other => malformed(None, other.to_string()),
        })?;
    check_date("asOf", &table.as_of)?;
    for (model, price) in &table.models {
        let at = |name: &str| format!("models.{model}.{name}");
        let rates = [
            ("inputPerMtok", Some(price.input_per_mtok)),
            ("outputPerMtok", Some(price.output_per_mtok)),
            ("cacheReadPerMtok", price.cache_read_per_mtok),
            ("cacheWritePerMtok", price.cache_write_per_mtok),
            ("cacheWrite1hPerMtok", price.cache_write_1h_per_mtok),
        ];
        for (name, rate) in rates {
            if rate.is_some_and(|r| !(r.is_finite() && r >= 0.0)) {
                return Err(malformed(
                    Some(at(name)),
                    "a rate is a number of 0 or more".into(),
                ));
            }
        }
        if let Some(date) = &price.as_of {
            check_date(&at("asOf"), date)?;
        }
    }
    Ok(table)
}

fn check_date(field: &str, text: &str) -> Result<(), PricingError> {
    text.parse::<jiff::civil::Date>().map(drop).map_err(|_| {
        malformed(
            Some(field.to_owned()),
            format!("{text:?} is not a date (YYYY-MM-DD)"),
        )
    })
}

fn malformed(field: Option<String>, reason: String) -> PricingError {
    PricingError::Malformed {
        field,
        line: None,
        column: None,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Coded;

    #[test]
    fn a_table_reads_and_each_bad_field_is_named() {
        let good = br#"{"asOf": "2026-11-01", "models": {"m": {"inputPerMtok": 3, "outputPerMtok": 15, "cacheReadPerMtok": 0.3, "future": 1}}}"#;
        let table = parse_table(good).unwrap();
        assert_eq!(table.models["m"].cache_read_per_mtok, Some(0.3));
        assert_eq!(table.as_of_for(&table.models["m"]), "2026-11-01");
        let cases: [(&[u8], Option<&str>); 5] = [
            (br#"{"asOf": "2026-11-01", "models": {"m": {"inputPerMtok": -1, "outputPerMtok": 1}}}"#, Some("models.m.inputPerMtok")),
            (br#"{"asOf": "2026-11-01", "models": {"m": {"inputPerMtok": 1}}}"#, Some("models.m")),
            (br#"{"asOf": "yesterday", "models": {}}"#, Some("asOf")),
            (br#"{"asOf": "2026-11-01", "models": {"m": {"inputPerMtok": "1", "outputPerMtok": 1}}}"#, Some("models.m.inputPerMtok")),
            (br#"{"asOf": "2026-11-01", "models": {"#, None),
        ];
        for (body, field) in cases {
            let e = parse_table(body).unwrap_err();
            assert_eq!(e.code(), "PRICING_MALFORMED");
            let PricingError::Malformed { field: got, .. } = &e else {
                panic!("{e:?}")
            };
            assert_eq!(got.as_deref(), field, "{e}");
        }
    }
}
