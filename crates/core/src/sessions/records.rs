//! What `sessions.redb` holds: session metadata and records (`message`, `exchange`, `summary`,
//! `turn`, `assist`), in the original's JSON spellings, and `intent`
//! (ours): a paid model call about to be sent, written before it so that a crash between the
//! payment and the `turn` record stays visible; and `question` (ours): a turn that ended
//! waiting for a person's answer, with what it needs to go on in another process.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::Grounding;

/// Who sent or receives a message (tag `kind`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Endpoint {
    /// The human at the GUI.
    User,
    /// The village itself (schedules, dispatches).
    System,
    /// An agent.
    Agent {
        /// The agent's id.
        id: String,
    },
    /// An outside client (the CLI `ask`, the door).
    External {
        /// The client's name.
        client: String,
    },
}

impl Endpoint {
    /// A short label for log lines (`user`, `agent:ID`, `external:NAME`).
    pub fn label(&self) -> String {
        match self {
            Self::User => "user".into(),
            Self::System => "system".into(),
            Self::Agent { id } => format!("agent:{id}"),
            Self::External { client } => format!("external:{client}"),
        }
    }
}

/// A message delivered in the village.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentMessage {
    /// Message id (UUID).
    pub id: String,
    /// Sender.
    pub from: Endpoint,
    /// Receiver.
    pub to: Endpoint,
    /// The text.
    pub content: String,
    /// Tokens of the turn that produced it (0 for inbound messages).
    #[serde(default)]
    pub tokens: u64,
    /// When, ms since the epoch.
    pub ts_ms: i64,
    /// Hop count in its causal chain.
    #[serde(default)]
    pub hop: u32,
    /// Other receivers of the same text.
    #[serde(default)]
    pub co_recipients: Vec<String>,
    /// Search provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grounding: Option<Grounding>,
    /// Reasoning summaries (display only).
    #[serde(default)]
    pub reasoning_summary: Vec<String>,
    /// Attachments (references).
    #[serde(default)]
    pub attachments: Vec<Value>,
    /// Quoted earlier messages.
    #[serde(default)]
    pub quotes: Vec<Value>,
}

impl AgentMessage {
    /// A new message with a fresh id, stamped now.
    pub fn new(
        from: Endpoint,
        to: Endpoint,
        content: impl Into<String>,
        hop: u32,
        ts_ms: i64,
    ) -> Self {
        Self {
            id: uuid::Uuid::new_v4().to_string(),
            from,
            to,
            content: content.into(),
            tokens: 0,
            ts_ms,
            hop,
            co_recipients: Vec::new(),
            grounding: None,
            reasoning_summary: Vec::new(),
            attachments: Vec::new(),
            quotes: Vec::new(),
        }
    }
}

/// How a turn ended (tag `kind`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnStop {
    /// It answered.
    Completed,
    /// The same tool call repeated; the turn was cut.
    Repeat {
        /// The tool.
        tool: String,
    },
    /// It used every tool round.
    ToolLimit,
    /// It failed.
    Failed {
        /// The error code.
        code: String,
        /// The HTTP status of the provider's answer, when there was one (absent in older
        /// records and in the original's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// The failure's class: `auth`, `rate_limit`, … for an HTTP failure;
        /// `connection_refused`, `dns`, `tls`, `timeout`, … when no status came back (absent
        /// in older records).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<String>,
    },
    /// It was interrupted.
    Interrupted,
    /// The budget was spent.
    BudgetExhausted,
    /// The next reservation did not fit the budget.
    ReserveShort,
    /// It asked the person (`ask_user`) and ended waiting for the answer (not a kind of the
    /// original; a `question` record follows it).
    NeedsInput,
}

impl TurnStop {
    /// The spelling in `turn:` log lines (`-`, `repeat:T`, `tool_limit`, `failed:CODE`, …).
    pub fn log_label(&self) -> String {
        match self {
            Self::Completed => "-".into(),
            Self::Repeat { tool } => format!("repeat:{tool}"),
            Self::ToolLimit => "tool_limit".into(),
            Self::Failed { code, .. } => format!("failed:{code}"),
            Self::Interrupted => "interrupted".into(),
            Self::BudgetExhausted => "budget_exhausted".into(),
            Self::ReserveShort => "reserve_short".into(),
            Self::NeedsInput => "needs_input".into(),
        }
    }
}

/// One turn of one agent: what it cost and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnRecord {
    /// The agent.
    pub agent_id: String,
    /// When the turn started, ms since the epoch.
    pub ts_ms: i64,
    /// Hop count.
    pub hop: u32,
    /// Model rounds.
    pub rounds: u32,
    /// Plan waves.
    pub waves: u32,
    /// How it ended.
    pub stop: TurnStop,
    /// Input tokens.
    pub prompt: u64,
    /// Cached input tokens.
    pub cached: u64,
    /// Output tokens.
    pub completion: u64,
    /// Reasoning tokens.
    pub reasoning: u64,
    /// Cache-write tokens.
    pub cache_write: u64,
    /// 1-hour cache-write tokens.
    #[serde(rename = "cacheWrite1h")]
    pub cache_write_1h: u64,
    /// Model name.
    pub model: String,
    /// Wire.
    pub backend: String,
    /// Wall time, ms.
    pub elapsed_ms: u64,
    /// A call of this turn was cut at the close's hard stop: its usage is unknown (written
    /// only when true; absent in the original's records).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_unknown: bool,
    /// What the agent's `SKILL.md` front matter asked of this turn, and the tool-round cap
    /// that made (written only when it asked something; absent in the original's records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<TurnSkill>,
}

/// A turn's skill terms as its record says them: `{maxLoops?, fork?, allowedTools?,
/// roundCap}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnSkill {
    /// The front matter's terms.
    #[serde(flatten)]
    pub terms: crate::village::SkillTerms,
    /// The model calls the turn was allowed.
    pub round_cap: u32,
}

/// A model call about to be sent (kind `intent`, not a kind of the original). Written and
/// committed before every paid call. A `turn` record completes the intents of its agent that
/// precede it in the conversation and were written since the turn started (`tsMs` ≥ the turn's
/// `tsMs`). An intent no turn completes is a call whose usage is unknown (a crash, a SIGKILL;
/// a later turn of a continued conversation does not complete it): stats count it as such.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IntentRecord {
    /// The agent.
    pub agent_id: String,
    /// When the call was about to be sent, ms since the epoch.
    pub ts_ms: i64,
    /// The round within the turn (1 = the first call).
    pub round: u32,
    /// Model name.
    pub model: String,
    /// Wire.
    pub backend: String,
    /// The budget reservation, effective tokens.
    pub reserved: u64,
}

/// A turn that asked the person (`ask_user`) and ended waiting (kind `question`, ours): the
/// question, and what the turn needs to go on when the answer comes — possibly in another
/// process (`ask --resume`). It is open until a later `turn` record of the same agent in the
/// conversation (the resumed turn's, or any later turn's) closes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRecord {
    /// The question's id (UUID).
    pub question_id: String,
    /// The agent that asked.
    pub agent_id: String,
    /// When, ms since the epoch.
    pub ts_ms: i64,
    /// The question.
    pub question: String,
    /// The choices offered (empty: a free answer).
    #[serde(default)]
    pub choices: Vec<String>,
    /// The `ask_user` call the answer is the result of.
    pub call_id: String,
    /// The turn's user message as sent.
    pub sent: String,
    /// The turn's messages after `sent`: the model's answers and the tool results so far,
    /// the last being the answer that asked.
    pub rounds: Vec<crate::llm::ChatMessage>,
    /// The results of that answer's calls before the question's.
    #[serde(default)]
    pub before: Vec<crate::llm::ContentBlock>,
    /// The results of its calls after the question's (not run).
    #[serde(default)]
    pub after: Vec<crate::llm::ContentBlock>,
    /// What the asking causal root had left of its budget (`None`: no ceiling); the resumed
    /// turn spends at most this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_left: Option<u64>,
}

/// A drafting-assistant call: what it cost and how it ended, never the text.
/// Unknown fields are kept, so that an original's record is written back whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistRecord {
    /// When the call was sent, ms since the epoch.
    pub ts_ms: i64,
    /// What was drafted: `skill`, `construct` or `judge`.
    pub draft_kind: String,
    /// Model name.
    pub model: String,
    /// The template used.
    pub template_id: String,
    /// Input tokens (cache reads included).
    pub prompt: u64,
    /// Cached input tokens read.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the cache (5 minutes).
    #[serde(default)]
    pub cache_write: u64,
    /// Input tokens written to the cache (1 hour).
    #[serde(default, rename = "cacheWrite1h")]
    pub cache_write_1h: u64,
    /// Output tokens (reasoning included).
    pub completion: u64,
    /// Reasoning tokens.
    #[serde(default)]
    pub reasoning: u64,
    /// `question`, `draft`, `invalid`, `draft_invalid`, `empty` or `failed`.
    pub outcome: String,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// A record of a conversation (tag `kind`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// A delivered message.
    Message(AgentMessage),
    /// What one agent was sent (volatile context folded in) and what it replied.
    Exchange {
        /// The agent.
        #[serde(rename = "agentId")]
        agent_id: String,
        /// The exact user message sent.
        sent: String,
        /// The reply.
        replied: String,
    },
    /// A summary standing in for earlier records.
    Summary {
        /// The agent.
        #[serde(rename = "agentId")]
        agent_id: String,
        /// The summary.
        text: String,
        /// The last record it covers.
        #[serde(rename = "coversUpToSeq")]
        covers_up_to_seq: u64,
    },
    /// A turn's cost and outcome.
    Turn(TurnRecord),
    /// A drafting-assistant call (no body text).
    Assist(AssistRecord),
    /// A paid model call about to be sent.
    Intent(IntentRecord),
    /// A turn waiting for a person's answer (not a kind of the original).
    Question(Box<QuestionRecord>),
}

impl Record {
    /// The `kind` spelling.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Message(_) => "message",
            Self::Exchange { .. } => "exchange",
            Self::Summary { .. } => "summary",
            Self::Turn(_) => "turn",
            Self::Assist(_) => "assist",
            Self::Intent(_) => "intent",
            Self::Question(_) => "question",
        }
    }

    /// True for the kinds that restore history (message, exchange, summary).
    pub fn restores_history(&self) -> bool {
        matches!(
            self,
            Self::Message(_) | Self::Exchange { .. } | Self::Summary { .. }
        )
    }
}

/// Metadata of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMeta {
    /// Title (≤ 30 characters).
    pub title: String,
    /// Created, ms since the epoch.
    pub created_at: i64,
    /// Last append, ms since the epoch.
    pub updated_at: i64,
    /// The conversation this was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// The record it was forked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_at_seq: Option<u64>,
    /// Number of records.
    pub record_count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_stop_of_an_older_record_still_reads() {
        let old: TurnStop = serde_json::from_str(r#"{"kind":"failed","code":"LLM_HTTP"}"#).unwrap();
        assert_eq!(
            old,
            TurnStop::Failed {
                code: "LLM_HTTP".into(),
                status: None,
                class: None
            }
        );
        let new = TurnStop::Failed {
            code: "LLM_HTTP".into(),
            status: Some(401),
            class: Some("auth".into()),
        };
        let text = serde_json::to_string(&new).unwrap();
        assert_eq!(
            text,
            r#"{"kind":"failed","code":"LLM_HTTP","status":401,"class":"auth"}"#
        );
        assert_eq!(serde_json::from_str::<TurnStop>(&text).unwrap(), new);
        assert_eq!(new.log_label(), "failed:LLM_HTTP");
    }
}
