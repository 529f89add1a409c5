//! What a read of a village or shelf file adjusted (a [`Notice`]: a value defaulted or
//! clamped, a name dropped, …) as a preflight warning, in the village language: its code, the
//! file and field, what the read did instead, and the fix. `docs/formats/README.md` says a
//! read "reports a notice"; this is how `check`, `ask` and `serve` report it.

use super::{Finding, Level};
use crate::village::{Language, Notice, NoticeCode};

/// One read notice as a warning. `file` is the file as it is shown (relative to the data
/// folder); the message keeps the read's own words, which never hold a secret value.
pub fn notice_finding(notice: &Notice, file: &str, language: Language) -> Finding {
    let field = notice.field.as_str();
    let detail = notice.message.as_str();
    let message = language.pick(
        format!("{file} の `{field}` は書かれた通りには読まれません: {detail}"),
        format!("{file}, field `{field}`, is not read as written: {detail}"),
    );
    let fix = fix(notice.code, file, field, language);
    Finding {
        level: Level::Warn,
        code: notice.code.as_str(),
        message,
        fix,
        file: Some(file.to_owned()),
        field: Some(field.to_owned()),
        remedy: None,
    }
}

/// The fix of each kind of adjustment (the fix column of `docs/codes.md`).
fn fix(code: NoticeCode, file: &str, field: &str, l: Language) -> String {
    match code {
        NoticeCode::ValueDefaulted => l.pick(
            format!("{file} の `{field}` を範囲内の値に直すか、消して既定値にしてください。"),
            format!(
                "Write a value in range for `{field}` in {file}, or remove the field to use the default."
            ),
        ),
        NoticeCode::ValueClamped => l.pick(
            format!("{file} の `{field}` を範囲内の値に直してください。"),
            format!("Write a value in range for `{field}` in {file}."),
        ),
        NoticeCode::NameDropped => l.pick(
            format!("{file} の `{field}` を制御文字の無い 1〜64 文字の名前にするか、消してください。"),
            format!(
                "Write `{field}` in {file} as a name of 1-64 characters without control characters, or remove it."
            ),
        ),
        NoticeCode::LanguageUndetermined => l.pick(
            format!("{file} の `{field}` を ja か en にしてください。"),
            format!("Set `{field}` in {file} to `ja` or `en`."),
        ),
        NoticeCode::EdgeTargetMissing => l.pick(
            format!("{file} の `{field}` を消すか、今いる個体か判断役の ID に直してください。"),
            format!(
                "Remove `{field}` from {file}, or point it at an existing agent or judge."
            ),
        ),
        NoticeCode::ListTrimmed => l.pick(
            format!("{file} の `{field}` の古い項目を片付けてください（読み込みでは古いものから捨てています）。"),
            format!(
                "Remove old entries of `{field}` from {file} (the read drops the oldest)."
            ),
        ),
        NoticeCode::SkillKeyUnknown => l.pick(
            format!("{file} の front matter から `{field}` を消してください（使えるキーは docs/formats/skill-front-matter.md にあります）。"),
            format!(
                "Remove `{field}` from the front matter of {file} (the keys read are in docs/formats/skill-front-matter.md)."
            ),
        ),
        NoticeCode::SkillValueInvalid => l.pick(
            format!("{file} の front matter の `{field}` を docs/formats/skill-front-matter.md の書き方に直してください。"),
            format!(
                "Write `{field}` in the front matter of {file} as docs/formats/skill-front-matter.md shows."
            ),
        ),
        NoticeCode::ModelTemplateMissing => l.pick(
            format!("{file} の `{field}` を存在するテンプレートに直すか、そのテンプレートを足してください。"),
            format!(
                "Point `{field}` in {file} at an existing template, or add that template."
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_keeps_its_code_file_and_field() {
        let notice = Notice {
            code: NoticeCode::ValueDefaulted,
            file: "/d/workspace/world.json".into(),
            field: "tokenBudget".into(),
            message: "0 means no budget; read as none".into(),
        };
        let f = notice_finding(&notice, "workspace/world.json", Language::En);
        assert_eq!(
            (f.level, f.code, f.file.as_deref(), f.field.as_deref()),
            (
                Level::Warn,
                "VALUE_DEFAULTED",
                Some("workspace/world.json"),
                Some("tokenBudget")
            )
        );
        assert!(f.message.contains("0 means no budget"), "{}", f.message);
        assert!(f.fix.contains("`tokenBudget`"), "{}", f.fix);
    }
}
