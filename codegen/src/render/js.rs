//! Guest JavaScript facades (`<js>/<module>.js`) and their TypeScript
//! declarations (`<js>/<module>.d.ts`).

use std::collections::BTreeSet;

use minijinja::context;
use serde::Serialize;

use crate::model::ModuleSpec;
use super::naming::pascal_case;
use super::ts::TsTypes;
use super::artifact::{Targets, marker_line};
use super::templates::render_template;

/// The ES module a guest imports as `<specifier>/<module>`.
pub fn facade(module: &ModuleSpec, targets: &Targets) -> String {
    let names: Vec<String> = module.capabilities.iter().map(|c| c.name.clone()).collect();
    render_template(
        "js/facade.js.j2",
        context! {
            marker => marker_line(&module.file),
            module => module.name.clone(),
            bridge => targets.bridge.clone(),
            names => names,
        },
    )
}

#[derive(Serialize)]
struct DefDecl {
    name: String,
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Serialize)]
struct CapDecl {
    name: String,
    description: String,
    category: &'static str,
    deprecated: Option<String>,
    args_type: String,
    args_lines: Vec<String>,
    args_optional: bool,
    output_type: String,
    defs: Vec<DefDecl>,
}

/// TypeScript declarations of the facade's exports.
pub fn declarations(module: &ModuleSpec, targets: &Targets) -> String {
    let mut used: BTreeSet<String> = BTreeSet::new();
    // Reserve the interface names first so `$defs` aliases never take them.
    for cap in &module.capabilities {
        used.insert(format!("{}Args", pascal_case(&cap.name)));
    }
    let caps: Vec<CapDecl> = module
        .capabilities
        .iter()
        .map(|cap| {
            let prefix = pascal_case(&cap.name);
            let input_types = TsTypes::for_root(cap.input.as_ref(), &prefix, false, &mut used);
            let output_types = TsTypes::for_root(cap.output.as_ref(), &prefix, true, &mut used);
            let mut defs = Vec::new();
            for (types, root) in [(&input_types, &cap.input), (&output_types, &cap.output)] {
                for (def, schema) in root.as_ref().map(|r| r.defs.as_slice()).unwrap_or_default() {
                    defs.push(DefDecl { name: types.def_name(def), ty: types.type_of(schema) });
                }
            }
            let args_lines = cap.input.as_ref().map(|s| input_types.interface_body(s)).unwrap_or_default();
            CapDecl {
                name: cap.name.clone(),
                description: cap.description.clone(),
                category: cap.category.as_str(),
                deprecated: cap.deprecated.clone(),
                args_type: format!("{prefix}Args"),
                args_lines,
                args_optional: cap.input.as_ref().is_none_or(|s| s.required.is_empty()),
                output_type: cap.output.as_ref().map_or_else(|| "unknown".to_string(), |s| output_types.type_of(s)),
                defs,
            }
        })
        .collect();
    render_template(
        "js/facade.d.ts.j2",
        context! {
            marker => marker_line(&module.file),
            module => module.name.clone(),
            import_path => targets.import_path(&module.name),
            capabilities => minijinja::value::Serde(&caps),
        },
    )
}
