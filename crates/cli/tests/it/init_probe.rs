//! `init --base-url/--model` (a village for a local or hosted server, no hand edit) and
//! `check --probe-endpoints` (one cheap authenticated request per template) through the binary
//! against loopback stubs.

use fuseforks_core::llm::Wire;
use fuseforks_core::village::{Credential, Provider, VillageStore};
use fuseforks_testkit::TempDataDir;
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies;
use serde_json::{Value, json};

use crate::headless::{KEY, U, args, command, run, village};
use crate::{stderr, stdout, words};

fn init(dir: &str, extra: &[&str]) -> std::process::Output {
    let mut all = words(&format!("init --data-dir {dir} --language en"));
    all.extend(extra.iter().map(|s| (*s).to_owned()));
    command(all, false).output().unwrap()
}

/// The `fuseforks-cli …` command `init` printed for `what` (`check` or `ask`), as arguments.
fn printed_command(init_stdout: &str, what: &str) -> Vec<String> {
    let line = init_stdout
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&format!("fuseforks-cli {what} ")))
        .unwrap_or_else(|| panic!("no {what} line in:\n{init_stdout}"));
    line.split_whitespace()
        .skip(1)
        .map(|a| a.trim_matches('"').to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_with_a_local_base_url_then_ask_answers_with_no_hand_edit() {
    let stub =
        StubServer::start(vec![wire_replies::text(Wire::OpenAiCompat, "Local hi.", U)]).await;
    let data = TempDataDir::new();
    let dir = data.data_dir().display().to_string();
    let base = format!("{}/v1", stub.base_url());
    let out = init(&dir, &["--base-url", &base, "--model", "m"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("needs no API key"), "{text}");
    assert!(
        !text.contains("GUI") && !text.contains("FUSEFORKS_SECRET_"),
        "{text}"
    );

    let world = VillageStore::new(data.workspace())
        .load_world()
        .unwrap()
        .value;
    let t = &world.model_templates[0];
    assert_eq!(
        (
            t.base_url.as_str(),
            t.model.as_str(),
            t.credential,
            t.provider()
        ),
        (
            base.as_str(),
            "m",
            Credential::NotRequired,
            Provider::OpenAiCompat
        )
    );

    // The ask line init printed, as printed.
    let ask = printed_command(&text, "ask");
    let out = run(ask, false).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Local hi.\n");
    let requests = stub.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].body["model"], "m");
    assert!(requests[0].header("authorization").is_none(), "no key sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_for_a_server_with_a_key_says_how_to_store_it_and_ask_uses_it() {
    let stub = StubServer::start(vec![wire_replies::text(Wire::OpenAiCompat, "Keyed.", U)]).await;
    let data = TempDataDir::new();
    let dir = data.data_dir().display().to_string();
    let base = format!("{}/v1", stub.base_url());
    let out = init(
        &dir,
        &[
            "--base-url",
            &base,
            "--model",
            "m",
            "--credential",
            "keyring",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("fuseforks-cli secrets set local --data-dir {dir}")),
        "{text}"
    );
    assert!(text.contains("FUSEFORKS_SECRET_LOCAL"), "{text}");
    assert!(!text.contains("GUI"), "no GUI on a server: {text}");
    assert!(text.contains("--probe-endpoints"), "{text}");

    let mut ask = printed_command(&text, "ask");
    ask.insert(ask.len() - 1, "--secrets".into());
    ask.insert(ask.len() - 1, "env".into());
    let out = tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = ask.iter().map(String::as_str).collect();
        command(&a, false)
            .env("FUSEFORKS_SECRET_LOCAL", KEY)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Keyed.\n");
    assert_eq!(
        stub.requests()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[test]
fn init_refuses_plain_http_to_another_host_unless_allowed() {
    let data = TempDataDir::new();
    let dir = data.data_dir().display().to_string();
    let lan = "http://192.0.2.7:11434/v1";
    let out = init(&dir, &["--base-url", lan, "--model", "qwen3"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ENDPOINT_INSECURE"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("--allow-insecure-http"),
        "{}",
        stderr(&out)
    );
    assert!(
        std::fs::read_dir(data.data_dir()).unwrap().next().is_none(),
        "nothing written"
    );

    let out = init(
        &dir,
        &[
            "--base-url",
            lan,
            "--model",
            "qwen3",
            "--allow-insecure-http",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let world = VillageStore::new(data.workspace())
        .load_world()
        .unwrap()
        .value;
    let t = &world.model_templates[0];
    assert!(t.allow_insecure_http);
    assert_eq!(
        (t.id.as_str(), t.credential),
        ("custom", Credential::Keyring)
    );

    let other = TempDataDir::new();
    let dir = other.data_dir().display().to_string();
    for bad in [
        vec!["--base-url", "ftp://x/v1", "--model", "m"],
        vec!["--base-url", "https://x.example/v1"],
        vec!["--model", "two words"],
    ] {
        let out = init(&dir, &bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr(&out));
    }
    assert!(
        std::fs::read_dir(other.data_dir())
            .unwrap()
            .next()
            .is_none()
    );
}

#[test]
fn init_with_a_provider_and_another_model_keeps_the_providers_endpoint() {
    let data = TempDataDir::new();
    let dir = data.data_dir().display().to_string();
    let out = init(
        &dir,
        &["--provider", "anthropic", "--model", "claude-opus-5"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let world = VillageStore::new(data.workspace())
        .load_world()
        .unwrap()
        .value;
    let t = &world.model_templates[0];
    assert_eq!(
        (t.id.as_str(), t.base_url.as_str(), t.model.as_str()),
        ("anthropic", "https://api.anthropic.com/v1", "claude-opus-5")
    );
    assert_eq!(t.provider(), Provider::Anthropic);
    assert!(stdout(&out).contains("fuseforks-cli secrets set anthropic"));
}

fn check_args(dir: &str, extra: &[&str]) -> Vec<String> {
    let mut all = words(&format!(
        "check --for ask --data-dir {dir} --start reception --secrets env"
    ));
    all.extend(args(extra));
    all
}

fn models() -> StubReply {
    StubReply::json(
        200,
        &json!({"object": "list", "data": [{"id": "stub-model"}]}),
    )
}

fn no_key(out: &std::process::Output) {
    assert!(
        !stdout(out).contains(KEY) && !stderr(out).contains(KEY),
        "the key never appears: {}{}",
        stdout(out),
        stderr(out)
    );
    assert!(!stderr(out).contains("Invalid API key") && !stdout(out).contains("Invalid API key"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_check_sends_no_request() {
    let stub = StubServer::start(vec![models()]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let out = run(check_args(&dir, &[]), true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).contains("ENDPOINT_"), "{}", stdout(&out));
    assert!(stub.requests().is_empty(), "check stays offline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_ok_against_a_live_stub_shows_the_latency() {
    let stub = StubServer::start(vec![models(), models(), models()]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();

    let out = run(check_args(&dir, &["--probe-endpoints"]), true).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("ENDPOINT_OK"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("stub") && line.contains(" ms"), "{line}");
    let requests = stub.requests();
    assert_eq!(requests.len(), 1, "one request per template");
    assert_eq!(requests[0].path, "/v1/models");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    no_key(&out);

    // --json: the finding with the others; --events jsonl: a cli line.
    let out = run(check_args(&dir, &["--probe-endpoints", "--json"]), true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "ENDPOINT_OK")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(finding["level"], "info");
    let mut jsonl = words("--events jsonl");
    jsonl.extend(check_args(&dir, &["--probe-endpoints"]));
    let out = run(jsonl, true).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let line = cli_line(&stderr(&out), "ENDPOINT_OK");
    assert_eq!(line["level"], "info");
    assert!(line["message"].as_str().unwrap().contains(" ms"), "{line}");
}

fn cli_line(stderr: &str, code: &str) -> Value {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "cli" && v["code"] == code)
        .unwrap_or_else(|| panic!("no {code} line in:\n{stderr}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_against_a_401_says_auth_failed_exits_3_and_never_prints_the_key() {
    let denied = || {
        StubReply::json(
            401,
            &json!({"error": {"message": format!("Invalid API key {KEY}"), "type": "invalid_api_key"}}),
        )
    };
    let stub = StubServer::start(vec![denied(), denied(), denied()]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();

    let out = run(check_args(&dir, &["--probe-endpoints"]), true).await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.contains("ENDPOINT_AUTH_FAILED"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("401"), "{line}");
    assert!(
        text.contains("secrets set stub"),
        "the fix names the command: {text}"
    );
    no_key(&out);

    let out = run(check_args(&dir, &["--probe-endpoints", "--json"]), true).await;
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stdout(&out).contains("\"ENDPOINT_AUTH_FAILED\""),
        "{}",
        stdout(&out)
    );
    no_key(&out);

    let mut jsonl = words("--events jsonl");
    jsonl.extend(check_args(&dir, &["--probe-endpoints"]));
    let out = run(jsonl, true).await;
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        cli_line(&stderr(&out), "ENDPOINT_AUTH_FAILED")["level"],
        "reject"
    );
    no_key(&out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_against_a_closed_port_says_unreachable_connection_refused() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let data = TempDataDir::new();
    village(&data, &format!("http://127.0.0.1:{port}"), None);
    let dir = data.data_dir().display().to_string();
    let mut all = words("--events jsonl");
    all.extend(check_args(&dir, &["--probe-endpoints"]));
    let out = run(all, true).await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let line = cli_line(&stderr(&out), "ENDPOINT_UNREACHABLE");
    let message = line["message"].as_str().unwrap();
    assert!(
        message.contains("connection refused") && message.contains(&format!("127.0.0.1:{port}")),
        "{message}"
    );
    assert!(
        stdout(&out).contains("ENDPOINT_UNREACHABLE"),
        "{}",
        stdout(&out)
    );
    no_key(&out);
}

/// A server without `GET /models` (404, 405 or 501) is probed with a 1-token chat call, and
/// the finding says which request answered; a 501 from that call is not "try again later".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_models_list_is_probed_with_a_one_token_call() {
    for missing in [404, 405, 501] {
        let no_list = StubReply::json(missing, &json!({"error": {"message": "not found"}}));
        let chat = wire_replies::text(Wire::OpenAiCompat, "p", U);
        let stub = StubServer::start(vec![no_list, chat]).await;
        let data = TempDataDir::new();
        village(&data, stub.base_url(), None);
        let dir = data.data_dir().display().to_string();
        let out = run(check_args(&dir, &["--probe-endpoints"]), true).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{missing}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        let text = stdout(&out);
        let line = text
            .lines()
            .find(|l| l.contains("ENDPOINT_OK"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            line.contains("POST /v1/chat/completions")
                && line.contains(&format!("GET /v1/models → {missing}")),
            "{line}"
        );
        let requests = stub.requests();
        assert_eq!(requests.len(), 2, "{missing}");
        assert_eq!(
            requests[1].body["max_tokens"], 1,
            "one token: {}",
            requests[1].body
        );
    }
    // Neither list nor chat: the 501 says what to check, not to wait.
    let not_implemented = || StubReply::json(501, &json!({"error": {"message": "no"}}));
    let stub = StubServer::start(vec![not_implemented(), not_implemented()]).await;
    let data = TempDataDir::new();
    village(&data, stub.base_url(), None);
    let dir = data.data_dir().display().to_string();
    let out = run(check_args(&dir, &["--probe-endpoints"]), true).await;
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("ENDPOINT_STATUS") && text.contains("does not implement"),
        "{text}"
    );
    assert!(!text.contains("try again later"), "{text}");
}
