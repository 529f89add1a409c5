//! The starter `judge.toml` of a new judge (docs/formats/judge.toml.md): one choice question with
//! an `other` option, a `kind == other` → return rule first, one routing rule, then
//! `[otherwise] do = "return"`. Bilingual; it parses once the routing target exists.

use crate::village::Language;

/// The starter file, routing its one rule to `servant` (a servant id of the village).
pub fn starter_template(servant: &str, language: Language) -> String {
    let (ask, bug, other, note_other, note_else) = match language {
        Language::Ja => (
            "この依頼はどの種類ですか?",
            "不具合の報告",
            "それ以外",
            "この判定では扱わない依頼です。",
            "どのルールにも当てはまりませんでした。",
        ),
        Language::En => (
            "What kind of request is this?",
            "a bug report",
            "anything else",
            "This judge does not handle such requests.",
            "No rule matched.",
        ),
    };
    let servant = servant.replace(['"', '\\'], "");
    format!(
        "[questions.kind]\ntype = \"choice\"\nask = \"{ask}\"\noptions = {{ bug = \"{bug}\", other = \"{other}\" }}\n\n\
[[rules]]\nwhen = \"kind == other\"\ndo = \"return\"\nnote = \"{note_other}\"\n\n\
[[rules]]\nwhen = \"kind == bug and kind.p >= 0.6\"\nto = [\"{servant}\"]\n\n\
[otherwise]\ndo = \"return\"\nnote = \"{note_else}\"\n"
    )
}
