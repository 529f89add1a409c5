//! Preflight checks of the model templates the start agents use: keys, names, endpoints.

use std::collections::BTreeSet;

use super::{Findings, Input, Level, env_var_name, grouped};
use crate::error::Remedy;
use crate::village::mcp_config::{McpConfig, McpServerEntry};
use crate::village::{Credential, EndpointProblem, EndpointSecurity, Provider};

/// A start agent's template needs a key the secret store lacks (once per template).
pub(super) fn template_key_missing(i: &Input<'_>, out: &mut Findings) {
    let world = i.world;
    let view = i.view;
    let started = &i.started[..];
    let mut templates_checked = BTreeSet::new();
    for a in started {
        if let Some(t) = world.template(&a.model_template_id) {
            let needs_key = t.credential != Credential::NotRequired;
            if needs_key
                && templates_checked.insert(t.id.as_str())
                && !(view.secret_present)(t.id.as_str())
            {
                let var = env_var_name(t.id.as_str());
                out.add(
                    Level::Reject,
                    "SECRET_MISSING",
                    format!(
                        "テンプレート {} の API キーがありません（鍵 {} / 環境変数 {var}）。",
                        t.id, t.id
                    ),
                    format!(
                        "No API key for template {} (key {} / variable {var}).",
                        t.id, t.id
                    ),
                    "",
                    "",
                );
                out.with_remedy(Remedy::StoreSecret {
                    name: t.id.to_string(),
                    env: true,
                });
            }
        }
    }
}

/// A `${secret:NAME}` of an MCP header the start set uses is missing.
pub(super) fn mcp_secret_missing(i: &Input<'_>, out: &mut Findings) {
    let view = i.view;
    for name in secret_refs(view.mcp, view.start) {
        let key = format!("mcp:{name}");
        if !(view.secret_present)(&key) {
            let var = env_var_name(&key);
            out.add(
                Level::Reject,
                "SECRET_MISSING",
                format!("MCP のヘッダーが参照する秘密 {key} がありません（環境変数 {var}）。"),
                format!(
                    "The secret {key} referenced by an MCP header is missing (variable {var})."
                ),
                "無いとそのサーバーには繋がりません。",
                "Without it that server is not connected.",
            );
            out.with_remedy(Remedy::StoreSecret {
                name: key,
                env: true,
            });
        }
    }
}

/// A start agent names a template that does not exist (one per template, the agents listed).
pub(super) fn template_missing(i: &Input<'_>, out: &mut Findings) {
    let world = i.world;
    let started = &i.started[..];
    let missing = grouped(
        started
            .iter()
            .filter(|a| world.template(&a.model_template_id).is_none())
            .map(|a| (a.model_template_id.as_str(), a.id.as_str())),
    );
    for (template, agents) in &missing {
        let agents = agents.join(", ");
        out.add(
            Level::Reject,
            "MODEL_TEMPLATE_MISSING",
            format!("テンプレート {template} がありません（使う個体: {agents}）。"),
            format!("Template {template} does not exist (used by {agents})."),
            "world.json の modelTemplateId を存在するテンプレートに直すか、そのテンプレートを足してください。",
            "Point modelTemplateId in world.json at an existing template, or add that template.",
        );
    }
}

/// The village's token budget is below what one call of a start agent's template reserves
/// (the output cap alone, weighted, before any prompt): every request would stop at the
/// budget before its first call (once per template, agents listed).
pub(super) fn budget_below_one_call(i: &Input<'_>, out: &mut Findings) {
    let Some(budget) = i.world.token_budget else {
        return;
    };
    let short = grouped(i.started.iter().filter_map(|a| {
        let t = i.world.template(&a.model_template_id)?;
        let least = crate::budget::estimate(0, t.max_output_tokens);
        (budget < least).then(|| (t.id.as_str(), a.id.as_str()))
    }));
    for (template, agents) in &short {
        let agents = agents.join(", ");
        let least = i
            .world
            .model_templates
            .iter()
            .find(|t| t.id.as_str() == *template)
            .map_or(0, |t| crate::budget::estimate(0, t.max_output_tokens));
        out.add(
            Level::Warn,
            "BUDGET_BELOW_ONE_CALL",
            format!("トークン予算 {budget} は、テンプレート {template} の 1 回の呼び出しの見積もり（少なくとも {least}）より小さいので、依頼は最初の呼び出しの前に予算で止まります（使う個体: {agents}）。"),
            format!("The token budget {budget} is below what one call of template {template} reserves (at least {least}): every request stops at the budget before its first call (used by {agents})."),
            "tokenBudget を大きくするか、テンプレートの maxOutputTokens を小さくしてください（見積もりは 送る要求 + maxOutputTokens × 4）。",
            "Raise tokenBudget, or lower the template's maxOutputTokens (a call reserves the request as sent plus maxOutputTokens × 4).",
        );
    }
}

/// Start agents think with the embedded demo model (`provider: "demo"`, written only by
/// `fuseforks-cli demo`): scripted answers, never an AI (once per template, agents listed).
pub(super) fn demo_model(i: &Input<'_>, out: &mut Findings) {
    let demo = grouped(i.started.iter().filter_map(|a| {
        i.world
            .template(&a.model_template_id)
            .filter(|t| t.provider() == Provider::Demo)
            .map(|t| (t.id.as_str(), a.id.as_str()))
    }));
    for (template, agents) in &demo {
        let agents = agents.join(", ");
        out.add(
            Level::Info,
            "DEMO_MODEL",
            format!(
                "テンプレート {template} はデモモデルです（台本どおりに答えるだけで、AI ではありません。個体: {agents}）。"
            ),
            format!(
                "Template {template} is the demo model — scripted, not an AI (agents: {agents})."
            ),
            "または world.json の modelTemplates[] を本物のモデルに向けてください。",
            "Or point modelTemplates[] of world.json at a real model.",
        );
        out.with_remedy(Remedy::FoundVillage);
    }
}

/// A start agent's template has an unusable or plain-http endpoint (once per template).
pub(super) fn endpoints(i: &Input<'_>, out: &mut Findings) {
    let world = i.world;
    let started = &i.started[..];
    let mut endpoints_checked = BTreeSet::new();
    for t in started
        .iter()
        .filter_map(|a| world.template(&a.model_template_id))
        .filter(|t| endpoints_checked.insert(t.id.as_str()))
    {
        match t.endpoint_security() {
            Ok(EndpointSecurity::Tls | EndpointSecurity::Loopback) => {}
            Ok(EndpointSecurity::InsecureAllowed) => out.add(
                Level::Warn,
                "ENDPOINT_INSECURE_ALLOWED",
                format!(
                    "テンプレート {} の baseUrl は平文の http です（allowInsecureHttp）。鍵と会話が暗号化されずに流れます。",
                    t.id
                ),
                format!(
                    "Template {}: baseUrl is plain http (allowInsecureHttp); the key and the conversation travel unencrypted.",
                    t.id
                ),
                "信頼できる自前の網の中だけで使ってください。できれば https にしてください。",
                "Use it only inside a network you trust; prefer https.",
            ),
            Err(EndpointProblem::Invalid { why }) => out.add(
                Level::Reject,
                "ENDPOINT_INVALID",
                format!("テンプレート {} の baseUrl が使えません（{why}）。", t.id),
                format!("Template {}: baseUrl {why}.", t.id),
                "world.json の modelTemplates[].baseUrl に https://api.openai.com/v1 のような絶対 URL を書いてください。",
                "Write an absolute URL such as https://api.openai.com/v1 in modelTemplates[].baseUrl of world.json.",
            ),
            Err(EndpointProblem::Demo { why }) => out.add(
                Level::Reject,
                "ENDPOINT_INVALID",
                format!("テンプレート {} の baseUrl が使えません（{why}）。", t.id),
                format!("Template {}: baseUrl {why}.", t.id),
                "デモのテンプレートの baseUrl は http://127.0.0.1:<ポート>/v1（ポートは 1〜65535 の空いているもの）にしてください。新しいデモの村を作り直すこともできます。",
                "Write http://127.0.0.1:<port>/v1 (a free port, 1-65535) in the demo template's baseUrl, or make a new demo village.",
            ),
            Err(EndpointProblem::Insecure { host }) => out.add(
                Level::Reject,
                "ENDPOINT_INSECURE",
                format!(
                    "テンプレート {} の baseUrl は平文の http で {host} へ向かいます。API キーが暗号化されずに流れます。",
                    t.id
                ),
                format!(
                    "Template {}: baseUrl is plain http to {host}; the API key would travel unencrypted.",
                    t.id
                ),
                "https にしてください。自前の網のモデルサーバーなら、テンプレートに \"allowInsecureHttp\": true を書けます。",
                "Use https; for a model server on your own network, set \"allowInsecureHttp\": true on the template.",
            ),
        }
    }
}

/// The `${secret:NAME}` names referenced by the MCP headers the start set will use.
fn secret_refs(mcp: &[(String, McpConfig)], start: &BTreeSet<String>) -> BTreeSet<String> {
    mcp.iter()
        .filter(|(o, _)| o.is_empty() || start.contains(o))
        .flat_map(|(_, config)| config.mcp_servers.values())
        .filter_map(|entry| match entry {
            McpServerEntry::Http(h) if h.enabled => Some(h.secret_names()),
            _ => None,
        })
        .flatten()
        .collect()
}
