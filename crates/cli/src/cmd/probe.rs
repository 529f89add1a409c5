//! `check --probe-endpoints`: after the offline preflight, one cheap authenticated request per
//! template the start set uses (the core's `llm::probe`), all at once, each becoming a finding:
//! `ENDPOINT_OK` (info, with the latency) or `ENDPOINT_AUTH_FAILED` / `ENDPOINT_STATUS` /
//! `ENDPOINT_UNREACHABLE` (reject: `check` exits 3). A template the preflight already refuses
//! (no key, a bad endpoint) is not probed. Under `--events jsonl` each probe is also a
//! `{"type":"cli",…}` line. Never the key, never a body.

use std::collections::BTreeSet;

use fuseforks_core::llm::{ApiKey, Endpoint, LlmClient};
use fuseforks_core::llm::{NetworkKind, ProbeOutcome, ProbeReport, probe};
use fuseforks_core::model_endpoint::endpoint_of;
use fuseforks_core::preflight::{Finding, Level};
use fuseforks_core::village::{Credential, Language, ModelTemplate, Provider, World};
use fuseforks_host::HostPaths;
use fuseforks_host::boot::secret_store;
use fuseforks_host::preflight_view::PreflightReport;
use fuseforks_host::secret_names::env_var_name;

use super::headless::Common;
use crate::output::Out;

/// Probes the start set's templates and adds one finding per probe to `report` (heaviest
/// first, as the preflight sorts).
pub(crate) fn run(common: &Common, report: &mut PreflightReport, out: &Out) {
    let paths = HostPaths::new(&common.data_dir);
    let world = match paths.village().load_world() {
        Ok(loaded) => loaded.value,
        Err(e) => {
            out.error(&e);
            return;
        }
    };
    let targets = targets(&world, &report.start, common);
    if targets.is_empty() {
        return;
    }
    let results = match probe_all(&targets) {
        Ok(r) => r,
        Err(message) => {
            out.cli("error", "PROBE_FAILED", &message, None);
            return;
        }
    };
    let data_dir = paths.data_dir().display().to_string();
    for ((template, _), result) in targets.iter().zip(results) {
        let result = match result {
            Ok(r) => r,
            Err(message) => {
                out.cli("warn", "PROBE_FAILED", &message, None);
                continue;
            }
        };
        let finding = finding(template, &result, report.language, &data_dir);
        if out.jsonl {
            let level = match finding.level {
                Level::Reject => "reject",
                Level::Warn => "warn",
                Level::Info => "info",
            };
            out.cli(level, finding.code, &finding.message, Some(&finding.fix));
        }
        report.findings.push(finding);
    }
    report.findings.sort_by_key(|f| f.level);
}

/// The templates of the start set that the preflight lets through, with their endpoints.
fn targets(
    world: &World,
    start: &BTreeSet<String>,
    common: &Common,
) -> Vec<(ModelTemplate, Endpoint)> {
    let used: BTreeSet<&str> = world
        .agents
        .iter()
        .filter(|a| start.contains(a.id.as_str()))
        .map(|a| a.model_template_id.as_str())
        .collect();
    let store = secret_store(common.secret_source()).ok();
    world
        .model_templates
        .iter()
        .filter(|t| used.contains(t.id.as_str()))
        // The demo model lives in our own process and starts with the village's boot, never
        // for `check`: there is nothing to probe (the preflight's DEMO_MODEL says what it is).
        .filter(|t| t.provider() != Provider::Demo)
        .filter_map(|t| {
            let key = match (&store, t.credential) {
                (_, Credential::NotRequired) | (None, _) => None,
                (Some(s), _) => s.get(t.id.as_str()).ok().flatten().map(ApiKey::new),
            };
            // No key or a refused endpoint: the preflight already says so.
            let endpoint = endpoint_of(t, key).ok()?;
            Some((t.clone(), endpoint))
        })
        .collect()
}

/// Runs every probe concurrently on a small runtime of its own (`check` has none); one result
/// per target, in order (`Err`: the probe could not be sent, with why — never the key).
fn probe_all(
    targets: &[(ModelTemplate, Endpoint)],
) -> Result<Vec<Result<ProbeReport, String>>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the probe runtime: {e}"))?;
    let http = LlmClient::http_client().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for (i, (template, endpoint)) in targets.iter().enumerate() {
            let (http, endpoint, model) = (http.clone(), endpoint.clone(), template.model.clone());
            tasks.spawn(async move { (i, probe(&http, &endpoint, &model).await) });
        }
        let mut results: Vec<Result<ProbeReport, String>> = targets
            .iter()
            .map(|(t, _)| Err(format!("the probe of template {} did not finish", t.id)))
            .collect();
        while let Some(joined) = tasks.join_next().await {
            let (i, result) = joined.map_err(|e| format!("a probe failed: {e}"))?;
            if let Some(slot) = results.get_mut(i) {
                *slot = result.map_err(|e| e.to_string());
            }
        }
        Ok(results)
    })
}

/// One probe as a finding, in the village language.
fn finding(
    template: &ModelTemplate,
    result: &ProbeReport,
    lang: Language,
    data_dir: &str,
) -> Finding {
    let (id, host) = (template.id.as_str(), &result.host);
    // Which request answered: the models list, or the 1-token call made when there is none.
    let request = match &result.instead_of {
        Some(list) => lang.pick(
            format!("{}（{list} のため 1 トークンの呼び出し）", result.request),
            format!("{} (a 1-token call: {list})", result.request),
        ),
        None => result.request.clone(),
    };
    let request = &request;
    let ms = result.latency.as_millis();
    let (level, message, fix) = match result.outcome {
        ProbeOutcome::Ok { status } => (
            Level::Info,
            lang.pick(
                format!(
                    "テンプレート {id}（{host}）: {request} が {ms} ms で {status} を返しました。"
                ),
                format!("template {id} ({host}): {request} answered {status} in {ms} ms."),
            ),
            lang.pick("対応は不要です。", "Nothing to do."),
        ),
        ProbeOutcome::AuthFailed { status } => (
            Level::Reject,
            lang.pick(
                format!(
                    "テンプレート {id}（{host}）: サーバーが API キーを拒みました（{request} → HTTP {status}）。"
                ),
                format!(
                    "template {id} ({host}): the server refused the API key ({request} → HTTP {status})."
                ),
            ),
            auth_fix(template, lang, data_dir),
        ),
        ProbeOutcome::Status { status } => (
            Level::Reject,
            lang.pick(
                format!("テンプレート {id}（{host}）: {request} が HTTP {status} を返しました。"),
                format!("template {id} ({host}): {request} answered HTTP {status}."),
            ),
            status_fix(status, host, request, lang),
        ),
        ProbeOutcome::Unreachable { class } => (
            Level::Reject,
            lang.pick(
                format!(
                    "テンプレート {id}（{host}）: 応答がありません（{}）。",
                    class.describe()
                ),
                format!(
                    "template {id} ({host}): no answer ({}) to {request}.",
                    class.describe()
                ),
            ),
            unreachable_fix(class, host, lang),
        ),
    };
    Finding {
        level,
        code: result.outcome.code(),
        message,
        fix,
        file: None,
        field: None,
        remedy: None,
    }
}

fn auth_fix(template: &ModelTemplate, lang: Language, data_dir: &str) -> String {
    let id = template.id.as_str();
    let var = env_var_name(id);
    let (j, e) = match template.credential {
        Credential::NotRequired => (
            format!(
                "サーバーは鍵を求めています。world.json のテンプレート {id} を \"credential\": \"keyring\" にし、fuseforks-cli secrets set {id} --data-dir {data_dir} で鍵を置いてください（--secrets env なら {var}）。"
            ),
            format!(
                "The server wants a key: set \"credential\": \"keyring\" on template {id} in world.json, then store the key with fuseforks-cli secrets set {id} --data-dir {data_dir} (or {var} with --secrets env)."
            ),
        ),
        _ => (
            format!(
                "正しい鍵を置いてください: fuseforks-cli secrets set {id} --data-dir {data_dir}（または {var} を設定して --secrets env）。"
            ),
            format!(
                "Store the right key: fuseforks-cli secrets set {id} --data-dir {data_dir} (or set {var} and pass --secrets env)."
            ),
        ),
    };
    lang.pick(j, e)
}

fn status_fix(status: u16, host: &str, request: &str, lang: Language) -> String {
    let (j, e) = match status {
        // Not implemented is an answer, not a passing failure: waiting changes nothing.
        501 => (
            format!(
                "{host} のサーバーは {request} を実装していません。テンプレートの provider（wire）と baseUrl がこのサーバーに合っているか確かめてください。"
            ),
            format!(
                "The server at {host} does not implement {request}: check that the template's provider (wire) and baseUrl fit this server."
            ),
        ),
        429 => (
            "サーバーがこの鍵を制限しています（429）。時間をおいて試してください。".to_owned(),
            "The server is rate-limiting this key (429): try again later.".to_owned(),
        ),
        500..=599 => (
            format!(
                "{host} のサーバーが失敗しました。時間をおくか、サーバーのログを見てください。"
            ),
            format!("The server at {host} failed: try again later, or look at its logs."),
        ),
        _ => (
            format!(
                "world.json のこのテンプレートの baseUrl（多くは /v1 で終わります）と、{host} のサーバーを確かめてください。"
            ),
            format!(
                "Check the template's baseUrl in world.json (it usually ends in /v1) and the server at {host}."
            ),
        ),
    };
    lang.pick(j, e)
}

fn unreachable_fix(class: NetworkKind, host: &str, lang: Language) -> String {
    let (j, e) = match class {
        NetworkKind::ConnectionRefused => (
            format!("{host} のサーバーを起動するか、world.json の baseUrl を直してください。"),
            format!("Start the server at {host}, or fix the template's baseUrl in world.json."),
        ),
        NetworkKind::Dns => (
            format!("baseUrl のホスト名 {host} を確かめてください。"),
            format!("Check the host name {host} in baseUrl."),
        ),
        NetworkKind::Tls => (
            "証明書を確かめてください（この機械のサーバーなら http:// も使えます）。".into(),
            "Check the server's certificate (a server on this machine may use http://).".into(),
        ),
        NetworkKind::Timeout => (
            format!(
                "{host} が時間内に答えませんでした。起動しているか、届くかを確かめてください。"
            ),
            format!("{host} did not answer in time: check that it is up and reachable."),
        ),
        NetworkKind::Connect | NetworkKind::Other => (
            format!("ネットワークと {host} のサーバーを確かめてください。"),
            format!("Check the network and the server at {host}."),
        ),
    };
    lang.pick(j, e)
}
