//! `pricing fetch` through the binary on a temporary village (docs/formats/prices.json.md): a
//! table from a file and from the shelf's source over loopback fills the templates of the
//! models it lists (unknown fields kept, the others left byte for byte), a second fetch writes
//! nothing; `stats` then says how old the prices are; every refused source or table (plain
//! http, over 8 MiB, slow, malformed, not 200) and a held village leave `world.json` byte for
//! byte, each with its code and exit code.

use std::time::{Duration, Instant};

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::{Record, SessionStore, TurnRecord, TurnStop};
use fuseforks_core::village::TemplateId;
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::{StubReply, StubServer};
use serde_json::{Value, json};

use crate::headless::stub_village;
use crate::{cli, stderr, stdout};

/// A table listing the stub template's model.
fn table() -> Value {
    json!({"asOf": "2026-11-01", "models": {
        "stub-model": {"inputPerMtok": 3.0, "outputPerMtok": 15.0, "cacheReadPerMtok": 0.3},
        "unused-model": {"inputPerMtok": 1.0, "outputPerMtok": 2.0}}})
}

/// A village with template `stub` (model `stub-model`, an unknown field) and template `other`
/// (a model no table lists); its `--data-dir` words.
fn village() -> (TempDataDir, String) {
    let data = TempDataDir::new();
    stub_village("http://127.0.0.1:9")
        .world(|w| {
            w.model_templates[0]
                .extra
                .insert("futureField".into(), json!({"kept": true}));
            let mut other =
                fuseforks_testkit::stub_template(Wire::OpenAiCompat, "http://127.0.0.1:9");
            other.id = TemplateId::new("other").unwrap();
            other.model = "absent-model".into();
            other.input_per_mtok = Some(9.0);
            w.model_templates.push(other);
        })
        .write(&data);
    let place = format!("--data-dir {} --secrets env", data.data_dir().display());
    (data, place)
}

fn world(data: &TempDataDir) -> Vec<u8> {
    std::fs::read(data.workspace().join("world.json")).unwrap()
}

fn template<'a>(world: &'a Value, id: &str) -> &'a Value {
    world["modelTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap()
}

/// Runs `line` off the async runtime (a stub may be serving on it); exit code, stdout, stderr.
async fn run(line: String) -> (Option<i32>, String, String) {
    let out = tokio::task::spawn_blocking(move || cli(&line))
        .await
        .unwrap();
    (out.status.code(), stdout(&out), stderr(&out))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_fills_the_templates_of_its_models_and_stats_say_how_old_it_is() {
    let (data, place) = village();
    let file = data.data_dir().join("prices.json");
    std::fs::write(&file, table().to_string()).unwrap();
    let before: Value = serde_json::from_slice(&world(&data)).unwrap();
    let (code, out, err) = run(format!("pricing fetch --from {} {place}", file.display())).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("updated stub (stub-model): input - → 3 $/Mtok")
            && out.contains("as of - → 2026-11-01")
            && out.contains("not in the table other (absent-model): left as it is")
            && out.contains("world.json written"),
        "{out}"
    );
    let after: Value = serde_json::from_slice(&world(&data)).unwrap();
    let stub = template(&after, "stub");
    assert_eq!(
        (
            &stub["inputPerMtok"],
            &stub["outputPerMtok"],
            &stub["cacheReadPerMtok"]
        ),
        (&json!(3.0), &json!(15.0), &json!(0.3))
    );
    assert_eq!(
        stub["cacheWritePerMtok"],
        Value::Null,
        "a rate the table lacks falls back"
    );
    assert_eq!(stub["pricingAsOf"], "2026-11-01");
    assert_eq!(
        stub["futureField"],
        json!({"kept": true}),
        "unknown fields kept"
    );
    assert_eq!(
        template(&after, "other"),
        template(&before, "other"),
        "left as it is"
    );
    // The same table again: nothing changes, nothing is written.
    let written = world(&data);
    let (code, out, err) = run(format!(
        "pricing fetch --json --from {} {place}",
        file.display()
    ))
    .await;
    assert_eq!(code, Some(0), "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            &report["written"],
            &report["templates"][0]["outcome"],
            &report["templates"][1]["outcome"]
        ),
        (&json!(false), &json!("unchanged"), &json!("not_in_table"))
    );
    assert_eq!(world(&data), written, "byte for byte");
    let log = std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap();
    assert!(
        log.contains(
            "pricing fetch: from=cli models=2 updated=1 unchanged=0 not_in_table=1 outcome=ok"
        ),
        "{log}"
    );
    // A paid turn on the stub's model: its ≈ $ and the age of the prices behind it.
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let session = store.create("t", 0).unwrap();
    let turn = TurnRecord {
        agent_id: "rec".into(),
        ts_ms: 0,
        hop: 0,
        rounds: 1,
        waves: 0,
        stop: TurnStop::Completed,
        prompt: 1_000_000,
        cached: 0,
        completion: 0,
        reasoning: 0,
        cache_write: 0,
        cache_write_1h: 0,
        model: "stub-model".into(),
        backend: "open_ai_compat".into(),
        elapsed_ms: 5,
        usage_unknown: false,
        skill: None,
    };
    store.append(&session, &Record::Turn(turn), 0).unwrap();
    drop(store);
    let (code, out, err) = run(format!(
        "stats --json --data-dir {}",
        data.data_dir().display()
    ))
    .await;
    assert_eq!(code, Some(0), "{err}");
    let stats: Value = serde_json::from_str(&out).unwrap();
    let today = jiff::Timestamp::now()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .date();
    let days = (today - jiff::civil::date(2026, 11, 1)).get_days();
    assert_eq!(stats["totals"]["costUsd"], json!(3.0));
    assert_eq!(stats["pricingAsOf"], "2026-11-01");
    // The process zone may put "today" a day apart from UTC's.
    let age = stats["pricingAgeDays"].as_i64().unwrap();
    assert!((age - i64::from(days)).abs() <= 1, "{age} vs {days}");
    let (_, text, _) = run(format!("stats --data-dir {}", data.data_dir().display())).await;
    assert!(text.contains("prices as of 2026-11-01 ("), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shelf_source_is_fetched_over_loopback() {
    let stub = StubServer::start(vec![StubReply::json(200, &table())]).await;
    let (data, place) = village();
    std::fs::write(
        data.data_dir().join("pricing.json"),
        json!({"url": format!("{}/prices.json", stub.base_url())}).to_string(),
    )
    .unwrap();
    let (code, out, err) = run(format!("pricing fetch {place}")).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("/prices.json as of 2026-11-01 (2 models)"),
        "{out}"
    );
    assert_eq!(stub.requests().len(), 1);
    let after: Value = serde_json::from_slice(&world(&data)).unwrap();
    assert_eq!(template(&after, "stub")["pricingAsOf"], "2026-11-01");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_source_or_table_leaves_world_json_byte_for_byte() {
    let (data, place) = village();
    let original = world(&data);
    let bad_rate = json!({"asOf": "2026-11-01", "models": {"stub-model": {"inputPerMtok": -1, "outputPerMtok": 1}}});
    let too_large =
        StubReply::json(200, &json!({"asOf": "FILL"})).fill("FILL", 8 * 1024 * 1024 + 1);
    // (what the stub answers, the time limit, the code, the exit code, a word stderr holds)
    let cases = [
        (
            StubReply::json(200, &bad_rate),
            None,
            "PRICING_MALFORMED",
            1,
            "models.stub-model.inputPerMtok",
        ),
        (
            StubReply::json(200, &json!({"asOf": "2026-11-01"})),
            None,
            "PRICING_MALFORMED",
            1,
            "models",
        ),
        (
            StubReply::json(404, &json!({})),
            None,
            "PRICING_FETCH_FAILED",
            1,
            "HTTP 404",
        ),
        (
            StubReply::json(302, &json!({})).header("location", "http://prices.example/"),
            None,
            "PRICING_FETCH_FAILED",
            1,
            "redirect",
        ),
        (too_large, None, "PRICING_TOO_LARGE", 1, "8388608 bytes"),
        (
            StubReply::json(200, &table()).after(Duration::from_secs(20)),
            Some(300),
            "PRICING_TIMED_OUT",
            7,
            "within 1 s",
        ),
    ];
    for (reply, limit, code, exit, word) in cases {
        let stub = StubServer::start(vec![reply]).await;
        let limit = limit.map_or_else(String::new, |ms| format!("--timeout-ms {ms}"));
        let started = Instant::now();
        let line = format!(
            "pricing fetch --from {}/p.json {limit} {place}",
            stub.base_url()
        );
        let (got, _, err) = run(line).await;
        assert_eq!(got, Some(exit), "{code}: {err}");
        assert!(
            err.contains(&format!("[{code}]")) && err.contains(word),
            "{code}: {err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{code}: bounded in time"
        );
        assert_eq!(world(&data), original, "{code}: world.json unchanged");
    }
    // Plain http to another host: refused before anything is sent.
    let (got, _, err) = run(format!(
        "pricing fetch --from http://prices.example/p.json {place}"
    ))
    .await;
    assert_eq!(got, Some(2), "{err}");
    assert!(
        err.contains("[PRICING_SOURCE_INSECURE]") && err.contains("https"),
        "{err}"
    );
    // A file over the limit, and one that is not there.
    let big = data.data_dir().join("big.json");
    std::fs::write(&big, vec![b' '; 8 * 1024 * 1024 + 1]).unwrap();
    let (got, _, err) = run(format!("pricing fetch --from {} {place}", big.display())).await;
    assert_eq!(got, Some(1), "{err}");
    assert!(err.contains("[PRICING_TOO_LARGE]"), "{err}");
    let (got, _, err) = run(format!("pricing fetch --from /nonexistent/p.json {place}")).await;
    assert_eq!(got, Some(1), "{err}");
    assert!(err.contains("[PRICING_FETCH_FAILED]"), "{err}");
    assert_eq!(world(&data), original);
    let log = std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap();
    assert!(
        log.contains("pricing fetch: from=cli outcome=PRICING_TIMED_OUT"),
        "{log}"
    );
}

#[test]
fn a_village_held_by_another_process_is_refused_with_exit_4() {
    let (data, place) = village();
    let file = data.data_dir().join("prices.json");
    std::fs::write(&file, table().to_string()).unwrap();
    let original = world(&data);
    let _held = fuseforks_host::lock::VillageLock::acquire(&data.workspace()).unwrap();
    let out = cli(&format!("pricing fetch --from {} {place}", file.display()));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[VILLAGE_LOCKED]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(world(&data), original);
}
