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
