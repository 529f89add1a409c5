//! The demo model's script: a pure function from one OpenAI-compatible chat-completions request
//! to its answer. Which agent asks is read from the tools it is offered (`plan`: the reception;
//! `file`: the writer; `grep`: the searcher); which step, from the last message (the request,
//! or the result of the tool the script called). Deterministic: the same request gives the same
//! answer, and every text says it is the demo model — scripted, not an AI.

use fuseforks_core::village::Language;
use serde_json::{Value, json};

use super::village::{GREETING_FILE, NOTES_FILE, SEARCHER_ID, WRITER_ID};

/// The mark every answer text carries, in English.
pub const DEMO_MARK_EN: &str = "demo model — scripted, not an AI";
/// The mark every answer text carries, in Japanese.
pub const DEMO_MARK_JA: &str = "デモモデル — 台本どおりの応答で、AI ではありません";

/// The most characters of a tool result the script quotes back.
const QUOTE_CHARS: usize = 4_000;

/// Who asks, read from the tools offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Reception,
    Writer,
    Searcher,
    Unscripted,
}

/// What the script answers: a text, or one tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A final answer.
    Text(String),
    /// One tool call: name and arguments.
    Call(&'static str, Value),
}

/// The mark in the village language.
pub fn mark(language: Language) -> String {
    language.pick(DEMO_MARK_JA, DEMO_MARK_EN)
}

/// The next step for `request` (a parsed chat-completions body).
pub fn next_step(request: &Value, language: Language) -> Step {
    let l = language;
    let tools: Vec<&str> = request["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let part = if tools.contains(&"plan") {
        Part::Reception
    } else if tools.contains(&"file") {
        Part::Writer
    } else if tools.contains(&"grep") {
        Part::Searcher
    } else {
        Part::Unscripted
    };
    let last = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    let result = (last["role"] == "tool").then(|| quote(&content_text(&last["content"])));
    let m = mark(l);
    match (part, result) {
        (Part::Reception, None) => Step::Call(
            "plan",
            json!({"tasks": [
                {"to": WRITER_ID, "message": l.pick(
                    format!("作業フォルダに {GREETING_FILE} を書いて、Fuseforks を試している人にあいさつしてください。"),
                    format!("Write {GREETING_FILE} in your work folder: a short greeting for the person trying Fuseforks."))},
                {"to": SEARCHER_ID, "message": l.pick(
                    format!("{NOTES_FILE} から「agent」を含む行を grep で探して、何が書いてあるか教えてください。"),
                    format!("Find the lines about agents in {NOTES_FILE} with grep and tell me what they say."))},
            ]}),
        ),
        (Part::Reception, Some(bundle)) => Step::Text(bundle_text(&bundle, l)),
        (Part::Writer, None) => Step::Call(
            "file",
            json!({"op": "write", "path": GREETING_FILE, "overwrite": false, "content": l.pick(
                format!("# デモの村からこんにちは\n\n{WRITER_ID} が file ツールで書きました。動かしたのは{m}。\n"),
                format!("# Hello from the demo village\n\nWritten by {WRITER_ID} with the file tool, driven by the {m}.\n")),
                "reason": l.pick("あいさつのファイルを書く", "write the greeting file")}),
        ),
        // The file tool answers a write with the diff it made, anything else is its refusal.
        (Part::Writer, Some(outcome)) if outcome.starts_with("---") => Step::Text(l.pick(
            format!("（{m}）作業フォルダに {GREETING_FILE} を書きました。"),
            format!("({m}) I wrote {GREETING_FILE} in my work folder."),
        )),
        (Part::Writer, Some(outcome)) => Step::Text(l.pick(
            format!("（{m}）file ツールに {GREETING_FILE} を書くよう頼みました。答え: {outcome}"),
            format!("({m}) I asked the file tool to write {GREETING_FILE}; it answered: {outcome}"),
        )),
        (Part::Searcher, None) => Step::Call(
            "grep",
            json!({"pattern": "agent", "include": format!("^{}$", NOTES_FILE.replace('.', "\\.")), "case_insensitive": true,
                   "reason": l.pick("メモから行を探す", "find lines in the notes")}),
        ),
        (Part::Searcher, Some(lines)) => Step::Text(l.pick(
            format!("（{m}）grep で {NOTES_FILE} に見つかった行です:\n{lines}"),
            format!("({m}) grep found these lines in {NOTES_FILE}:\n{lines}"),
        )),
        (Part::Unscripted, _) => Step::Text(l.pick(
            format!("（{m}）この個体の台本はありません。"),
            format!("({m}) This agent has no part in the demo's script."),
        )),
    }
}

/// The reception's final answer: what really came back from the wave (the plan tool's bundle
/// has one `### <agent> (<state>)` section per task).
fn bundle_text(bundle: &str, l: Language) -> String {
    let m = mark(l);
    let states: Vec<(&str, &str)> = bundle
        .lines()
        .filter_map(|line| {
            let (agent, state) = line.strip_prefix("### ")?.rsplit_once(" (")?;
            Some((agent, state.strip_suffix(')')?))
        })
        .collect();
    let missing: Vec<String> = states
        .iter()
        .filter(|(_, state)| *state != "answered")
        .map(|(agent, state)| format!("{agent}: {state}"))
        .collect();
    let answered = states.len() - missing.len();
    if !states.is_empty() && missing.is_empty() {
        return l.pick(
            format!("（{m}）{answered} 人とも答えました。まとめです。\n{bundle}"),
            format!("({m}) All {answered} servants answered; here is the bundle.\n{bundle}"),
        );
    }
    let missing = missing.join(", ");
    l.pick(
        format!("（{m}）{} 人のうち {answered} 人が答えました（答えなし: {missing}）。返ってきたものです。\n{bundle}", states.len()),
        format!("({m}) {answered} of {} servants answered (no answer: {missing}); here is what came back.\n{bundle}", states.len()),
    )
}

/// The chat-completions answer for a step, with usage counted by the demo model (a token is
/// taken as 4 bytes of the request and of the answer).
pub fn completion(
    step: &Step,
    request: &Value,
    request_bytes: usize,
    serial: u64,
    language: Language,
) -> Value {
    let model = request["model"].as_str().unwrap_or("demo");
    let (message, finish, answer_bytes) = match step {
        Step::Text(text) => (
            json!({"role": "assistant", "content": text}),
            "stop",
            text.len(),
        ),
        Step::Call(name, args) => {
            let arguments = args.to_string();
            // The wire allows a text beside tool calls: the mark is there too.
            let text = language.pick(
                format!("（{}）{name} を呼びます。", mark(language)),
                format!("({}) Calling {name}.", mark(language)),
            );
            let bytes = arguments.len() + name.len() + text.len();
            (
                json!({"role": "assistant", "content": text, "tool_calls": [{
                    "id": format!("call_demo_{serial}"), "type": "function",
                    "function": {"name": name, "arguments": arguments}}]}),
                "tool_calls",
                bytes,
            )
        }
    };
    let prompt = (request_bytes / 4).max(1);
    let output = (answer_bytes / 4).max(1);
    json!({
        "id": format!("chatcmpl-demo-{serial}"), "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output}
    })
}

/// A message's text: a string, or the text parts of an array of parts.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// At most [`QUOTE_CHARS`] characters of a tool result, trimmed.
fn quote(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tools: &[&str], last: Value) -> Value {
        let tools: Vec<Value> = tools
            .iter()
            .map(|n| json!({"type": "function", "function": {"name": n}}))
            .collect();
        json!({"model": "demo", "tools": tools, "messages": [{"role": "system", "content": "s"}, last]})
    }

    #[test]
    fn each_part_calls_its_tool_then_answers_with_the_mark() {
        let user = json!({"role": "user", "content": "go"});
        let tool = json!({"role": "tool", "content": "ok: 3 lines"});
        for (tools, name) in [
            (&["ask_x", "plan"][..], "plan"),
            (&["file"][..], "file"),
            (&["grep"][..], "grep"),
        ] {
            let Step::Call(called, _) = next_step(&request(tools, user.clone()), Language::En)
            else {
                panic!("{name}: no call");
            };
            assert_eq!(called, name);
            for l in [Language::En, Language::Ja] {
                let Step::Text(text) = next_step(&request(tools, tool.clone()), l) else {
                    panic!("{name}: no text");
                };
                assert!(
                    text.contains(&mark(l)) && text.contains("ok: 3 lines"),
                    "{text}"
                );
            }
        }
        let Step::Text(none) = next_step(&request(&[], user), Language::En) else {
            panic!("unscripted");
        };
        assert!(none.contains(DEMO_MARK_EN));
    }

    #[test]
    fn the_plan_goes_to_both_servants_and_answers_are_well_formed() {
        let req = request(&["plan"], json!({"role": "user", "content": "go"}));
        let step = next_step(&req, Language::En);
        let Step::Call(_, args) = &step else {
            panic!("no call")
        };
        let to: Vec<&str> = args["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["to"].as_str().unwrap())
            .collect();
        assert_eq!(to, [WRITER_ID, SEARCHER_ID]);
        let body = completion(&step, &req, 400, 7, Language::En);
        let content = body["choices"][0]["message"]["content"].as_str().unwrap();
        assert!(content.contains(DEMO_MARK_EN), "{content}");
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(body["usage"]["prompt_tokens"], 100);
        let call = &body["choices"][0]["message"]["tool_calls"][0];
        let parsed: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(&parsed, args);
    }

    #[test]
    fn the_reception_says_what_really_came_back() {
        let reply = |bundle: &str, l| {
            let req = request(&["plan"], json!({"role": "tool", "content": bundle}));
            let Step::Text(text) = next_step(&req, l) else {
                panic!("no text")
            };
            text
        };
        let both = "### servant-a (answered)\nwrote it\n\n### servant-b (answered)\nfound it\n";
        assert!(reply(both, Language::En).contains("All 2 servants answered"));
        let one = "### servant-a (undeliverable)\n-\n\n### servant-b (answered)\nfound it\n";
        let none = "### servant-a (undeliverable)\n-\n\n### servant-b (no_answer)\n-\n";
        for (bundle, count) in [(one, "1 of 2"), (none, "0 of 2")] {
            let text = reply(bundle, Language::En);
            assert!(!text.contains("All ") && !text.contains("Both"), "{text}");
            assert!(
                text.contains(&format!("{count} servants answered"))
                    && text.contains("servant-a: undeliverable"),
                "{text}"
            );
            assert!(reply(bundle, Language::Ja).contains("servant-a: undeliverable"));
        }
        assert!(!reply("garbled", Language::En).contains("All "));
    }

    #[test]
    fn the_writer_never_overwrites() {
        let req = request(&["file"], json!({"role": "user", "content": "go"}));
        let Step::Call(_, args) = next_step(&req, Language::En) else {
            panic!("no call")
        };
        assert_eq!(args["overwrite"], false, "{args}");
    }

    #[test]
    fn a_long_tool_result_is_quoted_in_part() {
        let long = "x".repeat(QUOTE_CHARS * 2);
        let req = request(&["grep"], json!({"role": "tool", "content": long}));
        let Step::Text(text) = next_step(&req, Language::En) else {
            panic!("no text")
        };
        assert!(text.chars().count() < QUOTE_CHARS + 200);
    }
}
