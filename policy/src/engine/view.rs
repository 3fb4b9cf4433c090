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
        if applicable.is_empty() {
            return false;
        }
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
        let response = self.authorizer.is_authorized_partial(&request, &applicable, entities.as_ref());
        if response.definitely_errored().next().is_some() {
            return true;
        }
        response.definitely_satisfied().any(|policy| self.info(policy.id()).is_some_and(|p| p.effect == Effect::Forbid))
    }

    /// Whether some policy names a user by id (`User::"alice"`): then two
    /// principals in the same groups may be shown different capabilities,
    /// and a view is kept per principal, not per groups.
    pub fn names_users(&self) -> bool {
        self.names_users
    }
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
