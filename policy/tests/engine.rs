//! The decision of DESIGN §14 on real Cedar policies: a forbid denies with
//! its id and `@reason`, an `@ask` permit asks, a permit allows (not in
//! `plan`), no policy leaves the matrix; a policy that fails to evaluate
//! and a number `decimal` cannot hold both deny; only the policies whose
//! action scope names the call are evaluated; bad files are located.
#![cfg(feature = "cedar")]

use capspec_policy::types::input_type;
use capspec_policy::{Category, Effect, Mode, Policies, Request, Ruling, Source, ruling};
use serde_json::{Value, json};

const POLICIES: &str = r#"
// Secrets stay where they are.
@id("no-env-reads")
@reason("environment files hold secrets")
forbid(principal, action == Capspec::Action::"workspace.read_file", resource)
when { context.input.path like "*.env" };

@id("refunds-over-100-ask")
@ask
permit(principal in Capspec::Group::"support", action == Capspec::Action::"payments.refund", resource)
when { context.input.amount.greaterThan(decimal("100.0")) };

@id("support-refunds")
permit(principal in Capspec::Group::"support", action == Capspec::Action::"payments.refund", resource);

@id("only-support-refunds")
forbid(principal, action == Capspec::Action::"payments.refund", resource)
unless { principal in Capspec::Group::"support" };

@id("broken")
forbid(principal, action == Capspec::Action::"shell.run", resource)
when { context.input.missing == "x" };
"#;

fn policies() -> Policies {
    Policies::parse(&[Source { file: "policies/rules.cedar".into(), text: POLICIES.into() }]).expect("the policies parse")
}

fn schema(module: &str) -> Value {
    match module {
        "workspace" => json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        "payments" => json!({"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}}}),
        _ => json!({"type": "object", "required": ["program"], "properties": {"program": {"type": "string"}}}),
    }
}

fn decide(policies: &Policies, who: (&str, &[&str]), call: &str, input: Value, mode: Mode) -> (Ruling, Vec<String>, Option<String>) {
    let (module, capability) = call.split_once('.').unwrap();
    let category = match capability {
        "read_file" => Category::Read,
        "refund" => Category::External,
        _ => Category::Execute,
    };
    let groups: Vec<String> = who.1.iter().map(|g| g.to_string()).collect();
    let typed = input_type(&schema(module));
    let request = Request { principal: who.0, groups: &groups, module, capability, category, mode, input: &input, input_type: &typed.attributes, upstream: None };
    let evaluation = policies.evaluate(&request);
    (ruling(evaluation.effect, mode, category), evaluation.policies, evaluation.message)
}

#[test]
fn a_forbid_denies_with_its_id_and_reason_whatever_the_mode() {
    let p = policies();
    for mode in Mode::ALL {
        let (ruling, by, message) = decide(&p, ("alice", &[]), "workspace.read_file", json!({"path": "app/.env"}), mode);
        assert_eq!(ruling, Ruling::Deny);
        assert_eq!(by, ["no-env-reads"]);
        assert_eq!(message.as_deref(), Some("denied by policy `no-env-reads`: environment files hold secrets"));
    }
    let (ruling, by, _) = decide(&p, ("alice", &[]), "workspace.read_file", json!({"path": "src/main.rs"}), Mode::Plan);
    assert_eq!((ruling, by), (Ruling::Allow, vec![]), "no policy applies: the matrix lets plan read");
}

#[test]
fn ask_permits_ask_permits_allow_but_plan_still_blocks_and_groups_come_from_the_principal() {
    let p = policies();
    let support = ("bob", &["support"][..]);
    assert_eq!(decide(&p, support, "payments.refund", json!({"amount": 750.0}), Mode::Auto).0, Ruling::Ask, "over 100 asks even in auto");
    let (ruling, by, _) = decide(&p, support, "payments.refund", json!({"amount": 20}), Mode::Default);
    assert_eq!((ruling, by), (Ruling::Allow, vec!["support-refunds".to_string()]), "a permit allows without asking in default");
    assert_eq!(decide(&p, support, "payments.refund", json!({"amount": 20}), Mode::Plan).0, Ruling::Block);
    let (ruling, by, _) = decide(&p, ("mallory", &["sales"]), "payments.refund", json!({"amount": 20}), Mode::Auto);
    assert_eq!((ruling, by), (Ruling::Deny, vec!["only-support-refunds".to_string()]));
}

/// The entities of a request are kept per principal, groups and action:
/// the same principal in another group, or an id spelled to look like a
/// group list, gets its own.
#[test]
fn kept_entities_follow_the_principals_groups() {
    let p = policies();
    let refund = |who| decide(&p, who, "payments.refund", json!({"amount": 20}), Mode::Auto).0;
    assert_eq!(refund(("bob", &["support"][..])), Ruling::Allow);
    assert_eq!(refund(("bob", &[][..])), Ruling::Deny, "bob out of support");
    assert_eq!(refund(("bob", &["support"][..])), Ruling::Allow, "and back in");
    assert_eq!(refund(("bob\u{0}support", &[][..])), Ruling::Deny);
}

#[test]
fn a_policy_that_fails_to_evaluate_denies_naming_it() {
    let (ruling, by, message) = decide(&policies(), ("alice", &[]), "shell.run", json!({"program": "cargo"}), Mode::Auto);
    assert_eq!((ruling, by), (Ruling::Deny, vec!["broken".to_string()]));
    let message = message.unwrap();
    assert!(message.starts_with("policy `broken` failed to evaluate, and policies fail closed: "), "{message}");
    assert!(message.contains("missing"), "{message}");
}

#[test]
fn a_number_decimal_cannot_hold_is_a_deny_never_a_rounding() {
    let (ruling, by, message) = decide(&policies(), ("bob", &["support"]), "payments.refund", json!({"amount": 100.00001}), Mode::Auto);
    assert_eq!((ruling, by), (Ruling::Deny, vec!["refunds-over-100-ask".to_string()]), "the policy that reads `amount` is named");
    assert!(message.unwrap().starts_with("`amount` = 100.00001 cannot be held exactly by Cedar's decimal"));
    // No policy that applies reads the number: it is left out, and the call is decided as usual.
    let only_groups = Policies::parse(&[Source {
        file: "policies/groups.cedar".into(),
        text: r#"@id("support-refunds") permit(principal in Capspec::Group::"support", action == Capspec::Action::"payments.refund", resource);"#.into(),
    }])
    .unwrap();
    let (ruling, by, _) = decide(&only_groups, ("bob", &["support"]), "payments.refund", json!({"amount": 100.00001}), Mode::Default);
    assert_eq!((ruling, by), (Ruling::Allow, vec!["support-refunds".to_string()]));
}

#[test]
fn only_the_policies_naming_the_action_or_its_groups_are_evaluated() {
    let mut text = String::new();
    for i in 0..1000 {
        text.push_str(&format!("@id(\"p{i}\") forbid(principal, action == Capspec::Action::\"m{i}.c\", resource);\n"));
    }
    text.push_str("@id(\"writes\") permit(principal, action in Capspec::Action::\"category:write\", resource);\n");
    text.push_str("@id(\"module\") permit(principal, action in [Capspec::Action::\"module:m7\"], resource);\n");
    let p = Policies::parse(&[Source { file: "policies/many.cedar".into(), text }]).unwrap();
    assert_eq!(p.len(), 1002);
    let ids = |module: &str, category| {
        let mut ids: Vec<String> = p.for_action(module, "c", category).policies().map(|p| p.id().to_string()).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids("m7", Category::Write), ["module", "p7", "writes"]);
    assert_eq!(ids("m8", Category::Read), ["p8"]);
    let evaluate = |module: &str, category| {
        let e = p.evaluate(&Request { principal: "x", groups: &[], module, capability: "c", category, mode: Mode::Auto, input: &json!({}), input_type: &[], upstream: None });
        (e.effect, e.policies)
    };
    assert_eq!(evaluate("m8", Category::Read), (Some(Effect::Forbid), vec!["p8".to_string()]));
    // Group scopes hold at evaluation: the action is in its module's and category's groups.
    assert_eq!(evaluate("zz", Category::Write), (Some(Effect::Permit), vec!["writes".to_string()]));
    assert_eq!(evaluate("m7", Category::Read), (Some(Effect::Forbid), vec!["p7".to_string()]));
    assert_eq!(evaluate("zz", Category::Read), (None, vec![]));
}

#[test]
fn parse_errors_duplicate_ids_and_templates_are_located() {
    let bad = Policies::parse(&[
        Source { file: "policies/a.cedar".into(), text: "permit(principal, action, resource);\n\nforbid(principal action, resource);\n".into() },
        Source { file: "policies/b.cedar".into(), text: "@id(\"x\") permit(principal, action, resource);\n  @id(\"x\")\npermit(principal, action, resource);\n".into() },
        Source { file: "policies/c.cedar".into(), text: "permit(principal == ?principal, action, resource);".into() },
    ])
    .unwrap_err();
    let at: Vec<(String, u32, u32)> = bad.iter().map(|e| (e.file.clone(), e.line, e.column)).collect();
    assert_eq!(at[0], ("policies/a.cedar".into(), 3, 18), "{bad:#?}");
    assert_eq!(at[1], ("policies/b.cedar".into(), 2, 3), "{bad:#?}");
    assert!(bad[1].message.contains("`x` is also used at policies/b.cedar:1"), "{}", bad[1].message);
    assert_eq!(at[2].0, "policies/c.cedar");
    assert!(bad[2].message.contains("template"), "{}", bad[2].message);
    let ok = Policies::parse(&[Source { file: "policies/a.cedar".into(), text: "\n\n  permit(principal, action, resource);".into() }]).unwrap();
    assert_eq!(ok.infos()[0].label, "policies/a.cedar:3", "a policy without @id is named file:line");
}
