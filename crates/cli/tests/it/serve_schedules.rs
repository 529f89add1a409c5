//! `serve` runs the schedules: an overdue-within-grace daily
//! schedule fires through the stub once the scheduler has started, `ask` never
//! touches `lastConsumedDueMs`, and a kill between the consume and the delivery loses that
//! firing and never doubles it (real child processes).

use std::process::Stdio;

use fuseforks_core::probe::approve_probe;
use fuseforks_core::village::{ScheduleProbe, ShelfStore, VillageStore};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::{DEADLINE, KillOnDrop, TempDataDir, eventually, wire_replies};
use serde_json::{Value, json};

use crate::headless::{U, command, log, run, signal_and_wait, village, wait_log};
use crate::{stderr, words};

/// A daily schedule `s1` to `rec` whose wall time (UTC) was two minutes ago.
pub(crate) fn overdue_daily() -> (Value, i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let due = (now - 120_000) / 60_000 * 60_000;
    let schedule = json!({
        "id": "s1", "to": "rec", "message": "Write the daily note.",
        "recurrence": {"kind": "daily", "hour": due / 3_600_000 % 24, "minute": due / 60_000 % 60},
        "createdAtMs": now - 3 * 86_400_000
    });
    (schedule, due)
}

pub(crate) fn write_schedules(data: &TempDataDir, doc: &Value) {
    std::fs::write(
        data.workspace().join("schedules.json"),
        serde_json::to_string(doc).unwrap(),
    )
    .unwrap();
}

fn consumed(data: &TempDataDir) -> Option<i64> {
    let text = std::fs::read_to_string(data.workspace().join("schedules.json")).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()[0]["lastConsumedDueMs"].as_i64()
}

pub(crate) fn serve(dir: &str) -> KillOnDrop {
    KillOnDrop::new(
        command(
            words(&format!(
                "serve --data-dir {dir} --start batch --secrets env"
            )),
            true,
        )
        .env("TZ", "UTC")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap(),
    )
}

/// The time of day, in ms, of the first log line containing `needle` (its stamp
/// `YYYY-MM-DD HH:MM:SS.mmm`).
fn logged_at(log: &str, needle: &str) -> i64 {
    let line = log
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {log}"));
    let field = |range: std::ops::Range<usize>| line[range].parse::<i64>().unwrap();
    ((field(11..13) * 60 + field(14..16)) * 60 + field(17..19)) * 1_000 + field(20..23)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_fires_an_overdue_daily_schedule_once_started_and_ask_never_consumes() {
    let stub = StubServer::start(vec![
        wire_replies::text(fuseforks_core::llm::Wire::OpenAiCompat, "asked", U),
        wire_replies::text(fuseforks_core::llm::Wire::OpenAiCompat, "noted", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let (schedule, due) = overdue_daily();
    write_schedules(&data, &json!([schedule]));
    let dir = data.data_dir().display().to_string();

    // `ask` never starts the scheduler.
    let asked = run(
        words(&format!(
            "ask --data-dir {dir} --start reception --secrets env hello"
        )),
        true,
    )
    .await;
    assert_eq!(asked.status.code(), Some(0), "{}", stderr(&asked));
    assert_eq!(consumed(&data), None, "ask consumed a schedule");
    assert!(!log(&data).contains("schedule "), "{}", log(&data));

    let mut serving = serve(&dir);
    wait_log(&data, "schedule fire: id=s1 target=rec").await;
    stub.wait_requests(2).await;
    let text = log(&data);
    // The firing follows the runner's start; how long after is a figure, not a test of
    // this machine's speed.
    let latency_ms =
        logged_at(&text, "schedule fire: id=s1") - logged_at(&text, "schedule runner: started");
    eprintln!("figure: runner start -> schedule fire = {latency_ms} ms");
    let position = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle:?}: {text}"))
    };
    assert!(
        position("schedule runner: started") < position("schedule fire: id=s1"),
        "{text}"
    );
    assert_eq!(consumed(&data), Some(due));
    let fired = &stub.requests()[1];
    assert!(fired.body.to_string().contains("[Scheduled task s1]"));
    assert!(text.contains(&format!("schedule fire: id=s1 target=rec due={due}")));
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stub.requests().len(), 2, "fired more than once");
    // Without --verbose, serve still says each firing on stderr, once.
    let said = stderr(&out);
    assert_eq!(
        said.matches("schedule fire: id=s1 target=rec").count(),
        1,
        "{said}"
    );
    assert!(!said.contains("turn:"), "only the schedule lines: {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_between_consume_and_delivery_loses_the_firing_and_never_doubles_it() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let (mut schedule, due) = overdue_daily();
    // The pre-check runs after the consume and before the delivery: a slow one holds the
    // process there long enough to kill it.
    let probe = json!({"command": "sh", "args": ["-c", "sleep 3; echo ok"], "expect": "ok"});
    schedule["probe"] = probe.clone();
    write_schedules(&data, &json!([schedule]));
    let village_id = VillageStore::new(data.workspace())
        .read_village_id()
        .unwrap()
        .unwrap_or_default();
    let probe: ScheduleProbe = serde_json::from_value(probe).unwrap();
    approve_probe(&ShelfStore::new(data.data_dir()), &probe, &village_id).unwrap();
    let dir = data.data_dir().display().to_string();

    let mut serving = serve(&dir);
    let consumed_now = || consumed(&data).is_some();
    eventually("the consume of s1", DEADLINE, consumed_now).await;
    assert_eq!(consumed(&data), Some(due), "{}", log(&data));
    let killed = signal_and_wait(&mut serving, "KILL").await;
    assert_eq!(killed.status.code(), None, "not killed by the signal");
    assert!(!log(&data).contains("schedule fire:"), "{}", log(&data));

    // For the restart, s1 (its consume on disk) loses its slow probe, so that a wrong firing
    // would say so at once, and s2, overdue too, fires: its turn ending proves the runner has
    // decided about both (one tick reads the whole file) — a positive sign instead of a wait.
    let mut doc: Value = serde_json::from_str(
        &std::fs::read_to_string(data.workspace().join("schedules.json")).unwrap(),
    )
    .unwrap();
    doc[0].as_object_mut().unwrap().remove("probe");
    let (mut second, _) = overdue_daily();
    second["id"] = json!("s2");
    doc.as_array_mut().unwrap().push(second);
    write_schedules(&data, &doc);
    stub.push([wire_replies::text(
        fuseforks_core::llm::Wire::OpenAiCompat,
        "s2 done",
        U,
    )]);
    let mut again = serve(&dir);
    wait_log(&data, "schedule fire: id=s2").await;
    wait_log(&data, "turn: agent=rec").await;
    let out = signal_and_wait(&mut again, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = log(&data);
    assert_eq!(
        text.matches("schedule runner: started").count(),
        2,
        "{text}"
    );
    assert!(!text.contains("schedule fire: id=s1"), "{text}");
    assert!(!text.contains("schedule probe:"), "{text}");
    assert_eq!(stub.requests().len(), 1, "the lost firing was delivered");
    assert_eq!(consumed(&data), Some(due));
}

fn listing_in(dir: &str, tz: &str) -> std::process::Output {
    command(words(&format!("schedules --data-dir {dir} --json")), false)
        .env("TZ", tz)
        .output()
        .unwrap()
}

#[test]
fn the_listing_gives_the_next_due_in_the_process_zone_tz_first() {
    let data = TempDataDir::new();
    village(&data, "http://127.0.0.1:9", None);
    write_schedules(
        &data,
        &json!([{
            "id": "s1", "to": "rec", "message": "m",
            "recurrence": {"kind": "daily", "hour": 9, "minute": 5},
            "createdAtMs": 1_700_000_000_000_i64
        }]),
    );
    let dir = data.data_dir().display().to_string();
    let tokyo = listing_in(&dir, "Asia/Tokyo");
    assert!(tokyo.status.success(), "{}", stderr(&tokyo));
    let list: Value = serde_json::from_slice(&tokyo.stdout).unwrap();
    assert_eq!(list["timeZone"], "Asia/Tokyo", "{list}");
    let next = list["schedules"][0]["nextDue"].as_str().unwrap();
    assert!(next.ends_with("T09:05:00+09:00"), "{next}");
    let next_ms = list["schedules"][0]["nextDueMs"].as_i64().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(next_ms > now && next_ms <= now + 86_400_000, "{next_ms}");
    // `TZ` with its leading `:` stripped.
    let berlin = listing_in(&dir, ":Europe/Berlin");
    let list: Value = serde_json::from_slice(&berlin.stdout).unwrap();
    let next = list["schedules"][0]["nextDue"].as_str().unwrap();
    assert!(next.contains("T09:05:00+0"), "{next}");
    // A zone nobody knows is refused with its code, never listed in a guessed zone.
    let unknown = listing_in(&dir, "Mars/Olympus_Mons");
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains("TIMEZONE_UNKNOWN"),
        "{}",
        stderr(&unknown)
    );
}

/// The figure: how late after its due instant a firing leaves, in a real `serve` (10 interval
/// schedules due 1.5 s to 4 s after the start; the log's stamps, ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn firings_leave_within_a_second_of_their_due_in_a_real_serve() {
    let stub = StubServer::start(
        (0..10)
            .map(|_| wire_replies::text(fuseforks_core::llm::Wire::OpenAiCompat, "ok", U))
            .collect(),
    )
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let dues: Vec<i64> = (0..10).map(|i| now + 1_500 + i * 257).collect();
    let doc: Vec<Value> = dues
        .iter()
        .enumerate()
        .map(|(i, due)| {
            json!({"id": format!("i{i}"), "to": "rec", "message": "m",
                   "recurrence": {"kind": "interval", "everyMinutes": 1},
                   "createdAtMs": due - 60_000, "lastConsumedDueMs": due - 60_000})
        })
        .collect();
    write_schedules(&data, &json!(doc));
    let dir = data.data_dir().display().to_string();
    let mut serving = serve(&dir);
    wait_log(&data, "schedule fire: id=i9 ").await;
    let text = log(&data);
    let mut late: Vec<i64> = dues
        .iter()
        .enumerate()
        .map(|(i, due)| logged_at(&text, &format!("schedule fire: id=i{i} ")) - due % 86_400_000)
        .collect();
    late.sort();
    eprintln!("figure: firing latency after the due, ms (10 firings, sorted): {late:?}");
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        late.iter().all(|ms| (0..=1_000).contains(ms)),
        "{late:?}\n{text}"
    );
}

#[test]
fn the_listing_says_a_due_owed_within_grace_fires_at_the_start() {
    let data = TempDataDir::new();
    village(&data, "http://127.0.0.1:9", None);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    // Every 10 minutes from 1 minute ago: the due at the anchor's first period is owed.
    let created = now - 11 * 60_000;
    write_schedules(
        &data,
        &json!([{
            "id": "s1", "to": "rec", "message": "m",
            "recurrence": {"kind": "interval", "everyMinutes": 10},
            "createdAtMs": created
        }]),
    );
    let dir = data.data_dir().display().to_string();
    let out = listing_in(&dir, "UTC");
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        list["schedules"][0]["owedDueMs"],
        json!(created + 600_000),
        "{list}"
    );
    let human = crate::cli(&format!("schedules --data-dir {dir}"));
    assert!(
        crate::stdout(&human).contains("next: due now"),
        "{}",
        crate::stdout(&human)
    );
}
