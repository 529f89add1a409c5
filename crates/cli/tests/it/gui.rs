//! `fuseforks-cli gui` through the binary over real HTTP: the URL on stdout's first line,
//! nothing started on open, the guard's refusals (401, 403 for a foreign Host or Origin), the
//! token never in the log; an API key stored from the page in the OS store (keyutils) and never
//! shown; and the pages in a real browser (Playwright driving Debian's chromium:
//! `crates/testkit/gui/browser.py`), which is skipped when either is missing unless
//! `FUSEFORKS_REQUIRE_BROWSER=1` (CI).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fuseforks_core::llm::Wire;
use fuseforks_core::village::TemplateId;
use fuseforks_testkit::stub::{StubReply, StubServer};
use fuseforks_testkit::wire_replies::{self, ScriptCall};
use fuseforks_testkit::{KillOnDrop, TempDataDir};
use serde_json::{Value, json};

use crate::headless::{U, command, serve_on_a_port, signal_and_wait, stub_village};
use crate::{stderr, words};

/// A running `gui`: the process, its port, its token.
pub(crate) struct Running {
    pub(crate) child: KillOnDrop,
    pub(crate) port: u16,
    token: String,
}

pub(crate) fn start(data: &TempDataDir, envs: &[(&str, &str)]) -> Running {
    let mut c = command(
        words(&format!(
            "gui --data-dir {} --secrets env",
            data.data_dir().display()
        )),
        true,
    );
    for (k, v) in envs {
        c.env(k, v);
    }
    start_command(c)
}

/// Starts `c` (a `gui` command line) and reads the URL from its first stdout line.
fn start_command(mut c: Command) -> Running {
    let mut child: Child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_owned();
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("not a GUI URL: {url:?}"));
    let (port, token) = rest.split_once("/?token=").unwrap();
    Running {
        child: KillOnDrop::new(child),
        port: port.parse().unwrap(),
        token: token.to_owned(),
    }
}

/// One HTTP/1.1 exchange: (status, headers lower-cased, body).
pub(crate) fn http(port: u16, request: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

pub(crate) fn get(
    port: u16,
    host: &str,
    path: &str,
    cookie: Option<&str>,
) -> (u16, String, String) {
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    http(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{cookie}Connection: close\r\n\r\n"),
    )
}

pub(crate) fn post(
    port: u16,
    cookie: &str,
    origin: Option<&str>,
    body: &Value,
) -> (u16, String, String) {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    let body = body.to_string();
    http(
        port,
        &format!(
            "POST /api/commands HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n{origin}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// The token exchange: the cookie (`name=value`).
pub(crate) fn cookie(gui: &Running) -> String {
    let host = format!("127.0.0.1:{}", gui.port);
    let (status, head, _) = get(gui.port, &host, &format!("/?token={}", gui.token), None);
    assert_eq!(status, 303, "{head}");
    let set = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .unwrap();
    assert!(
        set.contains("httponly") && set.contains("samesite=strict"),
        "{set}"
    );
    // Take the original spelling back from the lower-cased head: name and value are hex/ASCII.
    set.split(';').next().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gui_prints_its_url_starts_nobody_and_refuses_strangers() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let mut gui = start(&data, &[]);
    let host = format!("127.0.0.1:{}", gui.port);
    assert_eq!(get(gui.port, &host, "/", None).0, 401);
    assert_eq!(get(gui.port, &host, "/api/village", None).0, 401);
    assert_eq!(get(gui.port, &host, "/?token=wrong", None).0, 401);
    let cookie = cookie(&gui);
    let (again, _, body) = get(gui.port, &host, &format!("/?token={}", gui.token), None);
    assert!(
        again == 401 && body.contains("GUI_TOKEN_USED"),
        "the link works once: {body}"
    );
    assert_eq!(
        get(gui.port, "evil.example", "/api/village", Some(&cookie)).0,
        403
    );
    let (status, head, page) = get(gui.port, &host, "/", Some(&cookie));
    assert_eq!(status, 200);
    assert!(
        head.contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    assert!(page.contains("<html"), "{page}");
    let (_, _, village) = get(gui.port, &host, "/api/village", Some(&cookie));
    let village: Value = serde_json::from_str(&village).unwrap();
    assert_eq!(
        village["agents"][0]["status"], "idle",
        "nothing starts on open"
    );
    let start = json!({"type": "startAgent", "agentId": "rec"});
    assert_eq!(post(gui.port, &cookie, None, &start).0, 403);
    assert_eq!(
        post(gui.port, &cookie, Some("http://evil.example"), &start).0,
        403
    );
    assert_eq!(
        post(gui.port, &cookie, Some(&format!("http://{host}")), &start).0,
        200
    );
    let out = signal_and_wait(&mut gui.child, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap();
    assert!(
        log.contains(&format!("gui: http://127.0.0.1:{}/", gui.port)),
        "{log}"
    );
    assert!(
        !log.contains(&gui.token) && !stderr(&out).contains(&gui.token),
        "the token leaked"
    );
}

/// `gui` on the OS store, keyutils here (the session keyring of this test process).
fn start_on_keyutils(data: &TempDataDir) -> Running {
    let mut c = command(
        words(&format!(
            "gui --data-dir {} --secrets keyring",
            data.data_dir().display()
        )),
        true,
    );
    c.env("FUSEFORKS_KEYRING", "keyutils");
    start_command(c)
}

/// Takes a key a test stored out of keyutils again (best effort).
fn forget_on_keyutils(data: &TempDataDir, key: &str) {
    let _ = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(words(&format!(
            "secrets delete {key} --data-dir {}",
            data.data_dir().display()
        )))
        .env("FUSEFORKS_KEYRING", "keyutils")
        .output();
}

/// A key typed into Settings goes to the OS store (keyutils here) and is never read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_saved_from_the_page_lands_in_the_os_store_and_is_never_shown() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    let id = format!("gui{}", crate::secrets::unique_id());
    let template = TemplateId::new(&id).unwrap();
    stub_village(stub.base_url())
        .world(|w| {
            w.model_templates[0].id = template.clone();
            w.agents[0].model_template_id = template.clone();
        })
        .write(&data);
    let mut gui = start_on_keyutils(&data);
    let cookie = cookie(&gui);
    let origin = format!("http://127.0.0.1:{}", gui.port);
    let value = "sk-FROM-THE-PAGE-0c1d";
    let (status, _, answer) = post(
        gui.port,
        &cookie,
        Some(&origin),
        &json!({"type": "setApiKey", "templateId": id, "value": value}),
    );
    assert_eq!(status, 200, "{answer}");
    let (_, _, settings) = get(
        gui.port,
        &format!("127.0.0.1:{}", gui.port),
        "/api/settings",
        Some(&cookie),
    );
    assert!(
        settings.contains("\"hasKey\":true") && !settings.contains(value),
        "{settings}"
    );
    let out = signal_and_wait(&mut gui.child, "TERM").await;
    assert!(!stderr(&out).contains(value));
    let listed = Command::new(env!("CARGO_BIN_EXE_fuseforks-cli"))
        .args(words(&format!(
            "secrets list --data-dir {} --json",
            data.data_dir().display()
        )))
        .env("FUSEFORKS_KEYRING", "keyutils")
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&listed.stdout);
    assert!(
        list.contains(&id) && list.contains("present") || list.contains("\"present\":true"),
        "{list}"
    );
    forget_on_keyutils(&data, &id);
}

/// A value typed into an `mcp.json`'s secret field goes to the OS store (keyutils here) under
/// `mcp:NAME`, the page then says it is stored, and the value never comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_secret_saved_from_the_page_is_stored_and_never_shown() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let name = format!("GH{}", crate::secrets::unique_id())
        .to_uppercase()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    std::fs::write(
        data.workspace().join("mcp.json"),
        format!(
            r#"{{"mcpServers": {{"gh": {{"type": "http", "url": "https://example.com/mcp", "headers": {{"Authorization": "Bearer ${{secret:{name}}}"}}}}}}}}"#
        ),
    )
    .unwrap();
    let mut gui = start_on_keyutils(&data);
    let cookie = cookie(&gui);
    let host = format!("127.0.0.1:{}", gui.port);
    let read = || get(gui.port, &host, "/api/files/mcp.json", Some(&cookie)).2;
    assert!(read().contains(r#""hasValue":false"#), "{}", read());
    let value = "ghp-FROM-THE-PAGE-7f3a";
    let (status, _, answer) = post(
        gui.port,
        &cookie,
        Some(&format!("http://{host}")),
        &json!({"type": "setMcpSecret", "name": name, "value": value}),
    );
    assert_eq!(status, 200, "{answer}");
    let file = read();
    assert!(
        file.contains(r#""hasValue":true"#) && !file.contains(value),
        "{file}"
    );
    let out = signal_and_wait(&mut gui.child, "TERM").await;
    assert!(!stderr(&out).contains(value));
    forget_on_keyutils(&data, &format!("mcp:{name}"));
}

/// "Try" on the Servants page: the judge's backend on the text (one forced call), its answers
/// and the rule it would take, and nothing delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn try_on_the_servants_page_asks_the_judge_and_delivers_nothing() {
    let call = ScriptCall {
        id: "c1".into(),
        name: "judge_answers".into(),
        args: json!({"kind": {"bug": 0.85, "other": 0.15}}),
    };
    let stub = StubServer::start(vec![wire_replies::tool_calls(
        Wire::OpenAiCompat,
        &[call],
        U,
    )])
    .await;
    let base = format!("{}/v1", stub.base_url());
    let (data, _dir) = crate::judges::judge_village(&base, Some("stub"), crate::judges::GOOD);
    let gui = start(&data, &[]);
    let cookie = cookie(&gui);
    let origin = format!("http://127.0.0.1:{}", gui.port);
    let text = "My app crashes on start";
    let (status, _, answer) = post(
        gui.port,
        &cookie,
        Some(&origin),
        &json!({"type": "tryJudge", "judgeId": "good", "text": text}),
    );
    assert_eq!(status, 200, "{answer}");
    let v: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        (v["outcome"].as_str(), v["rule"].as_str()),
        (Some("routed"), Some("1")),
        "{v}"
    );
    assert!(v["answers"].to_string().contains("bug"), "{v}");
    let sent = stub.requests();
    assert_eq!(sent.len(), 1, "one call, nothing delivered after it");
    assert!(sent[0].body.to_string().contains(text));
    let (status, _, answer) = post(
        gui.port,
        &cookie,
        Some(&origin),
        &json!({"type": "tryJudge", "judgeId": "nobody", "text": text}),
    );
    assert_eq!(status, 404, "{answer}");
}

fn run_call(id: &str) -> StubReply {
    let call = ScriptCall {
        id: id.into(),
        name: "run".into(),
        args: json!({"command": "echo", "args": ["approved"]}),
    };
    wire_replies::tool_calls(Wire::OpenAiCompat, &[call], U)
}

/// Where chromium and Playwright for Python are, or why the browser test cannot run.
fn browser() -> Result<&'static str, String> {
    let chromium = "/usr/bin/chromium";
    if !Path::new(chromium).exists() {
        return Err(format!("{chromium} is missing (apt install chromium)"));
    }
    let playwright = Command::new("python3")
        .args(["-c", "import playwright.sync_api"])
        .output();
    match playwright {
        Ok(o) if o.status.success() => Ok(chromium),
        _ => Err("Playwright for Python is missing (pip install playwright)".into()),
    }
}

/// The pages in a real browser: the servants shown, a chat answered live, a pending command
/// approved and the turn continued, a question (`ask_user`) answered by a choice, a slow turn
/// interrupted, no console error; screenshots
/// of each page under `target/gui-screenshots/`, and the figures printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_work_in_a_real_browser() {
    let chromium = match browser() {
        Ok(path) => path,
        Err(why) if std::env::var("FUSEFORKS_REQUIRE_BROWSER").as_deref() == Ok("1") => {
            panic!("FUSEFORKS_REQUIRE_BROWSER=1 but {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let text = |t: &str| wire_replies::text(Wire::OpenAiCompat, t, U);
    // The first answer streams (the template's `streaming`): pieces as `messageDelta`, then
    // the whole message; the others come whole (a server may ignore `stream: true`).
    let piece = |t: &str| json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]});
    let streamed = StubReply::sse(&[
        piece("Hello "),
        piece("from the "),
        piece("stub."),
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}}),
    ]);
    let stub = StubServer::start(vec![
        streamed,
        run_call("c1"),
        text("Waiting for approval."),
        run_call("c2"),
        text("Ran after approval."),
        // A question to the person (`ask_user`), answered by a choice in the chat.
        wire_replies::tool_calls(
            Wire::OpenAiCompat,
            &[ScriptCall {
                id: "q1".into(),
                name: "ask_user".into(),
                args: json!({"question": "Which colour?", "choices": ["red", "blue"]}),
            }],
            U,
        ),
        text("Blue it is."),
        // A slow turn: its first round answers late with a tool call; an interrupt meanwhile
        // ends the turn at that round's end (the paid call is let finish), so no second round.
        run_call("c3").after(Duration::from_secs(3)),
        text("Too slow."),
    ])
    .await;
    // The drafting assistant's own template, on a stub of its own: a question, then a draft.
    let submit = ScriptCall {
        id: "d1".into(),
        name: "submit_draft".into(),
        args: json!({"content": "You greet people warmly.\n", "notes": "assumed casual"}),
    };
    // Then a judge draft that passes the parser on its first round.
    let judge = ScriptCall {
        id: "d2".into(),
        name: "submit_draft".into(),
        args: json!({"content": fuseforks_core::judge::starter_template(
            "reception",
            fuseforks_core::village::Language::En
        )}),
    };
    let drafter = StubServer::start(vec![
        text("Formal or casual?"),
        wire_replies::tool_calls(Wire::OpenAiCompat, &[submit], U),
        wire_replies::tool_calls(Wire::OpenAiCompat, &[judge], U),
    ])
    .await;
    let data = TempDataDir::new();
    let work = TempDataDir::new();
    let at = work.data_dir().display().to_string();
    // The agent the browser script knows: `reception`, named "Reception".
    fuseforks_testkit::TestVillage::builder()
        .stub(Wire::OpenAiCompat, stub.base_url())
        .agent_with("reception", "Reception", |a| {
            a.work_dir = Some(at);
            a.enabled_tools = Some(vec!["run".into(), "ask_user".into()]);
        })
        .agent("spare", "Spare")
        .reception("reception")
        .budget(Some(1_000_000))
        .world(|w| {
            w.model_templates[0].streaming = true;
            let mut t = fuseforks_testkit::stub_template(Wire::OpenAiCompat, drafter.base_url());
            t.id = fuseforks_core::village::TemplateId::new("drafter").unwrap();
            t.name = "drafter".into();
            t.credential = fuseforks_core::village::Credential::NotRequired;
            w.model_templates.push(t);
            // A template without tools: listed in the assistant's choice, disabled.
            let mut plain =
                fuseforks_testkit::stub_template(Wire::OpenAiCompat, drafter.base_url());
            plain.id = fuseforks_core::village::TemplateId::new("plain").unwrap();
            plain.name = "Plain".into();
            plain.use_tools = false;
            plain.credential = fuseforks_core::village::Credential::NotRequired;
            w.model_templates.push(plain);
            w.judges
                .push(fuseforks_testkit::judge_spec("gate", "Gate", false));
        })
        .write(&data);
    // A schedule task to the servant the script deletes (the dialog names what it leaves).
    std::fs::write(
        data.workspace().join("schedules.json"),
        r#"[{"id": "nightly", "to": "spare", "message": "tidy up", "recurrence": {"kind": "daily", "hour": 23, "minute": 0}}]"#,
    )
    .unwrap();
    // An ordinance written on Windows: its CR LF line ends must survive an edit.
    std::fs::write(
        data.workspace().join("Ordinance.md"),
        "# Rules\r\nBe kind.\r\n",
    )
    .unwrap();
    // The price table the stats page's "Fetch prices" reads (docs/formats/prices.json.md).
    let table = json!({"asOf": "2026-11-01", "models": {"stub-model": {"inputPerMtok": 3, "outputPerMtok": 15}}});
    let prices = StubServer::start(vec![StubReply::json(200, &table)]).await;
    std::fs::write(
        data.data_dir().join("pricing.json"),
        json!({"url": format!("{}/prices.json", prices.base_url())}).to_string(),
    )
    .unwrap();
    let mut gui = start(&data, &[]);
    let url = format!("http://127.0.0.1:{}/?token={}", gui.port, gui.token);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shots = root.join("target/gui-screenshots");
    let script = root.join("crates/testkit/gui/browser.py");
    let run = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(script)
            .args(["--url", &url, "--chromium", chromium, "--shots"])
            .arg(&shots)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    for figure in said.lines().filter(|l| l.starts_with("figure:")) {
        eprintln!("{figure}");
    }
    assert!(run.status.success(), "the browser test failed:\n{said}");
    let out = signal_and_wait(&mut gui.child, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let policy =
        std::fs::read_to_string(data.workspace().join("agents/reception/run.json")).unwrap();
    assert!(policy.contains("echo approved"), "{policy}");
}

/// `serve --gui-port`: the token is the secret `gui_token` (never printed; it works for every
/// exchange, being the user's own), a short one is refused (exit 5), a missing one too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_opens_the_gui_with_the_secret_gui_token() {
    let stub = StubServer::start(vec![]).await;
    let data = TempDataDir::new();
    stub_village(stub.base_url()).write(&data);
    let dir = data.data_dir().display().to_string();
    let line =
        |port| format!("serve --data-dir {dir} --start batch --secrets env --gui-port {port}");
    // Refused before the GUI opens: a port held closed by the test.
    let closed = fuseforks_testkit::ClosedPort::new();
    for (token, code) in [
        (None, "GUI_TOKEN_MISSING"),
        (Some("short"), "GUI_TOKEN_WEAK"),
    ] {
        let mut c = command(words(&line(closed.port())), true);
        if let Some(t) = token {
            c.env("FUSEFORKS_SECRET_GUI_TOKEN", t);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
        assert!(stderr(&out).contains(code), "{}", stderr(&out));
    }
    let token = "gui-secret-token-0123456789abcdef0123";
    let listening = |port| format!("gui: http://127.0.0.1:{port}/");
    let (mut serving, port) = serve_on_a_port(&data, listening, |port| {
        command(words(&line(port)), true)
            .env("FUSEFORKS_SECRET_GUI_TOKEN", token)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    })
    .await;
    let gui = Running {
        child: KillOnDrop::new(Command::new("true").spawn().unwrap()),
        port,
        token: token.into(),
    };
    let host = format!("127.0.0.1:{port}");
    let _first = cookie(&gui);
    let second = cookie(&gui);
    assert_eq!(
        get(port, &host, "/api/village", Some(&second)).0,
        200,
        "the user's own token works again"
    );
    let out = signal_and_wait(&mut serving, "TERM").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("GUI_OPEN"), "{}", stderr(&out));
    let said = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
    assert!(!said.contains(token), "the token was printed");
    let log = std::fs::read_to_string(data.workspace().join("fuseforks.log")).unwrap();
    assert!(!log.contains(token));
}
