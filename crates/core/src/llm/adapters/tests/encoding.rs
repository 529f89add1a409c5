//! Per-wire encoding facts (pure adapters, no HTTP): output caps, effort and thinking, provider
//! skills as the wire's own tools, Gemini grounding, and the OpenAI-compatible Gemini endpoint's
//! `extra_content` returned on the replayed call.

use serde_json::{Value, json};

use super::support::task_request;
use crate::effort::Effort;
use crate::llm::adapters::{CacheTtl, EncodeContext, decode, encode};
use crate::llm::{ChatMessage, ContentBlock, ProviderSkills, Role, ToolResult, Wire};

fn body(wire: Wire, base_url: &str, edit: impl FnOnce(&mut crate::llm::ChatRequest)) -> Value {
    let mut request = task_request();
    edit(&mut request);
    encode(
        &request,
        &EncodeContext {
            wire,
            base_url,
            cache_ttl: CacheTtl::OneHour,
        },
    )
    .unwrap()
}

#[test]
fn output_caps_and_effort_in_each_wires_words() {
    let high = |r: &mut crate::llm::ChatRequest| r.effort = Some(Effort::High);
    let b = body(Wire::OpenAiCompat, "https://api.openai.com/v1", high);
    assert_eq!(
        (
            b["max_completion_tokens"].clone(),
            b["reasoning_effort"].clone()
        ),
        (json!(2048), json!("high"))
    );
    assert!(
        b.get("max_tokens").is_none(),
        "OpenAI refuses max_tokens on reasoning models"
    );
    let b = body(Wire::OpenAiCompat, "http://127.0.0.1:8000/v1", high);
    assert_eq!(b["max_tokens"], 2048, "other servers know max_tokens");

    let b = body(Wire::Anthropic, "https://api.anthropic.com/v1", |r| {
        r.effort = Some(Effort::High);
        r.model = "claude-sonnet-4-5".into();
    });
    assert_eq!(
        b["thinking"],
        json!({"type": "enabled", "budget_tokens": 2047}),
        "budget capped below max_tokens"
    );
    let b = body(Wire::Anthropic, "https://api.anthropic.com/v1", |r| {
        r.effort = Some(Effort::Xhigh);
        r.model = "claude-opus-5".into();
    });
    assert_eq!(
        (b["thinking"].clone(), b["output_config"]["effort"].clone()),
        (json!({"type": "adaptive"}), json!("xhigh"))
    );
    assert_eq!(b["max_tokens"], 2048);

    let b = body(Wire::Gemini, "", |r| {
        r.effort = Some(Effort::Low);
        r.model = "gemini-3-pro-preview".into();
    });
    assert_eq!(
        b["generationConfig"]["thinkingConfig"],
        json!({"thinkingLevel": "LOW", "includeThoughts": true})
    );
    assert_eq!(b["generationConfig"]["maxOutputTokens"], 2048);
    let b = body(Wire::Gemini, "", |r| {
        r.effort = Some(Effort::Medium);
        r.model = "gemini-2.5-flash".into();
    });
    assert_eq!(
        b["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        4096
    );

    let b = body(Wire::OpenAiResponses, "", high);
    assert_eq!(
        b["reasoning"],
        json!({"effort": "high", "summary": "detailed"})
    );
    assert_eq!(
        (b["max_output_tokens"].clone(), b["store"].clone()),
        (json!(2048), json!(false))
    );
    assert_eq!(b["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        body(Wire::XaiResponses, "", high)["reasoning"],
        json!({"effort": "high"})
    );
    assert!(
        body(Wire::MetaResponses, "", high)
            .get("reasoning")
            .is_none(),
        "Meta takes no reasoning parameter"
    );

    let b = body(Wire::OllamaNative, "", high);
    assert_eq!(
        (
            b["think"].clone(),
            b["options"]["num_predict"].clone(),
            b["stream"].clone()
        ),
        (json!("high"), json!(2048), json!(false))
    );
}

#[test]
fn tool_choice_none_and_auto_on_wires_without_those_values() {
    use crate::llm::ToolChoice;
    for wire in [
        Wire::OpenAiResponses,
        Wire::XaiResponses,
        Wire::MetaResponses,
        Wire::PerplexityResponses,
        Wire::OllamaNative,
    ] {
        let none = body(wire, "", |r| r.tool_choice = ToolChoice::None);
        assert!(
            none.get("tools").is_none(),
            "{wire:?}: none = no tools offered"
        );
        let auto = body(wire, "", |_| {});
        assert!(
            auto.get("tool_choice").is_none(),
            "{wire:?}: auto is not sent"
        );
        assert!(auto.get("tools").is_some());
    }
    assert_eq!(
        body(Wire::OpenAiCompat, "https://api.openai.com/v1", |r| r
            .tool_choice =
            ToolChoice::None)["tool_choice"],
        "none"
    );
    assert_eq!(
        body(Wire::Anthropic, "", |r| r.tool_choice =
            ToolChoice::Required)["tool_choice"],
        json!({"type": "any"})
    );
    assert_eq!(
        body(Wire::OpenAiCompat, "https://x/v1", |r| r
            .parallel_tool_calls =
            Some(false))["parallel_tool_calls"],
        false
    );
    assert_eq!(
        body(Wire::Anthropic, "", |r| r.parallel_tool_calls = Some(false))["tool_choice"],
        json!({"type": "auto", "disable_parallel_tool_use": true})
    );
}

#[test]
fn provider_skills_become_the_wires_own_tools() {
    let all = ProviderSkills {
        google_search: true,
        gemini_url_context: true,
        xai_web_search: true,
        xai_x_search: true,
        openai_web_search: true,
        openai_reasoning_pro: true,
        meta_web_search: true,
        perplexity_web_search: true,
        perplexity_finance_search: true,
        perplexity_people_search: true,
        perplexity_fetch_url: true,
    };
    let kinds = |b: &Value| -> Vec<String> {
        b["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["type"].as_str().map(str::to_owned))
            .filter(|t| t != "function")
            .collect()
    };
    let g = body(Wire::Gemini, "", |r| r.skills = all);
    let tools = g["tools"].as_array().unwrap();
    assert!(
        tools.contains(&json!({"googleSearch": {}})) && tools.contains(&json!({"urlContext": {}}))
    );
    let o = body(Wire::OpenAiResponses, "", |r| r.skills = all);
    assert_eq!(kinds(&o), ["web_search"]);
    assert_eq!(o["reasoning"]["mode"], "pro");
    assert_eq!(
        kinds(&body(Wire::XaiResponses, "", |r| r.skills = all)),
        ["web_search", "x_search"]
    );
    assert_eq!(
        kinds(&body(Wire::MetaResponses, "", |r| r.skills = all)),
        ["web_search"]
    );
    let p = body(Wire::PerplexityResponses, "", |r| r.skills = all);
    assert_eq!(
        kinds(&p),
        ["web_search", "finance_search", "people_search", "fetch_url"]
    );
    assert_eq!(p["max_steps"], 5, "finance search sends max_steps 5");
    // Skills of other wires are ignored: nothing leaks across.
    assert!(
        body(Wire::OpenAiCompat, "https://x/v1", |r| r.skills = all)
            .to_string()
            .find("search")
            .is_none()
    );
    assert_eq!(
        kinds(&body(Wire::OpenAiResponses, "", |_| {})),
        Vec::<String>::new()
    );
}

#[test]
fn gemini_grounding_comes_back_as_sources() {
    let reply = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Paris is sunny."}]}, "finishReason": "STOP",
        "groundingMetadata": {"webSearchQueries": ["paris weather"], "groundingChunks": [{"web": {"uri": "https://weather.example/paris", "title": "Paris"}}]}}],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4, "totalTokenCount": 7}});
    let r = decode(Wire::Gemini, reply).unwrap();
    let g = r.grounding.unwrap();
    assert_eq!(
        (g.engine.as_str(), g.queries.clone()),
        ("google", vec!["paris weather".to_owned()])
    );
    assert_eq!(g.sources[0].uri, "https://weather.example/paris");
    let blocked = decode(
        Wire::Gemini,
        json!({"promptFeedback": {"blockReason": "SAFETY"}}),
    )
    .unwrap();
    assert_eq!(blocked.stop, crate::llm::StopReason::Refusal);
}

#[test]
fn gemini_openai_endpoint_extra_content_goes_back_on_the_call() {
    let signature = json!({"google": {"thought_signature": "c2lnbmF0dXJl"}});
    let reply = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"},
                        "extra_content": signature}]}}],
        "usage": {"prompt_tokens": 35, "completion_tokens": 12, "total_tokens": 109}});
    let first = decode(Wire::OpenAiCompat, reply).unwrap();
    assert_eq!(
        first.usage.unwrap().completion,
        74,
        "hidden thoughts (109 - 35 - 12) are billed output"
    );
    let call = first.tool_calls()[0].clone();
    assert_eq!(call.id, "call_0", "an empty id is replaced");
    let base = "https://generativelanguage.googleapis.com/v1beta/openai";
    let second = body(Wire::OpenAiCompat, base, |r| {
        r.messages.push(first.to_message());
        r.messages.push(ChatMessage {
            role: Role::Tool,
            content: vec![ContentBlock::ToolResult(ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: "sunny".into(),
                is_error: false,
            })],
        });
    });
    assert_eq!(
        second["messages"][2]["tool_calls"][0]["extra_content"],
        signature
    );
}
