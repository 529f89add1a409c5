//! Why a turn ended without an answer, said to the asker: the code, the HTTP status or the
//! network class, the template and the endpoint's host, and what to change — never the key,
//! a request or a response body (not even the provider's own message).

pub use crate::events::TurnFailure;
use crate::llm::{LlmError, NetworkKind, RetryClass};
use crate::sessions::TurnStop;
use crate::village::Language;

/// The host (and port) of a base URL, for messages; never the path or the query.
pub(crate) fn host_of(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

impl TurnFailure {
    /// A failed model call of `agent_id` through `template` at `base_url`.
    pub(crate) fn llm(agent_id: &str, t: &crate::village::ModelTemplate, e: &LlmError) -> Self {
        let (template, base_url) = (t.id.as_str(), t.base_url.as_str());
        let keyless = t.credential == crate::village::Credential::NotRequired;
        let host = host_of(base_url);
        let at = host.as_deref().unwrap_or("the endpoint");
        let (message, fix) = match (e.status(), e.network_kind()) {
            (Some(status), _) => {
                let class = e.class().unwrap_or(RetryClass::ClientError);
                (
                    format!(
                        "the model call failed: HTTP {status} ({}) from {at} (template {template}, agent {agent_id})",
                        class.as_str()
                    ),
                    Some(http_fix(class, template, keyless)),
                )
            }
            (None, Some(kind)) => (
                format!(
                    "the model call failed: {} at {at} (template {template}, agent {agent_id})",
                    kind.describe()
                ),
                Some(network_fix(kind, template, at)),
            ),
            (None, None) => (
                format!("the model call failed: {e} (agent {agent_id})"),
                crate::error::Coded::fix(e).map(|f| f.text()),
            ),
        };
        Self {
            agent_id: agent_id.to_owned(),
            code: e.code().to_owned(),
            status: e.status(),
            class: e.failure_class().map(str::to_owned),
            template: Some(template.to_owned()),
            host,
            message,
            fix,
        }
    }

    /// A turn that could not start (no such agent, no template, an unusable endpoint).
    pub(crate) fn setup(agent_id: &str, code: &str, message: String, fix: Option<String>) -> Self {
        Self {
            agent_id: agent_id.to_owned(),
            code: code.to_owned(),
            status: None,
            class: None,
            template: None,
            host: None,
            message,
            fix,
        }
    }

    /// The turn used every model call its cap allows, and the model still asked for tools.
    pub(crate) fn tool_limit(agent_id: &str, cap: u32) -> Self {
        Self::setup(
            agent_id,
            "TOOL_LIMIT",
            format!(
                "agent {agent_id} used all {cap} model call{} of one turn (maxToolIterations) and still asked for tools; the turn stopped without an answer",
                if cap == 1 { "" } else { "s" }
            ),
            Some(if cap >= u32::from(u8::MAX) {
                "ask for less at once: maxToolIterations is already at its largest (255)".to_owned()
            } else {
                format!(
                    "raise maxToolIterations of agent {agent_id} in world.json (at most 255), or ask for less at once"
                )
            }),
        )
    }

    /// The model made the same tool call again and again; the repeat guard stopped the turn.
    pub(crate) fn repeat(agent_id: &str, tool: &str, repeats: u32) -> Self {
        Self::setup(
            agent_id,
            "TOOL_REPEAT",
            format!(
                "agent {agent_id} called the tool {tool} with the same arguments {} times; the turn stopped without an answer",
                repeats + 1
            ),
            Some(
                "ask differently, or check what the tool answers (its result did not move the model on); a larger maxToolIterations does not help".to_owned(),
            ),
        )
    }

    /// The server answered with more output tokens than the cap it was sent: the call was
    /// charged what it reported, and the turn ends there so that it cannot overrun again.
    pub(crate) fn over_cap(agent_id: &str, template: &str, completion: u64, cap: u32) -> Self {
        Self {
            template: Some(template.to_owned()),
            ..Self::setup(
                agent_id,
                "LLM_OUTPUT_OVER_CAP",
                format!(
                    "the model answered with {completion} output tokens, over the cap of {cap} it was sent (template {template}, agent {agent_id}); it was charged in full and the turn stopped"
                ),
                Some(format!(
                    "the server ignores maxOutputTokens: check the endpoint of template {template}, or use one that honours the cap"
                )),
            )
        }
    }

    /// The stop a turn with this failure is recorded with.
    pub(crate) fn stop(&self) -> TurnStop {
        TurnStop::Failed {
            code: self.code.clone(),
            status: self.status,
            class: self.class.clone(),
        }
    }

    /// The reason in one line with its code: `[CODE] message` (the door's error text adds it
    /// to the fixed line).
    pub fn line(&self) -> String {
        match &self.fix {
            Some(fix) => format!("[{}] {} Fix: {fix}", self.code, self.message),
            None => format!("[{}] {}", self.code, self.message),
        }
    }
}

/// What to change after an HTTP failure of this class.
fn http_fix(class: RetryClass, template: &str, keyless: bool) -> String {
    match class {
        // A template marked keyless sends no key at all, whatever the store holds.
        RetryClass::Auth if keyless => format!(
            "the server wants a key, but template {template} has credential: not_required and sends none: set its credential to keyring (world.json, or the GUI's template), then store the key under the id {template} (or in {} when the run reads secrets from the environment)",
            env_name(template)
        ),
        RetryClass::Auth => format!(
            "check the API key of template {template}: store it under the id {template} in the OS keyring, or set {} when the run reads secrets from the environment",
            env_name(template)
        ),
        RetryClass::Billing => format!(
            "the account behind template {template} is out of credit: top it up at the provider"
        ),
        RetryClass::RateLimit | RetryClass::Overloaded | RetryClass::ServerError => format!(
            "the server is busy or failing: try again later, or raise maxRetries of template {template}"
        ),
        RetryClass::ContextLength => "the conversation no longer fits the model's context window: start a new conversation, or choose a model with a larger window".to_owned(),
        RetryClass::Timeout | RetryClass::Network | RetryClass::ClientError => format!(
            "the server refused the request: check model and baseUrl of template {template}"
        ),
    }
}

/// The variable `--secrets env` reads a template's key from (`FUSEFORKS_SECRET_` + the id
/// upper-cased, other characters as `_`).
fn env_name(template: &str) -> String {
    let id: String = template
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("FUSEFORKS_SECRET_{id}")
}

/// What to change after a transport failure of this kind.
fn network_fix(kind: NetworkKind, template: &str, at: &str) -> String {
    match kind {
        NetworkKind::ConnectionRefused | NetworkKind::Connect | NetworkKind::Other => format!(
            "nothing answers at {at}: start the model server, or fix baseUrl of template {template}"
        ),
        NetworkKind::Dns => {
            format!("the host {at} does not resolve: fix baseUrl of template {template}")
        }
        NetworkKind::Tls => format!(
            "check baseUrl of template {template} (https or http) and the certificate of {at}"
        ),
        NetworkKind::Timeout => format!(
            "{at} did not answer in time: check that the server runs, or raise requestTimeoutSecs of template {template}"
        ),
    }
}

/// The ` status=… class=…` of a failed turn's `turn:` log line (empty for any other stop).
pub(crate) fn log_fields(stop: &TurnStop) -> String {
    match stop {
        TurnStop::Failed { status, class, .. } => format!(
            " status={} class={}",
            status.map_or_else(|| "-".to_owned(), |s| s.to_string()),
            class.as_deref().unwrap_or("-")
        ),
        _ => String::new(),
    }
}

/// The text that stands for an empty answer: the fixed line of a turn that stopped without
/// answering (the cap, the repeat guard), so that the conversation records what happened; else
/// the plea to ask again.
pub(crate) fn empty_answer_text(stop: &TurnStop, language: Language) -> String {
    match (stop, language) {
        (TurnStop::ToolLimit, _) => tool_limit_line(language).to_owned(),
        (TurnStop::Repeat { .. }, _) => repeat_line(language).to_owned(),
        _ => language.pick(
            "（返答が空でした。もう一度お願いします。）",
            "(The model returned an empty answer. Please ask again.)",
        ),
    }
}

/// The fixed line an outside asker gets for a turn that hit the tool-round cap.
pub(crate) fn tool_limit_line(language: Language) -> &'static str {
    match language {
        Language::Ja => {
            "（道具を使える回数の上限（maxToolIterations）に達し、答えが出ないまま止まりました。world.json でエージェントの maxToolIterations を増やすか、一度に頼む量を減らしてください。）"
        }
        Language::En => {
            "(Stopped: the agent used all its tool rounds (maxToolIterations) without answering. Raise the agent's maxToolIterations in world.json, or ask for less at once.)"
        }
    }
}

/// The fixed line an outside asker gets for a turn the repeat guard stopped.
pub(crate) fn repeat_line(language: Language) -> &'static str {
    match language {
        Language::Ja => {
            "（同じ道具を同じ引数で繰り返したため、答えが出ないまま止まりました。頼み方を変えてください（maxToolIterations を増やしても解決しません）。）"
        }
        Language::En => {
            "(Stopped: the agent repeated the same tool call without answering. Ask differently; a larger maxToolIterations does not help.)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_named_without_path_or_query() {
        assert_eq!(
            host_of("http://127.0.0.1:4000/v1?key=x").as_deref(),
            Some("127.0.0.1:4000")
        );
        assert_eq!(
            host_of("https://api.openai.com/v1").as_deref(),
            Some("api.openai.com")
        );
        assert_eq!(host_of("not a url"), None);
        assert_eq!(env_name("my-open.ai"), "FUSEFORKS_SECRET_MY_OPEN_AI");
    }
}
