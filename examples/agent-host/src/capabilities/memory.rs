//! `memory`: facts keyed by name. Project facts persist in
//! `<workspace>/.agent/memory/facts.json`; session facts live in the run's
//! [`SessionMemory`] and end with the session.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use capspec::{CapError, CapResult, Run, capability};

use crate::generated::memory as spec;
use crate::workspace::Workspace;

/// Facts remembered for one session (a run extension shared by its runs).
#[derive(Debug, Clone, Default)]
pub struct SessionMemory(pub Arc<Mutex<BTreeMap<String, String>>>);

fn file(run: &Run) -> CapResult<std::path::PathBuf> {
    Ok(Workspace::of(run)?.state_dir("memory")?.join("facts.json"))
}

fn load(run: &Run) -> CapResult<BTreeMap<String, String>> {
    match std::fs::read_to_string(file(run)?) {
        Ok(text) => Ok(serde_json::from_str(&text)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(e.into()),
    }
}

fn store(run: &Run, facts: &BTreeMap<String, String>) -> CapResult<()> {
    std::fs::write(file(run)?, serde_json::to_string_pretty(facts)?)?;
    Ok(())
}

fn session(run: &Run) -> CapResult<&SessionMemory> {
    run.get::<SessionMemory>().ok_or_else(|| CapError::new("this host keeps no session memory; use scope: project"))
}

#[capability(spec::remember)]
async fn remember(run: &Run, args: spec::remember::Args) -> CapResult<()> {
    match args.scope {
        spec::remember::Scope::Project => {
            let mut facts = load(run)?;
            facts.insert(args.key, args.value);
            store(run, &facts)
        }
        spec::remember::Scope::Session => {
            session(run)?.0.lock().unwrap_or_else(|e| e.into_inner()).insert(args.key, args.value);
            Ok(())
        }
    }
}

#[capability(spec::recall)]
async fn recall(run: &Run, args: spec::recall::Args) -> CapResult<spec::recall::Output> {
    let mut all = load(run)?;
    if let Some(s) = run.get::<SessionMemory>() {
        all.extend(s.0.lock().unwrap_or_else(|e| e.into_inner()).clone());
    }
    let prefix = args.prefix;
    let facts = all.into_iter().filter(|(k, _)| if prefix { k.starts_with(&args.key) } else { *k == args.key }).collect();
    Ok(spec::recall::Output { facts })
}

#[capability(spec::forget)]
async fn forget(run: &Run, args: spec::forget::Args) -> CapResult<()> {
    let mut facts = load(run)?;
    let in_project = facts.remove(&args.key).is_some();
    if in_project {
        store(run, &facts)?;
    }
    let in_session = run.get::<SessionMemory>().is_some_and(|s| s.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&args.key).is_some());
    if in_project || in_session { Ok(()) } else { Err(CapError::new(format!("nothing is remembered under `{}`", args.key))) }
}
