//! The decoder of `POST /api/commands`: a refused body names the request's field that was wrong
//! (`field`, its JSON path) in our own words, never serde's text (docs/gui-api.md "Errors").
//! The command's `type` and a cast edit's `op` are moved to an outer key before the decode, so
//! that the types are externally tagged and `serde_path_to_error` can follow every field.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use serde_path_to_error::Segment;

use super::error::ApiError;

/// The fix of a body that is not one known command.
const FIX: &str = "send one JSON object with `type` and its fields (docs/gui-api.md)";

/// The code of a present field whose value the command does not take (docs/codes.md).
const FIELD_INVALID: &str = "GUI_FIELD_INVALID";

/// Where the wire has a tag: the command's own, and a command's `edit` (a cast edit's `op`).
const TAG: &str = "type";
const EDIT: &str = "edit";
const EDIT_TAG: &str = "op";

/// Reads one command (any type externally tagged by the variant names of `type` and `op`).
pub(crate) fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "not one JSON object (line {}, column {})",
            e.line(),
            e.column()
        ))
        .with_fix(FIX)
    })?;
    let mut value = retag(value, TAG, "")?;
    if let Some(edit) = value
        .as_object_mut()
        .and_then(|o| o.values_mut().next())
        .and_then(|fields| fields.as_object_mut())
        .and_then(|fields| fields.get_mut(EDIT))
    {
        *edit = retag(std::mem::take(edit), EDIT_TAG, EDIT)?;
    }
    serde_path_to_error::deserialize(value).map_err(|e| refusal(&e))
}

/// `{tag: name, …rest}` → `{name: {…rest}}`.
fn retag(value: Value, tag: &str, at: &str) -> Result<Value, ApiError> {
    let place = join(at, tag);
    let Value::Object(mut fields) = value else {
        return Err(
            ApiError::bad_request(format!("`{}` is not an object", or_body(at))).with_fix(FIX),
        );
    };
    let Some(Value::String(name)) = fields.remove(tag) else {
        return Err(
            ApiError::bad_request(format!("`{place}` is missing or not text"))
                .with_fix(FIX)
                .at(place),
        );
    };
    let mut outer = Map::new();
    outer.insert(name, Value::Object(fields));
    Ok(Value::Object(outer))
}

fn or_body(at: &str) -> &str {
    if at.is_empty() { "the body" } else { at }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The field's JSON path as the page sent it (the variant segments, not on the wire, left out).
fn path_of(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => out = join(&out, key),
            Segment::Enum { .. } => {}
            Segment::Unknown => out = join(&out, "?"),
        }
    }
    out
}

/// The first `` `name` `` of serde's message.
fn quoted(text: &str) -> Option<&str> {
    let start = text.find('`')? + 1;
    let len = text[start..].find('`')?;
    Some(&text[start..start + len])
}

/// A refusal in our words, naming the field; serde's text stays out of the answer.
fn refusal(e: &serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let path = path_of(e.path());
    let inner = e.inner().to_string();
    let name = quoted(&inner).unwrap_or("?");
    if inner.starts_with("missing field") {
        let field = join(&path, name);
        ApiError::bad_request(format!("`{field}` is missing"))
            .with_fix(FIX)
            .at(field)
    } else if inner.starts_with("unknown field") {
        // The path already ends at the unknown key.
        let field = if path == name || path.ends_with(&format!(".{name}")) {
            path
        } else {
            join(&path, name)
        };
        ApiError::bad_request(format!("`{field}` is not a field of this command"))
            .with_fix(FIX)
            .at(field)
    } else if inner.starts_with("unknown variant") {
        let field = join(&path, if path.is_empty() { TAG } else { EDIT_TAG });
        ApiError::bad_request(format!("`{name}` is not a known `{field}`"))
            .with_fix(FIX)
            .at(field)
    } else {
        let takes = expected(&inner);
        ApiError::bad_request(format!(
            "`{path}` does not take this value; it takes {takes}"
        ))
        .with_fix(format!("give `{path}` {takes}"))
        .at(path)
        .coded_as(FIELD_INVALID)
    }
}

/// What serde's `expected …` asks for, in words a person reads.
fn expected(inner: &str) -> &'static str {
    let wanted = inner.rsplit_once("expected ").map_or("", |(_, w)| w);
    let wanted = wanted.split(" at line").next().unwrap_or(wanted);
    match wanted {
        "u8" => "a whole number from 0 to 255",
        "u16" => "a whole number from 0 to 65535",
        "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "a string" => "text",
        "a boolean" => "true or false",
        "a sequence" => "a list",
        w if w.starts_with("struct") || w == "a map" => "an object",
        _ => "the kind of value docs/gui-api.md lists",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(dead_code)]
    #[derive(Debug, serde::Deserialize)]
    #[serde(
        rename_all = "camelCase",
        rename_all_fields = "camelCase",
        deny_unknown_fields
    )]
    enum Cmd {
        Limits { token_budget: Option<u64> },
        Cast { edit: Edit },
    }

    #[allow(dead_code)]
    #[derive(Debug, serde::Deserialize)]
    #[serde(
        rename_all = "camelCase",
        rename_all_fields = "camelCase",
        deny_unknown_fields
    )]
    enum Edit {
        Settings { rounds: Vec<u8> },
    }

    fn refused(body: &str) -> ApiError {
        decode::<Cmd>(body.as_bytes()).unwrap_err()
    }

    #[test]
    fn a_refusal_names_the_field_in_our_words() {
        let e = refused(r#"{"type":"limits","tokenBudget":-5}"#);
        assert_eq!(
            (e.code.as_str(), e.field.as_deref()),
            (FIELD_INVALID, Some("tokenBudget"))
        );
        assert!(!e.message.contains("invalid value"), "{}", e.message);
        assert!(e.message.contains("0 or more"), "{}", e.message);
        let e = refused(r#"{"type":"cast","edit":{"op":"settings","rounds":[1,999]}}"#);
        assert_eq!(e.field.as_deref(), Some("edit.rounds[1]"));
        assert!(e.message.contains("0 to 255"), "{}", e.message);
        let e = refused(r#"{"type":"limits","tokenBudget":"x"}"#);
        assert_eq!(e.field.as_deref(), Some("tokenBudget"));
        for (body, field) in [
            (r#"{"type":"nope"}"#, "type"),
            (r#"{"tokenBudget":1}"#, "type"),
            (r#"{"type":"cast","edit":{"op":"nope"}}"#, "edit.op"),
            (r#"{"type":"cast","edit":{"rounds":[]}}"#, "edit.op"),
            (r#"{"type":"cast","edit":{"op":"settings"}}"#, "edit.rounds"),
            (r#"{"type":"limits","tokenBudget":1,"x":1}"#, "x"),
        ] {
            let e = refused(body);
            assert_eq!(
                (e.code.as_str(), e.field.as_deref()),
                ("GUI_BAD_REQUEST", Some(field)),
                "{body}"
            );
        }
        assert_eq!(refused("{not json").field, None);
        assert!(decode::<Cmd>(br#"{"type":"limits","tokenBudget":null}"#).is_ok());
    }
}
