//! Jev on loopback: replies in the shape `fuseforks_core::judge`'s Jev backend reads
//! (Cloudflare's envelope `{result: {answers, usage, model}, success, errors, messages}`; per
//! question `noul {noul}`, `choice {choice, probabilities, confidence}`, `score {score,
//! legend, probabilities keyed by level index, confidence}`), served by [`StubServer`]
//! (`crate::stub`), and `jev.json` pointing at it.

use fuseforks_core::village::JevSettings;
use serde_json::{Value, json};

use crate::stub::StubReply;

/// The account id the stub's `jev.json` names.
pub const ACCOUNT: &str = "acc-test";
/// The path a Jev call takes on the stub.
pub const PATH: &str = "/accounts/acc-test/ai/run/typesafe/jev";

/// A choice answer.
pub fn choice(chosen: &str, probabilities: &[(&str, f64)]) -> Value {
    let probs: serde_json::Map<String, Value> = probabilities
        .iter()
        .map(|(k, p)| ((*k).to_string(), json!(p)))
        .collect();
    let top = probabilities.iter().map(|(_, p)| *p).fold(0.0, f64::max);
    json!({"type": "choice", "choice": chosen, "probabilities": probs, "confidence": top})
}

/// A score answer: probabilities per level index (0-based), the fractional score.
pub fn score(probabilities: &[f64]) -> Value {
    let probs: serde_json::Map<String, Value> = probabilities
        .iter()
        .enumerate()
        .map(|(i, p)| (i.to_string(), json!(p)))
        .collect();
    let score: f64 = probabilities
        .iter()
        .enumerate()
        .map(|(i, p)| i as f64 * p)
        .sum();
    let legend: serde_json::Map<String, Value> = (0..probabilities.len())
        .map(|i| (i.to_string(), json!(format!("level {}", i + 1))))
        .collect();
    json!({"type": "score", "score": score, "legend": legend, "probabilities": probs, "confidence": 0.5})
}

/// A noul answer.
pub fn noul(p: f64) -> Value {
    json!({"type": "noul", "noul": p})
}

/// A successful reply with these answers (keyed by question) and token counts.
pub fn reply(answers: Value, input_tokens: u64, output_tokens: u64) -> StubReply {
    StubReply::json(
        200,
        &json!({
            "result": {"answers": answers, "model": "jev-test",
                       "usage": {"inputTokens": input_tokens, "outputTokens": output_tokens}},
            "success": true, "errors": [], "messages": []
        }),
    )
}

/// Cloudflare's refusal of an input over the model's limit.
pub fn too_large() -> StubReply {
    StubReply::json(
        400,
        &json!({"result": null, "success": false,
                "errors": [{"code": 3030, "message": "max_tokens_exceeded"}], "messages": []}),
    )
}

/// `jev.json` for the stub at `base_url` (`http://127.0.0.1:PORT`).
pub fn settings(base_url: &str) -> JevSettings {
    let mut s = JevSettings {
        account_id: ACCOUNT.into(),
        ..JevSettings::default()
    };
    s.extra.insert("baseUrl".into(), json!(base_url));
    s
}
