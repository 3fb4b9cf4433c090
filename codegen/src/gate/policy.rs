//! `check`'s policy half (DESIGN §14): the project's Cedar policies parsed,
//! validated strictly against the schema the specs produce, their tests
//! (`<dir>/tests.yaml`) run, and shadowed permits reported. Every finding
//! is located in the `.cedar` or tests file.
//!
//! Cedar is behind the feature `policy`; without it, a project that has
//! policies gets one finding saying how to turn it on.

use std::path::Path;

use crate::finding::Finding;
use crate::model::SpecSet;
use crate::rules::*;
use crate::source::Sources;
use crate::yaml::Pos;

/// The `*.cedar` files directly in `dir` (relative to `root`), sorted.
fn cedar_files(root: &Path, dir: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else { return Vec::new() };
    let mut files: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cedar") && p.is_file())
        .filter_map(|p| p.file_name().map(|n| format!("{}/{}", dir.trim_end_matches('/'), n.to_string_lossy())))
        .collect();
    files.sort();
    files
}

/// The policy findings of the project at `root` whose policies live in
/// `dir`, checked against the Cedar schema `set` produces.
#[cfg(not(feature = "policy"))]
pub(crate) fn findings(root: &Path, dir: &str, _set: &SpecSet, _sources: &mut Sources) -> Vec<Finding> {
    let files = cedar_files(root, dir);
    match files.first() {
        None => Vec::new(),
        Some(first) => vec![Finding::error(
            POLICY_FEATURE,
            first,
            Pos { line: 1, column: 1 },
            format!(
                "`{dir}/` holds {} polic{} file{}, but this capspec was built without policy support, so they are neither checked nor enforced: turn on the `policy` feature: add `\"policy\"` to `features` of `capspec-cli` in the xtask's Cargo.toml (the installed `cargo capspec` has it)",
                files.len(),
                if files.len() == 1 { "y" } else { "ies" },
                if files.len() == 1 { "" } else { "s" },
            ),
        )],
    }
}

/// Without Cedar, `policy test` has nothing to run: the one finding says why.
#[cfg(not(feature = "policy"))]
pub(crate) fn test_report(root: &Path, dir: &str, set: &SpecSet, sources: &mut Sources) -> (Vec<String>, Vec<Finding>) {
    (Vec::new(), findings(root, dir, set, sources))
}

#[cfg(feature = "policy")]
pub(crate) use checked::{findings, test_report};

#[cfg(feature = "policy")]
mod checked {
    use super::*;
    use crate::gate::policy_tests;
    use crate::render::cedar::declarations_json;
    use crate::model::Category;
    use std::collections::{BTreeSet, HashMap};

    use capspec_policy::cedar_policy::{ActionConstraint, Policy, PolicyId, PolicySet, Schema, ValidationMode, Validator};
    use capspec_policy::{Policies, Source};

    /// Parse, validate, test and look for shadowed permits.
    pub(crate) fn findings(root: &Path, dir: &str, set: &SpecSet, sources: &mut Sources) -> Vec<Finding> {
        let mut out = Vec::new();
        let mut texts = Vec::new();
        for file in cedar_files(root, dir) {
            match std::fs::read_to_string(root.join(&file)) {
                Ok(text) => {
                    sources.insert(&file, text.clone());
                    texts.push(Source { file, text });
                }
                Err(e) => out.push(Finding::error(POLICY_PARSE, &file, Pos::default(), format!("cannot read the policy file: {e}"))),
            }
        }
        let policies = match Policies::parse(&texts) {
            Ok(policies) => policies,
            Err(errors) => {
                out.extend(errors.into_iter().map(|e| Finding::error(POLICY_PARSE, &e.file, Pos { line: e.line, column: e.column }, e.message)));
                return out;
            }
        };
        let scopes = Scopes::new(set);
        out.extend(validate(&policies, &texts, set, &scopes, dir));
        out.extend(unreachable(&policies, set, &scopes));
        let tests = policy_tests::run(root, dir, set, &policies, sources);
        out.extend(tests.findings);
        out
    }

    /// What `cargo xtask policy test` prints: each test's decision with the
    /// policies that made it, and the findings (parse errors included).
    pub(crate) fn test_report(root: &Path, dir: &str, set: &SpecSet, sources: &mut Sources) -> (Vec<String>, Vec<Finding>) {
        let mut texts = Vec::new();
        for file in cedar_files(root, dir) {
            if let Ok(text) = std::fs::read_to_string(root.join(&file)) {
                sources.insert(&file, text.clone());
                texts.push(Source { file, text });
            }
        }
        match Policies::parse(&texts) {
            Ok(policies) => {
                let run = policy_tests::run(root, dir, set, &policies, sources);
                (run.lines, run.findings)
            }
            Err(errors) => (Vec::new(), errors.into_iter().map(|e| Finding::error(POLICY_PARSE, &e.file, Pos { line: e.line, column: e.column }, e.message)).collect()),
        }
    }

    /// Capabilities by (module index, capability index).
    type Actions = BTreeSet<(usize, usize)>;

    /// Most actions one batch's schema declares (see [`validate`]).
    const BATCH_ACTIONS: usize = 32;

    /// Strict validation, each error located in its policy's file, with
    /// what the specs have for the actions the policy names.
    ///
    /// Cedar's validator visits every action of the schema for every
    /// policy: 1,000 policies over 10,000 capabilities took 35 s against
    /// the whole schema. So policies are validated in batches, each against
    /// a schema with the batch's actions only (those its policies' scopes
    /// can match) and their modules' groups. A policy whose scope is any
    /// action or names an action the specs lack, and every policy of a
    /// batch with an error, is validated against the whole schema: the
    /// findings are exactly the whole schema's, as a smaller schema can
    /// only add errors, never hide one.
    ///
    /// The schemas are built in Cedar's JSON format, the same schema as
    /// the `.cedarschema` file `sync` writes: Cedar's text grammar builds
    /// a lexer for every identifier it reads, which made reading the batch
    /// schemas two thirds of this check.
    fn validate(policies: &Policies, texts: &[Source], set: &SpecSet, scopes: &Scopes, dir: &str) -> Vec<Finding> {
        use capspec_policy::miette::Diagnostic as _;
        let (mut whole, mut scoped) = (Vec::new(), Vec::new());
        for info in policies.infos() {
            match policies.set().policy(&info.id).and_then(|p| scopes.of(p)) {
                Some(actions) => scoped.push((actions, info.id.clone())),
                None => whole.push(info.id.clone()),
            }
        }
        scoped.sort();
        let mut batches: Vec<(Actions, Vec<PolicyId>)> = Vec::new();
        for (actions, id) in scoped {
            match batches.last_mut() {
                Some((held, ids)) if held.union(&actions).count() <= BATCH_ACTIONS => {
                    held.extend(actions);
                    ids.push(id);
                }
                _ => batches.push((actions, vec![id])),
            }
        }
        // Batches are independent: validated across the cores, their
        // outcomes taken in batch order.
        let outcomes = crate::parallel::map(batches, |(actions, ids)| {
            let modules: BTreeSet<usize> = actions.iter().map(|&(m, _)| m).collect();
            let declared = declarations_json(modules.iter().map(|&m| &set.modules[m]), actions.iter().map(|&(m, c)| (&set.modules[m], &set.modules[m].capabilities[c])));
            let passed = Schema::from_json_value(declared).is_ok_and(|schema| Validator::new(schema).validate(&subset(policies, &ids), ValidationMode::Strict).validation_passed());
            (passed, ids)
        });
        for (passed, ids) in outcomes {
            if !passed {
                whole.extend(ids);
            }
        }
        if whole.is_empty() {
            return Vec::new();
        }
        let schema = match Schema::from_json_value(declarations_json(set.modules.iter(), set.capabilities())) {
            Ok(schema) => schema,
            // The generator wrote it: a failure here is capspec's bug, said so.
            Err(e) => return vec![Finding::error(POLICY_INVALID, &format!("{dir}/"), Pos::default(), format!("capspec's own Cedar schema does not parse ({e}); please report this"))],
        };
        let result = Validator::new(schema).validate(&subset(policies, &whole), ValidationMode::Strict);
        let mut out = Vec::new();
        for error in result.validation_errors() {
            let Some(info) = policies.info(error.policy_id()) else { continue };
            let text = texts.iter().find(|t| t.file == info.file).map(|t| t.text.as_str()).unwrap_or("");
            let offset = error.labels().and_then(|mut l| l.next()).map(|l| l.offset());
            let pos = match offset {
                Some(offset) => {
                    let (line, column) = capspec_policy::line_col(text, offset);
                    Pos { line, column }
                }
                None => Pos { line: info.line, column: info.column },
            };
            // Cedar's message names the policy ("for policy `…`").
            let mut message = error.to_string();
            if let Some(help) = error.help() {
                message.push_str(&format!(" ({help})"));
            }
            if let Some(has) = spec_has(policies.set(), &info.id, set) {
                message.push_str(&format!("; {has}"));
            }
            out.push(Finding::error(POLICY_INVALID, &info.file, pos, message));
        }
        out
    }

    /// The policies `ids` of `policies`, as a set to validate.
    fn subset(policies: &Policies, ids: &[PolicyId]) -> PolicySet {
        let mut out = PolicySet::new();
        for policy in ids.iter().filter_map(|id| policies.set().policy(id)) {
            out.add(policy.clone()).expect("ids are unique in the whole set");
        }
        out
    }

    /// The capabilities (module index, capability index) an action scope
    /// can match, by action id and by group, resolved by name (only the
    /// actions policies name are looked up, not every capability's).
    struct Scopes<'a> {
        set: &'a SpecSet,
        modules: HashMap<&'a str, usize>,
    }

    impl<'a> Scopes<'a> {
        fn new(set: &'a SpecSet) -> Scopes<'a> {
            Scopes { set, modules: set.modules.iter().enumerate().map(|(m, module)| (module.name.as_str(), m)).collect() }
        }

        /// The capability whose action id is `id`.
        fn action(&self, id: &str) -> Option<(usize, usize)> {
            let (module, _) = id.split_once('.')?;
            let &m = self.modules.get(module)?;
            let module = &self.set.modules[m];
            module.capabilities.iter().position(|cap| capspec_policy::action_id(&module.name, &cap.name) == id).map(|c| (m, c))
        }

        /// The members of the action group `id`: a module's or a category's.
        fn group(&self, id: &str) -> Option<Vec<(usize, usize)>> {
            if let Some(&m) = id.strip_prefix(capspec_policy::module_group("").as_str()).and_then(|module| self.modules.get(module)) {
                return Some((0..self.set.modules[m].capabilities.len()).map(|c| (m, c)).collect());
            }
            let category = Category::ALL.into_iter().find(|&c| capspec_policy::category_group(c) == id)?;
            let members = self.set.modules.iter().enumerate().flat_map(|(m, module)| module.capabilities.iter().enumerate().filter(move |(_, cap)| cap.category == category).map(move |(c, _)| (m, c)));
            Some(members.collect())
        }

        /// What `policy`'s scope can match; `None` for any action or one
        /// the specs lack, which the whole schema decides.
        fn of(&self, policy: &Policy) -> Option<Actions> {
            let named = match policy.action_constraint() {
                ActionConstraint::Any => return None,
                ActionConstraint::Eq(uid) => vec![uid],
                ActionConstraint::In(uids) => uids,
            };
            let mut out = BTreeSet::new();
            for uid in named {
                let id = uid.id().unescaped();
                match self.action(id) {
                    Some(one) => {
                        out.insert(one);
                    }
                    None => out.extend(self.group(id)?),
                }
            }
            Some(out)
        }
    }

    /// What the specs have for the actions `id`'s scope names: each named
    /// capability's arguments, or that it does not exist.
    fn spec_has(set_of: &PolicySet, id: &PolicyId, set: &SpecSet) -> Option<String> {
        let policy = set_of.policy(id)?;
        let named: Vec<String> = match policy.action_constraint() {
            ActionConstraint::Any => return None,
            ActionConstraint::Eq(uid) => vec![uid.id().unescaped().to_string()],
            ActionConstraint::In(uids) => uids.iter().map(|u| u.id().unescaped().to_string()).collect(),
        };
        let mut parts = Vec::new();
        for name in named.iter().filter(|n| !n.starts_with("module:") && !n.starts_with("category:")) {
            match set.capabilities().find(|(m, c)| &capspec_policy::action_id(&m.name, &c.name) == name) {
                Some((_, cap)) => {
                    let typed = capspec_policy::types::input_type(&crate::render::input_schema_json(cap));
                    let args: Vec<String> = typed.attributes.iter().map(|a| format!("`{}`{}", a.name, if a.required { "" } else { "?" })).collect();
                    parts.push(if args.is_empty() { format!("the spec's `{name}` takes no arguments") } else { format!("the spec's `{name}` takes {}", args.join(", ")) });
                }
                // Cedar's own message already says which action was meant.
                None => parts.push(format!("the specs have no capability `{name}`")),
            }
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// `permit`s a condition-free `forbid` covers for every request: the
    /// forbid's principal and resource are unconstrained and its action
    /// scope covers the permit's (any action, the same action, or a group
    /// every named action is in).
    fn unreachable(policies: &Policies, specs: &SpecSet, scopes: &Scopes) -> Vec<Finding> {
        use capspec_policy::Effect;
        use capspec_policy::cedar_policy::{PrincipalConstraint, ResourceConstraint};
        let set = policies.set();
        let blanket: Vec<_> = policies
            .infos()
            .iter()
            .filter(|p| p.effect == Effect::Forbid)
            .filter_map(|p| set.policy(&p.id).map(|policy| (p, policy)))
            .filter(|(_, f)| !f.has_non_scope_constraint() && f.principal_constraint() == PrincipalConstraint::Any && f.resource_constraint() == ResourceConstraint::Any)
            .collect();
        let mut out = Vec::new();
        for info in policies.infos().iter().filter(|p| p.effect != Effect::Forbid) {
            let Some(permit) = set.policy(&info.id) else { continue };
            // An action is in itself, its module's group and its category's.
            let in_group = |action: &capspec_policy::cedar_policy::EntityUid, groups: &[capspec_policy::cedar_policy::EntityUid]| {
                let id = action.id().unescaped();
                let mut own = vec![id.to_string()];
                if let Some((m, c)) = scopes.action(id) {
                    let (module, cap) = (&specs.modules[m], &specs.modules[m].capabilities[c]);
                    own.push(capspec_policy::module_group(&module.name));
                    own.push(capspec_policy::category_group(cap.category));
                }
                groups.iter().any(|g| g.type_name() == action.type_name() && own.iter().any(|o| o == g.id().unescaped()))
            };
            let covering = blanket.iter().find(|(_, forbid)| match (forbid.action_constraint(), permit.action_constraint()) {
                (ActionConstraint::Any, _) => true,
                (ActionConstraint::Eq(f), ActionConstraint::Eq(p)) => f == p,
                (ActionConstraint::In(groups), ActionConstraint::Eq(p)) => in_group(&p, &groups),
                (ActionConstraint::In(groups), ActionConstraint::In(named)) => named.iter().all(|n| groups.contains(n) || in_group(n, &groups)),
                _ => false,
            });
            if let Some((forbid, _)) = covering {
                let what = if info.effect == Effect::Ask { "`@ask` permit" } else { "permit" };
                out.push(Finding::warning(
                    POLICY_UNREACHABLE,
                    &info.file,
                    Pos { line: info.line, column: info.column },
                    format!("the {what} `{}` never decides: `{}` ({}:{}) forbids every request it could match", info.label, forbid.label, forbid.file, forbid.line),
                ));
            }
        }
        out
    }
}
