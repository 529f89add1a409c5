//! Questions to a person (`ask_user`, docs/formats/world.json.md#tools): where a turn's person
//! is ([`Presence`]), the GUI's questions waiting in memory ([`Waiting`]), the open question of
//! a stored conversation (headless `ask`: a `question` record), and the orchestrator's calls
//! that answer them. The turn's side is `turn/ask.rs`.

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::oneshot;

use super::{ExternalOutcome, Orchestrator, Route};
use crate::CoreError;
use crate::budget::CausalBudget;
use crate::events::{CoreEvent, PendingQuestion};
use crate::sessions::{QuestionRecord, Record, StoredRecord};
use crate::sync::LockOrRecover;

/// Whether a person can answer a delivery's turn, and how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Presence {
    /// Nobody (`serve`, the door, a schedule, a delegated turn): `ask_user` fails with a line
    /// telling the model to decide itself.
    #[default]
    Absent,
    /// The person at the GUI: the turn waits for the answer.
    Waits,
    /// Headless `ask`: the turn ends with the question, stored for `ask --resume`.
    Suspends,
}

/// The GUI's questions not answered yet (memory only: a turn waiting in this process).
#[derive(Default)]
pub(crate) struct Waiting {
    open: Mutex<HashMap<String, (PendingQuestion, oneshot::Sender<String>)>>,
}

impl Waiting {
    /// Opens a question; the receiver gets the answer.
    pub(super) fn open(&self, question: PendingQuestion) -> oneshot::Receiver<String> {
        let (tx, rx) = oneshot::channel();
        self.open
            .lock_or_recover()
            .insert(question.question_id.clone(), (question, tx));
        rx
    }

    /// Hands the answer to the waiting turn; `false` when no such question waits.
    pub(super) fn answer(&self, question_id: &str, answer: String) -> bool {
        let waiting = self.open.lock_or_recover().remove(question_id);
        waiting.is_some_and(|(_, tx)| tx.send(answer).is_ok())
    }

    /// Forgets a question its turn stopped waiting on.
    pub(super) fn withdraw(&self, question_id: &str) {
        self.open.lock_or_recover().remove(question_id);
    }

    /// The questions waiting now.
    pub(super) fn list(&self) -> Vec<PendingQuestion> {
        let mut all: Vec<PendingQuestion> = self
            .open
            .lock_or_recover()
            .values()
            .map(|(q, _)| q.clone())
            .collect();
        all.sort_by(|a, b| a.question_id.cmp(&b.question_id));
        all
    }
}

/// The open question of a conversation's records: the last `question` record, unless a later
/// `turn` record of the same agent closed it (the resumed turn, or any later turn of it).
pub(crate) fn open_question(records: &[(u64, StoredRecord)]) -> Option<QuestionRecord> {
    let mut open: Option<&QuestionRecord> = None;
    for (_, record) in records {
        match record {
            StoredRecord::Known(Record::Question(q)) => open = Some(q),
            StoredRecord::Known(Record::Turn(t))
                if open.is_some_and(|q| q.agent_id == t.agent_id) =>
            {
                open = None;
            }
            _ => {}
        }
    }
    open.cloned()
}

impl Orchestrator {
    /// The GUI's questions waiting for an answer now.
    pub fn pending_questions(&self) -> Vec<PendingQuestion> {
        self.inner.waiting().list()
    }

    /// The person's answer to a question a turn waits on (the GUI); `QUESTION_NOT_PENDING`
    /// when none waits under that id.
    pub fn answer_question(&self, question_id: &str, answer: &str) -> Result<(), CoreError> {
        if !self.inner.waiting().answer(question_id, answer.to_owned()) {
            return Err(CoreError::QuestionNotPending(format!(
                "no question {question_id} waits for an answer"
            )));
        }
        self.inner.emit(
            &format!(
                "question answered: id={question_id} chars={}",
                answer.chars().count()
            ),
            CoreEvent::QuestionSettled {
                question_id: question_id.to_owned(),
                answered: true,
            },
        );
        Ok(())
    }

    /// The open question of a stored conversation, if it ended waiting on one.
    pub fn open_question(&self, session_id: &str) -> Result<Option<PendingQuestion>, CoreError> {
        Ok(self
            .stored_question(session_id)?
            .map(|q| PendingQuestion::of(&q, Some(session_id.to_owned()))))
    }

    /// The person's answer to the open question of the current conversation (`ask --resume
    /// ID`): the turn that asked goes on, the answer being its `ask_user` call's result, under
    /// a budget of what the asking root had left. `QUESTION_NOT_PENDING` when the
    /// conversation waits for no answer.
    pub async fn answer_external(
        &self,
        client: &str,
        answer: &str,
        mode: super::RequestMode,
    ) -> Result<ExternalOutcome, CoreError> {
        let session = self.inner.current_session().unwrap_or_default();
        let Some(asked) = self.stored_question(&session)? else {
            return Err(CoreError::QuestionNotPending(format!(
                "conversation {session} is not waiting for an answer"
            )));
        };
        self.inner.log(&format!(
            "question answered: id={} agent={} chars={}",
            asked.question_id,
            asked.agent_id,
            answer.chars().count()
        ));
        let ceiling = asked.budget_left.or(self.inner.world().token_budget);
        let log = mode.dry_run.then(crate::safety::DryRunLog::default);
        let route = Route {
            person: Presence::Suspends,
            dry_run: log.clone(),
            ..Route::default()
        };
        let to = asked.agent_id.clone();
        let budget = CausalBudget::new(ceiling);
        let mut outcome = self
            .external(&to, client, answer, route, budget, Some(Box::new(asked)))
            .await;
        outcome.effects = log.map(|l| l.effects()).unwrap_or_default();
        Ok(outcome)
    }

    pub(super) fn stored_question(
        &self,
        session_id: &str,
    ) -> Result<Option<QuestionRecord>, CoreError> {
        let Some(store) = self.inner.sessions() else {
            return Ok(None);
        };
        Ok(open_question(&store.records(session_id)?))
    }
}

#[cfg(test)]
mod tests {
    use super::open_question;
    use crate::sessions::{QuestionRecord, Record, StoredRecord, TurnRecord, TurnStop};

    fn question(agent: &str, id: &str) -> StoredRecord {
        StoredRecord::Known(Record::Question(Box::new(QuestionRecord {
            question_id: id.into(),
            agent_id: agent.into(),
            ts_ms: 1,
            question: "Which?".into(),
            choices: Vec::new(),
            call_id: "c".into(),
            sent: "s".into(),
            rounds: Vec::new(),
            before: Vec::new(),
            after: Vec::new(),
            budget_left: None,
        })))
    }

    fn turn(agent: &str) -> StoredRecord {
        StoredRecord::Known(Record::Turn(TurnRecord {
            agent_id: agent.into(),
            ts_ms: 2,
            hop: 0,
            rounds: 1,
            waves: 0,
            stop: TurnStop::Completed,
            prompt: 0,
            cached: 0,
            completion: 0,
            reasoning: 0,
            cache_write: 0,
            cache_write_1h: 0,
            model: "m".into(),
            backend: "b".into(),
            elapsed_ms: 0,
            usage_unknown: false,
            skill: None,
        }))
    }

    #[test]
    fn a_question_is_open_until_a_later_turn_of_its_agent() {
        let id = |r: Option<QuestionRecord>| r.map(|q| q.question_id);
        let seq = |list: Vec<StoredRecord>| list.into_iter().map(|r| (0, r)).collect::<Vec<_>>();
        assert_eq!(id(open_question(&seq(vec![turn("rec")]))), None);
        assert_eq!(
            id(open_question(&seq(vec![
                turn("rec"),
                question("rec", "q1")
            ]))),
            Some("q1".into())
        );
        // Another agent's turn leaves it open; the asker's next turn closes it.
        let other = seq(vec![question("rec", "q1"), turn("helper")]);
        assert_eq!(id(open_question(&other)), Some("q1".into()));
        let closed = seq(vec![question("rec", "q1"), turn("rec")]);
        assert_eq!(id(open_question(&closed)), None);
        let again = seq(vec![
            question("rec", "q1"),
            turn("rec"),
            question("rec", "q2"),
        ]);
        assert_eq!(id(open_question(&again)), Some("q2".into()));
        let unknown = vec![
            (0, question("rec", "q1")),
            (
                1,
                StoredRecord::Unknown {
                    kind: "later".into(),
                },
            ),
        ];
        assert_eq!(id(open_question(&unknown)), Some("q1".into()));
    }
}
