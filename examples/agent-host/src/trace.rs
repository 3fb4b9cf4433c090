//! `--trace-file FILE`: every span the host's calls make, one JSON object
//! per line when the span closes — the analyzer-friendly JSONL trace of
//! reference 003. A span is `{"name", "span_id", "parent_id", "start_ms",
//! "duration_ms", "attributes"}`; `name` is the span's `otel.name` (the
//! OpenTelemetry name, `execute_tool <wire name>`) when it has one; ids
//! are unique within the file, and `parent_id` is the enclosing span's (a
//! guest action's, an MCP request's) or `null`.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::{Map, Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// The layer writing the file.
pub struct TraceFile {
    out: Mutex<std::io::LineWriter<std::fs::File>>,
    epoch: Instant,
    next: AtomicU64,
}

impl TraceFile {
    /// Write spans to `file` (created, or truncated).
    pub fn create(file: &std::path::Path) -> std::io::Result<TraceFile> {
        Ok(TraceFile { out: Mutex::new(std::io::LineWriter::new(std::fs::File::create(file)?)), epoch: Instant::now(), next: AtomicU64::new(1) })
    }
}

/// What a span carries until it closes.
struct Open {
    id: u64,
    start: Instant,
    attributes: Map<String, Value>,
}

struct Fields<'a>(&'a mut Map<String, Value>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), Value::String(value.to_string()));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_string(), Value::Bool(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_string(), Value::String(format!("{value:?}")));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for TraceFile {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut attributes = Map::new();
        attrs.record(&mut Fields(&mut attributes));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Open { id: self.next.fetch_add(1, Ordering::Relaxed), start: Instant::now(), attributes });
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(open) = span.extensions_mut().get_mut::<Open>() {
                values.record(&mut Fields(&mut open.attributes));
            }
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(mut open) = span.extensions_mut().remove::<Open>() else { return };
        let parent = span.parent().and_then(|p| p.extensions().get::<Open>().map(|o| o.id));
        let name = match open.attributes.remove("otel.name") {
            Some(Value::String(name)) => name,
            _ => span.name().to_string(),
        };
        let ms = |d: std::time::Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        let line = json!({
            "name": name,
            "span_id": open.id,
            "parent_id": parent,
            "start_ms": ms(open.start.duration_since(self.epoch)),
            "duration_ms": ms(open.start.elapsed()),
            "attributes": open.attributes,
        });
        if let Ok(mut out) = self.out.lock() {
            let _ = writeln!(out, "{line}");
        }
    }
}
