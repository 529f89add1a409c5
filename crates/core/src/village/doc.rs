//! One way to read and write every JSON file of the village and the shelf: parse with the field
//! path and position of any error, normalise (with notices), check the rules, and on write
//! refuse to replace a file that could not be read.

use std::fs;
use std::io;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::atomic::{self, Permissions};
use super::error::{InvalidFile, VillageError};
use super::notice::{Loaded, Notes};

/// A JSON file of the village or the shelf.
pub(crate) trait JsonDoc: Serialize + DeserializeOwned {
    /// True when the file may hold a secret (a token, a header, an environment value): values
    /// are then hidden from parse errors, and the file is written readable by the owner only.
    const MAY_HOLD_SECRETS: bool = false;

    /// True when the file is a JSON array at the top level (`schedules.json`); else it is an
    /// object. A file of the other shape is told so, at its first character.
    const ARRAY: bool = false;

    /// Applies the read rules (defaults, clamps, dropped names), noting each adjustment.
    fn normalize(&mut self, _notes: &mut Notes<'_>) {}

    /// Checks the rules a readable file must follow.
    fn validate(&self, _file: &Path) -> Result<(), VillageError> {
        Ok(())
    }

    /// Checks the rules before a write; by default the read rules. Writes may be stricter
    /// (a value that a read would silently reset is refused instead).
    fn validate_for_write(&self, file: &Path) -> Result<(), VillageError> {
        self.validate(file)
    }
}

/// What a read does when the file is absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WhenMissing {
    /// An absent file is an error ([`VillageError::Missing`]).
    Fail,
    /// An absent file reads as the type's default.
    Default,
}

/// Reads a text file; `None` when it does not exist.
pub(crate) fn read_text(file: &Path) -> Result<Option<String>, VillageError> {
    let bytes = match fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(VillageError::unreadable(file, e)),
    };
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Some(text.to_owned())),
        Err(e) => {
            let (line, column) = position_of(bytes, e.valid_up_to());
            Err(VillageError::Invalid(Box::new(InvalidFile {
                file: file.to_path_buf(),
                line: Some(line),
                column: Some(column),
                field: None,
                reason: "the file is not UTF-8 text".into(),
                fix: "save the file as UTF-8".into(),
            })))
        }
    }
}

fn position_of(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
    (line, column)
}

/// Reads, parses, normalises and validates one JSON file.
pub(crate) fn load<T: JsonDoc + Default>(
    file: &Path,
    when_missing: WhenMissing,
) -> Result<Loaded<T>, VillageError> {
    let Some(text) = read_text(file)? else {
        return match when_missing {
            WhenMissing::Fail => Err(VillageError::Missing {
                file: file.to_path_buf(),
            }),
            WhenMissing::Default => Ok(Loaded {
                value: T::default(),
                notices: Vec::new(),
            }),
        };
    };
    parse_text(file, &text)
}

/// Parses, normalises and validates JSON text that was read from `file`.
pub(crate) fn parse_text<T: JsonDoc>(file: &Path, text: &str) -> Result<Loaded<T>, VillageError> {
    let mut value: T = parse_json(file, text, T::MAY_HOLD_SECRETS)
        .map_err(|e| wrong_top_level(file, text, T::ARRAY).unwrap_or(e))?;
    let mut notes = Notes::new(file);
    value.normalize(&mut notes);
    value.validate(file)?;
    Ok(Loaded {
        value,
        notices: notes.into_vec(),
    })
}

/// The error of valid JSON whose top level is not the file's shape (an array where an object
/// belongs, or the reverse): serde's own words (`invalid type: map, expected a sequence`) name
/// neither the file's shape nor the place. `None` when the shape is right.
fn wrong_top_level(file: &Path, text: &str, array: bool) -> Option<VillageError> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let kind = match &value {
        serde_json::Value::Array(_) if array => return None,
        serde_json::Value::Object(_) if !array => return None,
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::Bool(_) => "true or false",
        serde_json::Value::Null => "null",
    };
    // What comes before the first character is JSON whitespace, one byte a character.
    let start = text.len() - text.trim_start().len();
    let (line, column) = position_of(text.as_bytes(), start);
    let (expected, fix) = if array {
        (
            "a JSON array `[…]`",
            "write the file as a JSON array `[ … ]` of entries (`[]` holds none), as its page in docs/formats/ shows",
        )
    } else {
        (
            "a JSON object `{…}`",
            "write the file as a JSON object `{ … }`, as its page in docs/formats/ shows",
        )
    };
    Some(VillageError::Invalid(Box::new(InvalidFile {
        file: file.to_path_buf(),
        line: Some(line),
        column: Some(column),
        field: None,
        reason: format!("the top level is {kind}; this file must be {expected}"),
        fix: fix.to_owned(),
    })))
}

/// Validates and writes one JSON file (atomically unless `mode` is staged). A file on disk that does not read cleanly is
/// never replaced.
pub(crate) fn save<T: JsonDoc>(
    file: &Path,
    value: &T,
    mode: atomic::WriteMode,
) -> Result<(), VillageError> {
    value.validate_for_write(file)?;
    refuse_over_unreadable::<T>(file)?;
    let bytes = to_pretty_json(value).map_err(|e| VillageError::write_failed(file, e))?;
    ensure_parent(file)?;
    let permissions = if T::MAY_HOLD_SECRETS {
        Permissions::OwnerOnly
    } else {
        Permissions::KeepExisting
    };
    atomic::write_as(mode, file, &bytes, permissions)
        .map_err(|e| VillageError::write_failed(file, e))
}

/// Serialises like the original: two-space indentation, one trailing newline.
pub(crate) fn to_pretty_json<T: Serialize>(value: &T) -> io::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    bytes.push(b'\n');
    Ok(bytes)
}

pub(crate) fn ensure_parent(file: &Path) -> Result<(), VillageError> {
    match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => {
            fs::create_dir_all(parent).map_err(|e| VillageError::write_failed(file, e))
        }
        _ => Ok(()),
    }
}

fn refuse_over_unreadable<T: JsonDoc>(file: &Path) -> Result<(), VillageError> {
    let text = match read_text(file) {
        Ok(None) => return Ok(()),
        Ok(Some(text)) => text,
        Err(e) => return Err(refusal(file, &e)),
    };
    match parse_text::<T>(file, &text) {
        Ok(_) => Ok(()),
        Err(e) => Err(refusal(file, &e)),
    }
}

pub(crate) fn refusal(file: &Path, cause: &VillageError) -> VillageError {
    let reason = match cause {
        VillageError::Invalid(invalid) => {
            let at = match (invalid.line, invalid.column) {
                (Some(l), Some(c)) => format!(" at {l}:{c}"),
                _ => String::new(),
            };
            format!("{}{at}: {}", cause.code(), invalid.reason)
        }
        VillageError::Rule(rule) => format!("{}: {}", rule.code.as_str(), rule.reason),
        other => other.code().to_owned(),
    };
    VillageError::WriteRefused {
        file: file.to_path_buf(),
        reason,
    }
}

/// Parses JSON into `T`, turning any failure into [`VillageError::Invalid`] with the position,
/// the field path and a fix.
pub(crate) fn parse_json<T: DeserializeOwned>(
    file: &Path,
    text: &str,
    hide_values: bool,
) -> Result<T, VillageError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|err| {
        // A type error may come before a syntax error further on (`{not json` read as a
        // list is "a map" first): a file that is not JSON at all is told that, at its place.
        if !err.inner().is_syntax()
            && !err.inner().is_eof()
            && let Err(syntax) = serde_json::from_str::<serde::de::IgnoredAny>(text)
            && (syntax.is_syntax() || syntax.is_eof())
        {
            return VillageError::Invalid(Box::new(describe(file, text, "", &syntax, hide_values)));
        }
        let path = err.path().to_string();
        VillageError::Invalid(Box::new(describe(
            file,
            text,
            &path,
            err.inner(),
            hide_values,
        )))
    })?;
    // Trailing characters after the document are an error too.
    de.end().map_err(|err| {
        VillageError::Invalid(Box::new(describe(file, text, "", &err, hide_values)))
    })?;
    Ok(value)
}

/// serde_json counts a column in bytes; people and the editor count characters, as the judge
/// parser does. The byte column of `line` (1-based) becomes a character column.
fn char_column(text: &str, line: usize, byte_column: usize) -> usize {
    let Some(row) = text.split('\n').nth(line.saturating_sub(1)) else {
        return byte_column;
    };
    let mut end = byte_column.min(row.len());
    while !row.is_char_boundary(end) {
        end -= 1;
    }
    let partial = usize::from(end < byte_column.min(row.len()));
    row[..end].chars().count() + partial + byte_column.saturating_sub(row.len())
}

fn describe(
    file: &Path,
    text: &str,
    path: &str,
    err: &serde_json::Error,
    hide_values: bool,
) -> InvalidFile {
    let (line, byte_column) = (err.line(), err.column());
    let mut reason = err.to_string();
    let suffix = format!(" at line {line} column {byte_column}");
    let column = char_column(text, line, byte_column);
    if let Some(stripped) = reason.strip_suffix(&suffix) {
        reason = stripped.to_owned();
    }
    if hide_values {
        reason = hide_quoted_values(&reason);
    }
    let category = err.classify();
    let syntax = matches!(
        category,
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    );
    if syntax {
        reason = format!("not valid JSON: {reason}");
    }
    // serde_json gives column 0 for an error before the first character of a line is read;
    // columns here are 1-based (`docs/formats/README.md`).
    let column = column.max(1);
    // serde_path_to_error writes `?` for a segment it could not name; a syntax error has no
    // field, only a position.
    let path = path.trim_end_matches(".?").trim_end_matches('?');
    let field = (!syntax && !path.is_empty() && path != ".").then(|| path.to_owned());
    let fix = match category {
        serde_json::error::Category::Syntax => format!(
            "correct the JSON syntax at line {line}, column {column} (a missing comma, quote or bracket is the usual cause), or restore the file from a backup"
        ),
        serde_json::error::Category::Eof => {
            "the file ends too early: complete it or restore it from a backup".to_owned()
        }
        serde_json::error::Category::Data => match &field {
            Some(f) => format!("give `{f}` a value of the expected kind, as the reason says"),
            None => "give the file the expected shape, as the reason says".to_owned(),
        },
        serde_json::error::Category::Io => "check that the file is readable".to_owned(),
    };
    InvalidFile {
        file: file.to_path_buf(),
        line: (line > 0).then_some(line),
        column: (line > 0).then_some(column),
        field,
        reason,
        fix,
    }
}

/// Hides the values that serde quotes in its messages (`invalid type: string "…"`, ``unknown
/// variant `…` ``) but keeps field names and the list of expected values, which are never
/// secret.
fn hide_quoted_values(message: &str) -> String {
    let (head, tail) = match message.find(", expected") {
        Some(i) => message.split_at(i),
        None => (message, ""),
    };
    let value_in_backticks = head.starts_with("unknown variant");
    let mut out = String::with_capacity(message.len());
    let mut inside: Option<char> = None;
    for ch in head.chars() {
        match inside {
            Some(close) if ch == close => {
                out.push('…');
                out.push(ch);
                inside = None;
            }
            Some(_) => {}
            None if ch == '"' || (ch == '`' && value_in_backticks) => {
                out.push(ch);
                inside = Some(ch);
            }
            None => out.push(ch),
        }
    }
    if inside.is_some() {
        out.push('…');
    }
    out.push_str(tail);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_values_but_keeps_expectations() {
        assert_eq!(
            hide_quoted_values("invalid type: string \"sk-secret\", expected u16"),
            "invalid type: string \"…\", expected u16"
        );
        assert_eq!(
            hide_quoted_values("unknown variant `sk-x`, expected `http` or `stdio`"),
            "unknown variant `…`, expected `http` or `stdio`"
        );
        assert_eq!(
            hide_quoted_values("missing field `url`"),
            "missing field `url`"
        );
    }

    #[test]
    fn json_columns_count_characters_not_bytes() {
        let at = |text: &str| {
            let err = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
            char_column(text, err.line(), err.column())
        };
        let ascii = at("{\"a\": \"abcd\", x}");
        assert_eq!(at("{\"a\": \"おはよう\", x}"), ascii);
        assert_eq!(at("[1,\n \"é\", x]"), at("[1,\n \"e\", x]"));
        assert_eq!(char_column("ab", 1, 9), 9, "past the end: as many as past");
        assert_eq!(char_column("ab", 5, 3), 3, "no such line: as given");
    }

    #[test]
    fn positions_count_lines_and_columns() {
        assert_eq!(position_of(b"ab\ncd", 4), (2, 2));
        assert_eq!(position_of(b"abc", 0), (1, 1));
    }
}
