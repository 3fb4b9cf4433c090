//! What a principal is shown (DESIGN §10, "What a caller sees"): a
//! capability the policies deny it whatever the input and the mode is left
//! out of every list it is served. Decided by Cedar's partial evaluation,
//! the input and the mode unknown: no rule of capspec's own.

use cedar_policy::{Context, EntityId, EntityUid, PolicySet, RestrictedExpression};
use serde_json::Value;

use super::{Policies, Who};
use crate::{Category, Effect, NAMESPACE};

impl Policies {
    /// Whether the policies deny `module.capability` to `who` whatever the
    /// input and the mode: a `forbid` holds with both unknown, or a policy
    /// fails to evaluate whatever they are (policies fail closed). A
    /// capability that some input or mode may let through is not, and
    /// neither is one no policy applies to.
    pub fn denies_whatever_input(&self, who: Who<'_>, module: &str, capability: &str, category: Category, upstream: Option<&str>) -> bool {
        let applicable = self.for_action(module, capability, category);
        !applicable.is_empty() && self.partially(&applicable, who, &Listed { module, capability, category, upstream })
    }

    /// Whether, among `set`, a forbid holds or a policy fails for `who`
    /// calling `c` whatever the input and the mode.
    fn partially(&self, set: &PolicySet, who: Who<'_>, c: &Listed<'_>) -> bool {
        let Listed { module, capability, category, upstream } = *c;
        let mut context = vec![
            ("input".to_string(), RestrictedExpression::new_unknown("input")),
            ("mode".to_string(), RestrictedExpression::new_unknown("mode")),
            ("category".to_string(), RestrictedExpression::new_string(category.as_str().into())),
        ];
        if let Some(upstream) = upstream {
            context.push(("upstream".to_string(), RestrictedExpression::new_string(upstream.into())));
        }
        let context = Context::from_pairs(context).expect("context attribute names are unique");
        let principal = EntityUid::from_type_name_and_id(self.user.clone(), EntityId::new(who.principal));
        let action = EntityUid::from_type_name_and_id(self.action.clone(), EntityId::new(crate::action_id(module, capability)));
        let entities = self.entities(who, module, category, &principal, &action);
        let resource = EntityUid::from_type_name_and_id(self.module.clone(), EntityId::new(module));
        let request = cedar_policy::Request::new(principal, action, resource, context, None).expect("no schema to check against");
        let response = self.authorizer.is_authorized_partial(&request, set, entities.as_ref());
        if response.definitely_errored().next().is_some() {
            return true;
        }
        response.definitely_satisfied().any(|policy| self.info(policy.id()).is_some_and(|p| p.effect == Effect::Forbid))
    }

    /// For each of `capabilities`, [`Policies::denies_whatever_input`] for
    /// `who`: [`Policies::plan`] then [`Policies::deny_planned`].
    pub fn deny_whatever_input(&self, who: Who<'_>, capabilities: &[Listed<'_>]) -> Vec<bool> {
        self.deny_planned(&self.plan(capabilities), who, capabilities)
    }

    /// What deciding `capabilities` for a principal comes down to, worked
    /// out once. Cedar evaluates policies one by one, and a capability is
    /// hidden when one of its applicable policies, alone, holds as a forbid
    /// or fails; so each policy is evaluated alone, as seldom as what it
    /// reads allows. One that reads nothing that differs between requests
    /// beyond the input and the mode (no principal, no action in its
    /// conditions — its scope matched, which is why it applies — no
    /// resource, no other context) has one answer for every principal and
    /// capability: evaluated here. What is left depends on the principal.
    pub fn plan(&self, capabilities: &[Listed<'_>]) -> Plan {
        let anyone = Who { principal: "", groups: &[] };
        let mut always = vec![false; capabilities.len()];
        let mut depends = Vec::new();
        for (i, c) in capabilities.iter().enumerate() {
            let mut left = Vec::new();
            for policy in self.for_action(c.module, c.capability, c.category).policies() {
                let id: &str = policy.id().as_ref();
                let reads = self.reads.get(id).copied().unwrap_or_default();
                let per_capability = reads.action || reads.resource || reads.context;
                if per_capability || reads.principal {
                    left.push(Alone { id: id.to_string(), per_capability, set: self.alone(policy) });
                    continue;
                }
                let known = self.everyone.read().unwrap_or_else(|e| e.into_inner()).get(id).copied();
                let hides = known.unwrap_or_else(|| {
                    let hides = self.partially(&self.alone(policy), anyone, c);
                    self.everyone.write().unwrap_or_else(|e| e.into_inner()).insert(id.to_string(), hides);
                    hides
                });
                if hides {
                    always[i] = true;
                    break;
                }
            }
            if !always[i] && !left.is_empty() {
                depends.push((i, left));
            }
        }
        Plan { always, depends }
    }

    /// For each of `capabilities` (those `plan` was made for), whether the
    /// policies deny it to `who` whatever the input and the mode: only
    /// what depends on the principal is evaluated, each policy that reads
    /// the principal alone once.
    pub fn deny_planned(&self, plan: &Plan, who: Who<'_>, capabilities: &[Listed<'_>]) -> Vec<bool> {
        let mut out = plan.always.clone();
        let mut mine: std::collections::HashMap<&str, bool> = std::collections::HashMap::new();
        for (i, left) in &plan.depends {
            let c = &capabilities[*i];
            out[*i] = left.iter().any(|p| match p.per_capability {
                true => self.partially(&p.set, who, c),
                false => *mine.entry(p.id.as_str()).or_insert_with(|| self.partially(&p.set, who, c)),
            });
        }
        out
    }

    /// A set of `policy` alone, made once.
    fn alone(&self, policy: &cedar_policy::Policy) -> std::sync::Arc<PolicySet> {
        let id: &str = policy.id().as_ref();
        if let Some(set) = self.alone.read().unwrap_or_else(|e| e.into_inner()).get(id) {
            return set.clone();
        }
        let set = std::sync::Arc::new(PolicySet::from_policies([policy.clone()]).expect("one policy"));
        self.alone.write().unwrap_or_else(|e| e.into_inner()).insert(id.to_string(), set.clone());
        set
    }

    /// Whether some policy names a user by id (`User::"alice"`): then two
    /// principals in the same groups may be shown different capabilities,
    /// and a view is kept per principal, not per groups.
    pub fn names_users(&self) -> bool {
        self.names_users
    }
}

/// What a policy reads that differs between requests, beyond the input and
/// the mode (and its scope's action, which matched).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Reads {
    /// `principal`, in its scope or its conditions.
    principal: bool,
    /// `action` in its conditions.
    action: bool,
    /// `resource`, in its scope or its conditions.
    resource: bool,
    /// The context beyond `input` and `mode`, or the whole context.
    context: bool,
}

impl Reads {
}

/// [`Policies::plan`]'s answer: what hides a capability from everyone, and
/// per capability the policies left to evaluate for a principal.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    always: Vec<bool>,
    depends: Vec<(usize, Vec<Alone>)>,
}

/// A policy in a set of its own, and whether it is evaluated per
/// capability (else once per principal).
#[derive(Debug, Clone)]
struct Alone {
    id: String,
    per_capability: bool,
    set: std::sync::Arc<PolicySet>,
}

/// One capability, as [`Policies::deny_whatever_input`] takes it.
#[derive(Debug, Clone, Copy)]
pub struct Listed<'a> {
    /// Its module.
    pub module: &'a str,
    /// Its name within the module.
    pub capability: &'a str,
    /// Its category.
    pub category: Category,
    /// The upstream server implementing it, for an upstream capability.
    pub upstream: Option<&'a str>,
}

/// What each policy of `set` that reads anything [`Reads`] counts reads,
/// by id, from Cedar's JSON form: `{"Var": …}` in its conditions, a
/// resource scope, and the context's attributes (`context.input` is
/// `{".": {"left": {"Var": "context"}, "attr": "input"}}`, `has` alike; any
/// other use of `context` reads all of it). A policy that cannot be
/// written as JSON reads everything.
pub(super) fn reading(set: &PolicySet) -> std::collections::HashMap<String, Reads> {
    fn walk(value: &Value, accessed: bool, reads: &mut Reads) {
        match value {
            Value::Object(map) => {
                match map.get("Var").and_then(Value::as_str) {
                    Some("principal") => reads.principal = true,
                    Some("action") => reads.action = true,
                    Some("resource") => reads.resource = true,
                    Some("context") if !accessed => reads.context = true,
                    _ => {}
                }
                for op in [".", "has"] {
                    if let Some(Value::Object(access)) = map.get(op) {
                        let on_context = access.get("left").and_then(|l| l.get("Var")).and_then(Value::as_str) == Some("context");
                        let attr = access.get("attr").and_then(Value::as_str).unwrap_or_default();
                        if on_context && !matches!(attr, "input" | "mode") {
                            reads.context = true;
                        }
                        if let Some(left) = access.get("left") {
                            walk(left, on_context, reads);
                        }
                        access.iter().filter(|(k, _)| *k != "left").for_each(|(_, v)| walk(v, false, reads));
                    }
                }
                map.iter().filter(|(k, _)| *k != "." && *k != "has").for_each(|(_, v)| walk(v, false, reads));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, false, reads)),
            _ => {}
        }
    }
    set.policies()
        .filter_map(|policy| {
            let mut reads = Reads::default();
            match policy.to_json() {
                Ok(json) => walk(&json["conditions"], false, &mut reads),
                Err(_) => reads = Reads { principal: true, action: true, resource: true, context: true },
            }
            reads.resource |= !matches!(policy.resource_constraint(), cedar_policy::ResourceConstraint::Any);
            reads.principal |= !matches!(policy.principal_constraint(), cedar_policy::PrincipalConstraint::Any);
            (reads.principal || reads.action || reads.resource || reads.context).then(|| (policy.id().to_string(), reads))
        })
        .collect()
}

/// Whether any policy of `set` holds a `User` entity literal, in its scope
/// or its conditions (read from Cedar's JSON form of the policy, so no
/// spelling of the text can hide one).
pub(super) fn names_users(set: &PolicySet) -> bool {
    // A policy that cannot be written as JSON is counted as naming users:
    // the finer key is the safe one.
    set.policies().any(|policy| policy.to_json().map_or(true, |json| !literals(&json, "User").is_empty()))
}

/// The ids of the `kind` (`User`, `Group`) entity literals in a policy's
/// JSON form, with or without the namespace.
fn literals(json: &Value, kind: &str) -> Vec<String> {
    fn walk(value: &Value, qualified: &str, kind: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                let typed = map.get("type").and_then(Value::as_str).is_some_and(|t| t == qualified || t == kind);
                if let (true, Some(id)) = (typed, map.get("id").and_then(Value::as_str)) {
                    out.push(id.to_string());
                }
                map.values().for_each(|v| walk(v, qualified, kind, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, qualified, kind, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(json, &format!("{NAMESPACE}::{kind}"), kind, &mut out);
    out
}

impl Policies {
    /// The groups the policies name (`Group::"ops"`), in order: a named
    /// surface's `groups` that none of them names is worth a warning.
    pub fn group_names(&self) -> std::collections::BTreeSet<String> {
        self.set.policies().filter_map(|policy| policy.to_json().ok()).flat_map(|json| literals(&json, "Group")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Source;

    fn policies(text: &str) -> Policies {
        Policies::parse(&[Source { file: "policies/p.cedar".into(), text: text.into() }]).expect("parses")
    }

    fn denied(p: &Policies, groups: &[&str], capability: &str, category: Category) -> bool {
        let groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        p.denies_whatever_input(Who { principal: "alice", groups: &groups }, "payments", capability, category, None)
    }

    #[test]
    fn only_a_forbid_that_holds_for_every_input_and_mode_hides() {
        let p = policies(
            r#"
            @id("no-refunds-outside-support")
            forbid (principal, action == Capspec::Action::"payments.refund", resource) unless { principal in Capspec::Group::"support" };
            @id("big-transfers")
            forbid (principal, action == Capspec::Action::"payments.transfer", resource) when { context.input.amount > 500 };
            @id("no-writes-in-plan")
            forbid (principal, action in Capspec::Action::"category:write", resource) when { context.mode == "plan" };
            @id("not-external")
            forbid (principal, action in Capspec::Action::"category:external", resource) when { context.category == "external" };
            "#,
        );
        assert!(denied(&p, &["sales"], "refund", Category::Write), "outside support: denied whatever the input");
        assert!(!denied(&p, &["support"], "refund", Category::Write), "inside support: allowed");
        assert!(!denied(&p, &["sales"], "transfer", Category::Write), "some amount is allowed");
        assert!(!denied(&p, &["sales"], "note", Category::Write), "some mode is allowed");
        assert!(denied(&p, &[], "wire", Category::External), "the category is known: denied whatever the input");
        assert!(!denied(&p, &[], "balance", Category::Read), "no policy applies");
    }

    #[test]
    fn a_policy_that_fails_whatever_the_input_hides_and_a_permit_never_does() {
        let p = policies(
            r#"
            forbid (principal, action == Capspec::Action::"payments.refund", resource) when { principal.department == "x" };
            permit (principal, action == Capspec::Action::"payments.balance", resource) when { false };
            "#,
        );
        assert!(denied(&p, &[], "refund", Category::Write), "reading an attribute no principal has fails closed");
        assert!(!denied(&p, &[], "balance", Category::Read));
    }

    #[test]
    fn capabilities_that_share_their_policies_share_one_answer_unless_a_policy_reads_the_action() {
        let p = policies(
            r#"
            forbid (principal, action in [Capspec::Action::"payments.a", Capspec::Action::"payments.b"], resource) unless { principal in Capspec::Group::"ops" };
            forbid (principal, action in [Capspec::Action::"payments.c", Capspec::Action::"payments.d"], resource) when { action == Capspec::Action::"payments.d" };
            forbid (principal, action in [Capspec::Action::"payments.f", Capspec::Action::"payments.g"], resource) when { context.category == "external" };
            forbid (principal, action in [Capspec::Action::"payments.h", Capspec::Action::"payments.i"], resource) when { context == {"category": "read"} || context.input has x };
            forbid (principal, action in [Capspec::Action::"payments.j", Capspec::Action::"payments.k"], resource == Capspec::Module::"payments");
            "#,
        );
        let of = |capability, category| Listed { module: "payments", capability, category, upstream: None };
        let listed = |capability| of(capability, Category::Write);
        let all = [listed("a"), listed("b"), listed("c"), listed("d"), listed("e"), listed("f"), of("g", Category::External), listed("h"), of("i", Category::Read), listed("j"), Listed { module: "other", ..listed("k") }];
        let who = Who { principal: "alice", groups: &[] };
        assert_eq!(p.deny_whatever_input(who, &all), [true, true, false, true, false, false, true, false, false, true, false]);
        let ops = ["ops".to_string()];
        assert_eq!(p.deny_whatever_input(Who { principal: "olga", groups: &ops }, &all), [false, false, false, true, false, false, true, false, false, true, false]);
        for (c, denied) in all.iter().zip(p.deny_whatever_input(who, &all)) {
            assert_eq!(p.denies_whatever_input(who, c.module, c.capability, c.category, None), denied, "{}", c.capability);
        }
    }

    #[test]
    fn a_user_named_anywhere_in_a_policy_is_seen() {
        assert!(!policies(r#"forbid (principal in Capspec::Group::"x", action, resource);"#).names_users());
        assert!(!policies(r#"forbid (principal is Capspec::User, action, resource);"#).names_users());
        assert!(policies(r#"forbid (principal == Capspec::User::"bob", action, resource);"#).names_users());
        assert!(policies(r#"forbid (principal, action, resource) when { principal == Capspec::User::"bob" };"#).names_users());
        assert!(policies(r#"forbid (principal, action, resource) when { [Capspec::User::"bob"].contains(principal) };"#).names_users());
        assert!(policies(r#"forbid (principal, action, resource) when { principal in [Capspec::Group::"a", Capspec::User::"bob"] };"#).names_users());
        let p = policies(r#"forbid (principal in Capspec::Group::"ops", action, resource) when { principal in [Capspec::Group::"a", Capspec::User::"bob"] };"#);
        assert_eq!(p.group_names().into_iter().collect::<Vec<_>>(), ["a", "ops"]);
    }
}
