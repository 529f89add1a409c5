//! Spans for an observability stack, behind one small trait so that the core names no exporter:
//! one span per causal root, per turn, per model call and per tool call, with counts, names and
//! codes as attributes — never a prompt, an answer, an argument or a secret (the attribute
//! values are typed so that only those reach it). Off by default: a [`Span`] of a village
//! without a tracer holds nothing, and building one costs a branch.
//!
//! # Parts
//!
//! `trace.rs` — spans behind one trait (`Tracer`, `OpenSpan`; `Span` is nothing when off, and names
//! and values are built only when on): a causal root's span (held by its `CausalBudget`, ended when
//! the chain lets go), a turn's, a model call's and a tool call's, set in
//! `orchestrator/turn/trace_spans.rs` with the GenAI attributes. **Invariant: a span carries names,
//! ids, counts and codes only — never a prompt, answer, argument, result or key** (a tool name the
//! turn does not offer is `unknown`; `cli/tests/it/traces.rs` searches the exported bytes for a
//! canary).

use std::sync::Arc;

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// A name, an id or a code.
    Str(String),
    /// A count.
    Int(i64),
    /// A flag.
    Bool(bool),
}

impl From<&str> for Attr {
    fn from(v: &str) -> Self {
        Self::Str(v.to_owned())
    }
}

impl From<String> for Attr {
    fn from(v: String) -> Self {
        Self::Str(v)
    }
}

impl From<u64> for Attr {
    fn from(v: u64) -> Self {
        Self::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<u32> for Attr {
    fn from(v: u32) -> Self {
        Self::Int(i64::from(v))
    }
}

impl From<bool> for Attr {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}

/// What a span stands for (the exporter's span kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside the process (a root, a turn, a tool call).
    Internal,
    /// A call to another service (a model call).
    Client,
}

/// A span being recorded by an exporter; it ends when dropped.
pub trait OpenSpan: Send + Sync {
    /// A span inside this one.
    fn child(&self, name: String, kind: SpanKind) -> Box<dyn OpenSpan>;
    /// Sets an attribute.
    fn set(&mut self, key: &'static str, value: Attr);
    /// Marks the span failed with a stable code (`error.type`).
    fn fail(&mut self, code: &str);
}

/// Where the spans of a village go (the host's OpenTelemetry exporter).
pub trait Tracer: Send + Sync {
    /// A span with no parent: a causal root.
    fn root(&self, name: String) -> Box<dyn OpenSpan>;
}

/// A span, or nothing when tracing is off (every call then a no-op).
#[derive(Default)]
pub struct Span(Option<Box<dyn OpenSpan>>);

impl std::fmt::Debug for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Span(on)"
        } else {
            "Span(off)"
        })
    }
}

impl Span {
    /// A root span of `tracer` (nothing without one); `name` is only built when on.
    pub fn root(tracer: Option<&Arc<dyn Tracer>>, name: impl FnOnce() -> String) -> Self {
        Self(tracer.map(|t| t.root(name())))
    }

    /// A span inside this one (nothing when this is nothing).
    pub fn child(&self, kind: SpanKind, name: impl FnOnce() -> String) -> Self {
        Self(self.0.as_ref().map(|s| s.child(name(), kind)))
    }

    /// Whether spans are recorded.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Sets an attribute (the value is only built when on).
    pub fn set<V: Into<Attr>>(&mut self, key: &'static str, value: impl FnOnce() -> V) {
        if let Some(span) = self.0.as_mut() {
            span.set(key, value().into());
        }
    }

    /// Marks the span failed with a stable code.
    pub fn fail(&mut self, code: &str) {
        if let Some(span) = self.0.as_mut() {
            span.fail(code);
        }
    }
}

/// The GenAI name of a wire's provider (`gen_ai.provider.name`).
pub(crate) fn provider_name(wire: crate::llm::Wire) -> &'static str {
    use crate::llm::Wire;
    match wire {
        Wire::Anthropic => "anthropic",
        Wire::Gemini => "gcp.gemini",
        Wire::OllamaNative => "ollama",
        Wire::XaiResponses => "x_ai",
        Wire::MetaResponses => "meta",
        Wire::PerplexityResponses => "perplexity",
        Wire::OpenAiResponses | Wire::OpenAiCompat => "openai",
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::sync::LockOrRecover;

    #[derive(Clone, Default)]
    struct Seen(Arc<Mutex<Vec<String>>>);

    struct Open(Seen, String);

    impl OpenSpan for Open {
        fn child(&self, name: String, _: SpanKind) -> Box<dyn OpenSpan> {
            self.0.0.lock_or_recover().push(format!("start {name}"));
            Box::new(Open(self.0.clone(), name))
        }
        fn set(&mut self, key: &'static str, value: Attr) {
            self.0
                .0
                .lock_or_recover()
                .push(format!("{} {key}={value:?}", self.1));
        }
        fn fail(&mut self, code: &str) {
            self.0
                .0
                .lock_or_recover()
                .push(format!("{} failed {code}", self.1));
        }
    }

    impl Drop for Open {
        fn drop(&mut self) {
            self.0.0.lock_or_recover().push(format!("end {}", self.1));
        }
    }

    impl Tracer for Seen {
        fn root(&self, name: String) -> Box<dyn OpenSpan> {
            self.0.lock_or_recover().push(format!("start {name}"));
            Box::new(Open(self.clone(), name))
        }
    }

    #[test]
    fn off_builds_nothing_and_on_nests_and_ends() {
        let off = Span::root(None, || unreachable!("no name is built when off"));
        let mut child = off.child(SpanKind::Client, || unreachable!());
        child.set("k", || -> u64 { unreachable!() });
        assert!(!child.is_on());

        let seen = Seen::default();
        let tracer: Arc<dyn Tracer> = Arc::new(seen.clone());
        let root = Span::root(Some(&tracer), || "root".into());
        {
            let mut call = root.child(SpanKind::Client, || "chat m".into());
            call.set("gen_ai.usage.input_tokens", || 12u64);
            call.fail("LLM_HTTP");
        }
        drop(root);
        assert_eq!(
            *seen.0.lock_or_recover(),
            [
                "start root",
                "start chat m",
                "chat m gen_ai.usage.input_tokens=Int(12)",
                "chat m failed LLM_HTTP",
                "end chat m",
                "end root"
            ]
        );
    }
}
