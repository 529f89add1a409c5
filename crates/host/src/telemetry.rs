//! OpenTelemetry traces of a running village, when the standard variables ask for them
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; `OTEL_SDK_DISABLED`
//! turns it off): the core's spans (`fuseforks_core::trace`) exported over OTLP/HTTP with
//! protobuf by a batch processor on a thread of its own. Installed once per process before the
//! async runtime starts, and shut down (the last spans sent) after it ends; off, nothing here
//! runs and the core's spans are nothing.
//!
//! # Parts
//!
//! `telemetry.rs` — OpenTelemetry traces when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `_TRACES_ENDPOINT`)
//! is set (`OTEL_SDK_DISABLED=true` wins): `Telemetry` puts the core's `trace::Tracer` over the
//! `opentelemetry` SDK, a batch processor exporting OTLP/HTTP protobuf on a thread of its own (its
//! blocking client: the exporter is installed by the CLI before the runtime starts and shut down —
//! the last spans sent — after it ends); `build_host` hands the installed tracer to the
//! orchestrator. Another protocol is `TELEMETRY_PROTOCOL_UNSUPPORTED` (warned; the work goes on).

use std::sync::{Arc, OnceLock};

use fuseforks_core::trace::{Attr, OpenSpan, SpanKind, Tracer};
use opentelemetry::trace::{Span as _, Status, TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

/// Why traces cannot be exported (the work goes on without them).
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// Only OTLP over HTTP with protobuf is built in.
    #[error(
        "OTEL_EXPORTER_OTLP_PROTOCOL={0} is not supported: set it to http/protobuf (or unset it)"
    )]
    Protocol(String),
    /// The exporter could not be built (a bad endpoint URL).
    #[error("the OTLP exporter could not be built: {0}")]
    Exporter(String),
}

impl fuseforks_core::Coded for TelemetryError {
    fn code(&self) -> &'static str {
        match self {
            Self::Protocol(_) => "TELEMETRY_PROTOCOL_UNSUPPORTED",
            Self::Exporter(_) => "TELEMETRY_EXPORTER_FAILED",
        }
    }

    fn fix(&self) -> Option<fuseforks_core::Fix> {
        Some(match self {
            Self::Protocol(_) => {
                "set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, or unset it".into()
            }
            Self::Exporter(_) => "fix OTEL_EXPORTER_OTLP_ENDPOINT (an http(s) URL)".into(),
        })
    }
}

static INSTALLED: OnceLock<Telemetry> = OnceLock::new();

fn set(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Whether the environment asks for traces.
pub fn requested() -> bool {
    let disabled = set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    !disabled
        && (set("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
            || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some())
}

/// Installs the exporter when the environment asks for it (`Ok(false)`: it does not). Call it
/// before the async runtime starts; [`shutdown`] after it ends.
pub fn install_from_env() -> Result<bool, TelemetryError> {
    if !requested() || INSTALLED.get().is_some() {
        return Ok(INSTALLED.get().is_some());
    }
    let protocol =
        set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"));
    if let Some(p) = protocol.filter(|p| p != "http/protobuf") {
        return Err(TelemetryError::Protocol(p));
    }
    let telemetry = Telemetry::build(None)?;
    let _ = INSTALLED.set(telemetry);
    Ok(true)
}

/// An exporter and the core's tracer over it.
pub struct Telemetry {
    provider: SdkTracerProvider,
    tracer: Arc<dyn Tracer>,
}

impl Telemetry {
    /// Exports to `endpoint` (its `/v1/traces`), or where the environment says (`None`).
    pub fn build(endpoint: Option<&str>) -> Result<Self, TelemetryError> {
        use opentelemetry_otlp::WithExportConfig as _;
        fuseforks_core::llm::LlmClient::install_crypto(); // the exporter's client needs one
        let mut builder = opentelemetry_otlp::SpanExporter::builder().with_http();
        if let Some(base) = endpoint {
            builder = builder.with_endpoint(format!("{}/v1/traces", base.trim_end_matches('/')));
        }
        let exporter = builder
            .build()
            .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
        Ok(Self::over(exporter))
    }

    fn over(exporter: opentelemetry_otlp::SpanExporter) -> Self {
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name("fuseforks")
            .with_attribute(KeyValue::new(
                "service.version",
                fuseforks_core::version::get(),
            ))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        let tracer: Arc<dyn Tracer> = Arc::new(Otel(provider.tracer("fuseforks")));
        Self { provider, tracer }
    }

    /// The core's tracer.
    pub fn tracer(&self) -> Arc<dyn Tracer> {
        Arc::clone(&self.tracer)
    }

    /// Sends the spans still buffered and stops the exporter.
    pub fn shutdown(&self) {
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown();
    }
}

/// The installed tracer (`None`: traces are off).
pub fn tracer() -> Option<Arc<dyn Tracer>> {
    INSTALLED.get().map(Telemetry::tracer)
}

/// Sends the spans still buffered and stops the installed exporter (a no-op when off).
pub fn shutdown() {
    if let Some(installed) = INSTALLED.get() {
        installed.shutdown();
    }
}

/// The core's tracer over an OpenTelemetry one.
struct Otel(SdkTracer);

impl Tracer for Otel {
    fn root(&self, name: String) -> Box<dyn OpenSpan> {
        let span = self
            .0
            .span_builder(name)
            .with_kind(opentelemetry::trace::SpanKind::Internal)
            .start_with_context(&self.0, &Context::new());
        Box::new(OtelSpan {
            tracer: self.0.clone(),
            span,
        })
    }
}

struct OtelSpan {
    tracer: SdkTracer,
    span: opentelemetry_sdk::trace::Span,
}

impl OpenSpan for OtelSpan {
    fn child(&self, name: String, kind: SpanKind) -> Box<dyn OpenSpan> {
        let parent = Context::new().with_remote_span_context(self.span.span_context().clone());
        let kind = match kind {
            SpanKind::Internal => opentelemetry::trace::SpanKind::Internal,
            SpanKind::Client => opentelemetry::trace::SpanKind::Client,
        };
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .start_with_context(&self.tracer, &parent);
        Box::new(OtelSpan {
            tracer: self.tracer.clone(),
            span,
        })
    }

    fn set(&mut self, key: &'static str, value: Attr) {
        let value = match value {
            Attr::Str(s) => opentelemetry::Value::from(s),
            Attr::Int(i) => opentelemetry::Value::from(i),
            Attr::Bool(b) => opentelemetry::Value::from(b),
        };
        self.span.set_attribute(KeyValue::new(key, value));
    }

    fn fail(&mut self, code: &str) {
        self.span
            .set_attribute(KeyValue::new("error.type", code.to_owned()));
        self.span.set_status(Status::error(code.to_owned()));
    }
}
