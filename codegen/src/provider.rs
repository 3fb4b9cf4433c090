//! Provider findings: for each provider in `[generate] providers`, every
//! non-deferred capability projected (`capspec-dialects`) — a lossy step is
//! a `provider/lossy` warning, a schema that cannot be projected is
//! `provider/unsupported`, a name or tool count the provider refuses is
//! `provider/limit`. The files themselves are rendered in
//! `render/providers.rs`.

use capspec_dialects::{Problem, Provider, project};

use crate::finding::Finding;
use crate::model::SpecSet;
use crate::render::input_schema_json;
use crate::rules as rule;
use crate::yaml::Pos;

/// Every provider finding for `set`, in provider then capability order.
pub(crate) fn findings(set: &SpecSet, providers: &[Provider], specs_dir: &str) -> Vec<Finding> {
    let mut findings = Vec::new();
    for &provider in providers {
        let p = provider.as_str();
        let mut offered = 0;
        for (module, cap) in set.capabilities().filter(|(_, c)| !c.deferred) {
            offered += 1;
            let file = cap.file(module);
            match project(provider, &cap.wire_name, &cap.description, &input_schema_json(cap)) {
                Ok(projected) => {
                    for loss in projected.losses {
                        let at = if loss.pointer.is_empty() { "the input schema".to_string() } else { format!("`{}`", loss.pointer) };
                        findings.push(Finding::warning(rule::PROVIDER_LOSSY, file, cap.pos, format!("{p}: `{}.{}` at {at}: {}", module.name, cap.name, loss.moved)));
                    }
                }
                Err(Problem::Unsupported { pointer, why }) => findings.push(Finding::error(
                    rule::PROVIDER_UNSUPPORTED,
                    file,
                    cap.pos,
                    format!("`{}.{}` cannot be offered to {p} (at `{pointer}`): {why}; change the schema or remove `{p}` from [generate] providers", module.name, cap.name),
                )),
                Err(Problem::Limit(why)) => findings.push(Finding::error(rule::PROVIDER_LIMIT, file, cap.pos, format!("`{}.{}`: {why}", module.name, cap.name))),
            }
        }
        if let Some(max) = provider.max_tools().filter(|max| offered > *max) {
            findings.push(Finding::error(
                rule::PROVIDER_LIMIT,
                specs_dir,
                Pos::default(),
                format!("{p} takes at most {max} tools in one request, and the specs offer {offered} non-deferred capabilities; mark some `deferred: true` (tool_search finds them)"),
            ));
        }
    }
    findings
}
