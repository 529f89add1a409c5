//! Retry timing: exponential backoff with jitter, the provider's own hint
//! (`Retry-After`, `retry-after-ms`, Gemini `RetryInfo.retryDelay`) when it asks for longer, and
//! a ceiling on hints beyond which the call stops instead of waiting.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// A hint longer than this stops the call at once.
pub(crate) const MAX_HINT: Duration = Duration::from_secs(60);
const BASE: Duration = Duration::from_millis(200);
const CAP: Duration = Duration::from_secs(5);

/// Where a hint came from (for the `llm retry:` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HintSource {
    /// No hint.
    None,
    /// A header.
    Header,
    /// The body (Gemini `RetryInfo`).
    Body,
    /// Both (the larger wins).
    Both,
}

impl HintSource {
    /// The spelling in `llm retry:` lines.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "-",
            Self::Header => "header",
            Self::Body => "body",
            Self::Both => "both",
        }
    }
}

/// The wait before attempt `attempt + 1` (attempt counts from 0):
/// `max(min(200 ms · 2^attempt, 5 s), hint) × (1 + 0.1 · u)` with `u` in `[0, 1)`.
pub(crate) fn backoff(attempt: u32, hint: Option<Duration>, u: f64) -> Duration {
    let exp = BASE
        .saturating_mul(1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX))
        .min(CAP);
    let base = hint.map_or(exp, |h| exp.max(h));
    base.mul_f64(1.0 + 0.1 * u.clamp(0.0, 1.0))
}

/// A jitter fraction in `[0, 1)` from FNV-1a over the time, the attempt and the endpoint (no
/// random-number generator needed).
pub(crate) fn jitter(attempt: u32, endpoint: &str) -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    feed(&nanos.to_le_bytes());
    feed(&attempt.to_le_bytes());
    feed(endpoint.as_bytes());
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

/// Parses `Retry-After`: delay seconds (fractions allowed) or an HTTP date (a past date means
/// no wait).
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)));
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses `retry-after-ms`.
pub(crate) fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let ms = value.trim().parse::<f64>().ok()?;
    (ms.is_finite() && ms >= 0.0).then(|| Duration::from_secs_f64(ms.min(1e12) / 1000.0))
}

/// Gemini's hint in the body: `error.details[{"@type": "…RetryInfo", "retryDelay": "34.4s"}]`.
pub fn gemini_retry_delay(body: &Value) -> Option<Duration> {
    let details = body.get("error")?.get("details")?.as_array()?;
    details.iter().find_map(|d| {
        let kind = d.get("@type")?.as_str()?;
        if !kind.ends_with("RetryInfo") {
            return None;
        }
        let delay = d.get("retryDelay")?.as_str()?.trim().strip_suffix('s')?;
        let secs = delay.parse::<f64>().ok()?;
        (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
    })
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn parse_http_date(text: &str) -> Option<SystemTime> {
    let rest = text.split_once(", ").map_or(text, |(_, r)| r);
    let mut parts = rest.split_whitespace();
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':');
    let (h, m, s): (u64, u64, u64) = (
        hms.next()?.parse().ok()?,
        hms.next()?.parse().ok()?,
        hms.next()?.parse().ok()?,
    );
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day)?;
    let secs = days
        .checked_mul(86_400)?
        .checked_add(h * 3600 + m * 60 + s)?;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (after 1970 only).
fn days_from_civil(year: i64, month: u64, day: u64) -> Option<u64> {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    u64::try_from(era * 146_097 + doe - 719_468).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_caps_and_honours_hints() {
        assert_eq!(backoff(0, None, 0.0), Duration::from_millis(200));
        assert_eq!(backoff(3, None, 0.0), Duration::from_millis(1600));
        assert_eq!(backoff(10, None, 0.0), Duration::from_secs(5));
        assert_eq!(
            backoff(0, Some(Duration::from_secs(2)), 0.0),
            Duration::from_secs(2)
        );
        assert_eq!(
            backoff(0, Some(Duration::from_secs(2)), 1.0),
            Duration::from_millis(2200)
        );
        assert_eq!(backoff(40, None, 0.5), Duration::from_millis(5250));
        let u = jitter(1, "http://x");
        assert!((0.0..1.0).contains(&u));
    }

    #[test]
    fn retry_after_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        assert_eq!(parse_retry_after("1", now), Some(Duration::from_secs(1)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(
            parse_retry_after_ms("1500"),
            Some(Duration::from_millis(1500))
        );
    }

    #[test]
    fn gemini_body_hint() {
        let body = serde_json::json!({"error": {"code": 429, "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"}]}});
        assert_eq!(
            gemini_retry_delay(&body),
            Some(Duration::from_millis(34_400))
        );
        assert_eq!(gemini_retry_delay(&serde_json::json!({"error": {}})), None);
    }
}
