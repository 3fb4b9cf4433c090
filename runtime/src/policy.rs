//! The project's Cedar policies in the ladder (DESIGN §14), after
//! validation and before the gate: a forbid denies (nothing overrides it),
//! an `@ask` permit asks, a permit allows (`plan` still blocks non-reads),
//! and otherwise the mode × category matrix decides. A policy that fails to
//! evaluate denies. With no policies on the run the ladder does no policy
//! work; with `PolicyMode::Log` what the policies would have decided is
//! recorded (receipt `policy`, span `capspec.policy`) while the matrix
//! decides.
//!
//! The decision itself is `capspec_policy::ruling`, the one the generator's
//! policy tests use.

use serde_json::Value;

use crate::gate::Verdict;
use crate::run::Run;
use crate::spec::Spec;

/// What the ladder does next for a call.
pub(crate) enum Step {
    /// Run it.
    Allow,
    /// Ask the approver; `always`: a policy asks, so an allowance for the
    /// session does not answer for it.
    Ask { always: bool },
    /// `plan` mode blocks it.
    Block,
    /// A policy denies it: the message names the policy and its reason.
    #[cfg_attr(not(feature = "policy"), allow(dead_code))]
    Deny(String),
}

/// The step for a call of `spec` (served by `upstream`, for an upstream
/// capability) with validated `args`; the labels of the
/// policies that decided (or would have, in log mode) go to `deciding`.
/// First the caller's scopes (DESIGN §13): a category they leave out is
/// denied whatever the policies and the mode say.
#[inline]
pub(crate) fn step(run: &Run, spec: &Spec, upstream: Option<&str>, args: &Value, deciding: &mut Vec<String>) -> Step {
    if !run.principal().scopes().allows(spec.category) {
        return Step::Deny(lacking_scope(spec));
    }
    let floor = |verdict| match verdict {
        Verdict::Allow => Step::Allow,
        Verdict::Ask => Step::Ask { always: false },
        Verdict::Block => Step::Block,
    };
    #[cfg(feature = "policy")]
    if let Some(gate) = run.policies() {
        return enforced::step(gate, run, spec, upstream, args, deciding).unwrap_or_else(|| floor(crate::gate::decide(run.mode(), spec.category)));
    }
    let _ = (upstream, args, deciding);
    floor(crate::gate::decide(run.mode(), spec.category))
}

/// Why a call the caller's scopes leave out is denied.
#[cold]
fn lacking_scope(spec: &Spec) -> String {
    let category = spec.category;
    format!("the caller's token lacks the scope `{}`, which `{}.{}` ({category}) needs; authorize again with it", category.scope(), spec.module, spec.name)
}

#[cfg(feature = "policy")]
pub use capspec_policy::{LoadError, ParseError, Policies, Source};
#[cfg(feature = "policy")]
pub use crate::policy_gate::{PolicyGate, PolicyMode};

#[cfg(feature = "policy")]
mod enforced {
    use capspec_policy::{Request, Ruling, ruling};
    use serde_json::Value;

    use super::Step;
    use crate::policy_gate::{PolicyGate, PolicyMode};
    use crate::run::Run;
    use crate::spec::Spec;

    /// The policies' step; `None` when none applies (or in log mode), and
    /// the matrix decides.
    pub(super) fn step(gate: &PolicyGate, run: &Run, spec: &Spec, upstream: Option<&str>, args: &Value, deciding: &mut Vec<String>) -> Option<Step> {
        let applicable = gate.policies().for_action(spec.module, spec.name, spec.category);
        if applicable.is_empty() {
            return None;
        }
        let input_type = gate.input_type(spec);
        let principal = run.principal();
        let request = Request {
            principal: principal.id(),
            groups: principal.groups(),
            module: spec.module,
            capability: spec.name,
            category: spec.category,
            mode: run.mode(),
            input: args,
            input_type: &input_type,
            upstream,
        };
        let evaluation = gate.policies().evaluate(&request);
        *deciding = evaluation.policies;
        if gate.mode() == PolicyMode::Log {
            return None;
        }
        Some(match ruling(evaluation.effect, run.mode(), spec.category) {
            Ruling::Deny => Step::Deny(evaluation.message.unwrap_or_else(|| "denied by policy".into())),
            Ruling::Block => Step::Block,
            Ruling::Ask => Step::Ask { always: evaluation.effect.is_some() },
            Ruling::Allow => Step::Allow,
        })
    }
}
