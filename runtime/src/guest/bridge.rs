//! `capspec:host`, the native dispatcher behind the bridge: it checks the
//! module, export and argument shape of each call and queues it for the
//! event loop, which sends it through `invoke`. It never rejects: refusals
//! resolve to `{error, message, capability}` with an [`ErrorCode`].

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::module::{Declarations, Exports, ModuleDef};
use rquickjs::{Ctx, Function, Persistent, Value};

use super::outcome::LimitKind;
use super::state::{PendingCall, Shared, State};
use crate::error::{CallError, ErrorCode};

/// `capspec:host`: the native dispatcher behind the bridge.
pub(super) struct HostModule;

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

/// `capspec:finish`: how the entry module reports the action's value. A
/// module only the entry may import, so nothing of the host's is on the
/// guest's `globalThis`.
pub(super) struct FinishModule;

impl ModuleDef for FinishModule {
    fn declare<'js>(decl: &Declarations<'js>) -> rquickjs::Result<()> {
        decl.declare("finish")?;
        Ok(())
    }

    fn evaluate<'js>(ctx: &Ctx<'js>, exports: &Exports<'js>) -> rquickjs::Result<()> {
        let shared = ctx.userdata::<Shared>().map(|s| s.clone()).ok_or(rquickjs::Error::Unknown)?;
        let finish = Function::new(ctx.clone(), move |ctx: Ctx<'js>, value: Value<'js>| {
            let json = ctx.json_stringify(value).ok().flatten().map(|s| s.to_string().unwrap_or_default());
            let parsed = json.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or(serde_json::Value::Null);
            shared.0.borrow_mut().result = Some(parsed);
        })?;
        exports.export("finish", finish)?;
        Ok(())
    }
}

/// Check module, export and argument shape, then queue the call. Never
/// rejects: refusals resolve to `{error, message, capability}`.
pub(super) fn dispatch<'js>(ctx: &Ctx<'js>, state: &Rc<RefCell<State>>, module: Value<'js>, name: Value<'js>, args: Value<'js>) -> rquickjs::Result<rquickjs::Promise<'js>> {
    let (promise, resolve, _reject) = ctx.promise()?;
    let refuse = |code: ErrorCode, message: String, capability: String| -> rquickjs::Result<()> {
        let reply = serde_json::to_string(&CallError::new(code, message, capability)).expect("errors serialize");
        resolve.call::<_, ()>((ctx.json_parse(reply)?,))
    };
    let module = module.as_string().and_then(|s| s.to_string().ok());
    let name = name.as_string().and_then(|s| s.to_string().ok());
    let (Some(module), Some(name)) = (module, name) else {
        refuse(ErrorCode::InvalidArguments, "the bridge takes (module, name, args) strings".into(), String::new())?;
        return Ok(promise);
    };
    let capability = format!("{module}.{name}");
    if !(args.is_object() && !args.is_array() && !args.is_function()) {
        refuse(ErrorCode::InvalidArguments, format!("`{capability}` takes one argument object, e.g. {name}({{ … }})"), capability)?;
        return Ok(promise);
    }
    let json = ctx.json_stringify(args)?.map(|s| s.to_string()).transpose()?.unwrap_or_else(|| "{}".into());
    let args: serde_json::Value = serde_json::from_str(&json).unwrap_or(serde_json::Value::Null);
    // Qualified: two mounted modules may both have `name`.
    let spec = state.borrow().mounted.as_ref().and_then(|m| m.lookup(&capability));
    match spec {
        Some(spec) if spec.module == module && spec.name == name => {}
        _ => {
            refuse(ErrorCode::UnknownCapability, format!("`{capability}` is not an export of a mounted module"), capability)?;
            return Ok(promise);
        }
    }
    let mut s = state.borrow_mut();
    s.calls += 1;
    let max_calls = s.max_calls;
    if s.calls > max_calls {
        s.limit.get_or_insert(LimitKind::Calls);
        drop(s);
        refuse(ErrorCode::LimitExceeded, format!("the action made more than {max_calls} capability calls"), capability)?;
        return Ok(promise);
    }
    let id = s.next_id;
    s.next_id += 1;
    s.pending.insert(id, Persistent::save(ctx, resolve));
    s.to_start.push(PendingCall { id, name: capability, args });
    Ok(promise)
}

