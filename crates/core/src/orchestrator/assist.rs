//! `Orchestrator::assist_draft`: the drafting assistant (`crate::assist`) on the village's
//! model client and keys. The template must exist and have `useTools`; its key must be stored
//! (`SECRET_MISSING`, nothing sent). Each model call becomes one `assist:` log line and, when
//! its usage is known and a conversation is open, one `assist` record — never a budget charge.

use std::sync::Arc;

use super::{Inner, Orchestrator};
use crate::assist::{
    AssistCall, AssistError, AssistOutcome, AssistRequest, AssistSetup, run_exchange,
};
use crate::llm::CancellationToken;
use crate::sessions::{AssistRecord, Record};
use crate::village::Credential;

impl Orchestrator {
    /// One exchange of the drafting assistant. Nothing of the village is written but the
    /// `assist` records; the draft is the caller's to show and a human's to save.
    pub async fn assist_draft(
        &self,
        request: &AssistRequest,
        cancel: CancellationToken,
    ) -> Result<AssistOutcome, AssistError> {
        let inner = &self.inner;
        let world = inner.world();
        let template = world
            .model_templates
            .iter()
            .find(|t| t.id.as_str() == request.template_id)
            .cloned()
            .ok_or_else(|| {
                AssistError::invalid(
                    "templateId",
                    format!("no model template {:?}", request.template_id),
                    "pick a template of world.json's modelTemplates",
                )
            })?;
        if !template.use_tools {
            return Err(AssistError::invalid(
                "templateId",
                format!(
                    "the template {} has useTools false: it cannot hand over a draft",
                    template.id
                ),
                "pick a template with useTools true",
            ));
        }
        let key = inner.secret(template.id.as_str());
        if key.is_none() && template.credential != Credential::NotRequired {
            return Err(AssistError::SecretMissing {
                template: template.id.to_string(),
            });
        }
        let mut endpoint = crate::model_endpoint::endpoint_of(&template, key)?;
        endpoint.stream = false; // nobody watches the draft being written
        let setup = AssistSetup {
            store: inner.store(),
            world: &world,
            client: inner.llm(),
            endpoint: &endpoint,
            template: &template,
            language: inner.language(),
            connected_mcp: inner.mcp_tools(&request.target.id),
            cancel,
        };
        let (reply, calls) = run_exchange(&setup, request).await;
        record_calls(inner, request, &template, &calls).await;
        reply.map(|reply| AssistOutcome { reply, calls })
    }
}

/// The `assist:` line of every call, and its record where the usage is known.
async fn record_calls(
    inner: &Arc<Inner>,
    request: &AssistRequest,
    template: &crate::village::ModelTemplate,
    calls: &[AssistCall],
) {
    let kind = request.target.kind.as_str();
    let current_chars = request.current.chars().count();
    let mut records = Vec::new();
    for call in calls {
        let counts = call.usage.map_or_else(
            || "prompt=- cached=- total=- reasoning=-".to_owned(),
            |u| {
                format!(
                    "prompt={} cached={} total={} reasoning={}",
                    u.prompt,
                    u.cache_read,
                    u.total(),
                    u.reasoning
                )
            },
        );
        let draft_chars = call
            .draft_chars
            .map_or_else(|| "-".to_owned(), |c| c.to_string());
        inner.log(&format!(
            "assist: kind={kind} model={} attempt={} forced={} outcome={} {counts} current_chars={current_chars} draft_chars={draft_chars}",
            template.model,
            call.attempt,
            call.forced.as_str(),
            call.outcome,
        ));
        if let Some(u) = call.usage {
            records.push(Record::Assist(AssistRecord {
                ts_ms: call.ts_ms,
                draft_kind: kind.to_owned(),
                model: template.model.clone(),
                template_id: template.id.to_string(),
                prompt: u.prompt,
                cache_read: u.cache_read,
                cache_write: u.cache_write,
                cache_write_1h: u.cache_write_1h,
                completion: u.completion,
                reasoning: u.reasoning,
                outcome: call.outcome.to_owned(),
                extra: serde_json::Map::new(),
            }));
        }
    }
    if records.is_empty() {
        return;
    }
    if inner.current_session().is_none() {
        inner.log(&format!(
            "assist: warn: no conversation is open; {} record(s) not kept (the log lines above are)",
            records.len()
        ));
        return;
    }
    inner.record(records).await;
}
