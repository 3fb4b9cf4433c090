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

use capspec_policy::types::{InputType, input_type, quoted, record_text};
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
/// the actions of `capabilities`.
fn declarations<'a>(modules: impl Iterator<Item = &'a ModuleSpec>, capabilities: impl Iterator<Item = (&'a ModuleSpec, &'a CapabilitySpec)>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "namespace {NAMESPACE} {{");
    out.push_str("  entity Group;\n  entity User in [Group];\n  entity Module;\n\n");
    for group in groups(modules) {
        let _ = writeln!(out, "  action {};", quoted(&group));
    }
    for action in actions(capabilities) {
        out.push('\n');
        for (path, why) in &action.input.left_out {
            let _ = writeln!(out, "  // left out of `input`: `{}` ({why})", comment_safe(path));
        }
        let _ = writeln!(out, "  action {} in [{}, {}] appliesTo {{", quoted(&action.id), quoted(&action.groups[0]), quoted(&action.groups[1]));
        out.push_str("    principal: [User],\n    resource: [Module],\n");
        let _ = writeln!(out, "    context: {{ input: {}, mode: String, category: String, upstream?: String }}", record_text(&action.input.attributes));
        out.push_str("  };\n");
    }
    out.push_str("}\n");
    out
}

/// [`declarations`] in Cedar's JSON schema format: the same schema (a test
/// holds them equal), which Cedar reads many times faster, as its text
/// grammar re-lexes every identifier. `check` validates against these: all
/// of them, or for a batch of policies only the actions their scopes can
/// match and those actions' modules.
#[cfg(feature = "policy")]
pub(crate) fn declarations_json<'a>(modules: impl Iterator<Item = &'a ModuleSpec>, capabilities: impl Iterator<Item = (&'a ModuleSpec, &'a CapabilitySpec)>) -> serde_json::Value {
    use capspec_policy::types::{Attribute, CedarType, object, record_json};
    use serde_json::{Map, Value};
    let types = |names: &[&str]| Value::Array(names.iter().map(|&n| n.into()).collect());
    let mut declared = Map::new();
    for group in groups(modules) {
        // Applying to nothing, as the text's `action "…";` does.
        declared.insert(group, object([("appliesTo", object([("principalTypes", types(&[])), ("resourceTypes", types(&[]))]))]));
    }
    for action in actions(capabilities) {
        let attribute = |name: &str, required, ty| Attribute { name: name.into(), required, ty };
        let context = record_json(&[
            attribute("input", true, CedarType::Record(action.input.attributes)),
            attribute("mode", true, CedarType::String),
            attribute("category", true, CedarType::String),
            attribute("upstream", false, CedarType::String),
        ]);
        let [module, category] = action.groups;
        let member_of = Value::Array(vec![object([("id", module.into())]), object([("id", category.into())])]);
        let applies = object([("principalTypes", types(&["User"])), ("resourceTypes", types(&["Module"])), ("context", context)]);
        declared.insert(action.id, object([("memberOf", member_of), ("appliesTo", applies)]));
    }
    let entities = object([("Group", object([])), ("User", object([("memberOfTypes", types(&["Group"]))])), ("Module", object([]))]);
    object([(NAMESPACE, object([("entityTypes", entities), ("actions", Value::Object(declared))]))])
}

/// The action groups: every category's, then each of `modules`'.
fn groups<'a>(modules: impl Iterator<Item = &'a ModuleSpec>) -> impl Iterator<Item = String> {
    Category::ALL.into_iter().map(category_group).chain(modules.map(|m| module_group(&m.name)))
}

/// One capability's action: its id, its module's and category's groups,
/// and its `input` type.
struct Action {
    id: String,
    groups: [String; 2],
    input: InputType,
}

fn actions<'a>(capabilities: impl Iterator<Item = (&'a ModuleSpec, &'a CapabilitySpec)>) -> impl Iterator<Item = Action> {
    capabilities.map(|(module, cap)| Action {
        id: action_id(&module.name, &cap.name),
        groups: [module_group(&module.name), category_group(cap.category)],
        input: input_type(&input_schema_json(cap)),
    })
}

/// A property path inside a `//` comment: on one line, printable ASCII.
fn comment_safe(text: &str) -> String {
    text.chars().map(|c| if (' '..='~').contains(&c) { c } else { '?' }).collect()
}

#[cfg(all(test, feature = "policy"))]
mod tests {
    use super::*;
    use capspec_policy::cedar_policy::SchemaFragment;

    /// The schema file `sync` writes and the JSON `check` validates
    /// against are one schema, for the reference specs and every render
    /// fixture (hostile names, every input type, left-out properties).
    #[test]
    fn the_json_check_validates_against_is_the_schema_file() {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let fixtures = ["canary", "hostile", "subset", "twins"].map(|case| repo.join("tests/fixtures/render").join(case));
        for root in std::iter::once(repo.clone()).chain(fixtures) {
            let project = crate::open(&root).expect("the project opens");
            let set = &project.loaded.set;
            assert!(set.capabilities().count() > 0, "{}", root.display());
            let text = declarations(set.modules.iter(), set.capabilities());
            let (from_text, _) = SchemaFragment::from_cedarschema_str(&text).unwrap_or_else(|e| panic!("{e:?}"));
            let from_json = SchemaFragment::from_json_value(declarations_json(set.modules.iter(), set.capabilities())).unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(from_json.to_json_value().unwrap(), from_text.to_json_value().unwrap(), "{}", root.display());
        }
    }
}
