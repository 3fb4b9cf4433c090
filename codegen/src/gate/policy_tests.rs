//! `<policy dir>/tests.yaml` (DESIGN §14): requests and the decision each
//! must get, run against the project's policies and the mode × category
//! matrix exactly as the runtime's ladder decides.
//!
//! ```yaml
//! - name: refunds over 500 need a second person
//!   principal: { id: alice, groups: [support] }
//!   capability: payments.refund
//!   input: { amount: 750.00, currency: EUR }
//!   mode: auto
//!   expect: ask        # allow | ask | deny
//! ```

use std::path::Path;

use capspec_policy::{Mode, Policies, Request, ruling};

use crate::finding::Finding;
use crate::model::SpecSet;
use crate::rules::{POLICY_PARSE, POLICY_TEST};
use crate::source::Sources;
use crate::yaml::{self, Node, Pos, Value};

/// The tests file's name inside the policy directory.
pub(crate) const FILE: &str = "tests.yaml";

/// What running the tests found: one line per test, and the findings.
#[derive(Debug, Default)]
pub(crate) struct TestRun {
    /// `ok|FAILED <name>: <decision> (<who decided>)`, in file order.
    pub lines: Vec<String>,
    /// `policy/parse` for a malformed file or entry, `policy/test` for a decision that differs.
    pub findings: Vec<Finding>,
}

const KEYS: [&str; 7] = ["name", "principal", "capability", "input", "mode", "expect", "upstream"];

/// Run `<dir>/tests.yaml` (none when absent).
pub(crate) fn run(root: &Path, dir: &str, set: &SpecSet, policies: &Policies, sources: &mut Sources) -> TestRun {
    let file = format!("{}/{FILE}", dir.trim_end_matches('/'));
    let mut out = TestRun::default();
    let Ok(text) = std::fs::read_to_string(root.join(&file)) else { return out };
    sources.insert(&file, text.clone());
    let bad = |pos: Pos, message: String| Finding::error(POLICY_PARSE, &file, pos, message);
    let document = match yaml::parse(&text) {
        Ok(node) => node,
        Err(e) => {
            out.findings.push(bad(e.pos, e.message));
            return out;
        }
    };
    let Value::Seq(entries) = &document.value else {
        out.findings.push(bad(document.pos, format!("the policy tests are a list of requests, not {}", document.value.kind())));
        return out;
    };
    let capabilities: Vec<String> = set.capabilities().map(|(m, c)| capspec_policy::action_id(&m.name, &c.name)).collect();
    for entry in entries {
        match parse_entry(entry) {
            Err((pos, message)) => out.findings.push(bad(pos, message)),
            Ok(test) => {
                let Some((module, cap)) = set.capabilities().find(|(m, c)| capspec_policy::action_id(&m.name, &c.name) == test.capability) else {
                    out.findings.push(Finding::error(
                        POLICY_TEST,
                        &file,
                        test.capability_pos,
                        format!("test `{}` calls `{}`, which the specs do not have{}", test.name, test.capability, capspec_names::did_you_mean(&test.capability, capabilities.iter().map(String::as_str))),
                    ));
                    continue;
                };
                let typed = capspec_policy::types::input_type(&crate::render::input_schema_json(cap));
                let upstream = test.upstream.clone().or_else(|| module.upstream.as_ref().map(|(name, _)| name.clone()));
                let request = Request {
                    principal: &test.principal,
                    groups: &test.groups,
                    module: &module.name,
                    capability: &cap.name,
                    category: cap.category,
                    mode: test.mode,
                    input: &test.input,
                    input_type: &typed.attributes,
                    upstream: upstream.as_deref(),
                };
                let evaluation = policies.evaluate(&request);
                let decision = ruling(evaluation.effect, test.mode, cap.category).expectation();
                let by = if evaluation.policies.is_empty() {
                    format!("mode × category: {} {} in {}", cap.category, test.capability, test.mode)
                } else {
                    format!("by {}", evaluation.policies.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", "))
                };
                let why = evaluation.message.map(|m| format!("; {m}")).unwrap_or_default();
                let passed = decision == test.expect;
                out.lines.push(format!("{} {}: {decision} ({by}{why})", if passed { "ok    " } else { "FAILED" }, test.name));
                if !passed {
                    out.findings.push(Finding::error(
                        POLICY_TEST,
                        &file,
                        test.pos,
                        format!("test `{}` expects {}, but the decision is {decision} ({by}{why})", test.name, test.expect),
                    ));
                }
            }
        }
    }
    out
}

/// One parsed test.
struct Test {
    name: String,
    pos: Pos,
    principal: String,
    groups: Vec<String>,
    capability: String,
    capability_pos: Pos,
    input: serde_json::Value,
    mode: Mode,
    expect: String,
    upstream: Option<String>,
}

fn parse_entry(entry: &Node) -> Result<Test, (Pos, String)> {
    let Value::Map(fields) = &entry.value else { return Err((entry.pos, format!("a policy test is a map, not {}", entry.value.kind()))) };
    if let Some((key, _)) = fields.iter().find(|(k, _)| !KEYS.contains(&k.name.as_str())) {
        return Err((key.pos, format!("unknown key `{}` in a policy test{}", key.name, capspec_names::did_you_mean(&key.name, KEYS))));
    }
    let get = |name: &str| fields.iter().find(|(k, _)| k.name == name).map(|(_, v)| v);
    let string = |name: &str| -> Result<Option<(String, Pos)>, (Pos, String)> {
        match get(name) {
            None => Ok(None),
            Some(Node { value: Value::String(s), pos }) => Ok(Some((s.clone(), *pos))),
            Some(node) => Err((node.pos, format!("`{name}` must be a string, not {}", node.value.kind()))),
        }
    };
    let required = |name: &str| string(name)?.ok_or((entry.pos, format!("a policy test needs `{name}`")));
    let (name, _) = required("name")?;
    let (capability, capability_pos) = required("capability")?;
    let (expect, expect_pos) = required("expect")?;
    if !["allow", "ask", "deny"].contains(&expect.as_str()) {
        return Err((expect_pos, format!("`expect: {expect}` is not one of allow, ask, deny")));
    }
    let mode = match string("mode")? {
        None => Mode::Default,
        Some((text, pos)) => Mode::parse(&text).ok_or((pos, format!("`mode: {text}` is not one of plan, default, accept_edits, auto")))?,
    };
    let (principal, groups) = match get("principal") {
        None => ("local".to_string(), Vec::new()),
        Some(node) => principal(node)?,
    };
    let input = match get("input") {
        None => serde_json::json!({}),
        Some(node) if matches!(node.value, Value::Map(_)) => node.to_json(),
        Some(node) => return Err((node.pos, format!("`input` must be a map of arguments, not {}", node.value.kind()))),
    };
    let upstream = string("upstream")?.map(|(s, _)| s);
    Ok(Test { name, pos: entry.pos, principal, groups, capability, capability_pos, input, mode, expect, upstream })
}

/// `principal: { id: alice, groups: [support] }` (groups optional).
fn principal(node: &Node) -> Result<(String, Vec<String>), (Pos, String)> {
    let Value::Map(fields) = &node.value else { return Err((node.pos, "`principal` must be a map `{ id, groups }`".into())) };
    let mut id = None;
    let mut groups = Vec::new();
    for (key, value) in fields {
        match (key.name.as_str(), &value.value) {
            ("id", Value::String(s)) => id = Some(s.clone()),
            ("groups", Value::Seq(items)) => {
                for item in items {
                    match &item.value {
                        Value::String(s) => groups.push(s.clone()),
                        other => return Err((item.pos, format!("a group is a string, not {}", other.kind()))),
                    }
                }
            }
            ("id" | "groups", other) => return Err((value.pos, format!("`principal.{}` has the wrong kind of value ({})", key.name, other.kind()))),
            (other, _) => return Err((key.pos, format!("unknown key `{other}` in `principal` (it has `id` and `groups`)"))),
        }
    }
    let id = id.ok_or((node.pos, "`principal` needs an `id`".to_string()))?;
    groups.sort();
    Ok((id, groups))
}
