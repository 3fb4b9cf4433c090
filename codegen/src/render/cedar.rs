//! `<catalog>/capspec.cedarschema` (DESIGN §14): the Cedar schema a
//! project's policies are validated against, derived from the specs.
//!
//! - namespace `Capspec`; entity types `Group`, `User in [Group]`, `Module`;
//! - the action groups `module:<name>` (one per module) and
//!   `category:<category>` (all four, so a policy may name any of them);
//! - one action per capability, its id the qualified name, in its module's
//!   and its category's groups, applying to `User` principals and `Module`
//!   resources with the context `{ input, mode, category, upstream? }`;
//! - `input` is a record typed from the input schema: string → `String`,
//!   integer → `Long`, number → `decimal`, boolean → `Bool`, array → `Set`,
//!   object → record, enum → `String`, optional property → optional
//!   attribute; a nullable one (`[T, "null"]`) is an optional `T`, as Cedar
//!   has no null. A property Cedar cannot type (a union of types, an open
//!   map) is left out, and a comment above the action says which and why.
//!
//! Every name is written as a quoted Cedar string, so no spec text can form
//! schema syntax.

use std::fmt::Write as _;

use capspec_policy::types::{input_type, quoted, record_text};
use capspec_policy::{NAMESPACE, action_id, category_group, module_group};

use super::artifact::{Targets, input_schema_json, marker_line};
use crate::model::{CapabilitySpec, Category, ModuleSpec, SpecSet};

/// The schema file's name inside the catalog directory.
pub const FILE: &str = "capspec.cedarschema";

/// The schema text.
pub fn schema(set: &SpecSet, targets: &Targets) -> String {
    format!("// {}\n{}", marker_line(&targets.specs), declarations(set.modules.iter(), set.capabilities()))
}

/// The namespace with the category groups, the groups of `modules` and
/// the actions of `capabilities`: all of them for the schema file; for a
/// batch of policies `check` validates together, only the actions their
/// scopes can match and those actions' modules.
pub(crate) fn declarations<'a>(modules: impl Iterator<Item = &'a ModuleSpec>, capabilities: impl Iterator<Item = (&'a ModuleSpec, &'a CapabilitySpec)>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "namespace {NAMESPACE} {{");
    out.push_str("  entity Group;\n  entity User in [Group];\n  entity Module;\n\n");
    for category in Category::ALL {
        let _ = writeln!(out, "  action {};", quoted(&category_group(category)));
    }
    for module in modules {
        let _ = writeln!(out, "  action {};", quoted(&module_group(&module.name)));
    }
    for (module, cap) in capabilities {
        let typed = input_type(&input_schema_json(cap));
        let input = record_text(&typed.attributes);
        out.push('\n');
        for (path, why) in &typed.left_out {
            let _ = writeln!(out, "  // left out of `input`: `{}` ({why})", comment_safe(path));
        }
        let id = action_id(&module.name, &cap.name);
        let groups = [module_group(&module.name), category_group(cap.category)];
        let _ = writeln!(out, "  action {} in [{}, {}] appliesTo {{", quoted(&id), quoted(&groups[0]), quoted(&groups[1]));
        out.push_str("    principal: [User],\n    resource: [Module],\n");
        let _ = writeln!(out, "    context: {{ input: {input}, mode: String, category: String, upstream?: String }}");
        out.push_str("  };\n");
    }
    out.push_str("}\n");
    out
}

/// A property path inside a `//` comment: on one line, printable ASCII.
fn comment_safe(text: &str) -> String {
    text.chars().map(|c| if (' '..='~').contains(&c) { c } else { '?' }).collect()
}
