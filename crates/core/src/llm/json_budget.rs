//! How many JSON values a text would become: a byte scan (strings skipped) that counts the
//! structural characters `,` `[` `{`, so that a body or an arguments string that would expand
//! into millions of `serde_json::Value`s (32 bytes and more each: a 6 MB array of zeros took
//! 1.1 GB) is refused before it is parsed.

/// The most JSON values one model answer, or one tool call's arguments, may hold.
pub(crate) const MAX_JSON_VALUES: usize = 100_000;

/// Whether `bytes` would parse into more than `limit` values (roughly: commas, arrays and
/// objects outside strings, plus one).
pub(crate) fn over_value_budget(bytes: &[u8], limit: usize) -> bool {
    values_within(bytes, limit).is_none()
}

/// How many values `bytes` would parse into, when that is at most `limit`.
pub(crate) fn values_within(bytes: &[u8], limit: usize) -> Option<usize> {
    let (mut count, mut in_string, mut escaped) = (1usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                count += 1;
                if count > limit {
                    return None;
                }
            }
            _ => {}
        }
    }
    (count <= limit).then_some(count)
}

#[cfg(test)]
mod tests {
    use super::over_value_budget;

    #[test]
    fn structure_counts_and_strings_do_not() {
        assert!(!over_value_budget(br#"{"a": [1, 2, 3]}"#, 10));
        assert!(over_value_budget(br#"[0,0,0,0,0,0,0,0,0,0,0,0]"#, 10));
        assert!(!over_value_budget(
            br#"{"text": ",,,,,,,,,,,,,,,,,,,,[[[{{{"}"#,
            10
        ));
        assert!(!over_value_budget(
            br#"{"t": "a\",,,,,,,,,,,,,,,,\\", "u": 1}"#,
            10
        ));
    }
}
