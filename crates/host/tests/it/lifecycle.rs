//! The host's lifecycle as a command calls it, once (`lifecycle::ask`): a halted village is
//! refused before anything opens, a stop request before the boot sends nothing, and a request
//! is answered and reported before the close, which releases the lock and the socket.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use fuseforks_core::llm::Wire;
use fuseforks_core::safety::{Channel, write_halt_marker};
use fuseforks_core::tools::RunApproval;
use fuseforks_host::SecretSource;
use fuseforks_host::door::DoorAsked;
use fuseforks_host::lifecycle::{
    self, AskRequest, Asked, ConversationChoice, Ended, Failure, Headless, Interruption, Notice,
    OpenOptions, Watcher,
};
use fuseforks_host::lock::VillageLock;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{self, ScriptUsage};
use fuseforks_testkit::{TempDataDir, TestVillage};

const WIRE: Wire = Wire::OllamaNative;
const U: ScriptUsage = ScriptUsage {
    prompt: 40,
    completion: 5,
    cache_read: 0,
    reasoning: 0,
};

/// The kind of each notice, in order.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Watcher for Recorder {
    fn notice(&self, notice: Notice<'_>) {
        let text = format!("{notice:?}");
        let kind = text
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or_default();
        self.0.lock().unwrap().push(kind.to_owned());
    }
}

impl Recorder {
    fn kinds(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

fn options(data: &TempDataDir) -> OpenOptions {
    OpenOptions {
        data_dir: data.data_dir().to_path_buf(),
        app_version: "test".into(),
        secrets: SecretSource::Env,
        door: DoorAsked::default(),
        log_echo: None,
        os_locale: None,
        mcp_child_output: None,
        forward_events: false,
    }
}

fn headless() -> Headless {
    Headless {
        start: None,
        bypass_plan_review: false,
        run_approval: RunApproval::Required,
        dry_run: false,
    }
}

fn request(conversation: ConversationChoice) -> AskRequest {
    AskRequest {
        client: "test".into(),
        message: "hello?".into(),
        conversation,
        answer: false,
        goal: None,
        stream: false,
    }
}

/// The answer's text, as a report would take it.
fn answer_text(asked: &Asked) -> Option<String> {
    match asked {
        Asked::Plain(outcome) => outcome.answer.clone(),
        Asked::Goal(_) => None,
    }
}

async fn village(replies: usize) -> (StubServer, TempDataDir) {
    let script = (0..replies)
        .map(|i| wire_replies::text(WIRE, &format!("answer {i}"), U))
        .collect();
    let stub = StubServer::start(script).await;
    let data = TempDataDir::new();
    TestVillage::builder()
        .stub(WIRE, stub.base_url())
        .agent("rec", "Reception")
        .reception("rec")
        .write(&data);
    (stub, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_halted_village_is_refused_before_anything_opens_and_sends_nothing() {
    let (stub, data) = village(1).await;
    write_halt_marker(data.data_dir(), Channel::Cli, 0).unwrap();
    let watcher = Arc::new(Recorder::default());
    let (_tx, stop) = tokio::sync::watch::channel(0u32);
    let ended = lifecycle::ask(
        options(&data),
        headless(),
        request(ConversationChoice::New),
        watcher.clone(),
        stop,
        |_| -> u8 { panic!("a halted village answers nothing") },
    )
    .await;
    assert!(matches!(ended, Ended::Failed(Failure::Halted)), "{ended:?}");
    assert_eq!(watcher.kinds(), ["Failed"]);
    assert!(stub.requests().is_empty(), "a halted village sent nothing");
    assert!(
        !data.workspace().join("fuseforks.log").exists(),
        "nothing was opened: no startup block"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_request_before_the_boot_sends_nothing() {
    let (stub, data) = village(1).await;
    let watcher = Arc::new(Recorder::default());
    let (_tx, stop) = tokio::sync::watch::channel(1u32);
    let ended = lifecycle::ask(
        options(&data),
        headless(),
        request(ConversationChoice::New),
        watcher.clone(),
        stop,
        |_| -> u8 { panic!("nothing was sent") },
    )
    .await;
    assert!(
        matches!(ended, Ended::Interrupted(Interruption::BeforeBoot)),
        "{ended:?}"
    );
    assert_eq!(watcher.kinds(), ["Findings", "Interrupted"]);
    assert!(stub.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_reported_before_the_close_which_lets_the_village_go() {
    let (stub, data) = village(1).await;
    let socket = data.data_dir().join("control").join("fuseforks.sock");
    let watcher = Arc::new(Recorder::default());
    let (_tx, stop) = tokio::sync::watch::channel(0u32);
    let seen = Arc::clone(&watcher);
    let ended = lifecycle::ask(
        options(&data),
        headless(),
        request(ConversationChoice::New),
        watcher.clone(),
        stop,
        |answer| {
            // The report comes before the close: the channels and the lock are still held.
            assert!(socket.exists(), "the channels run until the close");
            assert!(VillageLock::acquire(&data.workspace()).is_err());
            assert!(!answer.halted);
            (answer_text(&answer.asked), seen.kinds())
        },
    )
    .await;
    let Ended::Answered((text, before)) = ended else {
        panic!("{ended:?}");
    };
    assert_eq!(text.as_deref(), Some("answer 0"));
    assert_eq!(
        before,
        ["Findings"],
        "only the preflight was said before the answer"
    );
    assert!(!socket.exists(), "the channels ended with the close");
    assert!(
        VillageLock::acquire(&data.workspace()).is_ok(),
        "the close let the village lock go"
    );
    assert_eq!(stub.requests().len(), 1);
}
