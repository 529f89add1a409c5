//! The tidy rules of the GUI: its scripts' sizes, and a server that builds no `json!` answer.

use super::{fail, lex, production, read, rust_files, without_tests};

/// The GUI's scripts keep the Rust sources' size rules (read by `tidy_js`). Split a long page
/// into modules (gui/README.md), a long function into named steps or a table.
#[test]
fn no_gui_script_over_800_lines_or_a_function_over_120() {
    let problems =
        crate::tidy_js::oversized(&super::root(), super::MAX_FILE_LINES, super::MAX_FN_LINES);
    fail(
        &problems,
        "no GUI script over 800 lines, no function over 120",
    );
}

/// The GUI server's answers and events are typed (`crates/host/src/gui/contract/`): a `json!`
/// literal there would be a field no type, no doc table and no page check knows.
#[test]
fn the_gui_server_builds_no_json_literal() {
    let problems: Vec<String> = rust_files()
        .into_iter()
        .filter(|f| f.starts_with("crates/host/src/gui/") && production(f))
        .flat_map(|f| {
            let lexed = lex(&read(&f));
            without_tests(&lexed.code)
                .lines()
                .enumerate()
                .filter(|(_, line)| line.contains("json!"))
                .map(|(i, _)| {
                    format!(
                        "{f}:{}: a `json!` answer; build a type of crates/host/src/gui/contract/ instead",
                        i + 1
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    fail(&problems, "the GUI server builds no `json!` literal");
}
