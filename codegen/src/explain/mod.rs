//! `cargo capspec explain RULE`: every rule's explanation, with a project
//! that produces the finding and the same project fixed (like `rustc
//! --explain`). The texts live beside this file, one per rule family; a
//! test builds every example on top of [`BASELINE`] and runs it through the
//! command line, so each failing example really produces its finding and
//! each fixed one really clears it.

use std::fmt::Write as _;

use crate::rules::{self, Rule};

/// The project every example starts from (what `cargo capspec init` makes,
/// cut to one capability): its files, before `cargo capspec sync` writes the
/// generated ones.
pub const BASELINE: &[(&str, &str)] = &[
    ("capspec.toml", "specs = \"specs\"\n"),
    (
        "specs/notes.yaml",
        "module: notes\ndescription: The user's notes.\ncapabilities:\n  - name: read_note\n    category: read\n    description: Read a note by its title.\n    input:\n      type: object\n      properties:\n        title:\n          type: string\n      required: [title]\n",
    ),
    (
        "src/capabilities.rs",
        "use capspec::{CapResult, Run, capability};\n\nuse crate::generated::notes;\n\n#[capability(notes::read_note)]\nasync fn read_note(_run: &Run, args: notes::read_note::Args) -> CapResult<String> {\n    Ok(format!(\"the note {}\", args.title))\n}\n",
    ),
    (
        "tests/notes.rs",
        "#[test]\nfn reads_a_note() {\n    let host = app::host();\n    let note = host.invoke_json(\"notes.read_note\", serde_json::json!({\"title\": \"todo\"}));\n    assert_eq!(note.unwrap(), \"the note todo\");\n}\n",
    ),
];

/// The families' texts, in the rule table's order.
const TEXTS: &[&str] = &[
    include_str!("spec.txt"),
    include_str!("drift.txt"),
    include_str!("coverage.txt"),
    include_str!("breaking.txt"),
    include_str!("code_first.txt"),
    include_str!("provider.txt"),
    include_str!("config.txt"),
    include_str!("lint.txt"),
    include_str!("upstream.txt"),
    include_str!("policy.txt"),
    include_str!("surface.txt"),
    include_str!("import.txt"),
];

/// One rule's explanation.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The rule it explains.
    pub rule: &'static Rule,
    /// Why the rule exists and what to do, in paragraphs.
    pub text: String,
    /// A project that produces the finding.
    pub fails: Example,
    /// The same project with the finding cleared.
    pub fixed: Example,
}

/// An example: steps taken, in order, on top of [`BASELINE`] once it is
/// synced. The last step runs the command whose findings it shows; a
/// fixed example is synced before that command.
#[derive(Debug, Clone, Default)]
pub struct Example {
    /// What happens, in order.
    pub steps: Vec<Step>,
}

/// One step of an example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Write this file (relative to the root). `shown: false` for a file the
    /// example needs but whose content is beside the point (a server
    /// script), which `explain` names without printing.
    Write {
        /// Relative path.
        path: String,
        /// Its whole content.
        content: String,
        /// Whether `explain` prints it.
        shown: bool,
    },
    /// Delete this file.
    Remove {
        /// Relative path.
        path: String,
    },
    /// Commit the project as it is now (`git add -A && git commit`), as the base a
    /// later `check --base HEAD` compares with.
    Commit,
    /// Run `cargo capspec` with these arguments (split on spaces).
    Run {
        /// The arguments after `cargo capspec`.
        args: Vec<String>,
    },
}

impl Example {
    /// The arguments of the command whose findings the example shows: its
    /// last step's when that is a run, else `check`.
    pub fn command(&self) -> Vec<String> {
        match self.steps.last() {
            Some(Step::Run { args }) => args.clone(),
            _ => vec!["check".to_string()],
        }
    }

    /// The steps before that command.
    pub fn setup(&self) -> &[Step] {
        match self.steps.last() {
            Some(Step::Run { .. }) => &self.steps[..self.steps.len() - 1],
            _ => &self.steps,
        }
    }
}

/// Every explanation, in the rule table's order.
pub fn all() -> Vec<Explanation> {
    let mut out: Vec<Explanation> = TEXTS.iter().flat_map(|t| parse(t)).collect();
    out.sort_by_key(|e| rules::ALL.iter().position(|r| r.id == e.rule.id));
    out
}

/// The explanation of `rule`, if it has one.
pub fn find(rule: &str) -> Option<Explanation> {
    all().into_iter().find(|e| e.rule.id == rule)
}

/// What `explain RULE` prints.
pub fn render(e: &Explanation) -> String {
    let mut out = String::new();
    let severity = e.rule.severity().as_str();
    let allow = if e.rule.suppressible { "an [[allow]] entry with a reason can suppress it" } else { "it is fixed, not suppressed" };
    let _ = writeln!(out, "{}: {}", e.rule.id, e.rule.what());
    let _ = writeln!(out, "({severity}; {allow})\n");
    let _ = writeln!(out, "{}\n", e.text.trim_end());
    let _ = writeln!(out, "This project reports it:\n");
    example(&mut out, &e.fails, false);
    let _ = writeln!(out, "\nFixed:\n");
    example(&mut out, &e.fixed, true);
    out
}

fn example(out: &mut String, example: &Example, synced: bool) {
    for step in example.setup() {
        match step {
            Step::Write { path, content, shown: true } => {
                let _ = writeln!(out, "  {path}:");
                for line in content.lines() {
                    let _ = writeln!(out, "  | {line}");
                }
            }
            Step::Write { path, shown: false, .. } => {
                let _ = writeln!(out, "  {path}: (not shown; see above)");
            }
            Step::Remove { path } => {
                let _ = writeln!(out, "  $ rm {path}");
            }
            Step::Run { args } => {
                let _ = writeln!(out, "  $ cargo capspec {}", args.join(" "));
            }
            Step::Commit => {
                let _ = writeln!(out, "  $ git add -A && git commit -m \"the base\"");
            }
        }
    }
    if synced {
        let _ = writeln!(out, "  $ cargo capspec sync");
    }
    let _ = writeln!(out, "  $ cargo capspec {}", example.command().join(" "));
}

/// Read one family's text: `@@ rule ID`, its paragraphs, then `@@ fails`
/// and `@@ fixed`, each a list of `@@ file PATH` (followed by the file's
/// content), `@@ hidden PATH`, `@@ remove PATH`, `@@ commit` and `@@ run ARGS…`
/// steps.
fn parse(text: &'static str) -> Vec<Explanation> {
    let mut out: Vec<Explanation> = Vec::new();
    // Which part the lines go to: 0 the text, 1 fails, 2 fixed.
    let mut part: u8 = 0;
    for line in text.split_inclusive('\n') {
        let Some(marker) = line.strip_prefix("@@ ") else {
            let Some(e) = out.last_mut() else { continue };
            match (part, example_of(e, part).and_then(|x| x.steps.last_mut())) {
                (0, _) => e.text.push_str(line),
                (_, Some(Step::Write { content, .. })) => content.push_str(line),
                _ => assert!(line.trim().is_empty(), "explain text: a line outside any file: {line}"),
            }
            continue;
        };
        let marker = marker.trim_end();
        let (word, rest) = marker.split_once(' ').unwrap_or((marker, ""));
        match word {
            "rule" => {
                let rule = rules::find(rest).unwrap_or_else(|| panic!("explain text: unknown rule {rest}"));
                out.push(Explanation { rule, text: String::new(), fails: Example::default(), fixed: Example::default() });
                part = 0;
            }
            "fails" => part = 1,
            "fixed" => part = 2,
            _ => {
                let e = out.last_mut().expect("explain text: a step before any rule");
                let step = match word {
                    "file" | "hidden" => Step::Write { path: rest.to_string(), content: String::new(), shown: word == "file" },
                    "remove" => Step::Remove { path: rest.to_string() },
                    "commit" => Step::Commit,
                    "run" => Step::Run { args: rest.split(' ').map(str::to_string).collect() },
                    other => panic!("explain text: unknown marker @@ {other}"),
                };
                example_of(e, part).expect("explain text: a step outside fails/fixed").steps.push(step);
            }
        }
    }
    out
}

fn example_of(e: &mut Explanation, part: u8) -> Option<&mut Example> {
    match part {
        1 => Some(&mut e.fails),
        2 => Some(&mut e.fixed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_one_explanation_with_both_examples() {
        let all = all();
        let ids: Vec<&str> = all.iter().map(|e| e.rule.id).collect();
        let rules: Vec<&str> = rules::ALL.iter().map(|r| r.id).collect();
        assert_eq!(ids, rules, "one explanation per rule, in the table's order");
        for e in &all {
            assert!(e.text.trim().len() > 40, "{}: the explanation is too short", e.rule.id);
            assert!(!e.fails.steps.is_empty() && !e.fixed.steps.is_empty(), "{}: an example is empty", e.rule.id);
        }
    }
}
