//! What an import may resolve to. The action imports mounted facades only;
//! facades import the bridge; the bridge imports the native dispatcher;
//! nothing resolves after linking (no dynamic `import()`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::{Ctx, Module};

use super::bridge::{FinishModule, HostModule};
use super::state::State;

/// The entry module's name.
pub(super) const ENTRY: &str = "capspec:main";
/// The action's module name.
const ACTION: &str = "capspec:action";
/// The native dispatcher's module name.
pub(super) const HOST: &str = "capspec:host";
/// The module the entry reports the action's value through.
const FINISH: &str = "capspec:finish";

/// The bridge facades import. It turns the dispatcher's tagged replies back
/// into values or thrown `Error`s with `.code`.
const BRIDGE_SOURCE: &str = include_str!("js/bridge.js");

/// The entry module: runs the action's default export and reports its value.
pub(super) const ENTRY_SOURCE: &str = include_str!("js/entry.js");

/// What the loader may serve.
pub(super) struct Policy {
    pub(super) specifier: String,
    pub(super) bridge: String,
    /// `<specifier>/<module>` → facade source, mounted modules only.
    pub(super) modules: BTreeMap<String, &'static str>,
    pub(super) action: String,
    pub(super) state: Rc<RefCell<State>>,
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

pub(super) struct GuestResolver(pub(super) Rc<Policy>);

impl Resolver for GuestResolver {
    fn resolve<'js>(&mut self, _ctx: &Ctx<'js>, base: &str, name: &str, _attributes: Option<ImportAttributes<'js>>) -> rquickjs::Result<String> {
        let p = &self.0;
        if !p.state.borrow().linking {
            return Err(p.refuse(name, "dynamic import() is not allowed in a guest action"));
        }
        let from_facade = p.modules.contains_key(base);
        match name {
            n if (n == ACTION || n == FINISH) && base == ENTRY => Ok(n.into()),
            n if p.modules.contains_key(n) && (base == ACTION || from_facade) => Ok(n.into()),
            n if n == p.bridge && from_facade => Ok(n.into()),
            n if n == HOST && base == p.bridge => Ok(n.into()),
            n if n == p.bridge || n == HOST || n == FINISH => Err(p.refuse(name, "the bridge is private to the generated facades")),
            n if n.starts_with(&format!("{}/", p.specifier)) => Err(p.refuse(name, "that module is not mounted in this session")),
            _ => Err(p.refuse(name, "only capability modules can be imported")),
        }
    }
}

pub(super) struct GuestLoader(pub(super) Rc<Policy>);

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
        if name == FINISH {
            return Module::declare_def::<FinishModule, _>(ctx.clone(), name);
        }
        match p.modules.get(name) {
            Some(facade) => Module::declare(ctx.clone(), name, *facade),
            None => Err(p.refuse(name, "that module is not mounted in this session")),
        }
    }
}

