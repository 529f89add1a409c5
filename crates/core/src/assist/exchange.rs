//! One exchange: the request checked before anything is sent, then a model call with the one
//! tool `submit_draft` (forced where the wire can force a tool, else auto plus the fixed line:
//! `forced=fallback`), the answer read by its type — a call is a draft (only the first counts,
//! every other call answered as ignored; text beside it goes along), text alone a question,
//! neither `empty` (the last draft when there is one, else `ASSIST_EMPTY`) — and for a judge
//! draft the parser's check, its finding fed back, up to three rounds. Every call the model
//! made is answered in `appended`, so that the next history is well-formed.

use serde_json::Value;

use super::prompt::{self, SUBMIT_DRAFT};
use super::{
    AssistError, AssistReply, AssistRequest, DraftKind, MAX_CURRENT_CHARS, MAX_INPUT_CHARS,
    MAX_JUDGE_ROUNDS, Validation, context, history,
};
use crate::clock::now_ms;
use crate::llm::{
    CancellationToken, ChatMessage, ChatRequest, ChatResponse, ContentBlock, Endpoint, LlmClient,
    Role, ToolCall, ToolChoice, ToolResult, Usage, Wire,
};
use crate::village::{Language, ModelTemplate, VillageStore, World};

/// What an exchange runs with.
pub struct AssistSetup<'a> {
    /// The village's files (the facts).
    pub store: &'a VillageStore,
    /// The registry.
    pub world: &'a World,
    /// The model client.
    pub client: &'a LlmClient,
    /// The template's endpoint (its key included).
    pub endpoint: &'a Endpoint,
    /// The template (provider skills are never sent).
    pub template: &'a ModelTemplate,
    /// The village language.
    pub language: Language,
    /// The target agent's connected MCP servers with their tool names (empty: not running).
    pub connected_mcp: crate::mcp::ServerTools,
    /// Cancels the call in flight.
    pub cancel: CancellationToken,
}

/// Whether a draft was forced (`forced=` of the log line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forced {
    /// Not asked for.
    No,
    /// `ToolChoice::Specific("submit_draft")`.
    Yes,
    /// The wire cannot force a tool: auto plus the fixed line.
    Fallback,
}

impl Forced {
    /// The log spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::No => "no",
            Self::Yes => "yes",
            Self::Fallback => "fallback",
        }
    }
}

/// One model call of an exchange: the facts of its record and log line (no text).
#[derive(Debug, Clone)]
pub struct AssistCall {
    /// When it was sent, ms since the epoch.
    pub ts_ms: i64,
    /// The check round (1 first).
    pub attempt: u32,
    /// Whether the draft was forced.
    pub forced: Forced,
    /// `question`, `draft`, `invalid`, `draft_invalid`, `empty` or `failed`.
    pub outcome: &'static str,
    /// Its usage (`None`: unknown, a failed call).
    pub usage: Option<Usage>,
    /// Characters of the draft it brought.
    pub draft_chars: Option<usize>,
}

/// Checks the request and builds the conversation to send, with the characters of its system
/// text that stay the same from round to round (the guidance and the facts, before the user's
/// text: the provider's cache breakpoint); `Err` before anything is sent.
fn prepare(
    setup: &AssistSetup<'_>,
    req: &AssistRequest,
) -> Result<(Vec<ChatMessage>, ChatMessage, usize), AssistError> {
    let chars = req.current.chars().count();
    if chars > MAX_CURRENT_CHARS {
        return Err(AssistError::invalid(
            "current",
            format!("{chars} characters, over the limit of {MAX_CURRENT_CHARS}"),
            "shorten the text in the editor",
        ));
    }
    let input = req
        .input
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    if input.is_some_and(|t| t.chars().count() > MAX_INPUT_CHARS) {
        return Err(AssistError::invalid(
            "input",
            format!("over the limit of {MAX_INPUT_CHARS} characters"),
            "write a shorter message",
        ));
    }
    if input.is_none() && !req.force_draft {
        return Err(AssistError::invalid(
            "input",
            "empty, and no draft asked for",
            "write a message, or set forceDraft",
        ));
    }
    history::check(&req.history)?;
    let language = setup.language;
    let facts = context::facts(
        setup.store,
        setup.world,
        req.target.kind,
        &req.target.id,
        &setup.connected_mcp,
        language,
    )?;
    let example = (req.target.kind == DraftKind::Judge)
        .then(|| crate::judge::starter_template("servant-id", language));
    let stable = format!(
        "{}\n{facts}",
        prompt::guidance(req.target.kind, language, example.as_deref())
    );
    let system = format!(
        "{stable}\n{}",
        context::user_section(&req.current, language)
    );
    let mut text = input.map(str::to_owned).unwrap_or_default();
    if req.force_draft {
        let line = prompt::forced_line(language);
        text = if text.is_empty() {
            line
        } else {
            format!("{text}\n\n{line}")
        };
    }
    let user = ChatMessage::text(Role::User, text);
    let mut messages = vec![ChatMessage::text(Role::System, system)];
    messages.extend(req.history.iter().cloned());
    messages.push(user.clone());
    Ok((messages, user, stable.chars().count() + 1))
}

/// A draft as the model gave it, with its check (`None`: skill and construct).
#[derive(Debug, Clone)]
struct Drafted {
    content: String,
    notes: Option<String>,
    text: Option<String>,
    validation: Option<Validation>,
}

impl Drafted {
    fn valid(&self) -> bool {
        self.validation.as_ref().is_none_or(|v| v.valid)
    }

    fn into_reply(self, appended: Vec<ChatMessage>, attempts: u32) -> AssistReply {
        AssistReply::Draft {
            appended,
            text: self.text,
            draft_chars: self.content.chars().count(),
            content: self.content,
            notes: self.notes,
            validation: self.validation,
            attempts: attempts.max(1),
        }
    }
}

/// Runs one exchange: the reply (or why there is none) and every model call's facts.
pub async fn run_exchange(
    setup: &AssistSetup<'_>,
    req: &AssistRequest,
) -> (Result<AssistReply, AssistError>, Vec<AssistCall>) {
    let (mut messages, user, stable) = match prepare(setup, req) {
        Ok(v) => v,
        Err(e) => return (Err(e), Vec::new()),
    };
    let mut appended = vec![user];
    let mut calls = Vec::new();
    let mut last: Option<Drafted> = None;
    for attempt in 1..=MAX_JUDGE_ROUNDS {
        let (mut request, forced) = request(setup, &messages, req.force_draft);
        request.cacheable_prefix_len = stable;
        let mut note = AssistCall {
            ts_ms: now_ms(),
            attempt,
            forced,
            outcome: "failed",
            usage: None,
            draft_chars: None,
        };
        let response = match setup.client.chat(setup.endpoint, &request).await {
            Ok(r) => r,
            Err(e) => {
                note.usage = e.usage_so_far().copied();
                let reply = without_draft(last, appended, &mut note, AssistError::Llm(e));
                calls.push(note);
                return (reply, calls);
            }
        };
        note.usage = response.usage;
        let read = read_answer(&response, setup.language);
        let assistant = response.to_message();
        let Some((call, content, notes)) = read.draft else {
            let reply = no_draft(read, assistant, &mut messages, appended, last, &mut note);
            calls.push(note);
            return (reply, calls);
        };
        messages.push(assistant.clone());
        appended.push(assistant);
        note.draft_chars = Some(content.chars().count());
        let drafted = Drafted {
            validation: check_draft(setup, req.target.kind, &content),
            content,
            notes,
            text: read.text,
        };
        let done = drafted.valid() || attempt == MAX_JUDGE_ROUNDS;
        let mut results = vec![draft_result(setup.language, &call, &drafted, done)];
        results.extend(read.ignored);
        push_results(&mut messages, &mut appended, results);
        note.outcome = match (drafted.valid(), done) {
            (true, _) => "draft",
            (false, false) => "invalid",
            (false, true) => "draft_invalid",
        };
        calls.push(note);
        if done {
            return (Ok(drafted.into_reply(appended, attempt)), calls);
        }
        last = Some(drafted);
    }
    // Not reached: the last round is always `done`.
    (Err(AssistError::Empty), calls)
}

/// The tool result that answers a draft: shown, or refused with the finding's place (another
/// round follows), or refused with no round left.
fn draft_result(language: Language, call: &ToolCall, drafted: &Drafted, done: bool) -> ToolResult {
    match (&drafted.validation, done) {
        (Some(v), false) => result_for(
            call,
            prompt::check_failed(
                language,
                v.location.as_deref().unwrap_or("-"),
                v.message.as_deref().unwrap_or(""),
            ),
            true,
        ),
        (Some(v), true) if !v.valid => result_for(call, prompt::check_gave_up(language), false),
        _ => result_for(call, prompt::draft_shown(language), false),
    }
}

/// An answer without a draft: text is a question (the refused drafts before it and their
/// findings stay in `appended`); neither text nor a draft is `empty`, handled as a failure.
fn no_draft(
    read: Read,
    assistant: ChatMessage,
    messages: &mut Vec<ChatMessage>,
    mut appended: Vec<ChatMessage>,
    last: Option<Drafted>,
    note: &mut AssistCall,
) -> Result<AssistReply, AssistError> {
    // An empty answer is left out of the history (a provider refuses an empty assistant turn)
    // unless it holds calls, which stay with their results.
    if read.text.is_some() || !read.ignored.is_empty() {
        messages.push(assistant.clone());
        appended.push(assistant);
        push_results(messages, &mut appended, read.ignored);
    }
    match read.text {
        Some(text) => {
            note.outcome = "question";
            Ok(AssistReply::Question { appended, text })
        }
        None => {
            note.outcome = "empty";
            without_draft(last, appended, note, AssistError::Empty)
        }
    }
}

/// A round that brought no draft (a failed call, or an empty answer): the exchange's last
/// draft, refused by the check, when there is one — the user never loses a draft they could
/// see (`draft_invalid`) — else `error`.
fn without_draft(
    last: Option<Drafted>,
    appended: Vec<ChatMessage>,
    note: &mut AssistCall,
    error: AssistError,
) -> Result<AssistReply, AssistError> {
    match last {
        Some(drafted) => {
            note.outcome = "draft_invalid";
            Ok(drafted.into_reply(appended, note.attempt - 1))
        }
        None => Err(error),
    }
}

/// The request of one round: the conversation, the one tool, the choice.
fn request(
    setup: &AssistSetup<'_>,
    messages: &[ChatMessage],
    force: bool,
) -> (ChatRequest, Forced) {
    let mut request = ChatRequest::new(
        setup.template.model.clone(),
        messages.to_vec(),
        setup.cancel.clone(),
    );
    request.tools = vec![prompt::submit_draft(setup.language)];
    request.temperature = setup.template.temperature;
    request.max_output_tokens = setup.template.max_output_tokens;
    request.effort = setup.template.effort;
    request.parallel_tool_calls = None;
    if !force {
        return (request, Forced::No);
    }
    request.tool_choice = ToolChoice::Specific(SUBMIT_DRAFT.into());
    if forces_draft(setup.endpoint, &request) {
        return (request, Forced::Yes);
    }
    // The fixed line, already in the user message, asks instead.
    request.tool_choice = ToolChoice::Auto;
    (request, Forced::Fallback)
}

/// Whether a forced draft is sent forced (`ToolChoice::Specific`), decided by the wire alone,
/// never by model name: never on Anthropic (its models have refused a forced tool with a 400
/// the request cannot foresee — docs/decisions/0010-assist.md), nor where the wire cannot force
/// at all (Meta, Ollama: the capability flags).
fn forces_draft(endpoint: &Endpoint, request: &ChatRequest) -> bool {
    endpoint.wire != Wire::Anthropic && endpoint.capabilities(request).force_supported
}

/// What an answer holds: the first `submit_draft` call (its content and notes), its text, and
/// the results answering every other call.
struct Read {
    draft: Option<(ToolCall, String, Option<String>)>,
    text: Option<String>,
    ignored: Vec<ToolResult>,
}

fn read_answer(response: &ChatResponse, language: Language) -> Read {
    let mut draft = None;
    let mut ignored = Vec::new();
    for call in response.tool_calls() {
        let content = call.args.get("content").and_then(Value::as_str);
        match (&draft, content) {
            (None, Some(content)) if call.name == SUBMIT_DRAFT => {
                let notes = call
                    .args
                    .get("notes")
                    .and_then(Value::as_str)
                    .filter(|n| !n.trim().is_empty())
                    .map(str::to_owned);
                draft = Some((call.clone(), content.to_owned(), notes));
            }
            _ => ignored.push(result_for(call, prompt::extra_call_ignored(language), true)),
        }
    }
    let text = response.text().filter(|t| !t.trim().is_empty());
    Read {
        draft,
        text,
        ignored,
    }
}

fn result_for(call: &ToolCall, content: String, is_error: bool) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content,
        is_error,
    }
}

fn push_results(
    messages: &mut Vec<ChatMessage>,
    appended: &mut Vec<ChatMessage>,
    results: Vec<ToolResult>,
) {
    if results.is_empty() {
        return;
    }
    let message = ChatMessage {
        role: Role::Tool,
        content: results.into_iter().map(ContentBlock::ToolResult).collect(),
    };
    messages.push(message.clone());
    appended.push(message);
}

/// A judge draft's check by the real parser, its targets included (`None` for other kinds).
fn check_draft(setup: &AssistSetup<'_>, kind: DraftKind, content: &str) -> Option<Validation> {
    if kind != DraftKind::Judge {
        return None;
    }
    let servants: Vec<&str> = setup.world.agents.iter().map(|a| a.id.as_str()).collect();
    let judges: Vec<&str> = setup.world.judges.iter().map(|j| j.id.as_str()).collect();
    let roster = crate::judge::Roster {
        servants: &servants,
        judges: &judges,
    };
    Some(match crate::judge::validate_judge(content, roster) {
        Ok(_) => Validation {
            valid: true,
            location: None,
            message: None,
        },
        Err(findings) => {
            let first = findings.first();
            Validation {
                valid: false,
                location: first.map(|f| format!("{}:{}", f.line, f.col)),
                message: first.map(|f| format!("{} ({})", f.message, f.fix)),
            }
        }
    })
}
