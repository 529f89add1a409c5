//! Money and endpoints through the binary: a 100 MB model answer
//! fails with `LLM_RESPONSE_TOO_LARGE` in little memory and leaves `sessions.redb` small; a
//! budget below the first estimate sends nothing; a SIGKILL between payment and the turn
//! record leaves an intent that stats count as unknown usage; `check` refuses bad endpoints.

use std::process::{Child, ExitStatus, Stdio};
use std::time::Duration;

use fuseforks_core::llm::Wire;
use fuseforks_core::sessions::SessionStore;
use fuseforks_core::stats::{Period, TimeZone, aggregate};
use fuseforks_core::village::{VillageStore, World};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies;
use fuseforks_testkit::{KillOnDrop, TempDataDir, eventually_blocking};

use crate::headless::{U, command, log, run, stub_village, village};
use crate::{stderr, stdout, words};

const MB: u64 = 1_000_000;

fn ask_args(dir: &str) -> Vec<String> {
    crate::headless::ask_args(dir, &[], "tell me everything")
}

/// Runs `ask` and polls its `VmHWM` (peak resident set) until it exits: the high-water mark
/// only grows, so the last reading before the exit is the peak.
fn ask_with_peak_rss(dir: &str) -> (ExitStatus, u64, String) {
    let a = ask_args(dir);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let child = command(&a, true)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop::new(child);
    let status_file = format!("/proc/{}/status", child.0.as_ref().unwrap().id());
    let mut peak_kib = 0u64;
    // VmHWM is the peak so far: the last reading before the exit holds the whole run's.
    eventually_blocking("the ask to end", Duration::from_secs(60), || {
        if let Some(kib) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|s| vm_hwm_kib(&s))
        {
            peak_kib = peak_kib.max(kib);
        }
        child.0.as_mut().unwrap().try_wait().unwrap().is_some()
    });
    let out = child.take().wait_with_output().unwrap();
    (out.status, peak_kib * 1024, stdout(&out))
}

fn vm_hwm_kib(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn redb_size(data: &TempDataDir) -> u64 {
    std::fs::metadata(data.workspace().join("sessions.redb")).map_or(0, |m| m.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_answer_fails_in_little_memory_and_leaves_the_store_small() {
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::text(wire, "A small answer.", U),
        wire_replies::text(wire, "FILL", U).fill("FILL", 100 * MB),
        wire_replies::error(wire, 500, "FILL", None).fill("FILL", 100 * MB),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let dir2 = dir.clone();
    let (first, small_peak, _) = tokio::task::spawn_blocking(move || ask_with_peak_rss(&dir2))
        .await
        .unwrap();
    assert_eq!(first.code(), Some(0));
    let before = redb_size(&data);

    let dir2 = dir.clone();
    let (status, peak, out) = tokio::task::spawn_blocking(move || ask_with_peak_rss(&dir2))
        .await
        .unwrap();
    assert_eq!(
        status.code(),
        Some(6),
        "no answer expected ({} bytes on stdout)",
        out.len()
    );
    assert!(out == "(No answer.)\n", "{} bytes on stdout", out.len());
    let text = log(&data);
    assert!(
        text.contains("stop=failed:LLM_RESPONSE_TOO_LARGE"),
        "{text}"
    );
    let grown = redb_size(&data).saturating_sub(before);
    eprintln!(
        "ask peak RSS: small answer {} MB, 100 MB answer {} MB; sessions.redb grew {grown} bytes",
        small_peak / MB,
        peak / MB
    );
    assert!(peak > 0 && peak < 100 * MB, "peak RSS {peak} bytes");
    assert!(grown < MB, "sessions.redb grew {grown} bytes");
    assert!(
        text.contains("usage=unknown"),
        "a call refused after it was sent may have been billed: {text}"
    );

    // An error answer of 100 MB is read only up to its small cap.
    let (status, peak, _) = tokio::task::spawn_blocking(move || ask_with_peak_rss(&dir))
        .await
        .unwrap();
    assert_eq!(status.code(), Some(6));
    eprintln!("ask peak RSS: 100 MB error body {} MB", peak / MB);
    assert!(peak > 0 && peak < 100 * MB, "peak RSS {peak} bytes");
    assert!(log(&data).contains("stop=failed:LLM_HTTP"));
    assert_eq!(stub.requests().len(), 3, "never retried past max_retries=1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_below_the_first_estimate_sends_nothing() {
    let stub = StubServer::start(vec![wire_replies::text(Wire::OpenAiCompat, "paid", U)]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), Some(500));
    let dir = data.data_dir().display().to_string();
    let out = run(ask_args(&dir), true).await;
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(stdout(&out), "(Stopped at the token budget.)\n");
    assert_eq!(stub.requests().len(), 0, "no model call");
    let log = log(&data);
    assert!(
        log.contains("budget stop: agent=rec ceiling=500 remaining=500")
            && log.contains("reason=reserve_short")
            && log.contains("stop=reserve_short"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkill_between_payment_and_record_is_unknown_usage_in_stats() {
    let stub = StubServer::start(vec![
        wire_replies::text(Wire::OpenAiCompat, "too late", U).after(Duration::from_secs(20)),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let a = ask_args(&dir);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let child: Child = command(&a, true)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut asking = KillOnDrop::new(child);
    stub.wait_requests(1).await;
    // The call is paid for (the provider has it); the process dies before any turn record.
    let mut ask = asking.take();
    ask.kill().unwrap();
    ask.wait().unwrap();
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    let world: World = VillageStore::new(data.workspace())
        .load_world()
        .unwrap()
        .value;
    let report = aggregate(&store, &world, Period::All, &TimeZone::UTC).unwrap();
    assert_eq!(report.totals.turns, 0, "no turn record");
    assert_eq!(report.totals.unknown_usage_calls, 1, "{report:?}");
    assert_eq!(report.unknown_usage[0].agent_id, "rec");
    assert_eq!(report.unknown_usage[0].model, "stub-model");
    drop(store);

    // The conversation goes on; the next turn of the same agent does not hide the lost call.
    stub.push([wire_replies::text(Wire::OpenAiCompat, "answered", U)]);
    let mut again = ask_args(&dir);
    again.insert(1, "--continue-session".into());
    let out = run(again, true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let store = SessionStore::open(&data.workspace().join("sessions.redb")).unwrap();
    assert_eq!(store.list().unwrap().len(), 1, "the same conversation");
    let report = aggregate(&store, &world, Period::All, &TimeZone::UTC).unwrap();
    assert_eq!(
        (report.totals.turns, report.totals.unknown_usage_calls),
        (1, 1),
        "{report:?}"
    );
}

fn set_endpoint(data: &TempDataDir, url: &str, allow: bool) {
    data.edit_world(|w| {
        w.model_templates[0].base_url = url.into();
        w.model_templates[0].allow_insecure_http = allow;
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_and_ask_refuse_bad_endpoints_and_the_village_still_opens() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let check = words(&format!(
        "check --for ask --data-dir {dir} --start reception --secrets env"
    ));
    for (url, allow, code, exit) in [
        ("not a url", false, "ENDPOINT_INVALID", 3),
        ("file:///etc/passwd", false, "ENDPOINT_INVALID", 3),
        ("file:///etc/passwd", true, "ENDPOINT_INVALID", 3),
        ("http://192.0.2.10:8080/v1", false, "ENDPOINT_INSECURE", 3),
        (
            "http://192.0.2.10:8080/v1",
            true,
            "ENDPOINT_INSECURE_ALLOWED",
            0,
        ),
    ] {
        set_endpoint(&data, url, allow);
        assert!(
            VillageStore::new(data.workspace()).load_world().is_ok(),
            "the village opens (so that the GUI can fix it)"
        );
        let out = run(check.clone(), true).await;
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(exit), "{url}: {all}");
        assert!(all.contains(code) && all.contains("stub"), "{url}: {all}");
        assert!(!all.contains(crate::headless::KEY));
    }
    set_endpoint(&data, "http://192.0.2.10:8080/v1", false);
    let out = run(ask_args(&dir), true).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ENDPOINT_INSECURE"),
        "{}",
        stderr(&out)
    );
    set_endpoint(&data, &format!("{}/v1", stub.base_url()), false);
    let out = run(check, true).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "loopback http is fine: {}",
        stderr(&out)
    );
}

/// A model answer well under `maxResponseBytes` whose tool-call arguments are a 6 MB JSON
/// array (3 million zeros) took 1.1 GB of RSS (a 14 MB one 2.5 GB) in the re-run of issue
/// 10's attack: the arguments string is parsed into a `serde_json::Value` (32 bytes per
/// element) and then cloned and re-serialised along the turn. The response cap bounds the
/// bytes, not what they expand to. Bounded like the 100 MB answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_arguments_that_expand_in_memory_stay_under_100_mb() {
    let wire = Wire::OpenAiCompat;
    let call = wire_replies::ScriptCall {
        id: "c1".into(),
        name: "file".into(),
        args: serde_json::json!({"op": "read", "path": "x", "a": vec![0u8; 3_000_000]}),
    };
    let stub = StubServer::start(vec![
        wire_replies::tool_calls(wire, &[call], U),
        wire_replies::text(wire, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let (status, peak, _) = tokio::task::spawn_blocking(move || ask_with_peak_rss(&dir))
        .await
        .unwrap();
    eprintln!(
        "ask peak RSS: 6 MB of tool arguments {} MB (exit {status})",
        peak / MB
    );
    assert!(peak > 0 && peak < 100 * MB, "peak RSS {peak} bytes");
}

/// The model client follows HTTP redirects (reqwest's default policy, up to 10) without
/// applying the endpoint rule to where they lead: an endpoint that answers 307 sends the
/// request, the conversation and, on the Anthropic wire, the `x-api-key` header to another
/// host (reqwest drops only `Authorization`/`Cookie` across hosts), so a redirect to a plain
/// `http://` address elsewhere defeats `ENDPOINT_INSECURE` (found by an attack re-run,
/// shown here with a second loopback host only). No key may reach the other host.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_never_carries_the_key_to_another_host() {
    use fuseforks_core::village::Provider;
    let other = StubServer::start(vec![wire_replies::text(Wire::Anthropic, "moved", U)]).await;
    let elsewhere = other.base_url().replace("127.0.0.1", "localhost");
    let stub = StubServer::start(vec![
        fuseforks_testkit::stub::StubReply::json(307, &serde_json::json!({}))
            .header("location", &format!("{elsewhere}/v1/messages")),
    ])
    .await;
    let data = TempDataDir::new();
    stub_village(stub.base_url())
        .world(|w| w.model_templates[0].provider = Some(Provider::Anthropic))
        .write(&data);
    let dir = data.data_dir().display().to_string();
    let _ = run(ask_args(&dir), true).await;
    assert_eq!(stub.requests().len(), 1, "the endpoint was asked once");
    let leaked: Vec<_> = other
        .requests()
        .iter()
        .filter(|r| r.header("x-api-key").is_some() || r.header("authorization").is_some())
        .map(|r| r.path.clone())
        .collect();
    assert!(
        leaked.is_empty(),
        "the key followed a redirect to another host: {leaked:?}"
    );
}

/// The 500,000-value budget is per arguments string, not per answer: one answer (under the
/// 16 MiB body cap) with 16 tool calls whose arguments are each `[0,0,…]` of 490,000 values
/// passes every check (`llm/adapters/mod.rs`, `parse_args`, called once per call) and `ask`
/// peaks at ≈ 1.7 GB (found by a second attack re-run). The budget must hold for
/// the whole answer (all its arguments together).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tool_calls_cannot_multiply_the_json_value_budget() {
    let zeros = format!("[{}0]", "0,".repeat(489_999));
    let calls: Vec<serde_json::Value> = (0..16)
        .map(|i| {
            serde_json::json!({"id": format!("c{i}"), "type": "function",
                "function": {"name": "file", "arguments": zeros}})
        })
        .collect();
    let answer = serde_json::json!({
        "id": "x", "object": "chat.completion", "model": "stub-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    });
    assert!(answer.to_string().len() < 16 * 1024 * 1024);
    let stub = StubServer::start(vec![
        fuseforks_testkit::stub::StubReply::json(200, &answer),
        wire_replies::text(Wire::OpenAiCompat, "done", U),
    ])
    .await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let (_, peak, _) = tokio::task::spawn_blocking(move || ask_with_peak_rss(&dir))
        .await
        .unwrap();
    eprintln!(
        "ask peak RSS with 16 × 490,000-value arguments: {} MB",
        peak / MB
    );
    assert!(peak > 0 && peak < 200 * MB, "peak RSS {} MB", peak / MB);
}

/// `maxResponseBytes` at its highest let a 100 MB answer reach 944 MB
/// RSS (the cap was 256 MiB). The cap is now at most 32 MiB: a template asking for more is
/// read as that, and the same answer is refused in little memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_answer_under_the_highest_cap_a_template_may_ask_stays_small() {
    let wire = Wire::OpenAiCompat;
    let stub = StubServer::start(vec![
        wire_replies::text(wire, "FILL", U).fill("FILL", 100 * MB),
    ])
    .await;
    let data = TempDataDir::new();
    crate::headless::stub_village(stub.base_url())
        .world(|w| w.model_templates[0].max_response_bytes = Some(u64::MAX))
        .write(&data);
    let dir = data.data_dir().display().to_string();
    let (status, peak, _) = tokio::task::spawn_blocking(move || ask_with_peak_rss(&dir))
        .await
        .unwrap();
    assert_eq!(status.code(), Some(6));
    assert!(log(&data).contains("stop=failed:LLM_RESPONSE_TOO_LARGE"));
    eprintln!(
        "figure: ask peak RSS, 100 MB answer at the highest cap: {} MB",
        peak / MB
    );
    assert!(peak > 0 && peak < 200 * MB, "peak RSS {peak} bytes");
}
