//! The assistant's fixed texts in both languages: the guidance per kind (the stable head of
//! the system prompt, so that a provider's prompt cache hits on every round), the forced-draft
//! line, the tool results it pairs with every call, and the `submit_draft` tool.

use serde_json::json;

use super::DraftKind;
use crate::llm::ToolSpec;
use crate::village::Language;

/// The synthetic tool the draft comes through.
pub const SUBMIT_DRAFT: &str = "submit_draft";

const COMMON_JA: &str = "あなたは Fuseforks の村のファイルを書く手伝いをします。利用者に質問して必要なことを確かめ、十分に分かったら submit_draft を呼んで下書きを渡します。\n\
- 最初のメッセージで答えが出ていることは聞かないこと。質問は一度に 3 つまで。\n\
- 下書きは必ず submit_draft の content で渡し、本文には書かないこと。仮定や未確認の点は notes に書くこと。\n\
- 利用者が編集中の本文があれば、書き直すのではなく、残すべきところを残して直すこと。\n\
- 利用者が会話で別の言語を指定しない限り、日本語で書くこと。\n";

const COMMON_EN: &str = "You help write a file of a Fuseforks village. Ask the user what you need to know; when you know enough, call submit_draft with the draft.\n\
- Do not ask what the first message already answers. Ask at most 3 questions at a time.\n\
- Always hand the draft over as submit_draft's content, never in your text. Put assumptions and unconfirmed points in notes.\n\
- If the user's editor text is not empty, revise it rather than rewrite it: keep what should stay.\n\
- Write in English unless the user asks for another language in the conversation.\n";

const SKILL_JA: &str = "書くのは SKILL.md(エージェントの手順)です。毎ターン全文が読まれるので、起動条件・description・frontmatter は書かず、短く保ちます(長さは毎ターンの費用です)。命令形の手順で書きます。名前を出してよいのは下に挙げた道具だけです。未接続の MCP サーバーの関数名は推測せず、サーバーの用途を書きます。人格や口調(Construct.md の役目)は書かず、Construct.md と重ねないこと。\n";

const SKILL_EN: &str = "You are writing SKILL.md, the agent's procedure. The whole file is read on every turn, so write no trigger conditions, description or frontmatter, and keep it short (its length is paid every turn). Write imperative steps. Name only the tools listed below; for an MCP server that is not connected, do not guess function names: say what the server is for. No persona or tone (that is Construct.md's job), and nothing that repeats Construct.md.\n";

const CONSTRUCT_JA: &str = "書くのは Construct.md(エージェントの人格)です。人格・口調・受け持つ範囲・しないことを、役職名ではなく振る舞いとして書きます。「ほかのエージェントの代わりに話さない」はコアが既に伝えるので繰り返さないこと。手順は書かず(SKILL.md の役目)、SKILL.md と重ねないこと。\n";

const CONSTRUCT_EN: &str = "You are writing Construct.md, the agent's persona: its character, tone, scope and what it does not do, written as behaviour, not as a job title. Do not repeat \"do not speak for other agents\" (the core already says it). No procedure (that is SKILL.md's job), and nothing that repeats SKILL.md.\n";

const JUDGE_JA: &str = "書くのは judge.toml(判定者の規則)です。形は下の例のとおり: [questions.<名前>](type = \"choice\" | \"score\" | \"noul\"、ask と options・levels・true_if/false_if)、上から順に試す [[rules]](when = 条件式、to = 送り先の id の配列、または do = \"return\" と note)、[otherwise]。条件式は 名前 == 選択肢、名前.p >= 確率、and / or / not と括弧。質問は一つに一つの論点。choice には「その他」の選択肢を置き、その規則を otherwise の前に置きます。to に書いてよいのは下の id だけです。形の誤りはパーサーが見つけて知らせるので、直して出し直してください。\n";

const JUDGE_EN: &str = "You are writing judge.toml, a judge's rules, shaped as the example below: [questions.<name>] (type = \"choice\" | \"score\" | \"noul\", with ask and options, levels or true_if/false_if), [[rules]] tried in order (when = a condition, and to = an array of target ids, or do = \"return\" with a note) and [otherwise]. Conditions: name == option, name.p >= a probability, and / or / not, parentheses. One issue per question. Give a choice an \"other\" option, with its rule before otherwise. Only the ids listed below may appear in to. The parser checks the draft and tells you what is wrong: then correct it and submit again.\n";

/// The guidance of `kind`, with an example judge file for judges.
pub(super) fn guidance(kind: DraftKind, language: Language, example: Option<&str>) -> String {
    let (common, own) = match kind {
        DraftKind::Skill => (
            language.pick(COMMON_JA, COMMON_EN),
            language.pick(SKILL_JA, SKILL_EN),
        ),
        DraftKind::Construct => (
            language.pick(COMMON_JA, COMMON_EN),
            language.pick(CONSTRUCT_JA, CONSTRUCT_EN),
        ),
        DraftKind::Judge => (
            language.pick(COMMON_JA, COMMON_EN),
            language.pick(JUDGE_JA, JUDGE_EN),
        ),
    };
    let mut text = format!("{common}\n{own}");
    if let Some(example) = example {
        let head = language.pick("\n例:\n", "\nExample:\n");
        text.push_str(&format!("{head}```toml\n{example}\n```\n"));
    }
    text
}

/// The user line of a forced draft.
pub(super) fn forced_line(language: Language) -> String {
    language.pick(
        "ここまでの情報で下書きを出してください。分からない点は仮定として notes に書いてください。",
        "Write the draft now from what you have. Put anything unclear in notes as assumptions.",
    )
}

/// The tool result of a draft shown to the user.
pub(super) fn draft_shown(language: Language) -> String {
    language.pick(
        "下書きを利用者に見せました。以後の依頼に従って直してください。",
        "The draft was shown to the user. Revise it as they ask from here.",
    )
}

/// The tool result of a judge draft the parser refused.
pub(super) fn check_failed(language: Language, location: &str, message: &str) -> String {
    language.pick(
        format!("下書きはパーサーの検査に通りませんでした({location}): {message}\n直して submit_draft をもう一度呼んでください。"),
        format!("The draft failed the parser's check at {location}: {message}\nCorrect it and call submit_draft again."),
    )
}

/// The tool result of the last refused judge draft (no more rounds).
pub(super) fn check_gave_up(language: Language) -> String {
    language.pick(
        "検査の回数の上限に達しました。最後の下書きを利用者に見せました。",
        "No more check rounds: the last draft was shown to the user.",
    )
}

/// The tool result of a call past the first (only the first `submit_draft` counts).
pub(super) fn extra_call_ignored(language: Language) -> String {
    language.pick(
        "この呼び出しは無視しました(下書きは一度に一つです)。",
        "This call was ignored (one draft at a time).",
    )
}

/// The `submit_draft` tool.
pub(super) fn submit_draft(language: Language) -> ToolSpec {
    ToolSpec {
        name: SUBMIT_DRAFT.into(),
        description: language.pick(
            "下書きを利用者に渡します(保存は利用者がします)。",
            "Hands the draft to the user (who saves it).",
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": language.pick("ファイルの全文", "The whole file")},
                "notes": {"type": "string", "description": language.pick("仮定と未確認の点", "Assumptions and open points")}
            },
            "required": ["content"],
            "additionalProperties": false
        }),
    }
}
