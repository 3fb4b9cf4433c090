//! The guest host (feature `quickjs`): a model-written JavaScript action runs
//! in QuickJS against the generated facades of the session's mounted modules.
//!
//! - The action is an ES module. It imports capability modules as
//!   `<specifier>/<module>`; the loader serves the generated facade of a
//!   mounted module and refuses everything else, naming what is mounted.
//! - Facades import `call` from the private bridge; the bridge is served only
//!   to facades, and the native dispatcher behind it only to the bridge.
//!   Dynamic `import()` is never resolved.
//! - Each bridge call is checked (module, export, argument shape) and then
//!   goes through [`Mounted::invoke`] — the one ladder. Host functions never
//!   reject: failures come back as data, and the bridge rethrows them as a
//!   JS `Error` with `.code`.
//! - Calls started together run together: each runs on its own thread while
//!   the engine waits; only time spent executing JavaScript counts against
//!   the CPU limit, so waiting on a person to approve costs nothing.
//! - Limits (CPU time, memory, stack, calls, output) each end the run with a
//!   named reason.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rquickjs::function::Rest;
use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::{Declarations, Exports, ModuleDef};
use rquickjs::{Context, Ctx, Function, JsLifetime, Module, Object, Persistent, Runtime, Value};
use serde::Serialize;

use crate::registry::Mounted;
use crate::run::Run;
use crate::testing::block_on;

/// Limits of one guest run. Each has a default and a ceiling; values above
/// the ceiling are clamped to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuestLimits {
    /// Time spent executing JavaScript (not waiting on calls or approvals).
    pub cpu_time: Duration,
    /// Guest heap.
    pub memory_bytes: usize,
    /// Guest call stack.
    pub stack_bytes: usize,
    /// Capability calls per run.
    pub max_calls: u32,
    /// The result's JSON plus every captured log line.
    pub max_output_bytes: usize,
}

impl GuestLimits {
    pub const DEFAULT: GuestLimits = GuestLimits {
        cpu_time: Duration::from_secs(30),
        memory_bytes: 64 * 1024 * 1024,
        stack_bytes: 512 * 1024,
        max_calls: 100,
        max_output_bytes: 100 * 1024,
    };
    pub const CEILING: GuestLimits = GuestLimits {
        cpu_time: Duration::from_secs(300),
        memory_bytes: 512 * 1024 * 1024,
        stack_bytes: 8 * 1024 * 1024,
        max_calls: 10_000,
        max_output_bytes: 10 * 1024 * 1024,
    };

    /// Each limit clamped to its ceiling (and to at least a usable minimum).
    pub fn clamped(self) -> GuestLimits {
        let c = GuestLimits::CEILING;
        GuestLimits {
            cpu_time: self.cpu_time.min(c.cpu_time).max(Duration::from_millis(1)),
            memory_bytes: self.memory_bytes.min(c.memory_bytes).max(1024 * 1024),
            stack_bytes: self.stack_bytes.min(c.stack_bytes).max(64 * 1024),
            max_calls: self.max_calls.min(c.max_calls),
            max_output_bytes: self.max_output_bytes.min(c.max_output_bytes),
        }
    }
}

impl Default for GuestLimits {
    fn default() -> GuestLimits {
        GuestLimits::DEFAULT
    }
}

/// Which limit ended a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    CpuTime,
    Memory,
    Stack,
    Calls,
    Output,
}

impl LimitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::CpuTime => "cpu_time",
            LimitKind::Memory => "memory",
            LimitKind::Stack => "stack",
            LimitKind::Calls => "calls",
            LimitKind::Output => "output",
        }
    }
}

/// How a guest run ended when it did not complete.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GuestError {
    /// The action threw (or its promise rejected) and did not catch it.
    Threw { message: String, code: Option<String> },
    /// A limit ended the run.
    Limit { limit: LimitKind, message: String },
    /// The action could not be loaded (syntax error, refused import).
    Load { message: String },
}

impl std::fmt::Display for GuestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuestError::Threw { message, code: Some(code) } => write!(f, "the action threw ({code}): {message}"),
            GuestError::Threw { message, code: None } => write!(f, "the action threw: {message}"),
            GuestError::Limit { limit, message } => write!(f, "limit `{}` reached: {message}", limit.as_str()),
            GuestError::Load { message } => write!(f, "the action could not be loaded: {message}"),
        }
    }
}

/// What a guest run produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuestOutcome {
    /// The action's value as JSON, when it completed.
    pub result: Option<serde_json::Value>,
    pub error: Option<GuestError>,
    /// Captured `console.*` lines.
    pub logs: Vec<String>,
    /// Time spent executing JavaScript.
    #[serde(skip)]
    pub cpu_time: Duration,
}

/// Runs guest actions against a session's mounted modules.
#[derive(Clone)]
pub struct Guest {
    mounted: Mounted,
    specifier: String,
    bridge: String,
    limits: GuestLimits,
}

const ENTRY: &str = "capspec:main";
const ACTION: &str = "capspec:action";
const HOST: &str = "capspec:host";

/// The bridge facades import. It turns the dispatcher's tagged replies back
/// into values or thrown `Error`s with `.code`.
const BRIDGE_SOURCE: &str = r#"import { dispatch } from "capspec:host";
export async function call(module, name, args) {
  const reply = await dispatch(module, name, args === undefined ? {} : args);
  if (reply.error !== undefined) {
    const err = new Error(reply.message);
    err.code = reply.error;
    err.capability = reply.capability;
    throw err;
  }
  return reply.result;
}
"#;

/// The entry module: runs the action's default export and reports its value.
const ENTRY_SOURCE: &str = r#"import * as action from "capspec:action";
const main = action.default;
const value = typeof main === "function" ? await main() : await main;
__capspec_finish(value);
"#;

impl Guest {
    /// A guest host for `mounted`, with the default import specifier
    /// (`@capspec/host`) and bridge (`capspec:bridge`) of `capspec.toml`.
    pub fn new(mounted: Mounted) -> Guest {
        Guest { mounted, specifier: "@capspec/host".into(), bridge: "capspec:bridge".into(), limits: GuestLimits::DEFAULT }
    }

    /// The `[generate] specifier` the facades were generated with.
    pub fn specifier(mut self, specifier: &str) -> Guest {
        self.specifier = specifier.to_string();
        self
    }

    /// The `[generate] bridge` the facades were generated with.
    pub fn bridge(mut self, bridge: &str) -> Guest {
        self.bridge = bridge.to_string();
        self
    }

    /// Limits, clamped to [`GuestLimits::CEILING`].
    pub fn limits(mut self, limits: GuestLimits) -> Guest {
        self.limits = limits.clamped();
        self
    }

    /// Run an action (ES module source) to completion under `run`.
    pub fn run(&self, run: &Run, source: &str) -> GuestOutcome {
        std::thread::scope(|scope| self.run_in(scope, run, source))
    }

    fn run_in<'scope, 'env>(&'env self, scope: &'scope std::thread::Scope<'scope, 'env>, run: &'env Run, source: &str) -> GuestOutcome {
        let state = Rc::new(RefCell::new(State { max_calls: self.limits.max_calls, mounted: Some(self.mounted.clone()), ..State::default() }));
        let fail = |error: GuestError, state: &Rc<RefCell<State>>| {
            let s = state.borrow();
            GuestOutcome { result: None, error: Some(error), logs: s.logs.clone(), cpu_time: s.cpu }
        };
        let rt = match Runtime::new() {
            Ok(rt) => rt,
            Err(e) => return fail(GuestError::Load { message: format!("cannot start QuickJS: {e}") }, &state),
        };
        rt.set_memory_limit(self.limits.memory_bytes);
        rt.set_max_stack_size(self.limits.stack_bytes);
        let limit = self.limits.cpu_time;
        let clock = state.clone();
        rt.set_interrupt_handler(Some(Box::new(move || {
            let mut s = clock.borrow_mut();
            let spent = s.cpu + s.slice_start.map_or(Duration::ZERO, |t| t.elapsed());
            if spent > limit {
                s.limit.get_or_insert(LimitKind::CpuTime);
                true
            } else {
                false
            }
        })));
        let modules: BTreeMap<String, &'static str> =
            self.mounted.modules().map(|m| (format!("{}/{}", self.specifier, m.name), m.facade)).collect();
        let policy = Rc::new(Policy { specifier: self.specifier.clone(), bridge: self.bridge.clone(), modules, action: source.to_string(), state: state.clone() });
        rt.set_loader(GuestResolver(policy.clone()), GuestLoader(policy.clone()));
        let context = match Context::full(&rt) {
            Ok(c) => c,
            Err(e) => return fail(GuestError::Load { message: format!("cannot start QuickJS: {e}") }, &state),
        };
        // Saved JS values must be released before the context and runtime
        // are freed; this guard is dropped first (locals drop in reverse).
        let _release = Release(state.clone());
        let installed: Result<(), String> = context.with(|ctx| {
            ctx.store_userdata(Shared(state.clone())).map_err(|e| e.to_string())?;
            self.install_globals(&ctx, &state).map_err(|e| e.to_string())?;
            state.borrow_mut().linking = true;
            let started = Instant::now();
            state.borrow_mut().slice_start = Some(started);
            let evaluated = Module::declare(ctx.clone(), ENTRY, ENTRY_SOURCE).and_then(|m| m.eval());
            {
                let mut s = state.borrow_mut();
                s.linking = false;
                s.slice_start = None;
                s.cpu += started.elapsed();
            }
            match evaluated {
                Ok((_, promise)) => {
                    state.borrow_mut().entry = Some(Persistent::save(&ctx, promise));
                    Ok(())
                }
                Err(e) => Err(describe_error(&ctx, e)),
            }
        });
        if let Err(message) = installed {
            if let Some(limit) = state.borrow().limit {
                return fail(limit_error(limit, &self.limits), &state);
            }
            return fail(classify(message, &self.limits), &state);
        }

        let (tx, rx) = mpsc::channel::<(usize, serde_json::Value)>();
        let mut outstanding = 0usize;
        loop {
            // 1. Run every queued JavaScript job, timing it.
            let started = Instant::now();
            state.borrow_mut().slice_start = Some(started);
            let mut job_error = None;
            loop {
                match rt.execute_pending_job() {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(e) => {
                        job_error = Some(e.0.with(|ctx| describe_error(&ctx, rquickjs::Error::Exception)));
                        break;
                    }
                }
            }
            {
                let mut s = state.borrow_mut();
                s.slice_start = None;
                s.cpu += started.elapsed();
            }
            if let Some(limit) = state.borrow().limit {
                return fail(limit_error(limit, &self.limits), &state);
            }
            if let Some(message) = job_error {
                return fail(classify(message, &self.limits), &state);
            }
            // 2. Start the calls the guest made. A lone call while nothing else
            //    is in flight runs right here (the engine has nothing to do
            //    until it returns); calls started together each get a thread,
            //    so their host work overlaps.
            let mut calls: Vec<PendingCall> = std::mem::take(&mut state.borrow_mut().to_start);
            if calls.len() == 1 && outstanding == 0 {
                let call = calls.pop().expect("one call");
                let reply = match block_on(self.mounted.invoke(run, &call.name, call.args)) {
                    Ok(result) => serde_json::json!({ "result": result }),
                    Err(e) => serde_json::to_value(e).expect("errors serialize"),
                };
                outstanding += 1;
                tx.send((call.id, reply)).expect("the receiver is alive");
            }
            for call in calls {
                outstanding += 1;
                let tx = tx.clone();
                let mounted = &self.mounted;
                scope.spawn(move || {
                    let reply = match block_on(mounted.invoke(run, &call.name, call.args)) {
                        Ok(result) => serde_json::json!({ "result": result }),
                        Err(e) => serde_json::to_value(e).expect("errors serialize"),
                    };
                    let _ = tx.send((call.id, reply));
                });
            }
            // 3. Done when the entry module has settled.
            let settled = context.with(|ctx| -> Option<GuestOutcome> {
                let s = state.borrow();
                let promise = s.entry.clone()?.restore(&ctx).ok()?;
                drop(s);
                match promise.state() {
                    rquickjs::promise::PromiseState::Pending => None,
                    rquickjs::promise::PromiseState::Resolved => {
                        let s = state.borrow();
                        Some(GuestOutcome { result: Some(s.result.clone().unwrap_or(serde_json::Value::Null)), error: None, logs: s.logs.clone(), cpu_time: s.cpu })
                    }
                    rquickjs::promise::PromiseState::Rejected => {
                        let reason: Value = promise.result::<Value>().and_then(|r| r.err()).map(|_| ctx.catch()).unwrap_or_else(|| Value::new_undefined(ctx.clone()));
                        let (message, code) = error_parts(&ctx, &reason);
                        let s = state.borrow();
                        Some(GuestOutcome { result: None, error: Some(GuestError::Threw { message, code }), logs: s.logs.clone(), cpu_time: s.cpu })
                    }
                }
            });
            if let Some(mut outcome) = settled {
                if let Some(limit) = state.borrow().limit {
                    return fail(limit_error(limit, &self.limits), &state);
                }
                if let Some(GuestError::Threw { message, .. }) = &outcome.error {
                    if let e @ GuestError::Limit { .. } = classify(message.clone(), &self.limits) {
                        outcome.error = Some(e);
                    }
                }
                let size = outcome.result.as_ref().map_or(0, |r| r.to_string().len()) + outcome.logs.iter().map(String::len).sum::<usize>();
                if size > self.limits.max_output_bytes {
                    return fail(limit_error(LimitKind::Output, &self.limits), &state);
                }
                return outcome;
            }
            if outstanding == 0 {
                return fail(
                    GuestError::Threw { message: "the action is waiting on a promise that nothing will settle".into(), code: None },
                    &state,
                );
            }
            // 4. Wait (not counted as CPU time) for a call to finish and resolve its promise.
            let Ok((id, reply)) = rx.recv() else { break };
            outstanding -= 1;
            let resolved = context.with(|ctx| -> rquickjs::Result<()> {
                let resolve = state.borrow_mut().pending.remove(&id);
                if let Some(resolve) = resolve {
                    let value = ctx.json_parse(reply.to_string())?;
                    resolve.restore(&ctx)?.call::<_, ()>((value,))?;
                }
                Ok(())
            });
            if resolved.is_err() {
                if let Some(limit) = state.borrow().limit {
                    return fail(limit_error(limit, &self.limits), &state);
                }
            }
        }
        fail(GuestError::Load { message: "the guest host lost its call channel".into() }, &state)
    }

    fn install_globals<'js>(&self, ctx: &Ctx<'js>, state: &Rc<RefCell<State>>) -> rquickjs::Result<()> {
        let globals = ctx.globals();
        let console = Object::new(ctx.clone())?;
        let max = self.limits.max_output_bytes;
        for level in ["log", "info", "warn", "error", "debug"] {
            let state = state.clone();
            let prefix = match level {
                "warn" => "warn: ",
                "error" => "error: ",
                _ => "",
            };
            let f = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                let line = args.0.iter().map(|v| format_value(&ctx, v)).collect::<Vec<_>>().join(" ");
                let mut s = state.borrow_mut();
                s.output += line.len();
                if s.output > max {
                    s.limit.get_or_insert(LimitKind::Output);
                } else {
                    s.logs.push(format!("{prefix}{line}"));
                }
            })?;
            console.set(level, f)?;
        }
        globals.set("console", console)?;
        let list: Vec<serde_json::Value> = self
            .mounted
            .capabilities()
            .into_iter()
            .map(|c| serde_json::json!({ "module": c.module, "name": c.name, "category": c.category, "summary": c.summary, "deferred": c.deferred }))
            .collect();
        let listing = serde_json::Value::Array(list).to_string();
        globals.set(
            "capabilities",
            Function::new(ctx.clone(), move |ctx: Ctx<'js>| ctx.json_parse(listing.clone()))?,
        )?;
        let finish_state = state.clone();
        globals.set(
            "__capspec_finish",
            Function::new(ctx.clone(), move |ctx: Ctx<'js>, value: Value<'js>| {
                let json = ctx.json_stringify(value).ok().flatten().map(|s| s.to_string().unwrap_or_default());
                let parsed = json.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or(serde_json::Value::Null);
                finish_state.borrow_mut().result = Some(parsed);
            })?,
        )?;
        Ok(())
    }
}

/// Releases the saved promise and resolve functions when a run ends.
struct Release(Rc<RefCell<State>>);

impl Drop for Release {
    fn drop(&mut self) {
        let mut s = self.0.borrow_mut();
        s.pending.clear();
        s.entry = None;
    }
}

/// A call the guest made, waiting to be started.
struct PendingCall {
    id: usize,
    name: String,
    args: serde_json::Value,
}

#[derive(Default)]
struct State {
    logs: Vec<String>,
    output: usize,
    result: Option<serde_json::Value>,
    limit: Option<LimitKind>,
    /// JavaScript execution time so far, and the start of the current slice.
    cpu: Duration,
    slice_start: Option<Instant>,
    /// True only while the entry module links: static imports resolve then,
    /// dynamic `import()` (which always runs later, as a job) never does.
    linking: bool,
    calls: u32,
    max_calls: u32,
    mounted: Option<Mounted>,
    next_id: usize,
    to_start: Vec<PendingCall>,
    pending: BTreeMap<usize, Persistent<Function<'static>>>,
    entry: Option<Persistent<rquickjs::Promise<'static>>>,
}

/// The state, reachable from native module definitions through the context.
#[derive(Clone)]
struct Shared(Rc<RefCell<State>>);

unsafe impl<'js> JsLifetime<'js> for Shared {
    type Changed<'to> = Shared;
}

/// What the loader may serve.
struct Policy {
    specifier: String,
    bridge: String,
    /// `<specifier>/<module>` → facade source, mounted modules only.
    modules: BTreeMap<String, &'static str>,
    action: String,
    state: Rc<RefCell<State>>,
}

impl Policy {
    fn refuse(&self, name: &str, why: &str) -> rquickjs::Error {
        let mounted = self.modules.keys().cloned().collect::<Vec<_>>().join(", ");
        rquickjs::Error::new_resolving_message(
            "guest action",
            name,
            format!("{why}; an action imports capability modules as \"{}/<module>\" (mounted: {})", self.specifier, if mounted.is_empty() { "none".into() } else { mounted }),
        )
    }
}

struct GuestResolver(Rc<Policy>);

impl Resolver for GuestResolver {
    fn resolve<'js>(&mut self, _ctx: &Ctx<'js>, base: &str, name: &str, _attributes: Option<ImportAttributes<'js>>) -> rquickjs::Result<String> {
        let p = &self.0;
        if !p.state.borrow().linking {
            return Err(p.refuse(name, "dynamic import() is not allowed in a guest action"));
        }
        let from_facade = p.modules.contains_key(base);
        match name {
            n if n == ACTION && base == ENTRY => Ok(n.into()),
            n if p.modules.contains_key(n) && (base == ACTION || from_facade) => Ok(n.into()),
            n if n == p.bridge && from_facade => Ok(n.into()),
            n if n == HOST && base == p.bridge => Ok(n.into()),
            n if n == p.bridge || n == HOST => Err(p.refuse(name, "the bridge is private to the generated facades")),
            n if n.starts_with(&format!("{}/", p.specifier)) => Err(p.refuse(name, "that module is not mounted in this session")),
            _ => Err(p.refuse(name, "only capability modules can be imported")),
        }
    }
}

struct GuestLoader(Rc<Policy>);

impl Loader for GuestLoader {
    fn load<'js>(&mut self, ctx: &Ctx<'js>, name: &str, _attributes: Option<ImportAttributes<'js>>) -> rquickjs::Result<Module<'js, rquickjs::module::Declared>> {
        let p = &self.0;
        if name == ACTION {
            return Module::declare(ctx.clone(), name, p.action.clone());
        }
        if name == p.bridge {
            return Module::declare(ctx.clone(), name, BRIDGE_SOURCE);
        }
        if name == HOST {
            return Module::declare_def::<HostModule, _>(ctx.clone(), name);
        }
        match p.modules.get(name) {
            Some(facade) => Module::declare(ctx.clone(), name, *facade),
            None => Err(p.refuse(name, "that module is not mounted in this session")),
        }
    }
}

/// `capspec:host`: the native dispatcher behind the bridge.
struct HostModule;

impl ModuleDef for HostModule {
    fn declare<'js>(decl: &Declarations<'js>) -> rquickjs::Result<()> {
        decl.declare("dispatch")?;
        Ok(())
    }

    fn evaluate<'js>(ctx: &Ctx<'js>, exports: &Exports<'js>) -> rquickjs::Result<()> {
        let shared = ctx.userdata::<Shared>().map(|s| s.clone()).ok_or(rquickjs::Error::Unknown)?;
        let dispatch = Function::new(ctx.clone(), move |ctx: Ctx<'js>, module: Value<'js>, name: Value<'js>, args: Value<'js>| dispatch(&ctx, &shared.0, module, name, args))?;
        exports.export("dispatch", dispatch)?;
        Ok(())
    }
}

/// Check module, export and argument shape, then queue the call. Never
/// rejects: refusals resolve to `{error, message, capability}`.
fn dispatch<'js>(ctx: &Ctx<'js>, state: &Rc<RefCell<State>>, module: Value<'js>, name: Value<'js>, args: Value<'js>) -> rquickjs::Result<rquickjs::Promise<'js>> {
    let (promise, resolve, _reject) = ctx.promise()?;
    let refuse = |code: &str, message: String, capability: String| -> rquickjs::Result<()> {
        let reply = serde_json::json!({ "error": code, "message": message, "capability": capability });
        resolve.call::<_, ()>((ctx.json_parse(reply.to_string())?,))
    };
    let module = module.as_string().and_then(|s| s.to_string().ok());
    let name = name.as_string().and_then(|s| s.to_string().ok());
    let (Some(module), Some(name)) = (module, name) else {
        refuse("invalid_arguments", "the bridge takes (module, name, args) strings".into(), String::new())?;
        return Ok(promise);
    };
    let capability = format!("{module}.{name}");
    if !(args.is_object() && !args.is_array() && !args.is_function()) {
        refuse("invalid_arguments", format!("`{capability}` takes one argument object, e.g. {name}({{ … }})"), capability)?;
        return Ok(promise);
    }
    let json = ctx.json_stringify(args)?.map(|s| s.to_string()).transpose()?.unwrap_or_else(|| "{}".into());
    let args: serde_json::Value = serde_json::from_str(&json).unwrap_or(serde_json::Value::Null);
    let spec = state.borrow().mounted.as_ref().and_then(|m| m.lookup(&name));
    match spec {
        Some(spec) if spec.module == module && spec.name == name => {}
        _ => {
            refuse("unknown_capability", format!("`{capability}` is not an export of a mounted module"), capability)?;
            return Ok(promise);
        }
    }
    let mut s = state.borrow_mut();
    s.calls += 1;
    let max_calls = s.max_calls;
    if s.calls > max_calls {
        s.limit.get_or_insert(LimitKind::Calls);
        drop(s);
        refuse("limit_exceeded", format!("the action made more than {max_calls} capability calls"), capability)?;
        return Ok(promise);
    }
    let id = s.next_id;
    s.next_id += 1;
    s.pending.insert(id, Persistent::save(ctx, resolve));
    s.to_start.push(PendingCall { id, name, args });
    Ok(promise)
}

fn limit_error(limit: LimitKind, limits: &GuestLimits) -> GuestError {
    let message = match limit {
        LimitKind::CpuTime => format!("the action ran JavaScript for more than {} ms", limits.cpu_time.as_millis()),
        LimitKind::Memory => format!("the action used more than {} bytes of guest memory", limits.memory_bytes),
        LimitKind::Stack => format!("the action recursed past the {}-byte stack", limits.stack_bytes),
        LimitKind::Calls => format!("the action made more than {} capability calls", limits.max_calls),
        LimitKind::Output => format!("the action's result and logs exceed {} bytes", limits.max_output_bytes),
    };
    GuestError::Limit { limit, message }
}

/// Engine errors that mean a limit, by QuickJS's messages.
fn classify(message: String, limits: &GuestLimits) -> GuestError {
    let lower = message.to_lowercase();
    if lower.contains("out of memory") {
        limit_error(LimitKind::Memory, limits)
    } else if lower.contains("stack overflow") || lower.contains("maximum call stack") {
        limit_error(LimitKind::Stack, limits)
    } else if lower.contains("interrupted") {
        limit_error(LimitKind::CpuTime, limits)
    } else if lower.contains("resolving") || lower.contains("import") || lower.contains("syntax") || lower.contains("error loading") {
        GuestError::Load { message }
    } else {
        GuestError::Threw { message, code: None }
    }
}

fn describe_error(ctx: &Ctx<'_>, err: rquickjs::Error) -> String {
    if let rquickjs::Error::Exception = err {
        let value = ctx.catch();
        let (message, _) = error_parts(ctx, &value);
        message
    } else {
        err.to_string()
    }
}

/// `message` and `.code` of a thrown value.
fn error_parts<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> (String, Option<String>) {
    if let Some(obj) = value.as_object() {
        let message: Option<String> = obj.get("message").ok();
        let code: Option<String> = obj.get("code").ok();
        if let Some(message) = message {
            return (message, code);
        }
    }
    (format_value(ctx, value), None)
}

/// `console.log` formatting: strings as they are, everything else as JSON
/// (or `String(v)` when it has no JSON form).
fn format_value<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> String {
    if let Some(s) = value.as_string() {
        return s.to_string().unwrap_or_default();
    }
    if value.is_undefined() {
        return "undefined".into();
    }
    if let Some(e) = value.as_exception() {
        return e.message().unwrap_or_else(|| "Error".into());
    }
    if value.is_function() {
        return "[function]".into();
    }
    match ctx.json_stringify(value.clone()) {
        Ok(Some(s)) => s.to_string().unwrap_or_default(),
        _ => "[value]".into(),
    }
}
