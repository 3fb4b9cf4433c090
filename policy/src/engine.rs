//! A project's Cedar policies (DESIGN §14): loaded from `policies/*.cedar`,
//! each named by its `@id` or `file:line`, indexed by action, and evaluated
//! for one call failing closed.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, RwLock};

use cedar_policy::authorization_errors::PolicyEvaluationError;
use cedar_policy::{AuthorizationError, Authorizer, Context, Entities, Entity, EntityId, EntityTypeName, EntityUid, PolicyId, PolicySet, RestrictedExpression};
use miette::Diagnostic;
use serde_json::Value;

use crate::types::Attribute;
use crate::value::Inexacts;
use crate::{Category, Effect, Mode, NAMESPACE, category_group, module_group, statements, value};

mod view;
pub use view::{Listed, Plan};

/// How many (principal, groups, action) entity sets a `Policies` keeps.
const ENTITY_CACHE: usize = 4096;

/// What a request's entities are built from: a structured key, so no
/// principal id can spell another's groups.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct EntityKey {
    principal: String,
    groups: Vec<String>,
    action: String,
    category: Category,
}

/// One policy file's text, and the name findings and labels give it
/// (relative to the project root, `/`-separated).
#[derive(Debug, Clone)]
pub struct Source {
    /// The file's name, e.g. `policies/env.cedar`.
    pub file: String,
    /// Its text.
    pub text: String,
}

/// A policy file that does not parse, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// What is wrong, with Cedar's help when it has some.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
    }
}

/// Why a policy directory could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// A file or the directory could not be read.
    Io(PathBuf, std::io::Error),
    /// Policies that do not parse.
    Parse(Vec<ParseError>),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(path, error) => write!(f, "cannot read {}: {error}", path.display()),
            LoadError::Parse(errors) => {
                let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
                write!(f, "the policies do not parse:\n{}", lines.join("\n"))
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// One loaded policy: its name, where it is, and what deciding by it means.
#[derive(Debug, Clone)]
pub struct PolicyInfo {
    /// Its Cedar id: its label.
    pub id: PolicyId,
    /// Its `@id`, else `file:line`; receipts, spans and refusals name it by this.
    pub label: String,
    /// The file it is in.
    pub file: String,
    /// Where it begins (its first annotation, or its effect).
    pub line: u32,
    /// The column it begins at.
    pub column: u32,
    /// `forbid`, or a `permit` (`@ask` or not).
    pub effect: Effect,
    /// Its `@reason`, which a refusal quotes.
    pub reason: Option<String>,
}

/// What the policies decided for one call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Evaluation {
    /// The strongest effect of the policies that applied; `None`: none did,
    /// and the mode × category matrix decides.
    pub effect: Option<Effect>,
    /// The labels of the policies that decided, in label order.
    pub policies: Vec<String>,
    /// For a deny: what denied it (the policy and its `@reason`, a policy
    /// that failed to evaluate, or a number `decimal` cannot hold).
    pub message: Option<String>,
}

/// One call, as the policies see it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The principal's id (`sub`, `token`, `local`).
    pub principal: &'a str,
    /// The groups the principal is in.
    pub groups: &'a [String],
    /// The capability's module.
    pub module: &'a str,
    /// The capability's name within its module.
    pub capability: &'a str,
    /// Its category.
    pub category: Category,
    /// The run's mode.
    pub mode: Mode,
    /// The validated arguments.
    pub input: &'a Value,
    /// The input's Cedar type ([`crate::types::input_type`]).
    pub input_type: &'a [Attribute],
    /// The upstream server implementing it, for an upstream capability.
    pub upstream: Option<&'a str>,
}

/// Who calls, as the policies see it: an id and the groups it is in.
#[derive(Debug, Clone, Copy)]
pub struct Who<'a> {
    /// The principal's id (`sub`, `token`, `local`).
    pub principal: &'a str,
    /// The groups the principal is in.
    pub groups: &'a [String],
}

/// A project's policies, ready to evaluate.
pub struct Policies {
    set: PolicySet,
    infos: Vec<PolicyInfo>,
    by_id: HashMap<PolicyId, usize>,
    /// Per action id, the policies whose action scope can match it.
    index: RwLock<HashMap<String, Arc<PolicySet>>>,
    /// Per principal, groups and action, the two entities a request needs:
    /// building them computes a transitive closure, a third of a call's
    /// evaluation. Emptied when it reaches `ENTITY_CACHE` keys.
    entities: RwLock<HashMap<EntityKey, Arc<Entities>>>,
    /// Whether a policy names a user (`User::"alice"`): then what a
    /// principal is shown depends on its id, not only its groups.
    names_users: bool,
    /// What the policies that read anything besides the input and the mode read, by id.
    reads: HashMap<String, view::Reads>,
    /// Per policy that reads none of that, whether it hides what it applies
    /// to from everyone ([`Policies::deny_whatever_input`]).
    everyone: RwLock<HashMap<String, bool>>,
    /// Each policy in a set of its own, made when first evaluated alone.
    alone: RwLock<HashMap<String, Arc<PolicySet>>>,
    authorizer: Authorizer,
    user: EntityTypeName,
    group: EntityTypeName,
    module: EntityTypeName,
    action: EntityTypeName,
}

impl fmt::Debug for Policies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Policies").field("policies", &self.infos.iter().map(|p| &p.label).collect::<Vec<_>>()).finish()
    }
}

fn type_name(name: &str) -> EntityTypeName {
    EntityTypeName::from_str(&format!("{NAMESPACE}::{name}")).expect("a valid Cedar type name")
}

/// The first label's offset of a Cedar diagnostic.
fn offset_of(diagnostic: &dyn Diagnostic) -> Option<usize> {
    diagnostic.labels().and_then(|mut labels| labels.next()).map(|label| label.offset())
}

/// A diagnostic's message and help on one line.
pub(crate) fn message_of(diagnostic: &dyn Diagnostic) -> String {
    let mut message = diagnostic.to_string();
    if let Some(help) = diagnostic.help() {
        message.push_str(&format!(" ({help})"));
    }
    message
}

impl Policies {
    /// No policies: nothing applies to any call.
    pub fn empty() -> Policies {
        Policies::from_parts(PolicySet::new(), Vec::new())
    }

    fn from_parts(set: PolicySet, infos: Vec<PolicyInfo>) -> Policies {
        let by_id = infos.iter().enumerate().map(|(i, p)| (p.id.clone(), i)).collect();
        let names_users = view::names_users(&set);
        let reads = view::reading(&set);
        Policies {
            names_users,
            reads,
            everyone: RwLock::new(HashMap::new()),
            alone: RwLock::new(HashMap::new()),
            set,
            infos,
            by_id,
            index: RwLock::new(HashMap::new()),
            entities: RwLock::new(HashMap::new()),
            authorizer: Authorizer::new(),
            user: type_name("User"),
            group: type_name("Group"),
            module: type_name("Module"),
            action: type_name("Action"),
        }
    }

    /// Every `*.cedar` file directly in `dir`, in name order, each named
    /// `<label_dir>/<file name>`. A missing directory is no policies.
    pub fn load_dir(dir: &Path, label_dir: &str) -> Result<Policies, LoadError> {
        Policies::parse(&Policies::read_dir(dir, label_dir)?).map_err(LoadError::Parse)
    }

    /// The `*.cedar` files directly in `dir`, in name order (none when it does not exist).
    pub fn read_dir(dir: &Path, label_dir: &str) -> Result<Vec<Source>, LoadError> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(LoadError::Io(dir.to_path_buf(), error)),
        };
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| LoadError::Io(dir.to_path_buf(), e))?.path();
            if path.extension().is_some_and(|e| e == "cedar") && path.is_file() {
                paths.push(path);
            }
        }
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path).map_err(|e| LoadError::Io(path.clone(), e))?;
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                let file = if label_dir.is_empty() { name } else { format!("{}/{name}", label_dir.trim_end_matches('/')) };
                Ok(Source { file, text })
            })
            .collect()
    }

    /// Parse policy files: every parse error, located, or the policies,
    /// each renamed to its label (`@id`, else `file:line`). Templates are
    /// refused, and so is an `@id` used twice.
    pub fn parse(sources: &[Source]) -> Result<Policies, Vec<ParseError>> {
        let mut errors = Vec::new();
        let mut set = PolicySet::new();
        let mut infos: Vec<PolicyInfo> = Vec::new();
        let mut labels: HashMap<String, usize> = HashMap::new();
        for source in sources {
            let located = |offset: usize, message: String| {
                let (line, column) = crate::line_col(&source.text, offset);
                ParseError { file: source.file.clone(), line, column, message }
            };
            let parsed = match PolicySet::from_str(&source.text) {
                Ok(parsed) => parsed,
                Err(parse_errors) => {
                    for error in parse_errors.iter() {
                        errors.push(located(offset_of(error).unwrap_or(0), message_of(error)));
                    }
                    continue;
                }
            };
            let starts = statements::starts(&source.text);
            // Line starts, once per file: locating each of 1,000 policies
            // from the file's start was quadratic.
            let lines = crate::Lines::new(&source.text);
            if parsed.templates().next().is_some() {
                errors.push(located(0, "a policy template (a `?principal` or `?resource` slot): capspec evaluates static policies only".into()));
                continue;
            }
            for n in 0.. {
                let Some(policy) = parsed.policy(&PolicyId::new(format!("policy{n}"))) else { break };
                let offset = starts.get(n).copied().unwrap_or(0);
                let (line, column) = lines.line_col(offset);
                // Read by iterating: `Policy::annotation` runs Cedar's
                // identifier parser on its key for every lookup.
                let (mut named, mut ask, mut reason) = (None, false, None);
                for (key, value) in policy.annotations() {
                    match key {
                        "id" => named = Some(value),
                        "ask" => ask = true,
                        "reason" => reason = Some(value.to_string()),
                        _ => {}
                    }
                }
                let label = match named {
                    Some(id) => id.to_string(),
                    None => format!("{}:{line}", source.file),
                };
                if let Some(&first) = labels.get(&label) {
                    let first: &PolicyInfo = &infos[first];
                    errors.push(located(offset, format!("the policy id `{label}` is also used at {}:{}: ids name policies in refusals, receipts and tests, so each is used once", first.file, first.line)));
                    continue;
                }
                let effect = match policy.effect() {
                    cedar_policy::Effect::Forbid => Effect::Forbid,
                    cedar_policy::Effect::Permit if ask => Effect::Ask,
                    cedar_policy::Effect::Permit => Effect::Permit,
                };
                let id = PolicyId::new(&label);
                set.add(policy.new_id(id.clone())).expect("labels are unique");
                labels.insert(label.clone(), infos.len());
                infos.push(PolicyInfo { id, label, file: source.file.clone(), line, column, effect, reason });
            }
        }
        if errors.is_empty() { Ok(Policies::from_parts(set, infos)) } else { Err(errors) }
    }

    /// Whether there are no policies at all.
    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// How many policies there are.
    pub fn len(&self) -> usize {
        self.infos.len()
    }

    /// Every policy, in file then position order.
    pub fn infos(&self) -> &[PolicyInfo] {
        &self.infos
    }

    /// The policy with Cedar id `id`.
    pub fn info(&self, id: &PolicyId) -> Option<&PolicyInfo> {
        self.by_id.get(id).map(|&i| &self.infos[i])
    }

    /// The whole set, for validation.
    pub fn set(&self) -> &PolicySet {
        &self.set
    }

    /// The policies whose action scope can match `module.capability`:
    /// any action, the action itself, or one of its groups. Computed once
    /// per action, so a call evaluates only these.
    pub fn for_action(&self, module: &str, capability: &str, category: Category) -> Arc<PolicySet> {
        let id = crate::action_id(module, capability);
        if let Some(found) = self.index.read().unwrap_or_else(|e| e.into_inner()).get(&id) {
            return found.clone();
        }
        let groups = [module_group(module), category_group(category)];
        let names = |uid: &EntityUid| {
            uid.type_name() == &self.action && {
                let eid = uid.id().unescaped();
                eid == id || groups.iter().any(|g| g == eid)
            }
        };
        let mut subset = PolicySet::new();
        for policy in self.set.policies() {
            let applies = match policy.action_constraint() {
                cedar_policy::ActionConstraint::Any => true,
                cedar_policy::ActionConstraint::Eq(uid) => names(&uid),
                cedar_policy::ActionConstraint::In(uids) => uids.iter().any(names),
            };
            if applies {
                subset.add(policy.clone()).expect("ids are unique in the whole set");
            }
        }
        let subset = Arc::new(subset);
        self.index.write().unwrap_or_else(|e| e.into_inner()).insert(id, subset.clone());
        subset
    }

    /// The principal, member of its groups, and the action, member of its
    /// module and category groups as the schema declares them: without a
    /// schema at evaluation, `action in Action::"category:write"` holds
    /// only if the action entity says so. Kept per (principal, groups,
    /// action).
    fn entities(&self, who: Who<'_>, module: &str, category: Category, principal: &EntityUid, action: &EntityUid) -> Arc<Entities> {
        let key = EntityKey {
            principal: who.principal.to_string(),
            groups: who.groups.to_vec(),
            action: action.id().unescaped().to_string(),
            category,
        };
        if let Some(found) = self.entities.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return found.clone();
        }
        let parents: HashSet<EntityUid> = who.groups.iter().map(|g| EntityUid::from_type_name_and_id(self.group.clone(), EntityId::new(g))).collect();
        let groups: HashSet<EntityUid> = [module_group(module), category_group(category)]
            .into_iter()
            .map(|g| EntityUid::from_type_name_and_id(self.action.clone(), EntityId::new(g)))
            .collect();
        let entities = Entities::from_entities([Entity::new_no_attrs(principal.clone(), parents), Entity::new_no_attrs(action.clone(), groups)], None)
            .expect("two entities, no schema");
        let entities = Arc::new(entities);
        let mut cache = self.entities.write().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= ENTITY_CACHE {
            cache.clear();
        }
        cache.insert(key, entities.clone());
        entities
    }

    /// Evaluate the policies for one call (DESIGN §14). A policy that fails
    /// to evaluate, which Cedar skips, makes this a deny naming it; so does
    /// a number `decimal` cannot hold exactly.
    pub fn evaluate(&self, request: &Request<'_>) -> Evaluation {
        let applicable = self.for_action(request.module, request.capability, request.category);
        if applicable.is_empty() {
            return Evaluation::default();
        }
        let labels = |ids: &mut dyn Iterator<Item = &PolicyId>| -> Vec<String> {
            let mut out: Vec<String> = ids.filter_map(|id| self.info(id)).map(|p| p.label.clone()).collect();
            out.sort();
            out.dedup();
            out
        };
        // A number `decimal` cannot hold denies when a policy that applies
        // may read it (its text names the property); otherwise it is left
        // out of the context, which no policy reads.
        let input = match value::record(request.input, request.input_type, "", Inexacts::Refuse) {
            Ok(input) => input,
            Err(inexact) => {
                let readers: Vec<&PolicyId> = applicable.policies().filter(|p| p.to_string().contains(inexact.name.as_str())).map(|p| p.id()).collect();
                if !readers.is_empty() {
                    return Evaluation { effect: Some(Effect::Forbid), policies: labels(&mut readers.into_iter()), message: Some(inexact.message) };
                }
                value::record(request.input, request.input_type, "", Inexacts::LeaveOut).expect("inexact numbers are left out")
            }
        };
        let mut context = vec![
            ("input".to_string(), input),
            ("mode".to_string(), RestrictedExpression::new_string(request.mode.as_str().into())),
            ("category".to_string(), RestrictedExpression::new_string(request.category.as_str().into())),
        ];
        if let Some(upstream) = request.upstream {
            context.push(("upstream".to_string(), RestrictedExpression::new_string(upstream.into())));
        }
        let context = Context::from_pairs(context).expect("context attribute names are unique");
        let principal = EntityUid::from_type_name_and_id(self.user.clone(), EntityId::new(request.principal));
        let action = EntityUid::from_type_name_and_id(self.action.clone(), EntityId::new(crate::action_id(request.module, request.capability)));
        let entities = self.entities(Who { principal: request.principal, groups: request.groups }, request.module, request.category, &principal, &action);
        let resource = EntityUid::from_type_name_and_id(self.module.clone(), EntityId::new(request.module));
        let cedar_request = cedar_policy::Request::new(principal, action, resource, context, None).expect("no schema to check against");
        let response = self.authorizer.is_authorized(&cedar_request, &applicable, entities.as_ref());
        let diagnostics = response.diagnostics();
        let failed: Vec<&PolicyEvaluationError> = diagnostics.errors().map(|e| match e {
            AuthorizationError::PolicyEvaluationError(e) => e,
        }).collect();
        if let Some(first) = failed.first() {
            let policies = labels(&mut failed.iter().map(|e| e.policy_id()));
            let message = format!(
                "policy `{}` failed to evaluate, and policies fail closed: {}",
                self.info(first.policy_id()).map_or("?", |p| p.label.as_str()),
                message_of(first.inner())
            );
            return Evaluation { effect: Some(Effect::Forbid), policies, message: Some(message) };
        }
        let satisfied: Vec<&PolicyInfo> = diagnostics.reason().filter_map(|id| self.info(id)).collect();
        let Some(effect) = satisfied.iter().map(|p| p.effect).min() else { return Evaluation::default() };
        let deciding: Vec<&PolicyInfo> = satisfied.into_iter().filter(|p| p.effect == effect).collect();
        let policies = labels(&mut deciding.iter().map(|p| &p.id));
        let message = (effect == Effect::Forbid).then(|| {
            let first = deciding.iter().min_by_key(|p| &p.label).expect("a forbid decided");
            match &first.reason {
                Some(reason) => format!("denied by policy `{}`: {reason}", first.label),
                None => format!("denied by policy `{}`", first.label),
            }
        });
        Evaluation { effect: Some(effect), policies, message }
    }
}
