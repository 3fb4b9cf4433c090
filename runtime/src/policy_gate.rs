//! A project's policies as a host enforces them (DESIGN §14): the
//! `PolicyGate` every run of a server shares (`Run::with_policies`), and
//! whether it enforces or only logs. The ladder's step is `policy.rs`.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use capspec_policy::Policies;
use capspec_policy::types::Attribute;
use serde_json::Value;

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

    /// `spec`'s `context.input` type, computed once per capability.
    pub(crate) fn input_type(&self, spec: &Spec) -> Arc<Vec<Attribute>> {
        if let Some(found) = self.input_types.read().unwrap_or_else(|e| e.into_inner()).get(spec.input_schema) {
            return found.clone();
        }
        let schema: Value = serde_json::from_str(spec.input_schema).unwrap_or(Value::Null);
        let typed = Arc::new(capspec_policy::types::input_type(&schema).attributes);
        self.input_types.write().unwrap_or_else(|e| e.into_inner()).insert(spec.input_schema, typed.clone());
        typed
    }
}
