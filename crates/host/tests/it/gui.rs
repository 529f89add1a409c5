//! The GUI's HTTP API through axum's `oneshot` on the real router over a real village (the
//! stub LLM on loopback): every route's answer, every command's happy path and its refusals,
//! and the guard (401 without the cookie, 403 for a foreign Host or Origin, 400 for a body
//! that is not a command), with the security headers on every answer and no secret value in
//! any of them.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use fuseforks_core::llm::Wire;
use fuseforks_host::gui::{COOKIE, CSP, GuiState, Keys, router};
use fuseforks_host::secrets::EnvSecretStore;
use fuseforks_host::{HostBootOptions, HostPaths, SecretSource, build_host};
use fuseforks_testkit::stub::StubServer;
use fuseforks_testkit::wire_replies::{ScriptUsage, text};
use fuseforks_testkit::{TempDataDir, TestVillage};
use serde_json::{Value, json};
use tower::ServiceExt;

const TOKEN: &str = "launch-token-7f3a";
const KEY_VALUE: &str = "sk-GUI-CANARY-51d0";
const HOST: &str = "127.0.0.1:4321";
pub(crate) const U: ScriptUsage = ScriptUsage {
    prompt: 100,
    completion: 5,
    cache_read: 0,
    reasoning: 0,
};

pub(crate) struct Fx {
    pub(crate) data: TempDataDir,
    app: axum::Router,
    cookie: String,
    _host: fuseforks_host::Host,
    pub(crate) state: Arc<GuiState>,
}

impl Fx {
    pub(crate) async fn new(stub: &StubServer) -> Self {
        Self::new_with(stub, |_| {}).await
    }

    /// [`Fx::new`] with a change to the village first.
    pub(crate) async fn new_with(
        stub: &StubServer,
        edit: impl FnOnce(&mut fuseforks_core::village::World),
    ) -> Self {
        let data = TempDataDir::new();
        TestVillage::builder()
            .stub(Wire::OpenAiCompat, stub.base_url())
            .agent_with("rec", "Reception", |a| a.group_id = Some("g1".into()))
            .agent("b2", "Bo")
            .reception("rec")
            .budget(Some(1_000_000))
            .world(|w| {
                // The orchestrator's own store (env) holds no key; the stub needs none.
                w.model_templates[0].credential = fuseforks_core::village::Credential::NotRequired;
                w.groups.push(
                    serde_json::from_value(
                        json!({"id": "g1", "name": "Front", "batchStart": true}),
                    )
                    .unwrap(),
                )
            })
            .world(edit)
            .write(&data);
        let options = HostBootOptions {
            app_version: "test".into(),
            secrets: SecretSource::Env,
            open_door: false,
            door_port: None,
            log_echo: None,
            os_locale: None,
            mcp_child_output: None,
            run_schedules: false,
        };
        let host = build_host(&HostPaths::new(data.data_dir()), options)
            .await
            .unwrap();
        let secrets = Arc::new(EnvSecretStore::from_vars([(
            "FUSEFORKS_SECRET_STUB".to_owned(),
            KEY_VALUE.to_owned(),
        )]));
        let state = GuiState::new(
            host.orchestrator.clone(),
            secrets,
            host.paths.clone(),
            Arc::clone(&host.log),
            "test".into(),
            None,
        );
        let app = router(Arc::clone(&state), Arc::new(Keys::new(TOKEN, 4321, false)));
        let exchange = app
            .clone()
            .oneshot(
                get(&format!("/?token={TOKEN}"))
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(exchange.status(), StatusCode::SEE_OTHER);
        assert_eq!(exchange.headers()[header::LOCATION], "/");
        let set = exchange.headers()[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        assert!(!set.contains(TOKEN), "the token is not the cookie");
        let cookie = set.split(';').next().unwrap().to_owned();
        assert!(
            cookie.starts_with(&format!("{COOKIE}_4321=")),
            "named after the port"
        );
        Self {
            data,
            app,
            cookie,
            _host: host,
            state,
        }
    }

    async fn send(&self, request: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, 1 << 22).await.unwrap().to_vec();
        assert_eq!(parts.headers[header::CONTENT_SECURITY_POLICY], CSP);
        assert_eq!(parts.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(KEY_VALUE) && !text.contains(TOKEN),
            "a secret reached the page: {text}"
        );
        (parts.status, parts.headers, bytes)
    }

    pub(crate) async fn read(&self, path: &str) -> (StatusCode, Value) {
        let (status, _, body) = self
            .send(
                get(path)
                    .header(header::COOKIE, &self.cookie)
                    .body(Body::empty())
                    .unwrap(),
            )
            .await;
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    pub(crate) async fn command(&self, body: Value) -> (StatusCode, Value) {
        let request = post(&self.cookie)
            .body(Body::from(body.to_string()))
            .unwrap();
        let (status, _, bytes) = self.send(request).await;
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    pub(crate) fn code(answer: &Value) -> &str {
        answer["error"]["code"].as_str().unwrap_or("")
    }
}

fn get(path: &str) -> axum::http::request::Builder {
    Request::get(path).header(header::HOST, HOST)
}

fn post(cookie: &str) -> axum::http::request::Builder {
    Request::post("/api/commands")
        .header(header::HOST, HOST)
        .header(header::ORIGIN, format!("http://{HOST}"))
        .header(header::COOKIE, cookie)
        .header(header::CONTENT_TYPE, "application/json")
}

pub(crate) async fn until(what: &str, done: impl AsyncFnMut() -> bool) {
    fuseforks_testkit::eventually_async(what, fuseforks_testkit::DEADLINE, done).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_without_cookie_foreign_host_or_origin_and_bad_bodies() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    let code_of = |bytes: &[u8]| -> String {
        serde_json::from_slice::<Value>(bytes).unwrap()["error"]["code"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    for path in ["/", "/api/village", "/api/events", "/app.js"] {
        let (status, _, body) = fx.send(get(path).body(Body::empty()).unwrap()).await;
        assert_eq!(
            (status, code_of(&body).as_str()),
            (StatusCode::UNAUTHORIZED, "GUI_UNAUTHORIZED"),
            "{path}"
        );
    }
    let wrong = fx
        .send(get("/?token=guess").body(Body::empty()).unwrap())
        .await;
    assert_eq!(wrong.0, StatusCode::UNAUTHORIZED);
    let forged = fx
        .send(
            get("/api/village")
                .header(header::COOKIE, format!("{COOKIE}=guess"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(forged.0, StatusCode::UNAUTHORIZED);
    for host in [
        "evil.example",
        "evil.example:4321",
        "127.0.0.1.evil.example",
    ] {
        let request = Request::get("/api/village")
            .header(header::HOST, host)
            .header(header::COOKIE, &fx.cookie)
            .body(Body::empty())
            .unwrap();
        let (status, _, body) = fx.send(request).await;
        assert_eq!(
            (status, code_of(&body).as_str()),
            (StatusCode::FORBIDDEN, "GUI_HOST_FORBIDDEN"),
            "{host}"
        );
    }
    let body = json!({"type": "startBatch"}).to_string();
    for origin in [
        None,
        Some("http://evil.example"),
        Some("http://127.0.0.1:9999"),
    ] {
        let mut request = Request::post("/api/commands")
            .header(header::HOST, HOST)
            .header(header::COOKIE, &fx.cookie);
        if let Some(origin) = origin {
            request = request.header(header::ORIGIN, origin);
        }
        let (status, _, answer) = fx
            .send(request.body(Body::from(body.clone())).unwrap())
            .await;
        assert_eq!(
            (status, code_of(&answer).as_str()),
            (StatusCode::FORBIDDEN, "GUI_ORIGIN_FORBIDDEN"),
            "{origin:?}"
        );
    }
    assert_eq!(
        fx.state.orchestrator.status("rec"),
        fuseforks_core::events::AgentStatus::Idle,
        "refused: nothing started"
    );
    for bad in [
        "{not json",
        "[]",
        r#"{"type":"launchMissiles"}"#,
        r#"{"type":"startAgent"}"#,
        r#"{"type":"startAgent","agentId":"rec","extra":1}"#,
    ] {
        let (status, _, answer) = fx
            .send(post(&fx.cookie).body(Body::from(bad)).unwrap())
            .await;
        assert_eq!(
            (status, code_of(&answer).as_str()),
            (StatusCode::BAD_REQUEST, "GUI_BAD_REQUEST"),
            "{bad}"
        );
    }
    let big = "x".repeat(300 * 1024);
    let (status, _, _) = fx
        .send(post(&fx.cookie).body(Body::from(big)).unwrap())
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    let (status, _) = fx.read("/no/such/page").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_answers_and_no_secret_reaches_the_page() {
    let stub = StubServer::start(vec![text(Wire::OpenAiCompat, "Hi there.", U)]).await;
    let fx = Fx::new(&stub).await;
    let (status, village) = fx.read("/api/village").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(village["agents"][0]["id"], "rec");
    assert_eq!(village["agents"][0]["status"], "idle");
    assert_eq!(village["groups"][0]["name"], "Front");
    assert_eq!(
        (village["switch"].as_str(), village["runApproval"].as_str()),
        (Some("running"), Some("required"))
    );
    assert_eq!(
        fx.command(json!({"type": "startAgent", "agentId": "rec"}))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(
        fx.command(json!({"type": "sendMessage", "agentId": "rec", "text": "Hello"}))
            .await
            .0,
        StatusCode::OK
    );
    until("the answer", async || {
        fx.read("/api/chat/rec").await.1["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["content"] == "Hi there."))
    })
    .await;
    let (_, chat) = fx.read("/api/chat/rec").await;
    let first = &chat["messages"][0];
    assert_eq!(
        (first["from"].as_str(), first["content"].as_str()),
        (Some("user"), Some("Hello"))
    );
    let session = chat["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(fx.read("/api/chat/nobody").await.0, StatusCode::NOT_FOUND);
    let (_, list) = fx.read("/api/conversations").await;
    assert_eq!(list["current"], session.as_str());
    let (_, one) = fx.read(&format!("/api/conversations/{session}")).await;
    assert!(one["messages"].as_array().unwrap().len() >= 2, "{one}");
    let (status, headers, body) = fx
        .send(
            get(&format!("/api/conversations/{session}/export"))
                .header(header::COOKIE, &fx.cookie)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "application/x-ndjson");
    assert!(
        String::from_utf8_lossy(&body)
            .lines()
            .all(|l| serde_json::from_str::<Value>(l).is_ok())
    );
    let (_, settings) = fx.read("/api/settings").await;
    assert_eq!(settings["templates"][0]["hasKey"], true, "{settings}");
    assert_eq!(settings["secretStore"], "env");
    let (_, approvals) = fx.read("/api/approvals").await;
    assert_eq!(approvals["runs"], json!([]));
    let (_, log) = fx.read("/api/log?lines=5").await;
    assert!(log["lines"].as_array().unwrap().len() <= 5);
    assert!(log["lines"].to_string().contains("[fuseforks]"), "{log}");
    let (status, headers, _) = fx
        .send(
            get("/api/village")
                .header(header::COOKIE, &fx.cookie)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(
        (status, &headers[header::CACHE_CONTROL]),
        (
            StatusCode::OK,
            &"no-store".parse::<header::HeaderValue>().unwrap()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_does_its_one_thing_or_says_why_not() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    let ok = |answer: &(StatusCode, Value)| assert_eq!(answer.0, StatusCode::OK, "{}", answer.1);
    ok(&fx.command(json!({"type": "startBatch"})).await);
    let orch = &fx.state.orchestrator;
    assert_eq!(
        orch.status("rec"),
        fuseforks_core::events::AgentStatus::Running
    );
    ok(&fx
        .command(json!({"type": "stopAgent", "agentId": "b2"}))
        .await);
    assert_eq!(orch.status("b2"), fuseforks_core::events::AgentStatus::Idle);
    let unknown = fx
        .command(json!({"type": "startAgent", "agentId": "zz"}))
        .await;
    assert_eq!(
        (unknown.0, Fx::code(&unknown.1)),
        (StatusCode::NOT_FOUND, "AGENT_NOT_FOUND")
    );
    let not_running = fx
        .command(json!({"type": "sendMessage", "agentId": "b2", "text": "hi"}))
        .await;
    assert_eq!(
        (not_running.0, Fx::code(&not_running.1)),
        (StatusCode::CONFLICT, "NOT_RUNNING")
    );
    ok(&fx
        .command(json!({"type": "interrupt", "agentId": "rec"}))
        .await);
    // The group's switch is written to world.json and in effect.
    ok(&fx
        .command(json!({"type": "setGroupBatchStart", "groupId": "g1", "enabled": false}))
        .await);
    assert!(!orch.world().groups[0].batch_start);
    let world: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.data.workspace().join("world.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(world["groups"][0]["batchStart"], false);
    let no_group = fx
        .command(json!({"type": "setGroupBatchStart", "groupId": "nope", "enabled": true}))
        .await;
    assert_eq!(no_group.0, StatusCode::NOT_FOUND);
    // Limits: a refused value writes nothing.
    let before = std::fs::read(fx.data.workspace().join("world.json")).unwrap();
    let refused = fx
        .command(json!({"type": "setVillageLimits", "tokenBudget": 0, "askTimeoutSecs": 600}))
        .await;
    assert_eq!(
        (refused.0, Fx::code(&refused.1)),
        (StatusCode::UNPROCESSABLE_ENTITY, "INVALID_TOKEN_BUDGET")
    );
    assert!(refused.1["error"]["fix"].is_string());
    assert_eq!(
        std::fs::read(fx.data.workspace().join("world.json")).unwrap(),
        before
    );
    ok(&fx
        .command(json!({"type": "setVillageLimits", "tokenBudget": 5000, "askTimeoutSecs": 90}))
        .await);
    assert_eq!(
        (orch.world().token_budget, orch.world().ask_timeout_secs),
        (Some(5000), Some(90))
    );
    // Modes and the kill switch.
    ok(&fx
        .command(json!({"type": "setRunApproval", "mode": "auto_approve"}))
        .await);
    assert_eq!(orch.run_approval().as_str(), "auto_approve");
    assert_eq!(
        fx.command(json!({"type": "setRunApproval", "mode": "yolo"}))
            .await
            .0,
        StatusCode::BAD_REQUEST
    );
    ok(&fx
        .command(json!({"type": "setPlanReviewBypass", "enabled": true}))
        .await);
    assert!(orch.plan_review_bypass());
    let paused = fx
        .command(json!({"type": "killSwitch", "command": "pause"}))
        .await;
    assert_eq!(paused.1["state"], "paused");
    assert_eq!(
        fx.command(json!({"type": "killSwitch", "command": "resume"}))
            .await
            .1["state"],
        "running"
    );
    assert_eq!(
        fx.command(json!({"type": "killSwitch", "command": "explode"}))
            .await
            .0,
        StatusCode::BAD_REQUEST
    );
    // Plans: nothing proposed.
    let plan = fx
        .command(json!({"type": "discardPlan", "planId": "p-none"}))
        .await;
    assert_eq!(
        (plan.0, Fx::code(&plan.1)),
        (StatusCode::CONFLICT, "PLAN_WAVE_NOT_PENDING")
    );
    let plan = fx.command(json!({"type": "dispatchPlan", "planId": "p-none", "tasks": [{"to": "b2", "message": "m"}]})).await;
    assert_eq!(plan.0, StatusCode::CONFLICT);
    // Keys: the env store is read-only, said with its code; an unknown template is 404.
    let key = fx
        .command(json!({"type": "setApiKey", "templateId": "stub", "value": "sk-new"}))
        .await;
    assert!(
        key.0.is_client_error() || key.0.is_server_error(),
        "{key:?}"
    );
    assert!(Fx::code(&key.1).starts_with("SECRET"), "{key:?}");
    let no_template = fx
        .command(json!({"type": "setApiKey", "templateId": "nope", "value": "sk"}))
        .await;
    assert_eq!(no_template.0, StatusCode::NOT_FOUND);
    let bad_value = fx
        .command(json!({"type": "setApiKey", "templateId": "stub", "value": "two\nlines"}))
        .await;
    assert_eq!(
        (bad_value.0, Fx::code(&bad_value.1)),
        (StatusCode::UNPROCESSABLE_ENTITY, "SECRET_VALUE_INVALID")
    );
    // The door's settings (0600, a token made), a port of 0 refused.
    assert_eq!(
        fx.command(json!({"type": "setDoor", "enabled": true, "port": 0}))
            .await
            .0,
        StatusCode::UNPROCESSABLE_ENTITY
    );
    ok(&fx
        .command(json!({"type": "setDoor", "enabled": true, "port": 39650}))
        .await);
    let door: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.data.data_dir().join("mcp_server.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        (door["enabled"].as_bool(), door["port"].as_u64()),
        (Some(true), Some(39650))
    );
    assert!(door["token"].as_str().is_some_and(|t| t.len() >= 32));
    let (_, settings) = fx.read("/api/settings").await;
    assert_eq!(
        settings["door"],
        json!({"enabled": true, "port": 39650, "hasToken": true}),
        "never the token"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_and_pending_runs_are_decided_from_the_page() {
    let stub = StubServer::start(vec![
        text(Wire::OpenAiCompat, "One.", U),
        text(Wire::OpenAiCompat, "Resumed.", U),
    ])
    .await;
    let fx = Fx::new(&stub).await;
    fx.data.write(
        "agents/rec/run.json",
        r#"{"version": 1, "allow": [], "deny": [], "pending": [
            {"command": "ls", "args": ["-l"], "firstRequestedAtMs": 1, "count": 2},
            {"command": "rm", "args": ["x"], "firstRequestedAtMs": 2, "count": 1}]}"#,
    );
    let (_, village) = fx.read("/api/village").await;
    assert_eq!(village["pendingCount"], 2);
    let (_, approvals) = fx.read("/api/approvals").await;
    assert_eq!(
        approvals["runs"][0],
        json!({"agentId": "rec", "command": "ls", "args": ["-l"], "count": 2, "firstRequestedAtMs": 1})
    );
    let rejected = fx
        .command(json!({"type": "rejectRun", "agentId": "rec", "command": "rm", "args": ["x"]}))
        .await;
    assert_eq!(rejected.1["pendingLeft"], 1);
    let again = fx
        .command(json!({"type": "rejectRun", "agentId": "rec", "command": "rm", "args": ["x"]}))
        .await;
    assert_eq!(
        (again.0, Fx::code(&again.1)),
        (StatusCode::NOT_FOUND, "RUN_PENDING_NOT_FOUND")
    );
    fx.command(json!({"type": "startAgent", "agentId": "rec"}))
        .await;
    let approved = fx
        .command(json!({"type": "approveRun", "agentId": "rec", "command": "ls", "args": ["-l"], "scope": "pattern", "continue": true}))
        .await;
    assert_eq!(approved.1["pendingLeft"], 0, "{approved:?}");
    let policy: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.data.workspace().join("agents/rec/run.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        (policy["allow"].clone(), policy["deny"].clone()),
        (json!(["ls *"]), json!(["rm x"]))
    );
    until("the resumed turn", async || stub.requests().len() == 1).await;
    assert!(
        stub.requests()[0]
            .body
            .to_string()
            .contains("A human approved the command")
    );
    // Conversations: the current one cannot be deleted; a fork becomes current; a new one.
    until("a recorded conversation", async || {
        fx.read("/api/conversations").await.1["current"].is_string()
    })
    .await;
    let first = fx.read("/api/conversations").await.1["current"]
        .as_str()
        .unwrap()
        .to_owned();
    let current = fx
        .command(json!({"type": "deleteConversation", "sessionId": first}))
        .await;
    assert_eq!(
        (current.0, Fx::code(&current.1)),
        (StatusCode::CONFLICT, "SESSION_IS_CURRENT")
    );
    // Record 1 is inside the first exchange (its call's intent): a fork copies whole ones.
    let inside = fx
        .command(json!({"type": "forkConversation", "sessionId": first, "atSeq": 1}))
        .await;
    assert_eq!(
        (inside.0, Fx::code(&inside.1)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            "SESSION_FORK_SPLITS_EXCHANGE"
        )
    );
    let forked = fx
        .command(json!({"type": "forkConversation", "sessionId": first, "atSeq": 0}))
        .await;
    let fork_id = forked.1["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(
        fx.read("/api/conversations").await.1["current"],
        fork_id.as_str()
    );
    assert_eq!(
        fx.command(json!({"type": "openConversation", "sessionId": first}))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(
        fx.command(json!({"type": "deleteConversation", "sessionId": fork_id}))
            .await
            .0,
        StatusCode::OK
    );
    assert_eq!(
        fx.read(&format!("/api/conversations/{fork_id}")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        fx.command(json!({"type": "openConversation", "sessionId": "no-such"}))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        fx.command(json!({"type": "newConversation"})).await.0,
        StatusCode::OK
    );
    // The decisions are audit lines.
    let audit = std::fs::read_to_string(fx.data.workspace().join("audit.jsonl")).unwrap();
    assert!(
        audit.contains("\"rejected\"") && audit.contains("\"approved_pattern\""),
        "{audit}"
    );
}

/// `gui`'s launch token works once: a second exchange (a copied link, a history) is 401.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launch_token_that_works_once_is_refused_the_second_time() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    let once = router(
        Arc::clone(&fx.state),
        Arc::new(Keys::new(TOKEN, 4321, true)),
    );
    let exchange = || {
        once.clone().oneshot(
            get(&format!("/?token={TOKEN}"))
                .body(Body::empty())
                .unwrap(),
        )
    };
    assert_eq!(exchange().await.unwrap().status(), StatusCode::SEE_OTHER);
    let again = exchange().await.unwrap();
    assert_eq!(again.status(), StatusCode::UNAUTHORIZED);
    let body = axum::body::to_bytes(again.into_body(), 1 << 16)
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&body).contains("GUI_TOKEN_USED"));
}

/// A halted village starts nobody from the page (409, the switch's state kept); resume lifts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_halted_village_starts_nobody_until_resumed() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    assert_eq!(
        fx.command(json!({"type": "killSwitch", "command": "halt"}))
            .await
            .1["state"],
        "halted"
    );
    for start in [
        json!({"type": "startAgent", "agentId": "rec"}),
        json!({"type": "startBatch"}),
    ] {
        let refused = fx.command(start).await;
        assert_eq!(
            (refused.0, Fx::code(&refused.1)),
            (StatusCode::CONFLICT, "VILLAGE_HALTED"),
            "{refused:?}"
        );
    }
    assert_eq!(
        fx.state.orchestrator.status("rec"),
        fuseforks_core::events::AgentStatus::Idle
    );
    assert_eq!(
        fx.command(json!({"type": "killSwitch", "command": "resume"}))
            .await
            .1["state"],
        "running"
    );
    assert_eq!(
        fx.command(json!({"type": "startAgent", "agentId": "rec"}))
            .await
            .0,
        StatusCode::OK
    );
    assert!(
        !fx.data.data_dir().join("halt").exists(),
        "the marker is gone after resume"
    );
}

/// A value the command does not take is refused naming its field (`GUI_FIELD_INVALID`, in our
/// words, not serde's), and a value the core refuses names the command's field too; nothing is
/// written either way (docs/gui-api.md "Errors").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_value_names_its_field_and_writes_nothing() {
    let stub = StubServer::start(vec![]).await;
    let fx = Fx::new(&stub).await;
    let world = fx.data.workspace().join("world.json");
    let before = std::fs::read(&world).unwrap();
    let cases = [
        (
            json!({"type": "setVillageLimits", "tokenBudget": -5, "askTimeoutSecs": null}),
            StatusCode::BAD_REQUEST,
            "GUI_FIELD_INVALID",
            "tokenBudget",
        ),
        (
            json!({"type": "setVillageLimits", "tokenBudget": null, "askTimeoutSecs": 5}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "INVALID_ASK_TIMEOUT",
            "askTimeoutSecs",
        ),
        (
            json!({"type": "setDoor", "enabled": true, "port": 70000}),
            StatusCode::BAD_REQUEST,
            "GUI_FIELD_INVALID",
            "port",
        ),
        (
            json!({"type": "cast", "edit": {"op": "settings", "agentId": "rec",
                "settings": {"maxToolIterations": 999}}}),
            StatusCode::BAD_REQUEST,
            "GUI_FIELD_INVALID",
            "edit.settings.maxToolIterations",
        ),
    ];
    for (body, status, code, field) in cases {
        let (got, answer) = fx.command(body.clone()).await;
        assert_eq!(
            (got, Fx::code(&answer), answer["error"]["field"].as_str()),
            (status, code, Some(field)),
            "{body}: {answer}"
        );
        let message = answer["error"]["message"].as_str().unwrap_or("");
        assert!(
            !message.contains("invalid value") && !message.contains("expected u"),
            "serde's text: {message}"
        );
    }
    assert_eq!(std::fs::read(&world).unwrap(), before, "nothing written");
}
