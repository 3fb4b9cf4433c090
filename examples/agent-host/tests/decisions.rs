//! One decision, one word (DESIGN §15): for every decision the gate can
//! reach, the call's receipt, its `execute_tool` span and its audit record
//! (in a real SQLite serve store) say the same thing, the receipt's and
//! span's word coming from the record's through the one mapping
//! (`Decided::gate`). `approved` and `declined` name who answered; a call
//! nobody could be asked about is `denied_gate` with reason `cannot_ask`
//! and nobody answered; a call whose ask is still in flight (a 2026-07-28
//! `input_required` round) leaves no decision at all.

use std::sync::{Arc, Mutex};

use agent_host::capabilities::memory::SessionMemory;
use agent_host::workspace::Workspace;
use capspec::audit::{Audit, Decided};
use capspec::policy::{PolicyGate, PolicyMode};
use capspec::testing::ScriptedApprover;
use capspec::{Approval, Approver, Gate, HeadlessApprover, Limits, Mode, Principal, Run, Scopes, SessionAllow};
use capspec_store::{AuditLog, AuditOptions, Query, Store};
use capspec_testkit::{TempDir, copy_dir, repo_root};
use serde_json::{Map, Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// The `execute_tool` spans, each as its fields, when they close.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Map<String, Value>>>>);

struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), json!(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_string(), json!(format!("{value:?}")));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() == "execute_tool" {
            let mut fields = Fields(Map::new());
            attrs.record(&mut fields);
            ctx.span(id).expect("a new span is there").extensions_mut().insert(fields);
        }
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if let Some(fields) = span.extensions_mut().get_mut::<Fields>() {
                values.record(fields);
            }
        }
    }
    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(fields) = ctx.span(&id).and_then(|span| span.extensions_mut().remove::<Fields>()) {
            self.0.lock().unwrap().push(fields.0);
        }
    }
}

/// One call: who, in which mode, asked how; and the decision its record must hold.
struct Case {
    label: &'static str,
    mode: Mode,
    approver: Arc<dyn Approver>,
    principal: Principal,
    capability: &'static str,
    args: Value,
    max_calls: u32,
    decided: Option<&'static str>,
    reason: Option<&'static str>,
    answered_by: Option<&'static str>,
}

fn case(label: &'static str, mode: Mode, approver: Arc<dyn Approver>, capability: &'static str, args: Value, decided: Option<&'static str>) -> Case {
    Case { label, mode, approver, principal: Principal::new(label), capability, args, max_calls: 1000, decided, reason: None, answered_by: None }
}

#[test]
fn the_receipt_the_span_and_the_audit_record_say_the_same_decision() {
    let dir = TempDir::new("decisions");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("notes.txt"), "hello\n").unwrap();
    std::fs::write(ws.join(".env"), "TOKEN=secret\n").unwrap();
    let policy_dir = TempDir::new("decisions-policies");
    copy_dir(&repo_root().join("policies"), policy_dir.path());
    let policies = Arc::new(PolicyGate::load(policy_dir.path(), PolicyMode::Enforce).expect("the host's policies parse"));
    let headless: Arc<dyn Approver> = Arc::new(HeadlessApprover::new("this test (nobody to ask)"));
    let scripted = |answer: Approval| -> Arc<dyn Approver> { ScriptedApprover::new([answer]) };
    let write = json!({"path": "out.txt", "content": "x"});
    let cases = vec![
        case("allowed", Mode::Default, headless.clone(), "workspace.read_file", json!({"path": "notes.txt"}), Some("allowed")),
        Case { answered_by: Some("approved"), ..case("approved", Mode::Default, scripted(Approval::AllowOnce), "workspace.write_file", write.clone(), Some("approved")) },
        Case { answered_by: Some("declined"), ..case("declined", Mode::Default, scripted(Approval::Deny("no".into())), "workspace.write_file", write.clone(), Some("declined")) },
        Case { reason: Some("cannot_ask"), ..case("cannot-ask", Mode::Default, headless.clone(), "workspace.write_file", write.clone(), Some("denied_gate")) },
        Case { reason: Some("cannot_ask"), ..case("unreachable", Mode::Default, scripted(Approval::CannotAsk("the client went away".into())), "workspace.write_file", write.clone(), Some("denied_gate")) },
        Case { reason: Some("other_call"), ..case("other-call", Mode::Default, scripted(Approval::OtherCall("for another call".into())), "workspace.write_file", write.clone(), Some("denied_gate")) },
        Case { reason: Some("plan_mode"), ..case("plan", Mode::Plan, headless.clone(), "workspace.write_file", write.clone(), Some("denied_gate")) },
        case("policy", Mode::Auto, headless.clone(), "workspace.read_file", json!({"path": ".env"}), Some("denied_policy")),
        Case { principal: Principal::new("scope").with_scopes(Scopes::of(["capspec:read"])), ..case("scope", Mode::Auto, headless.clone(), "workspace.write_file", write.clone(), Some("denied_scope")) },
        case("invalid", Mode::Auto, headless.clone(), "workspace.read_file", json!({"path": 7, "nope": true}), Some("invalid_arguments")),
        case("unknown", Mode::Auto, headless.clone(), "workspace.no_such_thing", json!({}), Some("unknown_capability")),
        Case { max_calls: 0, ..case("limit", Mode::Auto, headless.clone(), "workspace.read_file", json!({"path": "notes.txt"}), Some("limit_exceeded")) },
        // An ask that goes to the client in a later round: nothing decided yet.
        case("pending", Mode::Default, scripted(Approval::Pending("asking the client".into())), "workspace.write_file", write.clone(), None),
    ];
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let url = format!("sqlite:{}", dir.path().join("store.db").display());
    let (store, receipts) = tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(async {
            let store = Store::open(&url).await.unwrap();
            let log = AuditLog::start(store.clone(), AuditOptions { instance: "decisions".into(), named: true, key: [3; 32], keep_arguments: false }).await.unwrap();
            let mounted = agent_host::registry().unwrap().mount_all();
            let mut receipts = Vec::new();
            for c in &cases {
                let run = Run::new(Gate::new(c.mode, c.approver.clone(), SessionAllow::new()))
                    .with(Workspace::new(&ws).unwrap())
                    .with(SessionMemory::default())
                    .with_principal(c.principal.clone())
                    .with_policies(policies.clone())
                    .with_limits(Limits { max_calls: c.max_calls })
                    .with_audit(Audit::new(log.clone(), "in_process"));
                let _ = mounted.invoke(&run, c.capability, c.args.clone()).await;
                receipts.push(run.receipts());
            }
            log.close().await;
            (store, receipts)
        })
    });
    let spans = spans.0.lock().unwrap().clone();
    for (c, receipts) in cases.iter().zip(receipts) {
        let records = runtime.block_on(store.query(&Query { principal: Some(c.principal.id().to_string()), ..Query::default() })).unwrap();
        let decisions: Vec<&Value> = records.iter().filter(|r| r["kind"] == "decision").collect();
        let span: Vec<&Map<String, Value>> = spans.iter().filter(|s| s["enduser.id"] == c.principal.id()).collect();
        let Some(expected) = c.decided else {
            assert!(decisions.is_empty(), "{}: a call waiting on an ask has no decision yet: {decisions:?}", c.label);
            assert!(receipts.is_empty(), "{}: nor a receipt: {receipts:?}", c.label);
            continue;
        };
        assert_eq!(decisions.len(), 1, "{}: one decision record: {records:?}", c.label);
        let record = decisions[0];
        assert_eq!(record["decision"], expected, "{}: {record}", c.label);
        assert_eq!(record.get("reason").and_then(Value::as_str), c.reason, "{}: {record}", c.label);
        assert_eq!(record.get("answered_by").and_then(Value::as_str), c.answered_by, "{}: who answered: {record}", c.label);
        // The receipt's and the span's word: the one mapping of the record's.
        let decided = Decided::ALL.into_iter().find(|d| d.as_str() == expected).unwrap();
        let reason = c.reason.map(|r| serde_json::from_value(json!(r)).unwrap());
        let word = decided.gate(reason).map(|g| g.as_str());
        assert_eq!(receipts.len(), 1, "{}: one receipt: {receipts:?}", c.label);
        let receipt = serde_json::to_value(&receipts[0]).unwrap();
        assert_eq!(receipt["decision"].as_str(), word, "{}: the receipt: {receipt}", c.label);
        assert_eq!(receipt.get("reason").and_then(Value::as_str), c.reason, "{}: the receipt's reason: {receipt}", c.label);
        assert_eq!(span.len(), 1, "{}: one span: {span:?}", c.label);
        assert_eq!(span[0].get("capspec.decision").and_then(Value::as_str), word, "{}: the span: {:?}", c.label, span[0]);
        assert_eq!(span[0].get("capspec.reason").and_then(Value::as_str), c.reason, "{}: the span's reason: {:?}", c.label, span[0]);
    }
    assert!(runtime.block_on(store.verify()).unwrap().is_none());
}
