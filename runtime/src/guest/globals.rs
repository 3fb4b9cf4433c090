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

pub(super) fn install<'js>(guest: &Settings, ctx: &Ctx<'js>, state: &Rc<RefCell<State>>, hidden: Option<&crate::hidden::Hidden>) -> rquickjs::Result<()> {
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
        // What the caller is not shown (DESIGN §10) is not listed.
        .filter(|c| hidden.is_none_or(|h| !h.contains(&format!("{}.{}", c.module, c.name))))
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
/// `Math.random` is SplitMix64 from `seed` (a small, well-known generator;
/// `Math.random` promises no cryptographic strength anywhere), so each run
/// of the action from its start sees the same values and makes the same calls.
pub(super) fn determinism(ctx: &Ctx<'_>, clock_ms: f64, seed: u64) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let wrap: Function = ctx.eval(FIXED_DATE)?;
    let date: Value = wrap.call((clock_ms, globals.get::<_, Value>("Date")?))?;
    globals.set("Date", date)?;
    let state = std::cell::Cell::new(seed);
    let random = Function::new(ctx.clone(), move || {
        let next = state.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        state.set(next);
        let mut z = next;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // The top 53 bits, as a double in [0, 1).
        (z >> 11) as f64 / (1u64 << 53) as f64
    })?;
    globals.get::<_, Object>("Math")?.set("random", random)
}

/// `Date` reading a fixed clock; an explicit date is untouched.
const FIXED_DATE: &str = r#"(clock, RealDate) => {
  function Date(...args) {
    if (new.target === undefined) return new RealDate(clock).toString();
    return args.length === 0 ? new RealDate(clock) : new RealDate(...args);
  }
  Date.prototype = RealDate.prototype;
  Date.now = () => clock;
  Date.parse = RealDate.parse;
  Date.UTC = RealDate.UTC;
  return Date;
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
