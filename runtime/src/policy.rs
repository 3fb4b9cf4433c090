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
pub(crate) fn step(run: &Run, spec: &Spec, upstream: Option<&str>, args: &Value, deciding: &mut Vec<String>) -> Step {
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

#[cfg(feature = "policy")]
pub use capspec_policy::{LoadError, Policies};
#[cfg(feature = "policy")]
pub use enforced::{PolicyGate, PolicyMode};

#[cfg(feature = "policy")]
mod enforced {
    use std::collections::HashMap;
    use std::sync::{Arc, RwLock};

    use capspec_policy::types::Attribute;
    use capspec_policy::{Policies, Request, Ruling, ruling};
    use serde_json::Value;

    use super::Step;
    use crate::run::Run;
    use crate::spec::Spec;

    /// Whether policies decide or are only recorded (`--policy-mode`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub enum PolicyMode {
        /// Policies decide (the default).
        #[default]
        Enforce,
        /// Policies are evaluated and recorded; mode × category decides.
        Log,
    }

    impl PolicyMode {
        /// Parses `enforce` or `log`.
        pub fn parse(text: &str) -> Option<PolicyMode> {
            match text {
                "enforce" => Some(PolicyMode::Enforce),
                "log" => Some(PolicyMode::Log),
                _ => None,
            }
        }
    }

    /// A project's policies as a host enforces them: shared by every run
    /// of a server (`Run::with_policies`).
    pub struct PolicyGate {
        policies: Policies,
        mode: PolicyMode,
        /// Each capability's `context.input` type, computed on its first call.
        input_types: RwLock<HashMap<&'static str, Arc<Vec<Attribute>>>>,
    }

    impl std::fmt::Debug for PolicyGate {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("PolicyGate").field("policies", &self.policies.len()).field("mode", &self.mode).finish()
        }
    }

    impl PolicyGate {
        /// Enforce (or log) `policies`.
        pub fn new(policies: Policies, mode: PolicyMode) -> PolicyGate {
            PolicyGate { policies, mode, input_types: RwLock::new(HashMap::new()) }
        }

        /// The `*.cedar` files of `dir` (`--policies DIR`), enforced or
        /// logged; a policy that does not parse is an error naming its
        /// file, line and column. Check them against the specs with
        /// `cargo xtask check`.
        pub fn load(dir: &std::path::Path, mode: PolicyMode) -> Result<PolicyGate, capspec_policy::LoadError> {
            let label = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Ok(PolicyGate::new(Policies::load_dir(dir, &label)?, mode))
        }

        /// The policies.
        pub fn policies(&self) -> &Policies {
            &self.policies
        }

        /// Enforce or log.
        pub fn mode(&self) -> PolicyMode {
            self.mode
        }

        fn input_type(&self, spec: &Spec) -> Arc<Vec<Attribute>> {
            if let Some(found) = self.input_types.read().unwrap_or_else(|e| e.into_inner()).get(spec.input_schema) {
                return found.clone();
            }
            let schema: Value = serde_json::from_str(spec.input_schema).unwrap_or(Value::Null);
            let typed = Arc::new(capspec_policy::types::input_type(&schema).attributes);
            self.input_types.write().unwrap_or_else(|e| e.into_inner()).insert(spec.input_schema, typed.clone());
            typed
        }
    }

    /// The policies' step; `None` when none applies (or in log mode), and
    /// the matrix decides.
    pub(super) fn step(gate: &PolicyGate, run: &Run, spec: &Spec, upstream: Option<&str>, args: &Value, deciding: &mut Vec<String>) -> Option<Step> {
        let applicable = gate.policies.for_action(spec.module, spec.name, spec.category);
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
        let evaluation = gate.policies.evaluate(&request);
        *deciding = evaluation.policies;
        if gate.mode == PolicyMode::Log {
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
