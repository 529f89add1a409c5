//! The shape of an answer: its field names, nested, read from serialised samples or from a
//! shape written in docs/gui-api.md (`{id, stats: {uptimeSecs}, nodes: [{x, y}]}`).

use std::collections::BTreeMap;

use serde_json::Value;

/// Fields, lists, or anything (a scalar, or a part the doc does not open).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape {
    Any,
    Object(BTreeMap<String, Shape>),
    List(Box<Shape>),
}

impl Shape {
    /// The union of the shapes of some values (an absent or `null` part takes the other's).
    pub(super) fn of(values: &[Value]) -> Self {
        values
            .iter()
            .map(Self::of_value)
            .fold(Self::Any, Self::merge)
    }

    fn of_value(value: &Value) -> Self {
        match value {
            Value::Object(map) => Self::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), Self::of_value(v)))
                    .collect(),
            ),
            Value::Array(items) => Self::List(Box::new(Self::of(items))),
            _ => Self::Any,
        }
    }

    fn merge(self, other: Self) -> Self {
        match (self, other) {
            (Self::Any, x) | (x, Self::Any) => x,
            (Self::Object(mut a), Self::Object(b)) => {
                for (k, v) in b {
                    let merged = match a.remove(&k) {
                        Some(old) => old.merge(v),
                        None => v,
                    };
                    a.insert(k, merged);
                }
                Self::Object(a)
            }
            (Self::List(a), Self::List(b)) => Self::List(Box::new(a.merge(*b))),
            (x, _) => x,
        }
    }

    /// Where `doc` (a written shape) disagrees with this one, as `path: problem` lines; the
    /// parts `doc` leaves unopened are not compared.
    pub(super) fn disagreements(&self, doc: &Shape, path: &str, out: &mut Vec<String>) {
        match (doc, self) {
            (Shape::Any, _) => {}
            (Shape::List(d), Shape::List(t)) => t.disagreements(d, &format!("{path}[]"), out),
            (Shape::Object(d), Shape::Object(t)) => {
                for k in t.keys().filter(|k| !d.contains_key(*k)) {
                    out.push(format!("{path}.{k}: sent, not in the doc"));
                }
                for k in d.keys().filter(|k| !t.contains_key(*k)) {
                    out.push(format!("{path}.{k}: in the doc, not sent"));
                }
                for (k, dv) in d {
                    if let Some(tv) = t.get(k) {
                        tv.disagreements(dv, &format!("{path}.{k}"), out);
                    }
                }
            }
            (Shape::List(_), _) => out.push(format!("{path}: the doc says a list")),
            (Shape::Object(_), _) => out.push(format!("{path}: the doc says an object")),
        }
    }
}

/// The first `{…}` shape written in `text` (`None` when there is none).
pub(super) fn parse_doc(text: &str) -> Option<Shape> {
    let chars: Vec<char> = text.chars().filter(|c| *c != '`').collect();
    let start = chars.iter().position(|c| *c == '{')?;
    let mut at = start;
    Some(object(&chars, &mut at))
}

/// `{name, name?: value (note), …}` from `chars[*at] == '{'`; leaves `at` past its `}`.
fn object(chars: &[char], at: &mut usize) -> Shape {
    let mut fields = BTreeMap::new();
    *at += 1;
    loop {
        skip_blank(chars, at);
        match chars.get(*at) {
            None => break,
            Some('}') => {
                *at += 1;
                break;
            }
            Some(',') => {
                *at += 1;
                continue;
            }
            _ => {}
        }
        let name: String = chars[*at..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        *at += name.chars().count();
        let mut shape = Shape::Any;
        if chars.get(*at) == Some(&'?') {
            *at += 1;
        }
        skip_blank(chars, at);
        if chars.get(*at) == Some(&':') {
            *at += 1;
            skip_blank(chars, at);
            shape = value(chars, at);
        }
        rest_of_member(chars, at);
        if !name.is_empty() {
            fields.insert(name, shape);
        }
    }
    Shape::Object(fields)
}

fn value(chars: &[char], at: &mut usize) -> Shape {
    match chars.get(*at) {
        Some('{') => object(chars, at),
        Some('[') => {
            *at += 1;
            skip_blank(chars, at);
            let item = if chars.get(*at) == Some(&'{') {
                object(chars, at)
            } else {
                Shape::Any
            };
            skip_group(chars, at, '[', ']', 1);
            match item {
                Shape::Any => Shape::Any,
                item => Shape::List(Box::new(item)),
            }
        }
        _ => Shape::Any,
    }
}

/// Skips a member's words and notes up to its `,` or the object's `}`.
fn rest_of_member(chars: &[char], at: &mut usize) {
    while let Some(c) = chars.get(*at) {
        match c {
            ',' | '}' => return,
            '(' => {
                *at += 1;
                skip_group(chars, at, '(', ')', 1);
            }
            '[' => {
                *at += 1;
                skip_group(chars, at, '[', ']', 1);
            }
            '{' => {
                *at += 1;
                skip_group(chars, at, '{', '}', 1);
            }
            _ => *at += 1,
        }
    }
}

/// Moves past the `close` that ends a group opened `depth` times.
fn skip_group(chars: &[char], at: &mut usize, open: char, close: char, mut depth: usize) {
    while let Some(c) = chars.get(*at) {
        *at += 1;
        if *c == open {
            depth += 1;
        } else if *c == close {
            depth -= 1;
            if depth == 0 {
                return;
            }
        }
    }
}

fn skip_blank(chars: &[char], at: &mut usize) {
    while chars.get(*at).is_some_and(|c| c.is_whitespace()) {
        *at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_shape_reads_with_its_notes_and_lists() {
        let doc = parse_doc(
            "`{a, b: [{c, d?: x\\|y}] (a note, with {braces}), e: {f} \\| null, g: [id]}`: text",
        );
        let want = Shape::Object(BTreeMap::from([
            ("a".into(), Shape::Any),
            (
                "b".into(),
                Shape::List(Box::new(Shape::Object(BTreeMap::from([
                    ("c".into(), Shape::Any),
                    ("d".into(), Shape::Any),
                ])))),
            ),
            (
                "e".into(),
                Shape::Object(BTreeMap::from([("f".into(), Shape::Any)])),
            ),
            ("g".into(), Shape::Any),
        ]));
        assert_eq!(doc, Some(want));
    }
}
