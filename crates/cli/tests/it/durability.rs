//! The durable points of an `ask`, seen from its system calls under `strace`: each paid request
//! leaves only after the sync that covers its intent (and, from the second one, the tool's
//! audit line), and the answer is printed only after the turn's records are synced. A SIGKILL
//! keeps the page cache, so only this order shows that a sync was not dropped (power loss).
//! The number of syncs is printed as a figure, not asserted: it moves with redb's file growth
//! and with grouping, and its floor is reasoned in docs/performance.md.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use fuseforks_core::llm::Wire;
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use fuseforks_testkit::{TempDataDir, needs};
use serde_json::json;

use crate::headless::U;
use crate::safety::{ask, call, working_village};

const WIRE: Wire = Wire::OpenAiCompat;
const ANSWER: &str = "done";
/// The records as their JSON shows in a written page (strace escapes the quotes).
const INTENT: &str = r#"\"kind\":\"intent\""#;
const TURN: &str = r#"\"kind\":\"turn\""#;
const EFFECT: &str = r#"\"action\":\"file_write\""#;
/// What strace records: the writes of the durable files and of the socket, the reads that
/// end a request (a response arrived), and every sync.
const TRACED: &str =
    "trace=pwrite64,pwritev,write,writev,sendto,sendmsg,read,recvfrom,recvmsg,fdatasync,fsync";

/// The file (or socket) a traced call is about, from its first argument as `-yy` prints it
/// (`12</…/workspace/sessions.redb>`, `16<TCP:[127.0.0.1:46514->127.0.0.1:18772]>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Sessions,
    Audit,
    Stub,
    Stdout,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Write,
    Read,
    /// A completed, successful fsync or fdatasync (placed where it returned).
    Synced,
}

#[derive(Clone, Debug)]
struct Event {
    op: Op,
    target: Target,
    /// The call's arguments as strace printed them (the bytes written, escaped), for a write.
    written: String,
}

/// The trace in the order strace saw the calls, and how many syncs were issued (all files,
/// all threads).
struct Trace {
    events: Vec<Event>,
    syncs: usize,
}

fn target_of(first_arg: &str, stub_port: &str) -> Target {
    if first_arg.ends_with("/sessions.redb>") {
        Target::Sessions
    } else if first_arg.ends_with("/audit.jsonl>") {
        Target::Audit
    } else if first_arg.contains("TCP:[")
        && first_arg.contains(&format!("->127.0.0.1:{stub_port}]"))
    {
        Target::Stub
    } else if first_arg == "1" || first_arg.starts_with("1<") {
        Target::Stdout
    } else {
        Target::Other
    }
}

fn op_of(name: &str) -> Option<Op> {
    match name {
        "pwrite64" | "pwritev" | "write" | "writev" | "sendto" | "sendmsg" => Some(Op::Write),
        "read" | "recvfrom" | "recvmsg" => Some(Op::Read),
        "fdatasync" | "fsync" => Some(Op::Synced),
        _ => None,
    }
}

/// Parses `strace -f -yy` output. A write or read counts where it entered; a sync where it
/// returned 0 (`<... fdatasync resumed>) = 0` when another thread's call came in between).
fn parse(text: &str, stub_port: &str) -> Trace {
    let mut events = Vec::new();
    let mut syncs = 0;
    let mut pending_sync = std::collections::HashMap::new();
    for line in text.lines() {
        // strace pads the pid column (`6382  writev(…`, `28744 writev(…`).
        let Some((pid, call)) = line.split_once(' ') else {
            continue;
        };
        let call = call.trim_start();
        if let Some(resumed) = call.strip_prefix("<... ") {
            let name = resumed.split(' ').next().unwrap_or("");
            if op_of(name) == Some(Op::Synced)
                && let Some(target) = pending_sync.remove(pid)
                && resumed.ends_with("= 0")
            {
                events.push(Event {
                    op: Op::Synced,
                    target,
                    written: String::new(),
                });
            }
            continue;
        }
        let Some((name, args)) = call.split_once('(') else {
            continue;
        };
        let Some(op) = op_of(name) else { continue };
        let first = args
            .split([',', ')'])
            .next()
            .unwrap_or("")
            .trim_end_matches(" <unfinished ...>");
        let target = target_of(first, stub_port);
        if op == Op::Synced {
            syncs += 1;
            if call.ends_with("<unfinished ...>") {
                pending_sync.insert(pid.to_owned(), target);
                continue;
            }
            if !call.ends_with("= 0") {
                continue;
            }
        }
        let written = if op == Op::Write {
            args.to_owned()
        } else {
            String::new()
        };
        events.push(Event {
            op,
            target,
            written,
        });
    }
    Trace { events, syncs }
}

impl Trace {
    /// Where each request to the stub began: a write to the stub's socket with no write to it
    /// since the last read from it (the previous response).
    fn requests(&self) -> Vec<usize> {
        let mut starts = Vec::new();
        let mut sending = false;
        for (i, e) in self.events.iter().enumerate() {
            match (e.target, e.op) {
                (Target::Stub, Op::Write) if !sending => {
                    starts.push(i);
                    sending = true;
                }
                (Target::Stub, Op::Read) => sending = false,
                _ => {}
            }
        }
        starts
    }

    /// Whether a write to `file` in `since..at` holding `marker` among its bytes was followed
    /// by a completed sync of `file` before `at`: that record was on disk at `at`. (Only a
    /// write with the marker counts: a later write of something else, not yet synced, breaks
    /// no promise.)
    fn covered(&self, file: Target, marker: &str, since: usize, at: usize) -> Result<(), String> {
        let window = &self.events[since..at];
        let holds = |e: &Event| e.target == file && e.op == Op::Write && e.written.contains(marker);
        let written = window.iter().position(holds).ok_or_else(|| {
            format!("no write of {marker} to {file:?} between events {since} and {at}")
        })?;
        window[written..]
            .iter()
            .any(|e| e.target == file && e.op == Op::Synced)
            .then_some(())
            .ok_or_else(|| {
                format!("the write of {marker} to {file:?} is not synced before event {at}")
            })
    }
}

/// `ask` (the command [`ask`] builds) run under strace, writing the trace to `out`.
fn traced(ask: &Command, out: &Path) -> Output {
    let mut strace = Command::new("strace");
    strace
        .args(["-f", "-yy", "-s", "65536", "-e", TRACED, "-o"])
        .arg(out)
        .arg(ask.get_program())
        .args(ask.get_args());
    for (key, value) in ask.get_envs() {
        match value {
            Some(v) => strace.env(key, v),
            None => strace.env_remove(key),
        };
    }
    strace.stdin(Stdio::null()).output().unwrap()
}

fn strace_here() -> bool {
    let present = Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    needs(present, "strace", "FUSEFORKS_REQUIRE_STRACE")
}

/// One tool round with an effect (`file` writes `out.md`), then the answer: a village's first
/// `ask` (where the records' bytes in a written page can only be this ask's), then a second
/// one (the steady figure). Request 1 follows the sync of a write holding its intent, request
/// 2 the syncs of its intent (written since request 1) and of the `file_write` audit line, and
/// the answer on stdout the sync of the turn record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_follows_the_fsync_that_covers_its_intent() {
    if !strace_here() {
        return;
    }
    let stub = StubServer::start(Vec::new()).await;
    let port = stub.base_url().rsplit(':').next().unwrap().to_owned();
    let data = TempDataDir::new();
    let work = working_village(&data, stub.base_url());
    for (n, which) in [(1, "a village's first"), (2, "a later")] {
        stub.push(one_tool_round());
        let out = data.data_dir().join(format!("strace-{n}.txt"));
        let command = ask(&data, "");
        let run = {
            let out = out.clone();
            tokio::task::spawn_blocking(move || traced(&command, &out))
                .await
                .unwrap()
        };
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success() && stdout.contains(ANSWER),
            "{}\n{stdout}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(work.data_dir().join("out.md").exists(), "no effect");
        assert_eq!(stub.requests().len(), 2 * n);
        let trace = parse(&std::fs::read_to_string(&out).unwrap(), &port);
        eprintln!(
            "figure: {} fsync/fdatasync calls in {which} one-tool-round ask (debug build, all threads)",
            trace.syncs
        );
        let failed = trace.uncovered_points();
        assert!(failed.is_empty(), "{which} ask: {failed:#?}");
    }
}

/// The stub's replies for one `ask`: a `file` write, then the answer.
fn one_tool_round() -> [fuseforks_testkit::stub::StubReply; 2] {
    [
        wire_replies::tool_calls(
            WIRE,
            &[call(
                "c1",
                "file",
                json!({"op": "write", "path": "out.md", "content": "a"}),
            )],
            U,
        ),
        wire_replies::text(WIRE, ANSWER, U),
    ]
}

impl Trace {
    /// The durable points this trace breaks, each with why (empty: every one kept).
    fn uncovered_points(&self) -> Vec<String> {
        let requests = self.requests();
        let [first, second] = requests[..] else {
            return vec![format!("requests seen in the trace: {requests:?}")];
        };
        let Some(answer) = (second..self.events.len()).find(|&i| {
            let e = &self.events[i];
            e.target == Target::Stdout && e.op == Op::Write
        }) else {
            return vec!["no write to stdout after the second request".into()];
        };
        let checks = [
            (
                "request 1: its intent",
                self.covered(Target::Sessions, INTENT, 0, first),
            ),
            (
                "request 2: its intent",
                self.covered(Target::Sessions, INTENT, first, second),
            ),
            (
                "request 2: the tool's audit line",
                self.covered(Target::Audit, EFFECT, 0, second),
            ),
            (
                "the answer: the turn record",
                self.covered(Target::Sessions, TURN, second, answer),
            ),
        ];
        checks
            .into_iter()
            .filter_map(|(what, result)| result.err().map(|why| format!("{what}: {why}")))
            .collect()
    }
}

#[test]
fn the_parser_places_a_sync_where_it_returned_and_cuts_socket_names() {
    let text = "\
7 pwrite64(12</d/workspace/sessions.redb>, \"x\", 320, 0) = 320
7 fdatasync(12</d/workspace/sessions.redb> <unfinished ...>
812   writev(16<TCP:[127.0.0.1:46514->127.0.0.1:18772]>, [{iov_base=\"POST\", iov_len=4}], 1) = 4
7 <... fdatasync resumed>) = 0
8 recvfrom(16<TCP:[127.0.0.1:46514->127.0.0.1:18772]>, \"HTTP\", 8192, 0, NULL, NULL) = 4
8 write(1<pipe:[5]>, \"done\\n\", 5) = 5
";
    // A pid shorter than the column is padded (line 3): its call is read all the same.
    let trace = parse(text, "18772");
    assert_eq!(trace.syncs, 1);
    assert_eq!(trace.requests(), vec![1]);
    // The sync returned after the request left: the request is not covered.
    assert!(trace.covered(Target::Sessions, "x", 0, 1).is_err());
    assert!(trace.covered(Target::Sessions, "x", 0, 4).is_ok());
    // A write without the record's bytes does not cover it.
    assert!(trace.covered(Target::Sessions, "absent", 0, 4).is_err());
    assert_eq!(trace.events[4].target, Target::Stdout);
}
