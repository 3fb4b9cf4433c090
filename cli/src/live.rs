//! The commands that start upstream MCP servers (feature `live`): `import
//! mcp --upstream` pins a server's tools, `check --upstream` compares them
//! with their pins. The servers are listed through the runtime's one MCP
//! client (`capspec::upstream`); everything else is the generator's
//! (`capspec_codegen::upstream`). Without the feature these commands say
//! how to get it, so the xtask a project builds in CI carries no MCP
//! client.

#[cfg(not(feature = "live"))]
use std::path::Path;

#[cfg(not(feature = "live"))]
use capspec_codegen::Finding;

#[cfg(not(feature = "live"))]
const NO_CLIENT: &str = "this build of capspec-cli has no MCP client, which --upstream needs: \
     `cargo install --locked capspec-cli` has it; in an xtask, depend on capspec-cli with `features = [\"live\"]`";

/// `import mcp --upstream NAME [--update]`; the exit code. `bin` is how
/// the user runs capspec (`cargo capspec`, `cargo xtask`), for the next steps.
#[cfg(not(feature = "live"))]
pub(crate) fn import_upstream(_root: &Path, _name: &str, _update: bool, _bin: &str) -> u8 {
    eprintln!("error: {NO_CLIENT}");
    2
}

/// The `upstream/*` findings of `check --upstream`.
#[cfg(not(feature = "live"))]
pub(crate) fn upstream_findings(_root: &Path) -> Result<Vec<Finding>, String> {
    Err(NO_CLIENT.to_string())
}

/// `serve`; the exit code.
#[cfg(not(feature = "live"))]
pub(crate) fn serve(_root: &Path, _args: &crate::args::ServeArgs) -> u8 {
    eprintln!("error: this build of capspec-cli cannot serve: `serve` runs MCP servers and QuickJS; \
         `cargo install --locked capspec-cli` has them; in an xtask, depend on capspec-cli with `features = [\"live\"]`");
    2
}

#[cfg(feature = "live")]
pub(crate) use client::{import_upstream, upstream_findings};
#[cfg(feature = "live")]
pub(crate) use crate::serve::serve;

#[cfg(feature = "live")]
pub(crate) mod client {
    use std::path::Path;
    use std::time::Duration;

    use capspec::upstream::oauth::{OAuth, credentials_dir};
    use capspec::upstream::{Endpoint, Server, UpstreamError, list_tools};
    use capspec_codegen::load::{self, SpecFile};
    use capspec_codegen::report::{self, Format, Report};
    use capspec_codegen::upstream::{self, Change, Transport, Upstream};
    use capspec_codegen::{Finding, Project};
    use serde_json::Value;

    /// The server `[upstream.NAME]` configures, resolved against `root`.
    pub(crate) fn server(root: &Path, upstream: &Upstream) -> Server {
        let endpoint = match &upstream.transport {
            Transport::Stdio { command, env, cwd } => {
                Endpoint::Stdio { command: command.clone(), env: env.clone(), cwd: Some(root.join(cwd.as_deref().unwrap_or("."))) }
            }
            Transport::Http { url, token_env, oauth } => Endpoint::Http {
                url: url.clone(),
                token: token_env.as_ref().and_then(|v| std::env::var(v).ok()),
                oauth: oauth.as_ref().map(|o| OAuth {
                    client_id: o.client_id.clone(),
                    client_metadata_url: o.client_metadata_url.clone(),
                    scopes: o.scopes.clone(),
                    // No config directory: the store says so when used (never the project).
                    store: credentials_dir().unwrap_or_default(),
                    per_user: o.credentials == capspec_codegen::upstream::Credentials::PerUser,
                }),
            },
        };
        Server { name: upstream.name.clone(), endpoint, timeout: Duration::from_millis(upstream.timeout_ms) }
    }

    fn list(root: &Path, upstream: &Upstream) -> Result<Vec<Value>, UpstreamError> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a current-thread runtime starts");
        runtime.block_on(list_tools(&server(root, upstream)))
    }

    pub(crate) fn open(root: &Path) -> Result<Project, String> {
        let project = capspec_codegen::open(root).map_err(|e| e.to_string())?;
        if project.config.is_none() {
            let (findings, sources) = project.into_findings();
            print!("{}", report::render(&Report { findings, sources }, Format::Human));
            return Err("capspec.toml has errors (above)".into());
        }
        Ok(project)
    }

    pub(crate) fn import_upstream(root: &Path, name: &str, update: bool, bin: &str) -> u8 {
        match import(root, name, update, bin) {
            Ok(code) => code,
            Err(err) => {
                eprintln!("error: {err}");
                2
            }
        }
    }

    fn import(root: &Path, name: &str, update: bool, bin: &str) -> Result<u8, String> {
        let project = open(root)?;
        let config = project.config.as_ref().expect("open checked it");
        let Some(upstream) = config.upstreams.get(name) else {
            let known: Vec<String> = config.upstreams.keys().map(|k| format!("`{k}`")).collect();
            let known = if known.is_empty() { "none is configured".to_string() } else { format!("configured: {}", known.join(", ")) };
            return Err(format!("capspec.toml has no `[upstream.{name}]` ({known}); add it with `command = [...]` or `url = \"…\"`"));
        };
        let rel = format!("{}/{name}.yaml", config.specs.trim_end_matches('/'));
        let path = root.join(&rel);
        let existing = project.loaded.set.module(name).filter(|m| m.file == rel);
        match (path.exists(), update, existing) {
            (true, false, _) => return Err(format!("`{rel}` exists; `import mcp --upstream {name} --update` re-pins it and keeps your decisions")),
            (true, true, None) => return Err(format!("`{rel}` has errors (`{bin} check` shows them); fix them before --update, which keeps what the file decides")),
            _ => {}
        }
        eprintln!("listing [upstream.{name}] …");
        let tools = list(root, upstream).map_err(|e| format!("[upstream.{name}]: {e}"))?;
        let mut pinned = match existing {
            Some(kept) => {
                let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read `{rel}`: {e}"))?;
                upstream::update_module(name, name, &tools, kept, &text)
            }
            None => upstream::pin_module(name, name, &tools, None),
        }
        .map_err(|e| e.to_string())?;
        if pinned.refused {
            // An edit the update would lose: nothing is written.
            let mut sources = capspec_codegen::Sources::default();
            sources.insert(&rel, std::fs::read_to_string(&path).unwrap_or_default());
            let report = Report { findings: std::mem::take(&mut pinned.findings).into_iter().filter(|f| f.file == rel).collect(), sources };
            print!("{}", report::render(&report, Format::Human));
            println!("{rel} is unchanged");
            return Ok(1);
        }
        std::fs::create_dir_all(root.join(&config.specs)).and_then(|()| std::fs::write(&path, &pinned.yaml)).map_err(|e| format!("cannot write `{rel}`: {e}"))?;
        let sources = pinned.written_to(name, &rel);
        let report = Report { findings: std::mem::take(&mut pinned.findings), sources };
        if !report.findings.is_empty() {
            print!("{}", report::render(&report, Format::Human));
        }
        for kept in &pinned.kept_edits {
            println!("kept     your edit of `{kept}` (the server's tool is unchanged)");
        }
        if let Some(old) = existing {
            let new = load::load_files(vec![SpecFile { path: rel.clone(), bytes: pinned.yaml.into_bytes() }]).set.modules.into_iter().next();
            let changes = new.map(|new| upstream::changes_listed(old, &new, &tools)).unwrap_or_default();
            for change in &changes {
                println!("{change}");
                if let Change::Changed { diff, .. } = change {
                    for line in diff.lines() {
                        println!("         {line}");
                    }
                }
            }
            println!("updated {rel}: {} tools pinned, {} changes", pinned.capabilities.len(), changes.len());
        } else {
            for line in pinned.rename_lines() {
                println!("{line}");
            }
            println!("pinned {} tools of [upstream.{name}] into {rel}; review their categories, then `{bin} sync` (generated files) or `{bin} serve`", pinned.capabilities.len());
        }
        Ok(report.exit_code() as u8)
    }

    pub(crate) fn upstream_findings(root: &Path) -> Result<Vec<Finding>, String> {
        let project = open(root)?;
        let config = project.config.as_ref().expect("open checked it");
        let mut findings = Vec::new();
        for module in &project.loaded.set.modules {
            let Some(upstream) = module.upstream.as_ref().and_then(|(server, _)| config.upstreams.get(server)) else { continue };
            eprintln!("listing [upstream.{}] …", upstream.name);
            match list(root, upstream) {
                Ok(tools) => findings.extend(upstream::compare(module, &tools)),
                Err(e @ UpstreamError::Unauthorized { .. }) => findings.push(upstream::unauthorized(module, &e.to_string())),
                Err(e) => findings.push(upstream::unreachable(module, &e.to_string())),
            }
        }
        Ok(findings)
    }
}
