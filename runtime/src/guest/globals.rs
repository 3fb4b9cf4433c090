//! The globals a guest sees: `console.*` (captured, counted against the
//! output limit), `capabilities()` (what the session mounted) with
//! `capabilities.search(query, limit?)` (the built-in `tool_search`), and the
//! entry module's private completion hook; and how thrown values read.

use std::cell::RefCell;
use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Value};

use super::limits::EngineError;
use super::outcome::LimitKind;
use super::settings::Settings;
use super::state::State;

pub(super) fn install<'js>(guest: &Settings, ctx: &Ctx<'js>, state: &Rc<RefCell<State>>) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let console = Object::new(ctx.clone())?;
    let max = guest.limits.max_output_bytes;
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
    let list: Vec<serde_json::Value> = guest
        .mounted
        .capabilities()
        .into_iter()
        .map(|c| serde_json::json!({ "module": c.module, "name": c.name, "category": c.category, "summary": c.summary, "deferred": c.deferred }))
        .collect();
    let listing = serde_json::Value::Array(list).to_string();
    let capabilities = Function::new(ctx.clone(), move |ctx: Ctx<'js>| ctx.json_parse(listing.clone()))?;
    // `capabilities.search(query, limit?)`: the built-in `tool_search`,
    // through the dispatcher and `invoke` like every other call.
    let state = state.clone();
    let dispatch = Function::new(ctx.clone(), move |ctx: Ctx<'js>, module: Value<'js>, name: Value<'js>, args: Value<'js>| {
        super::bridge::dispatch(&ctx, &state, module, name, args)
    })?;
    let wrap: Function = ctx.eval(SEARCH)?;
    let search: Function = wrap.call((dispatch,))?;
    capabilities.set("search", search)?;
    globals.set("capabilities", capabilities)?;
    Ok(())
}

/// A replayed action's clock and randomness come from its state (DESIGN
/// §10): `Date` (`Date.now()`, `new Date()`, `Date()`) reads `clock_ms`, and
/// `Math.random` is a seeded generator, so each run of the action from its
/// start sees the same values and makes the same calls.
pub(super) fn determinism(ctx: &Ctx<'_>, clock_ms: f64, seed: u64) -> rquickjs::Result<()> {
    let install: Function = ctx.eval(DETERMINISM)?;
    // Two 32-bit halves: JavaScript numbers hold 53 bits exactly.
    install.call::<_, ()>((clock_ms, (seed >> 32) as u32, seed as u32))
}

/// `Date` reads a fixed clock; `Math.random` is sfc32 (a small, well-known
/// non-cryptographic generator) from the seed.
const DETERMINISM: &str = r#"(clock, hi, lo) => {
  const RealDate = globalThis.Date;
  const now = function now() { return clock; };
  globalThis.Date = new Proxy(RealDate, {
    construct(target, args, newTarget) { return Reflect.construct(target, args.length === 0 ? [clock] : args, newTarget); },
    apply() { return new RealDate(clock).toString(); },
    get(target, key, receiver) { return key === "now" ? now : Reflect.get(target, key, receiver); },
  });
  let a = hi >>> 0, b = lo >>> 0, c = (hi ^ 0x9e3779b9) >>> 0, d = 1;
  const random = function random() {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 15; i++) random();
  Math.random = random;
}"#;

/// `capabilities.search`, around the dispatcher (which it alone holds): the
/// matches, or the refusal thrown as the bridge throws it.
const SEARCH: &str = r#"(dispatch) => async function search(query, limit) {
  const reply = await dispatch("capspec", "tool_search", limit === undefined ? { query } : { query, limit });
  if (reply.error !== undefined) {
    const err = new Error(reply.message);
    err.code = reply.error;
    err.capability = reply.capability;
    throw err;
  }
  return reply.result.matches;
}"#;

/// The error the engine reports: the thrown value's message, and whether
/// it is a `RangeError` (the class the engine's stack overflow has).
pub(super) fn describe_error(ctx: &Ctx<'_>, err: rquickjs::Error) -> EngineError {
    if let rquickjs::Error::Exception = err {
        let value = ctx.catch();
        let (message, _) = error_parts(ctx, &value);
        EngineError::new(message, is_range_error(&value))
    } else {
        EngineError::new(err.to_string(), false)
    }
}

/// Whether a thrown value is a `RangeError`.
pub(super) fn is_range_error(value: &Value<'_>) -> bool {
    value.as_object().and_then(|o| o.get::<_, String>("name").ok()).is_some_and(|n| n == "RangeError")
}

/// `message` and `.code` of a thrown value.
pub(super) fn error_parts<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> (String, Option<String>) {
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
pub(super) fn format_value<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> String {
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
