//! The registry and the one call path: lookup → argument coercion → schema
//! validation → gate → impl → receipt. Every entrance (Rust, a JSON tool
//! call, the guest dispatcher) goes through [`Mounted::invoke`].

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::error::{CallError, ErrorCode};
use crate::gate::{Approval, ApprovalRequest, BoxFuture};
use crate::policy::Step;
use crate::receipt::{GateDecision, Receipt, Status};
use crate::run::Run;
use crate::validate::Validator;
use crate::code_first::CodeFirst;
pub use crate::registration::{ImplFn, Registration, RegistryError, registrations};
pub use crate::forward::{Forward, Forwarded};
use crate::audit::{Decided, Reason};
use crate::ladder::{CatchUnwind, Journaled, Reached, arguments, fill_message, panic_text};
use crate::spec::{Module, Spec};
use crate::hidden::CapabilityInfo;

struct Entry {
    spec: &'static Spec,
    /// The output schema, parsed once, when it marks binary content.
    content: Option<Value>,
    call: Call,
    validator: Validator,
    qualified: String,
    module: usize,
}

impl Entry {
    /// The upstream server the capability is forwarded to (§12), if any.
    fn upstream(&self) -> Option<&str> {
        match &self.call {
            Call::Forward(forward) => Some(forward.server()),
            _ => None,
        }
    }

    /// What the audit log is told of a call of this capability.
    fn audited<'a>(&'a self, upstream: Option<&'a str>, decided: Decided, policies: &'a [String], args: Option<&'a Value>, sent: Option<&'a Value>) -> crate::audit::Call<'a> {
        crate::audit::Call { capability: &self.qualified, category: Some(self.spec.category.as_str()), upstream, decided, reason: None, policies, args, sent }
    }
}

/// What runs at the ladder's last step.
#[derive(Clone)]
enum Call {
    /// A registered `#[capability]` fn.
    Impl(ImplFn),
    /// An implementation the host hands over at build time (an upstream
    /// MCP server's tool).
    Forward(Arc<dyn Forward>),
    /// The built-in `capspec.tool_search`, over the calling session.
    ToolSearch,
}

/// What one name names, in lookup order: a qualified `module.name` (or
/// `module.alias`), a wire name, and the entries whose bare name or alias
/// it is (in module order).
#[derive(Default)]
struct Names {
    qualified: Option<usize>,
    wire: Option<usize>,
    bare: Vec<usize>,
}

/// Every capability of the host's generated modules, each with its impl and
/// its compiled input validator. Build it once per process; mount a subset
/// of modules per session.
pub struct Registry {
    modules: Vec<Module>,
    entries: Vec<Entry>,
    /// Every name a call may use → what it names (one hash per lookup).
    names: HashMap<String, Names>,
    /// Every capability's words, for [`Mounted::search`].
    search: crate::search::Index,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry").field("modules", &self.modules.iter().map(|m| m.name).collect::<Vec<_>>()).finish()
    }
}

impl Registry {
    /// Build from the generated module tables and every `#[capability]`
    /// registration linked into the binary. A spec without an impl, an impl
    /// without a spec, or two impls of one spec is an error here, not at the
    /// first call.
    ///
    /// Every `#[derive(Capability)]` spec of a served module must be in the
    /// generated tables with the same category and description; otherwise
    /// the bindings are older than the code and the registry refuses to
    /// build (run `cargo xtask sync`).
    pub fn new(modules: &[Module]) -> Result<Arc<Registry>, RegistryError> {
        Registry::build(modules, registrations(), crate::code_first::code_first_specs())
    }

    /// [`Registry::new`], plus the capabilities `forwards` implement: the
    /// upstream modules a host mounts beside its own
    /// ([`Upstreams::forwards`](crate::upstream::Upstreams::forwards)).
    pub fn with_upstreams(modules: &[Module], forwards: Vec<Forwarded>) -> Result<Arc<Registry>, RegistryError> {
        Registry::with_forwards(modules, registrations(), crate::code_first::code_first_specs(), forwards)
    }

    /// Build from explicit registrations (tests, or hosts that register by
    /// hand); code-first specs are not consulted.
    pub fn with_impls<'a>(modules: &[Module], impls: impl IntoIterator<Item = &'a Registration>) -> Result<Arc<Registry>, RegistryError> {
        Registry::build(modules, impls, std::iter::empty())
    }

    /// Build from explicit registrations and code-first specs.
    pub fn build<'a>(
        modules: &[Module],
        impls: impl IntoIterator<Item = &'a Registration>,
        code_first: impl IntoIterator<Item = &'a CodeFirst>,
    ) -> Result<Arc<Registry>, RegistryError> {
        Registry::with_forwards(modules, impls, code_first, Vec::new())
    }

    /// Build from registrations, code-first specs and `forwards`: the
    /// capabilities other implementations serve (an upstream module's
    /// tools). Every spec still needs exactly one implementation.
    pub fn with_forwards<'a>(
        modules: &[Module],
        impls: impl IntoIterator<Item = &'a Registration>,
        code_first: impl IntoIterator<Item = &'a CodeFirst>,
        forwards: Vec<Forwarded>,
    ) -> Result<Arc<Registry>, RegistryError> {
        let mut problems = Vec::new();
        let mut forwarded: HashMap<(&str, &str), Arc<dyn Forward>> = HashMap::new();
        for f in forwards {
            if forwarded.insert((f.module, f.name), f.forward).is_some() {
                problems.push(format!("`{}.{}` is forwarded twice", f.module, f.name));
            }
        }
        let mut by_key: HashMap<(&str, &str), &Registration> = HashMap::new();
        let known: std::collections::HashSet<(&str, &str)> =
            modules.iter().flat_map(|m| m.specs.iter().map(|s| (s.module, s.name))).collect();
        let mut impls: Vec<&Registration> = impls.into_iter().collect();
        impls.sort_by_key(|r| (r.module, r.name, r.file, r.line));
        for reg in impls {
            let key = (reg.module, reg.name);
            if !known.contains(&key) {
                // An impl for a module this registry does not serve belongs
                // to another registry in the same binary; an impl for a
                // served module with an unknown name is a real error.
                if modules.iter().any(|m| m.name == reg.module) {
                    problems.push(format!("{}:{}: impl of `{}.{}`, which no spec declares", reg.file, reg.line, key.0, key.1));
                }
                continue;
            }
            if let Some(first) = by_key.insert(key, reg) {
                problems.push(format!(
                    "`{}.{}` has two impls: {}:{} and {}:{}",
                    key.0, key.1, first.file, first.line, reg.file, reg.line
                ));
            }
        }
        problems.extend(crate::code_first::problems(modules, code_first));
        let mut entries = Vec::new();
        let mut names: HashMap<String, Names> = HashMap::new();
        // Parsed once: for the validator here, and for the search index.
        let mut schemas: Vec<(&'static Spec, Value)> = Vec::new();
        for (module_index, module) in modules.iter().enumerate() {
            for spec in module.specs {
                let call = match (by_key.get(&(spec.module, spec.name)), forwarded.remove(&(spec.module, spec.name))) {
                    (Some(reg), None) => Call::Impl(reg.call),
                    (None, Some(forward)) => Call::Forward(forward),
                    (Some(reg), Some(forward)) => {
                        problems.push(format!("`{}.{}` has an impl at {}:{} and is forwarded to `{}`", spec.module, spec.name, reg.file, reg.line, forward.server()));
                        continue;
                    }
                    (None, None) => {
                        problems.push(format!("`{}.{}` has no impl; add a #[capability({}::{})] fn", spec.module, spec.name, spec.module, spec.name));
                        continue;
                    }
                };
                if let Some(reg) = by_key.get(&(spec.module, spec.name)).filter(|r| r.fingerprint.is_some_and(|f| f != spec.fingerprint)) {
                    problems.push(format!(
                        "{}:{}: impl of `{}.{}` was compiled against another version of its spec; rebuild after `cargo xtask sync`",
                        reg.file, reg.line, spec.module, spec.name
                    ));
                }
                let schema: Value = match serde_json::from_str(spec.input_schema) {
                    Ok(v) => v,
                    Err(e) => {
                        problems.push(format!("`{}.{}`: input schema is not JSON: {e}", spec.module, spec.name));
                        continue;
                    }
                };
                let validator = match Validator::compile(&schema) {
                    Ok(v) => v,
                    Err(e) => {
                        problems.push(format!("`{}.{}`: {}", spec.module, spec.name, e.0));
                        continue;
                    }
                };
                let at = entries.len();
                for name in std::iter::once(spec.name).chain(spec.aliases.iter().copied()) {
                    if names.entry(format!("{}.{name}", spec.module)).or_default().qualified.replace(at).is_some() {
                        problems.push(format!("`{name}` names two capabilities of module `{}`", spec.module));
                    }
                    names.entry(name.to_string()).or_default().bare.push(at);
                }
                if let Some(other) = names.entry(spec.wire_name.to_string()).or_default().wire.replace(at) {
                    let other: &Entry = &entries[other];
                    problems.push(format!("`{}.{}` and `{}` have one wire name, `{}`", spec.module, spec.name, other.qualified, spec.wire_name));
                }
                schemas.push((spec, schema));
                entries.push(Entry { spec, content: crate::content::content_schema(spec), call, validator, qualified: format!("{}.{}", spec.module, spec.name), module: module_index });
            }
        }
        let mut stray: Vec<String> = forwarded.keys().map(|(m, n)| format!("`{m}.{n}` is forwarded, but no mounted spec declares it")).collect();
        stray.sort();
        problems.extend(stray);
        // The built-ins, after every module; their "module" index is one
        // past the last and always mounted.
        if modules.iter().any(|m| m.name == crate::builtin::MODULE) {
            problems.push(format!("module name `{}` is reserved for capspec's built-in capabilities", crate::builtin::MODULE));
        }
        let builtin = &crate::builtin::TOOL_SEARCH;
        let at = entries.len();
        names.entry(format!("{}.{}", builtin.module, builtin.name)).or_default().qualified = Some(at);
        names.entry(builtin.name.to_string()).or_default().bare.push(at);
        if let Some(other) = names.entry(builtin.wire_name.to_string()).or_default().wire.replace(at) {
            problems.push(format!("`{}` has the wire name `{}`, which the built-in `capspec.tool_search` takes; rename it", entries[other].qualified, builtin.wire_name));
        }
        let validator = Validator::compile(&serde_json::from_str(builtin.input_schema).expect("the built-in schema is JSON")).expect("the built-in schema compiles");
        entries.push(Entry { spec: builtin, content: None, call: Call::ToolSearch, validator, qualified: "capspec.tool_search".into(), module: modules.len() });
        if problems.is_empty() {
            let search = crate::search::Index::with_schemas(schemas.iter().map(|(spec, schema)| (*spec, schema)));
            Ok(Arc::new(Registry { modules: modules.to_vec(), entries, names, search }))
        } else {
            Err(RegistryError { problems })
        }
    }

    /// The mounted modules.
    pub fn modules(&self) -> &[Module] {
        &self.modules
    }

    /// Mount some modules for a session. Unknown names are an error.
    pub fn mount(self: &Arc<Self>, names: &[&str]) -> Result<Mounted, RegistryError> {
        let mut mounted = vec![false; self.modules.len()];
        let mut problems = Vec::new();
        for name in names {
            match self.modules.iter().position(|m| m.name == *name) {
                Some(i) => mounted[i] = true,
                None => problems.push(format!(
                    "no module `{name}`; modules: {}",
                    self.modules.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
                )),
            }
        }
        if !problems.is_empty() {
            return Err(RegistryError { problems });
        }
        Ok(self.session(mounted))
    }

    /// Mount every module.
    pub fn mount_all(self: &Arc<Self>) -> Mounted {
        self.session(vec![true; self.modules.len()])
    }

    /// A session over the modules `mounted` marks, and always the built-ins
    /// (their entries' module index is one past the last module).
    fn session(self: &Arc<Self>, mut mounted: Vec<bool>) -> Mounted {
        mounted.push(true);
        Mounted { registry: self.clone(), mounted }
    }
}

/// The modules one session mounted, and the only way to call them.
#[derive(Clone)]
pub struct Mounted {
    registry: Arc<Registry>,
    mounted: Vec<bool>,
}

impl fmt::Debug for Mounted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mounted").field("modules", &self.module_names()).finish()
    }
}

impl Mounted {
    /// The mounted modules' names.
    pub fn module_names(&self) -> Vec<&'static str> {
        self.registry.modules.iter().zip(&self.mounted).filter(|(_, m)| **m).map(|(m, _)| m.name).collect()
    }

    /// The mounted modules' tables (facade source, catalog section, specs).
    pub fn modules(&self) -> impl Iterator<Item = &Module> {
        self.registry.modules.iter().zip(&self.mounted).filter(|(_, m)| **m).map(|(m, _)| m)
    }

    /// The prompt catalog of the mounted modules only.
    pub fn catalog(&self) -> String {
        self.modules().map(|m| m.catalog).collect::<Vec<_>>().join("\n")
    }

    /// Every mounted capability, by module then name.
    pub fn capabilities(&self) -> Vec<CapabilityInfo> {
        self.modules()
            .flat_map(|m| m.specs.iter())
            .map(|s| CapabilityInfo { module: s.module, name: s.name, category: s.category, summary: s.summary, deferred: s.deferred })
            .collect()
    }

    /// The mounted capabilities that best match a natural-language query,
    /// deferred ones included, best first (BM25 over each capability's name
    /// words, description, and parameter names and descriptions).
    pub fn search(&self, query: &str, limit: usize) -> Vec<crate::search::SearchHit> {
        self.search_where(query, limit, |_| true)
    }

    /// [`Mounted::search`] among the mounted capabilities `include` accepts.
    pub fn search_where(&self, query: &str, limit: usize, include: impl Fn(&Spec) -> bool) -> Vec<crate::search::SearchHit> {
        let mounted = self.module_names();
        self.registry.search.search(query, limit, |spec| mounted.contains(&spec.module) && include(spec))
    }

    /// The spec a name resolves to among the mounted modules: `module.name`
    /// (or `module.alias`), the wire name, or a bare name or alias that
    /// exactly one mounted module has. `None` when unknown or ambiguous;
    /// [`Mounted::invoke`] says which.
    pub fn lookup(&self, name: &str) -> Option<&'static Spec> {
        self.entry(name, None).ok().map(|e| e.spec)
    }

    /// The upstream server a mounted capability is forwarded to (§12), or
    /// `None` for one implemented here (or unknown).
    pub fn upstream_of(&self, name: &str) -> Option<&str> {
        self.entry(name, None).ok()?.upstream()
    }

    /// Whether a call of `name` may ask its caller to open a link ([`Forward::may_ask_link`]).
    pub fn may_ask_link(&self, name: &str) -> bool {
        self.entry(name, None).is_ok_and(|e| matches!(&e.call, Call::Forward(forward) if forward.may_ask_link()))
    }

    fn entry(&self, name: &str, hidden: Option<&crate::hidden::Hidden>) -> Result<&Entry, CallError> {
        let registry = &self.registry;
        let mounted = |i: &usize| self.mounted[registry.entries[*i].module] && !hidden.is_some_and(|h| h.contains(&registry.entries[*i].qualified));
        let named = registry.names.get(name);
        if let Some(i) = named.and_then(|n| n.qualified.filter(mounted).or(n.wire.filter(mounted))) {
            return Ok(&registry.entries[i]);
        }
        let mut candidates = named.map(|n| n.bare.as_slice()).unwrap_or_default().iter().copied().filter(mounted);
        let (first, second) = (candidates.next(), candidates.next());
        match (first, second) {
            (Some(one), None) => Ok(&registry.entries[one]),
            (None, _) => Err(CallError::new(
                ErrorCode::UnknownCapability,
                // A module none of whose capabilities the caller is shown is not named.
                format!("no capability `{name}` is mounted (mounted modules: {})", self.modules().filter(|m| !hidden.is_some_and(|h| m.specs.iter().all(|s| h.hides(s)))).map(|m| m.name).collect::<Vec<_>>().join(", ")),
                name,
            )),
            (Some(_), Some(_)) => {
                let many = named.map(|n| n.bare.as_slice()).unwrap_or_default().iter().filter(|i| mounted(i));
                let list = many.map(|i| format!("`{}`", registry.entries[*i].qualified)).collect::<Vec<_>>().join(", ");
                Err(CallError::new(ErrorCode::AmbiguousCapability, format!("`{name}` is a capability of more than one mounted module: {list}; call it by its qualified name"), name))
            }
        }
    }

    /// Call a capability by name or alias: the one ladder. Every outcome is
    /// recorded as a receipt on `run` and as its `execute_tool` span
    /// (`capspec::trace`): both come from here.
    pub async fn invoke(&self, run: &Run, name: &str, args: Value) -> Result<Value, CallError> {
        self.call(run, name, args, None).await.0
    }

    /// [`Mounted::invoke`] for the guest's call at `position` (the order the
    /// guest issued its calls, which a replayed action's journal is keyed
    /// by), with binary content as guests and provider tool loops see it
    /// (`{mimeType, data}`, `capspec::content`).
    pub(crate) async fn invoke_presented(&self, run: &Run, name: &str, args: Value, position: Option<u32>) -> Result<Value, CallError> {
        match self.call(run, name, args, position).await {
            (Ok(value), Some(Entry { content: Some(schema), .. })) => Ok(crate::content::present(schema, value)),
            (result, _) => result,
        }
    }

    async fn call<'a>(&'a self, run: &Run, name: &'a str, args: Value, position: Option<u32>) -> (Result<Value, CallError>, Option<&'a Entry>) {
        let start = Instant::now();
        let mut waited = Duration::ZERO;
        let span = crate::trace::call(run);
        let replay = position.and_then(|at| run.replay().map(|replay| (replay, at)));
        // The arguments as the client sent them, kept for the audit record
        // (found again by what the caller typed, DESIGN §15).
        let sent = run.caller().map(|_| args.clone());
        let ladder = self.ladder(run, name, (args, sent.as_ref()), &mut waited, &span, replay);
        // With no subscriber listening the span is disabled: skip the
        // instrumentation wrapper (its enter/exit on every poll) altogether.
        let reached = if span.is_disabled() { ladder.await } else { tracing::Instrument::instrument(ladder, span.clone()).await };
        let Reached { capability, entry, replayed, result, journal, policy, decided, reason, audited } = reached;
        // The receipt's and the span's word, from the one mapping.
        let decision = replayed.or(decided.gate(reason));
        let upstream = entry.and_then(|e| e.upstream().map(str::to_string));
        let status = Status::of(&result);
        crate::trace::finished(&span, decision, reason, status, result.as_ref().err(), &policy);
        let mut duration = start.elapsed().saturating_sub(waited);
        if let Some(caller) = run.caller() {
            let call = crate::audit::Call { capability, category: entry.map(|e| e.spec.category.as_str()), upstream: upstream.as_deref(), decided, reason, policies: &policy, args: None, sent: sent.as_ref() };
            match audited {
                Some(id) => crate::audit::outcome(caller, id, &call, &result, duration).await,
                None if !decided.runs() => crate::audit::refused(caller, &call).await,
                None => {}
            }
        }
        match (journal, replay) {
            // Suspended on an ask: no receipt until the call is answered.
            (Journaled::Waiting, _) => return (result, entry),
            // Answered from the journal: the receipt of the call as it ran.
            (Journaled::Replayed(micros), _) => duration = Duration::from_micros(micros),
            (Journaled::Record(args), Some((replay, at))) => {
                let made = crate::replay::JournalEntry { capability: capability.to_string(), args, decision: decision.unwrap_or(GateDecision::Auto), result: result.clone(), micros: 0, upstream: upstream.clone() };
                replay.record(at, made, duration);
            }
            _ => {}
        }
        run.record(Receipt { principal: run.principal().shared_id(), capability: capability.to_string(), decision, reason, status, duration, upstream, policy });
        (result, entry)
    }

    async fn ladder<'a>(
        &'a self,
        run: &Run,
        name: &'a str,
        // The arguments, and (under an audit) a copy of them as sent.
        (args, sent): (Value, Option<&Value>),
        waited: &mut Duration,
        span: &tracing::Span,
        replay: Option<(&crate::replay::Replay, u32)>,
    ) -> Reached<'a, Entry> {
        // 1. lookup
        let entry = match self.entry(name, run.hidden()) {
            Ok(entry) => entry,
            Err(err) => {
                crate::trace::resolved(span, None, name);
                return Reached::refused(name, None, err);
            }
        };
        crate::trace::resolved(span, Some(entry.spec), name);
        let qualified = entry.qualified.as_str();
        let refuse = |code: ErrorCode, message: String| CallError::new(code, message, entry.qualified.clone());
        if !run.take_call() {
            let err = refuse(ErrorCode::LimitExceeded, format!("the run's limit of {} calls is used up", run.limits().max_calls));
            return Reached::refused(qualified, Some(entry), err);
        }
        // 2. coercion, 3. validation
        let args = match arguments(&entry.qualified, &entry.validator, args) {
            Ok(a) => a,
            Err(message) => return Reached::refused(qualified, Some(entry), refuse(ErrorCode::InvalidArguments, message)),
        };
        // A resumed action: a call made before is answered from its
        // journal; another call at its position ends the action.
        let mut journal = Journaled::Not;
        if let Some((replay, at)) = replay {
            match replay.check(at, qualified, &args) {
                crate::replay::Check::Fresh => journal = Journaled::Record(crate::replay::args_digest(&args)),
                crate::replay::Check::Replayed(made) => {
                    let result = made.result.map_err(|e| CallError { capability: entry.qualified.clone(), ..e });
                    return Reached { capability: qualified, entry: Some(entry), replayed: Some(made.decision), result, journal: Journaled::Replayed(made.micros), policy: Vec::new(), decided: Decided::Replayed, reason: None, audited: None };
                }
                crate::replay::Check::Diverged(err) => return Reached::refused(qualified, Some(entry), err),
            }
        }
        // 4. the caller's scopes (DESIGN §13) and policies (§14), then the gate
        let mut policy = Vec::new();
        let upstream = entry.upstream();
        let refused = |decided: Decided, reason: Option<Reason>, result: CallError, journal: Journaled, policy: Vec<String>| Reached {
            capability: qualified,
            entry: Some(entry),
            replayed: None,
            result: Err(result),
            journal,
            policy,
            decided,
            reason,
            audited: None,
        };
        let decided = match crate::policy::step(run, entry.spec, upstream, &args, &mut policy) {
            // The fast path: no approver, no lock.
            Step::Allow => Decided::Allowed,
            Step::Deny(message) => {
                let decided = if run.principal().scopes().allows(entry.spec.category) { Decided::DeniedPolicy } else { Decided::DeniedScope };
                return refused(decided, None, refuse(ErrorCode::PermissionDenied, message), journal, policy);
            }
            Step::Block => {
                let err = refuse(
                    ErrorCode::BlockedInPlanMode,
                    format!("plan mode allows only read capabilities; `{}` is {}", entry.qualified, entry.spec.category),
                );
                return refused(Decided::DeniedGate, Some(Reason::PlanMode), err, journal, policy);
            }
            Step::Ask { always: false } if run.gate().session().contains(&entry.qualified) => Decided::Approved,
            Step::Ask { .. } => {
                let request = ApprovalRequest {
                    principal: run.principal().clone(),
                    capability: entry.qualified.clone(),
                    category: entry.spec.category,
                    mode: run.mode(),
                    message: entry.spec.user_message.map(|m| fill_message(m, &args)),
                    args: args.clone(),
                };
                let answer = match replay.map(|(replay, at)| replay.ask(at, &request)) {
                    Some(crate::replay::Ask::Suspend) => {
                        let err = refuse(ErrorCode::PermissionDenied, "the action is suspended until the client answers this call's approval".into());
                        return refused(Decided::Waiting, None, err, Journaled::Waiting, policy);
                    }
                    Some(crate::replay::Ask::Answer(answer)) => answer,
                    None => {
                        let asked = Instant::now();
                        let answer = run.gate().approver().approve(&request).await;
                        *waited += asked.elapsed();
                        run.add_approval_wait(asked.elapsed());
                        answer
                    }
                };
                match answer {
                    Approval::AllowOnce => Decided::Approved,
                    Approval::AllowForSession => {
                        run.gate().session().insert(&entry.qualified);
                        Decided::Approved
                    }
                    Approval::Deny(message) => return refused(Decided::Declined, None, refuse(ErrorCode::PermissionDenied, message), journal, policy),
                    Approval::CannotAsk(message) => return refused(Decided::DeniedGate, Some(Reason::CannotAsk), refuse(ErrorCode::PermissionDenied, message), journal, policy),
                    Approval::OtherCall(message) => return refused(Decided::DeniedGate, Some(Reason::OtherCall), refuse(ErrorCode::PermissionDenied, message), journal, policy),
                    // Asked in a later round: nothing is decided yet, so
                    // nothing is recorded (the retry's record is the decision).
                    Approval::Pending(message) => return refused(Decided::Waiting, None, refuse(ErrorCode::PermissionDenied, message), Journaled::Waiting, policy),
                }
            }
        };
        // The decision record is stored before the impl runs (DESIGN §15).
        let audited = match crate::audit::before(run.caller(), &entry.audited(upstream, decided, &policy, Some(&args), sent)).await {
            Ok(id) => id,
            Err(why) => {
                let err = refuse(ErrorCode::AuditUnavailable, format!("the audit log could not record this call, so it did not run: {why}"));
                return Reached { capability: qualified, entry: Some(entry), replayed: None, result: Err(err), journal, policy, decided, reason: None, audited: None };
            }
        };
        // 5. impl (a panic is contained and reported as `failed`)
        let call: BoxFuture<'_, Result<Value, CallError>> = match &entry.call {
            Call::Impl(call) => {
                crate::coverage::reached(qualified, entry.spec.fingerprint);
                let call = call(run, args);
                Box::pin(async move {
                    call.await.map_err(|e| CallError { data: e.data.map(Box::new), jsonrpc_code: e.jsonrpc_code, ..CallError::new(ErrorCode::Failed, e.message, String::new()) })
                })
            }
            Call::Forward(forward) => forward.call(run, args),
            Call::ToolSearch => Box::pin(std::future::ready(Ok(crate::builtin::tool_search(self, &args, run.hidden())))),
        };
        let result = match (CatchUnwind(AssertUnwindSafe(call))).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(CallError { data: e.data, jsonrpc_code: e.jsonrpc_code, ..refuse(e.code, e.message) }),
            Err(panic) => Err(refuse(ErrorCode::Failed, format!("the implementation panicked: {}", panic_text(&panic)))),
        };
        // An action resumed by replay whose call needs its caller to open a
        // link first (a `per-user` upstream): suspended on that call, which
        // the retry makes again.
        // A link the person declined ends the call instead (DESIGN §12).
        let mut result = result;
        if let (Some((replay, at)), Err(e), Journaled::Record(digest)) = (replay, &result, &journal) {
            if let Some(link) = run.get::<Arc<crate::gate::Links>>().filter(|_| e.code == ErrorCode::UpstreamUnauthorized).and_then(|links| links.take()) {
                if replay.link_declined() {
                    result = Err(refuse(ErrorCode::UpstreamUnauthorized, crate::gate::declined_link(run.principal().id(), upstream.unwrap_or(qualified))));
                } else {
                    replay.suspend_for_link(at, qualified, digest, link);
                    return Reached { capability: qualified, entry: Some(entry), replayed: None, result, journal: Journaled::Waiting, policy, decided: Decided::Waiting, reason: None, audited };
                }
            }
        }
        Reached { capability: qualified, entry: Some(entry), replayed: None, result, journal, policy, decided, reason: None, audited }
    }
}
