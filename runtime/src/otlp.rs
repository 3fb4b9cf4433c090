//! OTLP export of the call spans (feature `otlp`, DESIGN §10): the
//! standard `OTEL_EXPORTER_OTLP_*` and `OTEL_SERVICE_NAME` variables turn
//! it on, over http/protobuf or gRPC, through `tracing-opentelemetry` into
//! the OpenTelemetry SDK's batch processor and `opentelemetry-otlp`'s
//! exporter. Only capspec's own spans are exported (`execute_tool`, the MCP
//! request and the guest action that parent them), and they carry no
//! argument or result values: no span field of capspec holds one.
//!
//! ```no_run
//! use tracing_subscriber::prelude::*;
//!
//! # async fn host() -> Result<(), capspec::otlp::OtlpError> {
//! // Inside the host's Tokio runtime (the gRPC exporter runs on it).
//! let otlp = capspec::otlp::Otlp::from_env("my-agent-host")?;
//! tracing_subscriber::registry().with(otlp.as_ref().map(|o| o.layer())).init();
//! // … serve …
//! if let Some(otlp) = otlp {
//!     otlp.shutdown()?; // exports what is still batched
//! }
//! # Ok(())
//! # }
//! ```

use std::fmt;

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Span;
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

/// The OTLP export of this process's capspec spans.
pub struct Otlp {
    provider: SdkTracerProvider,
    endpoint: String,
    protocol: &'static str,
}

/// Why the export could not be set up or flushed, in words for the operator.
#[derive(Debug)]
pub struct OtlpError(String);

impl fmt::Display for OtlpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OtlpError {}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// The endpoint, when the environment asks for an OTLP export of the spans.
pub fn requested() -> Option<String> {
    let endpoint = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"))?;
    let off = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v == "none");
    (!off).then_some(endpoint)
}

impl Otlp {
    /// The export the environment asks for, or `None` when it asks for
    /// none: no `OTEL_EXPORTER_OTLP_ENDPOINT` (nor `…_TRACES_ENDPOINT`),
    /// `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. The protocol
    /// is `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` or `OTEL_EXPORTER_OTLP_PROTOCOL`
    /// (`http/protobuf`, the default, or `grpc`); headers, timeout and
    /// compression are the exporter's own `OTEL_EXPORTER_OTLP_*` variables.
    /// The service is `OTEL_SERVICE_NAME`, else `service`. Call it inside a
    /// Tokio runtime: the gRPC exporter's connection runs on it.
    pub fn from_env(service: &str) -> Result<Option<Otlp>, OtlpError> {
        let Some(endpoint) = requested() else { return Ok(None) };
        // https:// endpoints: rustls, on the process's provider.
        crate::tls::ensure_provider();
        let asked = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL")).unwrap_or_else(|| "http/protobuf".into());
        let (exporter, protocol) = match asked.as_str() {
            "http/protobuf" => (SpanExporter::builder().with_http().with_protocol(opentelemetry_otlp::Protocol::HttpBinary).build(), "http/protobuf"),
            "grpc" => {
                if tokio::runtime::Handle::try_current().is_err() {
                    return Err(OtlpError("the gRPC OTLP exporter must be set up inside a Tokio runtime".into()));
                }
                (SpanExporter::builder().with_tonic().build(), "grpc")
            }
            other => return Err(OtlpError(format!("OTEL_EXPORTER_OTLP_PROTOCOL is `{other}`: capspec exports `http/protobuf` or `grpc`"))),
        };
        let exporter = exporter.map_err(|e| OtlpError(format!("the OTLP exporter to `{endpoint}` ({protocol}) could not be set up: {e}")))?;
        let mut resource = Resource::builder();
        if var("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(service.to_string());
        }
        let provider = SdkTracerProvider::builder().with_resource(resource.build()).with_batch_exporter(exporter).build();
        Ok(Some(Otlp { provider, endpoint, protocol }))
    }

    /// The `tracing` layer that hands capspec's spans to the exporter.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        let tracer = self.provider.tracer("capspec");
        // Spans start when they close or parent another, not on entry: a
        // call's name (`execute_tool <wire name>`) is known only once it
        // resolves, and the OpenTelemetry name of a started span is fixed.
        // Thread and source location are no part of what a call is.
        let layer = tracing_opentelemetry::layer().with_tracer(tracer).with_context_activation(false).with_tracked_inactivity(false).with_threads(false).with_location(false);
        layer.with_filter(Targets::new().with_target("capspec", tracing::Level::INFO))
    }

    /// Where the spans go, for the start-up line: the endpoint and protocol.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.endpoint, self.protocol)
    }

    /// Export what is still batched and stop.
    pub fn shutdown(self) -> Result<(), OtlpError> {
        self.provider.shutdown().map_err(|e| OtlpError(format!("the OTLP export to `{}` did not finish: {e}", self.endpoint)))
    }
}

struct Meta<'a>(Option<&'a str>, Option<&'a str>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.0,
            "tracestate" => self.1,
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        ["traceparent", "tracestate"].into_iter().zip([self.0, self.1]).filter_map(|(k, v)| v.map(|_| k)).collect()
    }
}

/// Parent `span` (not yet entered) under the W3C trace context a request
/// carried (MCP's `_meta` `traceparent` and `tracestate`). Without an OTLP
/// layer, or with no valid context, nothing changes.
pub fn parent(span: &Span, traceparent: Option<&str>, tracestate: Option<&str>) {
    if traceparent.is_none() || span.is_disabled() {
        return;
    }
    let cx = TraceContextPropagator::new().extract(&Meta(traceparent, tracestate));
    if cx.span().span_context().is_valid() {
        let _ = span.set_parent(cx);
    }
}

/// The W3C trace id of `span` (32 hex digits), when an OTLP layer traces it.
pub fn trace_id(span: &Span) -> Option<String> {
    if span.is_disabled() {
        return None;
    }
    let cx = span.context();
    let context = cx.span().span_context().clone();
    context.is_valid().then(|| context.trace_id().to_string())
}
