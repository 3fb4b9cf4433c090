//! The event loop of one guest run: start QuickJS under the limits, run
//! JavaScript jobs (metering only their time), start the capability calls
//! the guest made — inline when alone, on scoped threads when started
//! together — and resolve their promises as they finish.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rquickjs::{Context, Module, Persistent, Runtime, Value};

use super::globals::{self, describe_error, error_parts, is_range_error};
use super::limits::{EngineError, Metered, limit_error};
use super::loader::{self, GuestLoader, GuestResolver, Policy};
use super::outcome::{GuestError, GuestOutcome, LimitKind};
use super::settings::Settings;
use super::state::{PendingCall, Release, Shared, State};
use crate::registry::Mounted;
use crate::run::Run;
use crate::testing::block_on;

/// The engine of one run. Fields drop in order: saved JS values are
/// released before the context and the runtime are freed.
struct Engine {
    _release: Release,
    context: Context,
    rt: Runtime,
}

/// Run an action to completion: the loop of jobs → calls → settled? → wait.
pub(super) fn run<'scope, 'env>(guest: &'env Settings, scope: &'scope std::thread::Scope<'scope, 'env>, run: &'env Run, source: &str) -> GuestOutcome {
    let state = Rc::new(RefCell::new(State { max_calls: guest.limits.max_calls, mounted: Some(guest.mounted.clone()), ..State::default() }));
    let fail = |error: GuestError| {
        let s = state.borrow();
        GuestOutcome { result: None, error: Some(error), logs: s.logs.clone(), cpu_time: s.cpu }
    };
    let engine = match start(guest, &state, source, run.replay().map(|r| (r.clock_ms(), r.seed())), run.hidden()) {
        Ok(engine) => engine,
        Err(error) => return fail(error),
    };
    let (tx, rx) = mpsc::channel::<(usize, serde_json::Value)>();
    let mut outstanding = 0usize;
    // A replayed action (DESIGN §10) resolves its calls in the order it
    // issued them, so that what it does next never depends on which call
    // happened to finish first.
    let replay = run.replay();
    let mut order = replay.map(|_| Order::default());
    let diverged = |replay: Option<&crate::replay::Replay>| replay.and_then(|r| r.diverged()).map(|e| fail(GuestError::Diverged { message: e.message }));
    loop {
        // 1. Run every queued JavaScript job, timing it.
        let job_error = run_jobs(&engine.rt, &state);
        if let Some(limit) = state.borrow().limit {
            return fail(limit_error(limit, &guest.limits));
        }
        if let Some(error) = job_error {
            let hits = state.borrow().hits.clone();
            return fail(hits.classify(&error, &guest.limits).unwrap_or(GuestError::Threw { message: error.message, code: None }));
        }
        // 2. Start the calls the guest made. A lone call while nothing else
        //    is in flight runs right here (the engine has nothing to do
        //    until it returns); calls started together each get a thread,
        //    so their host work overlaps.
        let mut calls: Vec<PendingCall> = std::mem::take(&mut state.borrow_mut().to_start);
        if let (Some(replay), Some(order)) = (replay, order.as_mut()) {
            if replay.is_suspended() {
                // An ask suspended the action: nothing new starts (these
                // calls are made again, at their positions, next round).
                calls.clear();
            }
            // Calls made before (and the one that asked) are answered from
            // the journal here, in the order issued, before anything new runs.
            calls.sort_by_key(|c| c.id);
            let (replayed, fresh): (Vec<PendingCall>, Vec<PendingCall>) = calls.into_iter().partition(|c| replay.is_replayed(position(c.id)));
            for call in replayed {
                order.started.insert(call.id);
                let reply = invoke(&guest.mounted, run, call.name, call.args, Some(position(call.id)));
                outstanding += 1;
                tx.send((call.id, reply)).expect("the receiver is alive");
                if let Some(failed) = diverged(Some(replay)) {
                    return failed;
                }
            }
            order.started.extend(fresh.iter().map(|c| c.id));
            calls = fresh;
        }
        if calls.len() == 1 && outstanding == 0 {
            let call = calls.pop().expect("one call");
            let reply = invoke(&guest.mounted, run, call.name, call.args, replay.map(|_| position(call.id)));
            outstanding += 1;
            tx.send((call.id, reply)).expect("the receiver is alive");
        }
        for call in calls {
            outstanding += 1;
            let tx = tx.clone();
            let mounted = &guest.mounted;
            let action = tracing::Span::current();
            let test = crate::coverage::inherit();
            scope.spawn(move || {
                test.enter();
                let _entered = action.enter();
                let at = replay.map(|_| position(call.id));
                let _ = tx.send((call.id, invoke(mounted, run, call.name, call.args, at)));
            });
        }
        // 3. Done when the entry module has settled (and, replayed, no call
        //    waits on an ask: the round then ends on the ask).
        if let Some((mut outcome, thrown)) = settled(&engine.context, &state).filter(|_| !replay.is_some_and(|r| r.is_suspended())) {
            if let Some(limit) = state.borrow().limit {
                return fail(limit_error(limit, &guest.limits));
            }
            let hits = state.borrow().hits.clone();
            if let Some(limit) = thrown.and_then(|e| hits.classify(&e, &guest.limits)) {
                outcome.error = Some(limit);
            }
            let size = outcome.result.as_ref().map_or(0, |r| r.to_string().len()) + outcome.logs.iter().map(String::len).sum::<usize>();
            if size > guest.limits.max_output_bytes {
                return fail(limit_error(LimitKind::Output, &guest.limits));
            }
            return outcome;
        }
        // 4. Resolve the next call's promise: a reply already here (in
        //    issue order, replayed), else wait (not counted as CPU time)
        //    for a call to finish.
        let next = loop {
            if let Some(ready) = order.as_mut().and_then(Order::next_ready) {
                break Some(ready);
            }
            if outstanding == 0 {
                if let Some((_, asked)) = replay.and_then(|r| r.suspended()) {
                    return fail(GuestError::Suspended { capability: asked.capability });
                }
                return fail(GuestError::Threw { message: "the action is waiting on a promise that nothing will settle".into(), code: None });
            }
            let Ok((id, reply)) = rx.recv() else { break None };
            outstanding -= 1;
            if let Some(failed) = diverged(replay) {
                return failed;
            }
            match (replay, order.as_mut()) {
                (Some(replay), Some(order)) => order.arrived(id, reply, replay.is_waiting(position(id))),
                _ => break Some((id, reply)),
            }
        };
        let Some((id, reply)) = next else { break };
        if resolve_call(&engine.context, &state, id, reply).is_err() {
            if let Some(limit) = state.borrow().limit {
                return fail(limit_error(limit, &guest.limits));
            }
        }
    }
    fail(GuestError::Load { message: "the guest host lost its call channel".into() })
}

/// Start QuickJS under the limits, install the globals and evaluate the
/// entry module (which links the action and its imports).
fn start(guest: &Settings, state: &Rc<RefCell<State>>, source: &str, determinism: Option<(f64, u64)>, hidden: Option<&crate::hidden::Hidden>) -> Result<Engine, GuestError> {
    let cannot_start = |e: rquickjs::Error| GuestError::Load { message: format!("cannot start QuickJS: {e}") };
    // The metered allocator enforces the memory limit (and records reaching
    // it); QuickJS's own stack guard enforces the stack limit.
    let hits = state.borrow().hits.clone();
    let rt = Runtime::new_with_alloc(Metered::new(&guest.limits, hits)).map_err(cannot_start)?;
    rt.set_max_stack_size(guest.limits.stack_bytes);
    let limit = guest.limits.cpu_time;
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
    // A module none of whose capabilities the caller is shown is not
    // importable, and never named: hidden is unknown (DESIGN §10).
    let shown = |m: &&crate::spec::Module| hidden.is_none_or(|h| !m.specs.iter().all(|s| h.hides(s)));
    let modules: BTreeMap<String, &'static str> =
        guest.mounted.modules().filter(shown).map(|m| (format!("{}/{}", guest.specifier, m.name), m.facade)).collect();
    let policy = Rc::new(Policy { specifier: guest.specifier.clone(), bridge: guest.bridge.clone(), modules, action: source.to_string(), state: state.clone() });
    rt.set_loader(GuestResolver(policy.clone()), GuestLoader(policy));
    let context = Context::full(&rt).map_err(cannot_start)?;
    let engine = Engine { _release: Release(state.clone()), context, rt };
    let installed: Result<(), EngineError> = engine.context.with(|ctx| {
        let not_installed = |e: rquickjs::Error| EngineError::new(e.to_string(), false);
        ctx.store_userdata(Shared(state.clone())).map_err(|e| EngineError::new(e.to_string(), false))?;
        globals::install(guest, &ctx, state, hidden).map_err(not_installed)?;
        if let Some((clock_ms, seed)) = determinism {
            globals::determinism(&ctx, clock_ms, seed).map_err(not_installed)?;
        }
        state.borrow_mut().linking = true;
        let started = Instant::now();
        state.borrow_mut().slice_start = Some(started);
        let evaluated = Module::declare(ctx.clone(), loader::ENTRY, loader::ENTRY_SOURCE).and_then(|m| m.eval());
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
    if let Err(error) = installed {
        if let Some(limit) = state.borrow().limit {
            return Err(limit_error(limit, &guest.limits));
        }
        // The entry module awaits the action, so anything the action throws
        // settles the entry's promise; an error here happened while
        // compiling or linking (syntax, a refused import) — or is a limit.
        let hits = state.borrow().hits.clone();
        return Err(hits.classify(&error, &guest.limits).unwrap_or(GuestError::Load { message: error.message }));
    }
    Ok(engine)
}

/// Run every pending job, counting the time as CPU time; the error of a
/// job that threw, if one did.
fn run_jobs(rt: &Runtime, state: &Rc<RefCell<State>>) -> Option<EngineError> {
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
    let mut s = state.borrow_mut();
    s.slice_start = None;
    s.cpu += started.elapsed();
    job_error
}

/// The outcome, once the entry module's promise has settled, with the
/// error as the engine saw it when it rejected.
fn settled(context: &Context, state: &Rc<RefCell<State>>) -> Option<(GuestOutcome, Option<EngineError>)> {
    context.with(|ctx| -> Option<(GuestOutcome, Option<EngineError>)> {
        let s = state.borrow();
        let promise = s.entry.clone()?.restore(&ctx).ok()?;
        drop(s);
        match promise.state() {
            rquickjs::promise::PromiseState::Pending => None,
            rquickjs::promise::PromiseState::Resolved => {
                let s = state.borrow();
                Some((GuestOutcome { result: Some(s.result.clone().unwrap_or(serde_json::Value::Null)), error: None, logs: s.logs.clone(), cpu_time: s.cpu }, None))
            }
            rquickjs::promise::PromiseState::Rejected => {
                let reason: Value = promise.result::<Value>().and_then(|r| r.err()).map(|_| ctx.catch()).unwrap_or_else(|| Value::new_undefined(ctx.clone()));
                let (message, code) = error_parts(&ctx, &reason);
                let engine = EngineError::new(message.clone(), is_range_error(&reason));
                let s = state.borrow();
                Some((GuestOutcome { result: None, error: Some(GuestError::Threw { message, code }), logs: s.logs.clone(), cpu_time: s.cpu }, Some(engine)))
            }
        }
    })
}

/// Resolve the promise of call `id` with its reply.
fn resolve_call(context: &Context, state: &Rc<RefCell<State>>, id: usize, reply: serde_json::Value) -> rquickjs::Result<()> {
    context.with(|ctx| {
        let resolve = state.borrow_mut().pending.remove(&id);
        if let Some(resolve) = resolve {
            let value = ctx.json_parse(reply.to_string())?;
            resolve.restore(&ctx)?.call::<_, ()>((value,))?;
        }
        Ok(())
    })
}

/// One call through the ladder, as the reply the bridge expects:
/// `{result}` or `{error, message, capability}`. `position`: where a
/// replayed action's journal keeps it.
fn invoke(mounted: &Mounted, run: &Run, name: String, args: serde_json::Value, position: Option<u32>) -> serde_json::Value {
    match block_on(mounted.invoke_presented(run, &name, args, position)) {
        Ok(result) => serde_json::json!({ "result": result }),
        Err(e) => serde_json::to_value(e).expect("errors serialize"),
    }
}


/// A call's position in a replayed action's journal: the order the guest issued it.
fn position(id: usize) -> u32 {
    u32::try_from(id).unwrap_or(u32::MAX)
}

/// The calls of a replayed action, resolved in the order the guest issued them.
#[derive(Default)]
struct Order {
    /// Started and not yet resolved.
    started: std::collections::BTreeSet<usize>,
    /// Finished, waiting for the calls issued before them.
    ready: BTreeMap<usize, serde_json::Value>,
}

impl Order {
    /// The reply of the earliest started call, once it is here.
    fn next_ready(&mut self) -> Option<(usize, serde_json::Value)> {
        let first = *self.started.first()?;
        let reply = self.ready.remove(&first)?;
        self.started.remove(&first);
        Some((first, reply))
    }

    /// A call finished; one that waits on an ask is never resolved.
    fn arrived(&mut self, id: usize, reply: serde_json::Value, waiting: bool) {
        if waiting {
            self.started.remove(&id);
        } else {
            self.ready.insert(id, reply);
        }
    }
}
