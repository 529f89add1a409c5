//! `ask_user`: the model asks the person who started the turn a question, optionally with
//! choices (docs/formats/world.json.md#tools). The turn answers it (`orchestrator/question.rs`):
//! the GUI waits for the person, headless `ask` ends the turn with the question (exit 15),
//! and where no person is present the call fails with a line the model can act on. This
//! module holds its spec, its argument rules and those lines.

use serde_json::{Value, json};

use super::specs::{prop, schema};
use super::{RunApproval, ToolContext, ToolOutput, str_arg};
use crate::village::Language;

/// The tool's name.
pub(crate) const NAME: &str = "ask_user";
/// The longest question, in characters.
pub(crate) const MAX_QUESTION_CHARS: usize = 2_000;
/// The most choices.
pub(crate) const MAX_CHOICES: usize = 8;
/// The longest choice, in characters.
pub(crate) const MAX_CHOICE_CHARS: usize = 200;

/// A question as the model put it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Question {
    /// The question.
    pub text: String,
    /// The choices offered (empty: a free answer).
    pub choices: Vec<String>,
}

/// Reads a call's arguments; `Err` is the result the model reads.
pub(crate) fn parse(args: &Value, language: Language) -> Result<Question, ToolOutput> {
    let say = |ja: &str, en: &str| ToolOutput::fail(language.pick(ja, en));
    let Some(text) = str_arg(args, "question")
        .map(str::trim)
        .filter(|t| !t.is_empty())
    else {
        return Err(say("question が必要です。", "question is required."));
    };
    if text.chars().count() > MAX_QUESTION_CHARS {
        return Err(say(
            "question は 2000 字までです。",
            "A question holds at most 2000 characters.",
        ));
    }
    let choices = match args.get("choices") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            let texts: Option<Vec<String>> = items
                .iter()
                .map(|c| c.as_str().map(str::trim).map(str::to_owned))
                .collect();
            match texts {
                Some(list)
                    if list.len() <= MAX_CHOICES
                        && list
                            .iter()
                            .all(|c| !c.is_empty() && c.chars().count() <= MAX_CHOICE_CHARS) =>
                {
                    list
                }
                _ => return Err(choices_refused(language)),
            }
        }
        Some(_) => return Err(choices_refused(language)),
    };
    Ok(Question {
        text: text.to_owned(),
        choices,
    })
}

fn choices_refused(language: Language) -> ToolOutput {
    ToolOutput::fail(language.pick(
        "choices は空でない文字列（200 字まで）を 8 個までの配列にしてください。",
        "choices must be an array of up to 8 non-empty strings of up to 200 characters.",
    ))
}

/// The table's runner: reached only where no turn answers the call (no person is present).
pub(crate) fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    match parse(args, ctx.language) {
        Ok(_) => absent(ctx.language),
        Err(refused) => refused,
    }
}

/// The result where no person is present (`serve`, the door, a schedule).
pub(crate) fn absent(language: Language) -> ToolOutput {
    ToolOutput::fail(language.pick(
        "ここには答えられる人がいません（自動実行です）。自分で判断して進めるか、判断に必要なことを答えの中で述べて終えてください。",
        "No person is present to answer (this is an unattended run). Decide yourself and go on, or end your answer by saying what you would need to know.",
    ))
}

/// The result in a turn another agent asked for (only the turn a person started can ask).
pub(crate) fn delegated(language: Language) -> ToolOutput {
    ToolOutput::fail(language.pick(
        "このターンは他のエージェントからの依頼なので、人に直接尋ねられません。尋ねたいことは依頼元への答えの中で述べてください。",
        "This turn was asked for by another agent, so it cannot ask the person directly. Put your question in your answer to the agent that asked you.",
    ))
}

/// `ask_user`'s description and schema.
pub(crate) fn spec(l: Language, _approval: RunApproval) -> (String, Value) {
    (
        l.pick(
            "依頼した人に質問し、答えを待ちます。人が決めるべき分岐（方針の選択、取り消せない操作の確認、足りない情報）でだけ使ってください。choices を渡すと選択肢として示されます。答えがこの呼び出しの結果として返ります。人がいない自動実行では失敗が返るので、そのときは自分で判断してください。",
            "Ask the person who made the request a question and wait for the answer. Use it only where a person must decide (a choice of approach, confirming something that cannot be undone, missing information). Give choices to offer options. The answer comes back as this call's result. In unattended runs no person is present and the call fails: then decide yourself.",
        ),
        schema(
            &["question"],
            json!({
                "question": prop("string", l.pick("質問（2000 字まで）。", "The question (up to 2000 characters).")),
                "choices": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": l.pick("選択肢（任意、8 個まで）。", "Options to choose from (optional, up to 8)."),
                },
            }),
            l,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::{Question, parse};
    use crate::village::Language;
    use serde_json::json;

    #[test]
    fn a_question_with_choices_is_read_and_bad_ones_are_refused() {
        let en = Language::En;
        assert_eq!(
            parse(&json!({"question": " Which? ", "choices": ["a", "b"]}), en),
            Ok(Question {
                text: "Which?".into(),
                choices: vec!["a".into(), "b".into()],
            })
        );
        assert!(parse(&json!({"question": "Free?"}), en).is_ok_and(|q| q.choices.is_empty()));
        for bad in [
            json!({}),
            json!({"question": "  "}),
            json!({"question": "x".repeat(2_001)}),
            json!({"question": "q", "choices": "a"}),
            json!({"question": "q", "choices": [""]}),
            json!({"question": "q", "choices": [1]}),
            json!({"question": "q", "choices": vec!["c"; 9]}),
        ] {
            let refused = parse(&bad, en).expect_err("refused");
            assert!(!refused.ok, "{bad}");
        }
    }
}
