//! Generated spec sets of any size, for the scale benchmarks: 20
//! capabilities per module, each with a realistic input schema (an enum, a
//! bounded integer, an optional array, a nested object, a `$ref`) and an
//! output schema.

use std::path::Path;

/// Write a project with `capabilities` capabilities into `root`.
pub fn write_project(root: &Path, capabilities: usize) {
    std::fs::create_dir_all(root.join("specs")).expect("create specs dir");
    std::fs::write(root.join("capspec.toml"), "specs = \"specs\"\n[coverage]\nsources = []\ntests = []\n").expect("write config");
    let modules = capabilities.div_ceil(20);
    for m in 0..modules {
        let mut text = format!("module: mod{m:05}\ndescription: Generated module {m} for benchmarks.\ncapabilities:\n");
        for c in 0..20.min(capabilities - m * 20) {
            let category = ["read", "write", "execute", "external"][c % 4];
            text.push_str(&format!(
                r##"  - name: cap_{m:05}_{c:02}
    category: {category}
    description: >-
      Capability {c} of module {m}. It does one thing and reports what it did,
      so a model can tell from the result whether to go on.
    input:
      type: object
      properties:
        mode: {{ type: string, enum: [fast, careful, dry_run], default: careful, description: How to run. }}
        limit: {{ type: integer, minimum: 1, maximum: 500, description: Most items to touch. }}
        tags: {{ type: array, items: {{ type: string }}, maxItems: 10 }}
        target:
          type: object
          properties:
            path: {{ type: string, minLength: 1 }}
            recursive: {{ type: boolean }}
          required: [path]
        owner: {{ $ref: "#/$defs/Owner" }}
      required: [mode]
      additionalProperties: false
      $defs:
        Owner:
          type: object
          properties:
            login: {{ type: string }}
            id: {{ type: [integer, "null"] }}
          required: [login]
    output:
      type: object
      properties:
        done: {{ type: integer }}
        notes: {{ type: array, items: {{ type: string }} }}
      required: [done]
"##
            ));
        }
        std::fs::write(root.join(format!("specs/mod{m:05}.yaml")), text).expect("write spec");
    }
}

/// Write `count` Cedar policies into `root/policies/bench.cedar`, one per
/// capability of a project from [`write_project`] (cycling when there are
/// more policies than capabilities), each reading the capability's input
/// the way real policies do: a path glob, an optional number, an enum.
pub fn write_policies(root: &Path, capabilities: usize, count: usize) {
    let mut text = String::new();
    for i in 0..count {
        let c = i % capabilities;
        let action = format!("Capspec::Action::\"mod{:05}.cap_{:05}_{:02}\"", c / 20, c / 20, c % 20);
        let policy = match i % 3 {
            0 => format!("forbid(principal, action == {action}, resource)\nwhen {{ context.input has target && context.input.target.path like \"*.env\" }};"),
            1 => format!("@ask\npermit(principal, action == {action}, resource)\nwhen {{ context.input has limit && context.input.limit > 100 }};"),
            _ => format!("permit(principal in Capspec::Group::\"ops\", action == {action}, resource)\nwhen {{ context.input.mode == \"dry_run\" }};"),
        };
        text.push_str(&format!("@id(\"p{i:05}\")\n{policy}\n\n"));
    }
    std::fs::create_dir_all(root.join("policies")).expect("create policies dir");
    std::fs::write(root.join("policies/bench.cedar"), text).expect("write policies");
}
