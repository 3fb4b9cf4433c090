//! A record's body as stored, written straight from its fields as RFC 8785
//! canonical JSON: no `serde_json::Value` is built and no member sorted at
//! run time, since the members are written in their canonical order (a
//! debug assertion holds the order; a test holds the bytes equal to the
//! canonical JSON of the record as serde describes it).

use capspec::audit::AuditRecord;
use capspec_dialects::pin;
use serde_json::Value;

/// What the body carries besides the record's own fields.
pub(super) struct Extra<'a> {
    pub(super) instance: &'a str,
    pub(super) seq: i64,
    /// Keep argument values, not only their keyed hashes.
    pub(super) keep_arguments: bool,
    pub(super) args_hmac: Option<&'a str>,
    pub(super) sent_hmac: Option<&'a str>,
    pub(super) result_hmac: Option<&'a str>,
}

/// The record as stored: arguments and result replaced by their keyed
/// hashes (argument values kept only when asked), with its instance and
/// sequence number, as canonical JSON. An absent `reason`, `args`,
/// `sent_args` or `result` is left out; the record's other absent fields
/// are `null`.
pub(super) fn body(record: &AuditRecord, extra: &Extra<'_>) -> String {
    let args = record.args.as_ref().filter(|a| !a.is_null()).zip(extra.args_hmac);
    let sent = record.sent_args.as_ref().filter(|a| !a.is_null()).zip(extra.sent_hmac);
    let mut w = Writer { out: String::with_capacity(640), last: "" };
    w.out.push('{');
    w.text("answered_by", record.answered_by.as_deref());
    if let Some((args, hmac)) = args {
        if extra.keep_arguments {
            w.value("args", args);
        }
        w.text("args_hmac", Some(hmac));
    }
    w.int("call", record.call);
    w.text("capability", Some(&record.capability));
    w.text("category", record.category.as_deref());
    w.text("decision", record.decision.map(|d| d.as_str()));
    w.float("duration_ms", record.duration_ms);
    w.texts("groups", &record.groups);
    w.text("instance", Some(extra.instance));
    w.text("kind", Some(record.kind.as_str()));
    w.text("mode", Some(&record.mode));
    w.texts("policies", &record.policies);
    w.text("principal", Some(&record.principal));
    if let Some(reason) = record.reason {
        w.text("reason", Some(reason.as_str()));
    }
    w.text("request", record.request.as_deref());
    if let (Some(_), Some(hmac)) = (record.result.as_ref().filter(|r| !r.is_null()), extra.result_hmac) {
        w.text("result_hmac", Some(hmac));
    }
    if let Some((sent, hmac)) = sent {
        if extra.keep_arguments {
            w.value("sent_args", sent);
        }
        w.text("sent_hmac", Some(hmac));
    }
    w.key("seq");
    w.out.push_str(&extra.seq.to_string());
    w.text("status", record.status.as_deref());
    w.text("surface", Some(&record.surface));
    w.int("time_ms", record.time_ms);
    w.text("trace_id", record.trace_id.as_deref());
    w.text("upstream", record.upstream.as_deref());
    w.out.push('}');
    w.out
}

/// An object's members, written in order.
struct Writer {
    out: String,
    last: &'static str,
}

impl Writer {
    fn key(&mut self, key: &'static str) {
        // RFC 8785 orders members by UTF-16 code units; these keys are ASCII.
        debug_assert!(self.last < key, "`{key}` written after `{}`", self.last);
        if !self.last.is_empty() {
            self.out.push(',');
        }
        self.last = key;
        self.out.push('"');
        self.out.push_str(key);
        self.out.push_str("\":");
    }

    fn text(&mut self, key: &'static str, value: Option<&str>) {
        self.key(key);
        match value {
            Some(text) => pin::string(text, &mut self.out),
            None => self.out.push_str("null"),
        }
    }

    fn texts(&mut self, key: &'static str, values: &[String]) {
        self.key(key);
        self.out.push('[');
        for (i, text) in values.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            pin::string(text, &mut self.out);
        }
        self.out.push(']');
    }

    fn int(&mut self, key: &'static str, value: u64) {
        self.key(key);
        self.out.push_str(&value.to_string());
    }

    /// As serde writes an `f64`: a number, or `null` when not finite.
    fn float(&mut self, key: &'static str, value: Option<f64>) {
        self.key(key);
        match value.and_then(serde_json::Number::from_f64) {
            Some(n) => self.out.push_str(&pin::number(&n)),
            None => self.out.push_str("null"),
        }
    }

    fn value(&mut self, key: &'static str, value: &Value) {
        self.key(key);
        pin::canonical(value, &mut self.out);
    }
}

#[cfg(test)]
mod tests {
    use capspec::audit::{AuditRecord, Decided, Reason, RecordKind};
    use serde_json::{Value, json};

    use super::{Extra, body};

    /// The body as the record's serde form describes it, canonicalised:
    /// what the direct writer must equal byte for byte.
    fn through_serde(record: &AuditRecord, extra: &Extra<'_>) -> String {
        let mut value = serde_json::to_value(record).unwrap();
        let map = value.as_object_mut().unwrap();
        let args = map.remove("args").filter(|a| !a.is_null());
        let result = map.remove("result").filter(|r| !r.is_null());
        let sent = map.remove("sent_args").filter(|a| !a.is_null());
        if map.get("reason").is_some_and(Value::is_null) {
            map.remove("reason");
        }
        if let (Some(sent), Some(hmac)) = (sent, extra.sent_hmac) {
            map.insert("sent_hmac".into(), json!(hmac));
            if extra.keep_arguments {
                map.insert("sent_args".into(), sent);
            }
        }
        if let (Some(args), Some(hmac)) = (args, extra.args_hmac) {
            map.insert("args_hmac".into(), json!(hmac));
            if extra.keep_arguments {
                map.insert("args".into(), args);
            }
        }
        if let (Some(_), Some(hmac)) = (result, extra.result_hmac) {
            map.insert("result_hmac".into(), json!(hmac));
        }
        map.insert("instance".into(), json!(extra.instance));
        map.insert("seq".into(), json!(extra.seq));
        let mut out = String::new();
        capspec_dialects::pin::canonical(&value, &mut out);
        out
    }

    fn record(i: usize) -> AuditRecord {
        let text = ["plain", "a \"quoted\" \\ path\n\t\u{1}", "€ and 😀 and \u{FB33}", ""][i % 4];
        AuditRecord {
            kind: [RecordKind::Decision, RecordKind::Outcome, RecordKind::Authorization, RecordKind::Revocation][i % 4],
            time_ms: [0, 1_765_000_000_123, u64::MAX][i % 3],
            call: i as u64 * 7_919,
            principal: format!("{text}{i}"),
            groups: (0..i % 3).map(|g| format!("group {g} {text}")).collect(),
            surface: ["tools", "code", "in_process"][i % 3].to_string(),
            request: (i % 2 == 0).then(|| format!("session/{i}")),
            trace_id: (i % 3 == 0).then(|| "4bf92f3577b34da6a3ce929d0e0e4736".to_string()),
            capability: format!("workspace.read_{text}"),
            category: (i % 4 != 1).then(|| "read".to_string()),
            mode: ["default", "plan", ""][i % 3].to_string(),
            decision: (i % 13 != 12).then(|| Decided::ALL[i % Decided::ALL.len()]),
            reason: [None, Some(Reason::PlanMode), Some(Reason::CannotAsk), Some(Reason::OtherCall)][i % 4],
            policies: (0..i % 4).map(|p| format!("policy-{p}")).collect(),
            answered_by: (i % 5 == 0).then(|| text.to_string()),
            upstream: (i % 6 == 0).then(|| "github".to_string()),
            args: [None, Some(Value::Null), Some(json!({"path": text, "offset": 0, "z": [1.5, -0.0, 1e21], "a": {"é": null, "B": true}}))][i % 3].clone(),
            sent_args: [None, Some(json!({"path": text})), Some(Value::Null), Some(json!([text]))][i % 4].clone(),
            status: (i % 2 == 1).then(|| ["ok", "failed", "invalid_arguments"][i % 3].to_string()),
            duration_ms: [None, Some(12.5), Some(0.0), Some(1e-7), Some(f64::NAN), Some(3.0)][i % 6],
            result: [None, Some(json!({"text": text})), Some(Value::Null)][i % 3].clone(),
        }
    }

    #[test]
    fn the_direct_body_is_the_canonical_json_of_the_record() {
        for i in 0..240 {
            let record = record(i);
            let hmac = |h: bool| h.then_some("0f".repeat(32));
            let (args_hmac, sent_hmac, result_hmac) = (hmac(i % 5 != 4), hmac(i % 7 != 6), hmac(i % 2 == 0));
            for keep_arguments in [false, true] {
                let extra = Extra {
                    instance: ["host:stdio", "east#2", "ü"][i % 3],
                    seq: [1, 42, i64::MAX][i % 3],
                    keep_arguments,
                    args_hmac: args_hmac.as_deref(),
                    sent_hmac: sent_hmac.as_deref(),
                    result_hmac: result_hmac.as_deref(),
                };
                assert_eq!(body(&record, &extra), through_serde(&record, &extra), "record {i}, keep_arguments {keep_arguments}");
            }
        }
    }
}
