//! `fuseforks-cli judge try --data-dir D ID [--secrets keyring|env] <text | -> [--json]`:
//! one backend call on a sample text, then the answers (value, p, margin, mean), the rule that
//! matched — or undecided and why — and the action it would take. Delivers nothing: no
//! orchestrator, no agent, no session store, no lock, no message record. Exit 0 when decided,
//! 6 when undecided (stderr says why), 3 when the judge file is invalid.

use std::io::Read;
use std::sync::Arc;

use fuseforks_core::judge::{
    Action, Answers, BackendSetup, JudgeRules, QuestionKind, ask_backend, evaluate, uses_jev,
};
use fuseforks_core::llm::LlmClient;
use fuseforks_core::village::Language;
use fuseforks_host::HostPaths;
use fuseforks_host::secrets::{EnvSecretStore, KeyringSecretStore, SecretStore};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::headless::SecretsArg;
use super::judge::{open_judges, pick, print_findings};
use crate::exit;
use crate::output::Out;
use crate::terminal::for_stdout;

/// What `judge try` was given.
pub(crate) struct TryArgs<'a> {
    pub data_dir: &'a std::path::Path,
    pub id: &'a str,
    pub secrets: SecretsArg,
    pub text: &'a str,
    pub json: bool,
}

fn read_text(arg: &str, out: &Out) -> Result<String, u8> {
    if arg != "-" {
        return Ok(arg.to_string());
    }
    let mut text = String::new();
    // At most 1 MiB from stdin: a sample, not a corpus.
    match std::io::stdin().take(1024 * 1024).read_to_string(&mut text) {
        Ok(_) if !text.trim().is_empty() => Ok(text),
        _ => {
            out.cli(
                "error",
                "USAGE",
                "no text on stdin",
                Some("pipe a sample text, or give it as an argument"),
            );
            Err(exit::USAGE)
        }
    }
}

fn store(secrets: SecretsArg, out: &Out) -> Result<Arc<dyn SecretStore>, u8> {
    match secrets {
        SecretsArg::Env => Ok(Arc::new(EnvSecretStore::from_env())),
        SecretsArg::Keyring => KeyringSecretStore::open()
            .map(|s| Arc::new(s) as Arc<dyn SecretStore>)
            .map_err(|e| {
                out.cli(
                    "error",
                    e.code(),
                    &e.to_string(),
                    Some("use --secrets env with FUSEFORKS_SECRET_* variables"),
                );
                exit::BOOT_FAILED
            }),
    }
}

fn answers_json(rules: &JudgeRules, answers: &Answers) -> Vec<Value> {
    rules
        .questions
        .iter()
        .zip(&answers.derived)
        .map(|(q, d)| {
            let mut v =
                json!({"question": q.name, "type": q.kind.name(), "value": d.shown, "p": d.p});
            if !matches!(q.kind, QuestionKind::Noul { .. }) {
                v["margin"] = json!(d.margin);
            }
            if matches!(q.kind, QuestionKind::Score { .. }) {
                v["mean"] = json!(d.mean);
            }
            v
        })
        .collect()
}

/// Runs `judge try`.
pub(crate) async fn run(args: TryArgs<'_>, out: &Out) -> u8 {
    let text = match read_text(args.text, out) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let (world, states) = match open_judges(args.data_dir, out) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let ids = [args.id.to_string()];
    let state = match pick(&states, &ids, out) {
        Ok(p) => p[0],
        Err(code) => return code,
    };
    let rules = match &state.rules {
        Ok(r) => r,
        Err(findings) => {
            print_findings(&state.path.display().to_string(), findings);
            out.cli(
                "error",
                "INVALID_JUDGE_FILE",
                &format!("{} finding(s)", findings.len()),
                Some("run judge validate and correct the file"),
            );
            return exit::REJECTED;
        }
    };
    let jev = HostPaths::new(args.data_dir)
        .shelf()
        .load_jev()
        .map(|l| l.value)
        .unwrap_or_default();
    let secrets = match store(args.secrets, out) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let client = match LlmClient::new() {
        Ok(c) => c,
        Err(e) => {
            out.error(&e);
            return exit::CORE_ERROR;
        }
    };
    let lookup = move |name: &str| secrets.get(name).ok().flatten();
    let setup = BackendSetup {
        world: &world,
        jev: &jev,
        secret: &lookup,
        client: &client,
        language: world.language().unwrap_or(Language::En),
    };
    let reply = ask_backend(&setup, &state.spec, rules, &text, CancellationToken::new()).await;
    let usage = reply.usage.unwrap_or_default();
    let backend = if uses_jev(&state.spec) {
        "jev".to_string()
    } else {
        reply.backend.clone()
    };
    let answers = match &reply.answers {
        Ok(a) => a,
        Err(u) => {
            if args.json {
                crate::outln!(
                    "{}",
                    json!({"judge": args.id, "backend": backend, "outcome": "undecided", "reason": u.reason, "detail": u.detail,
                    "inputTokens": usage.prompt, "outputTokens": usage.completion})
                );
            } else {
                crate::outln!("undecided: reason={} ({})", u.reason, for_stdout(&u.detail));
                crate::outln!(
                    "action: none (an undecided judge never uses [otherwise]; the caller gets the undecided line)"
                );
            }
            out.cli(
                "error",
                "JUDGE_UNDECIDED",
                &format!("the judge is undecided: reason={} ({})", u.reason, u.detail),
                Some("see the reason: the backend's settings, the token, or the answer"),
            );
            return exit::NO_ANSWER;
        }
    };
    report(&args, rules, answers, &backend, usage)
}

/// Prints a decided run: the answers, the rule, the action (nothing delivered).
fn report(
    args: &TryArgs<'_>,
    rules: &JudgeRules,
    answers: &Answers,
    backend: &str,
    usage: fuseforks_core::llm::Usage,
) -> u8 {
    let decision = evaluate(rules, answers);
    let (action, to) = match &decision.outcome.action {
        Action::To(ids) if ids.len() == 1 => ("relay", ids.clone()),
        Action::To(ids) => ("fan_out", ids.clone()),
        Action::Return => ("return", Vec::new()),
    };
    if args.json {
        crate::outln!(
            "{}",
            json!({
                "judge": args.id, "backend": backend, "outcome": decision.outcome_word(),
                "answers": answers_json(rules, answers), "rule": decision.rule.log_text(),
                "action": action, "to": to, "note": decision.outcome.note,
                "inputTokens": usage.prompt, "outputTokens": usage.completion, "delivered": false,
            })
        );
        return exit::OK;
    }
    for a in answers_json(rules, answers) {
        let mut line = format!(
            "{} = {} (p={:.2}",
            a["question"].as_str().unwrap_or(""),
            a["value"].as_str().unwrap_or(""),
            a["p"].as_f64().unwrap_or(0.0)
        );
        if let Some(m) = a["margin"].as_f64() {
            line.push_str(&format!(", margin={m:.2}"));
        }
        if let Some(m) = a["mean"].as_f64() {
            line.push_str(&format!(", mean={m:.2}"));
        }
        line.push(')');
        crate::outln!("{}", for_stdout(&line));
    }
    crate::outln!("rule: {}", decision.rule.log_text());
    crate::outln!("action: {action} to=[{}] (nothing delivered)", to.join(","));
    if let Some(note) = &decision.outcome.note {
        crate::outln!("note: {}", for_stdout(note));
    }
    exit::OK
}
