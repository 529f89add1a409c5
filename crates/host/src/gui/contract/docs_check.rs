//! docs/gui-api.md against the contract: every read and every command of its tables has a type
//! here, and each shape it writes (`{a, b: [{c}]}`) names exactly the fields the type sends
//! at the levels it opens (every command's `ok` is written once, above the table).

#![allow(clippy::unwrap_used)]

use super::samples::{COMMANDS, READS, Shapes};
use super::shape::{Shape, parse_doc};

/// Reads whose answer is not one JSON value.
const NOT_JSON: &[&str] = &["/api/conversations/{id}/export", "/api/events"];

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/gui-api.md");
    std::fs::read_to_string(path).unwrap()
}

/// The rows (cells, trimmed) of the first table under the heading that starts with `heading`.
fn table(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let Some((_, after)) = doc.split_once(heading) else {
        return Vec::new();
    };
    let section = after.split("\n## ").next().unwrap_or("");
    section
        .lines()
        .filter(|l| l.starts_with("| `") && !l.starts_with("| `type` |"))
        .map(|l| {
            let mut cells = Vec::new();
            let mut cell = String::new();
            let mut escaped = false;
            for c in l.trim().trim_matches('|').chars() {
                match c {
                    '|' if !escaped => cells.push(std::mem::take(&mut cell).trim().to_owned()),
                    _ => cell.push(c),
                }
                escaped = c == '\\';
            }
            cells.push(cell.trim().to_owned());
            cells
        })
        .collect()
}

fn name(cell: &str) -> String {
    cell.trim_matches('`').to_owned()
}

/// Each row's shape compared with its type's (`skip`: a field written once elsewhere).
fn compare(rows: &[(String, String)], types: &[(&str, Shapes)], skip: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (key, answer) in rows {
        let Some((_, samples)) = types.iter().find(|(k, _)| k == key) else {
            problems.push(format!(
                "{key}: in docs/gui-api.md, no type in the contract"
            ));
            continue;
        };
        let mut sent = Shape::of(&samples());
        if let Shape::Object(fields) = &mut sent {
            fields.remove(skip);
        }
        match parse_doc(answer) {
            None => problems.push(format!("{key}: the doc writes no `{{…}}` shape")),
            Some(written) => sent.disagreements(&written, key, &mut problems),
        }
    }
    for (key, _) in types {
        if !rows.iter().any(|(k, _)| k == key) {
            problems.push(format!("{key}: a contract type, not in docs/gui-api.md"));
        }
    }
    problems
}

#[test]
fn every_read_of_the_doc_is_its_type() {
    let rows: Vec<(String, String)> = table(&doc(), "## Reads")
        .into_iter()
        .map(|cells| (name(&cells[0]), cells[1].clone()))
        .filter(|(path, _)| !NOT_JSON.contains(&path.as_str()))
        .collect();
    let problems = compare(&rows, READS, "");
    assert!(
        problems.is_empty(),
        "docs/gui-api.md Reads disagree with gui/contract:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn every_command_answer_of_the_doc_is_its_type() {
    let rows: Vec<(String, String)> = table(&doc(), "## Commands")
        .into_iter()
        .map(|cells| {
            let answer = match cells[2].as_str() {
                "—" => "{}".to_owned(),
                other => other.to_owned(),
            };
            (name(&cells[0]), answer)
        })
        .collect();
    for (_, samples) in COMMANDS {
        for sample in samples() {
            assert_eq!(sample["ok"], serde_json::Value::Bool(true), "{sample}");
        }
    }
    let problems = compare(&rows, COMMANDS, "ok");
    assert!(
        problems.is_empty(),
        "docs/gui-api.md Commands disagree with gui/contract:\n  {}",
        problems.join("\n  ")
    );
}
