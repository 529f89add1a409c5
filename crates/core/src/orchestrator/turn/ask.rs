//! The turn's side of `ask_user` (docs/formats/world.json.md#tools): a person waiting at the
//! GUI answers in place; headless `ask` ends the turn with the question ([`Asked`], stored as
//! a `question` record) and a later `ask --resume` takes it up ([`taken_up`]); elsewhere the
//! call fails with a line the model can act on.

use serde_json::Value;

use super::super::question::Presence;
use super::Turn;
use crate::events::{CoreEvent, PendingQuestion};
use crate::llm::{ChatMessage, ContentBlock, Role, ToolCall, ToolResult};
use crate::sessions::{AgentMessage, Endpoint, QuestionRecord, Record};
use crate::tools::ToolOutput;
use crate::tools::ask_user::{self, Question};

/// A turn that asked the person and ends waiting for the answer.
#[derive(Debug)]
pub(super) struct Asked {
    pub question: Question,
    pub question_id: String,
    pub call_id: String,
    /// The turn's user message as sent.
    pub sent: String,
    /// The turn's messages after `sent` (filled by the rounds).
    pub rounds: Vec<ChatMessage>,
    /// The results of the asking answer's calls before the question's.
    pub before: Vec<ContentBlock>,
    /// The results of its calls after the question's (not run).
    pub after: Vec<ContentBlock>,
}

impl Turn<'_> {
    /// Runs an `ask_user` call: its result, or `Err` when the turn ends with the question.
    pub(super) async fn ask_person(
        &self,
        call: &ToolCall,
        args: &Value,
    ) -> Result<ToolOutput, Box<Asked>> {
        let language = self.inner.language();
        let question = match ask_user::parse(args, language) {
            Ok(q) => q,
            Err(refused) => return Ok(refused),
        };
        let route = &self.delivery.route;
        if route.hop > 0 || !route.chain.is_empty() {
            return Ok(ask_user::delegated(language));
        }
        match route.person {
            Presence::Absent => Ok(ask_user::absent(language)),
            Presence::Waits => Ok(self.wait_for_person(question).await),
            Presence::Suspends => Err(Box::new(Asked {
                question,
                question_id: uuid::Uuid::new_v4().to_string(),
                call_id: call.id.clone(),
                sent: String::new(),
                rounds: Vec::new(),
                before: Vec::new(),
                after: Vec::new(),
            })),
        }
    }

    /// The GUI: the question goes out as an event and the call waits for the answer, or for
    /// the turn's interrupt, the agent's hard stop or the kill switch's cut.
    async fn wait_for_person(&self, question: Question) -> ToolOutput {
        let (inner, language) = (self.inner, self.inner.language());
        let pending = PendingQuestion {
            question_id: uuid::Uuid::new_v4().to_string(),
            agent_id: self.agent_id.into(),
            question: question.text,
            choices: question.choices,
            session_id: inner.current_session(),
        };
        let id = pending.question_id.clone();
        let answer = inner.waiting().open(pending.clone());
        inner.emit(
            &format!(
                "question asked: agent={} id={id} chars={} choices={}",
                self.agent_id,
                pending.question.chars().count(),
                pending.choices.len()
            ),
            CoreEvent::QuestionAsked { question: pending },
        );
        let interrupt = self.control.token();
        let answered = tokio::select! {
            answer = answer => answer.ok(),
            () = interrupt.cancelled() => None,
            () = self.control.abort.cancelled() => None,
            () = self.cut.cancelled() => None,
        };
        if let Some(text) = answered {
            return ToolOutput::ok(text);
        }
        inner.waiting().withdraw(&id);
        inner.emit(
            &format!("question withdrawn: agent={} id={id}", self.agent_id),
            CoreEvent::QuestionSettled {
                question_id: id,
                answered: false,
            },
        );
        ToolOutput::fail(language.pick(
            "人の答えを待つ間にターンが打ち切られました。",
            "The turn was stopped while waiting for the person's answer.",
        ))
    }

    /// The records of a turn that ends with a question (after its `turn` record): the
    /// question as the agent's message to the sender, and the `question` record.
    pub(super) fn question_records(&self, asked: Asked) -> (Vec<Record>, QuestionRecord) {
        let message = &self.delivery.message;
        let mut text = asked.question.text.clone();
        for choice in &asked.question.choices {
            text.push_str(&format!("\n- {choice}"));
        }
        let said = AgentMessage::new(
            Endpoint::Agent {
                id: self.agent_id.into(),
            },
            message.from.clone(),
            text,
            message.hop,
            super::now_ms(),
        );
        let record = QuestionRecord {
            question_id: asked.question_id,
            agent_id: self.agent_id.into(),
            ts_ms: super::now_ms(),
            question: asked.question.text,
            choices: asked.question.choices,
            call_id: asked.call_id,
            sent: asked.sent,
            rounds: asked.rounds,
            before: asked.before,
            after: asked.after,
            budget_left: self.delivery.budget.remaining(),
        };
        let records = vec![
            Record::Message(said),
            Record::Question(Box::new(record.clone())),
        ];
        (records, record)
    }
}

/// The messages a turn taken up again starts from, after its user message: the rounds it had
/// run, then the asking answer's results with `answer` as the question's.
pub(super) fn taken_up(asked: &QuestionRecord, answer: &str) -> Vec<ChatMessage> {
    let mut messages = asked.rounds.clone();
    let mut results = asked.before.clone();
    results.push(ContentBlock::ToolResult(ToolResult {
        call_id: asked.call_id.clone(),
        name: ask_user::NAME.into(),
        content: answer.to_owned(),
        is_error: false,
    }));
    results.extend(asked.after.iter().cloned());
    messages.push(ChatMessage {
        role: Role::Tool,
        content: results,
    });
    messages
}

/// The result of a call of the asking answer after the question's: not run.
pub(super) fn not_run(call: &ToolCall, language: crate::village::Language) -> ContentBlock {
    ContentBlock::ToolResult(ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content: language.pick(
            "人への質問で止まったため、この呼び出しは実行していません。まだ必要なら、もう一度呼んでください。",
            "This call did not run: the turn stopped at a question to the person. Call it again if it is still needed.",
        ),
        is_error: true,
    })
}
