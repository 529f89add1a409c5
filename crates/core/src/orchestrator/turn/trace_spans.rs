//! The spans of a turn (see `crate::trace`): its causal root's, opened by the chain's first
//! turn; the turn's (`invoke_agent`); each model call's (`chat`, GenAI attributes: provider,
//! models, token counts, finish reason, error type); each tool call's (`execute_tool`: the tool's
//! name only when it is one the turn offers, never the arguments or the result).

use std::sync::Arc;

use super::super::{Delivery, Inner};
use super::prepare::Prepared;
use crate::llm::{ChatResponse, LlmError, ToolCall};
use crate::sessions::TurnRecord;
use crate::trace::{Span, SpanKind, provider_name};

/// The span of a turn of `agent_id`, inside its causal root's span.
pub(super) fn turn_span(inner: &Arc<Inner>, agent_id: &str, delivery: &Delivery) -> Span {
    let root = delivery.budget.span(|| {
        let mut root = Span::root(inner.tracer(), || format!("request {agent_id}"));
        root.set("fuseforks.root.id", || delivery.budget.root_id());
        root.set("fuseforks.root.source", || delivery.message.from.label());
        root.set("gen_ai.agent.id", || agent_id);
        root
    });
    let mut span = root.child(SpanKind::Internal, || format!("invoke_agent {agent_id}"));
    span.set("gen_ai.operation.name", || "invoke_agent");
    span.set("gen_ai.agent.id", || agent_id);
    span.set("fuseforks.turn.hop", || delivery.message.hop);
    span
}

/// What a turn's span says at its end: rounds, stop, tokens.
pub(super) fn turn_ended(span: &mut Span, record: &TurnRecord) {
    span.set("fuseforks.turn.rounds", || record.rounds);
    span.set("fuseforks.turn.stop", || record.stop.log_label());
    span.set("gen_ai.usage.input_tokens", || record.prompt);
    span.set("gen_ai.usage.output_tokens", || record.completion);
    span.set("fuseforks.usage.unknown", || record.usage_unknown);
    if let crate::sessions::TurnStop::Failed { code, .. } = &record.stop {
        span.fail(code);
    }
}

/// The span of one model call of the turn.
pub(super) fn call_span(turn: &Span, p: &Prepared) -> Span {
    let model = &p.template.model;
    let mut span = turn.child(SpanKind::Client, || format!("chat {model}"));
    span.set("gen_ai.operation.name", || "chat");
    span.set("gen_ai.provider.name", || provider_name(p.wire));
    span.set("gen_ai.request.model", || model.as_str());
    span.set("gen_ai.request.max_tokens", || p.template.max_output_tokens);
    span.set("fuseforks.template.id", || p.template.id.to_string());
    span.set("fuseforks.stream", || p.endpoint.stream);
    if let Some(host) = host_of(&p.template.base_url) {
        span.set("server.address", || host);
    }
    span
}

/// What a model call's span says at its end.
pub(super) fn call_ended(span: &mut Span, result: &Result<ChatResponse, LlmError>) {
    match result {
        Ok(response) => {
            if let Some(model) = &response.model {
                span.set("gen_ai.response.model", || model.as_str());
            }
            span.set("gen_ai.response.finish_reasons", || response.stop.as_str());
            if let Some(u) = &response.usage {
                span.set("gen_ai.usage.input_tokens", || u.prompt);
                span.set("gen_ai.usage.output_tokens", || u.completion);
                span.set("gen_ai.usage.cache_read.input_tokens", || u.cache_read);
                span.set("gen_ai.usage.reasoning.output_tokens", || u.reasoning);
            }
        }
        Err(e) => {
            span.fail(e.code());
            if let Some(status) = e.status() {
                span.set("http.response.status_code", || u32::from(status));
            }
        }
    }
}

/// The span of one tool call: the name only of a tool the turn offers (a made-up name is the
/// model's text).
pub(super) fn tool_span(turn: &Span, call: &ToolCall, known: bool, mcp: bool) -> Span {
    let name = if known { call.name.as_str() } else { "unknown" };
    let mut span = turn.child(SpanKind::Internal, || format!("execute_tool {name}"));
    span.set("gen_ai.operation.name", || "execute_tool");
    span.set("gen_ai.tool.name", || name);
    span.set("gen_ai.tool.type", || {
        if mcp { "extension" } else { "function" }
    });
    span.set("gen_ai.tool.call.id", || call.id.as_str());
    span
}

/// The host of a base URL, without user info, port or path.
fn host_of(base_url: &str) -> Option<String> {
    let rest = base_url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => host.split(':').next()?,
    };
    (!host.is_empty()).then(|| host.to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn host_of_drops_credentials_ports_and_paths() {
        assert_eq!(
            super::host_of("https://u:p@api.x.ai:443/v1").as_deref(),
            Some("api.x.ai")
        );
        assert_eq!(
            super::host_of("http://[::1]:8080/v1").as_deref(),
            Some("::1")
        );
        assert_eq!(super::host_of("nonsense"), None);
    }
}
