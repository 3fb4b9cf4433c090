//! `serve` (feature `live`): a project's upstream modules as an MCP gateway
//! with no Rust code of the project (DESIGN §10, §12). The pinned specs are
//! loaded as `check` loads them and turned into the runtime's specs — the
//! same values `sync` writes into generated bindings — then the servers
//! start, each capability forwards to its tool, and the mount is served as
//! `agent-host serve` serves its modules.

use std::path::Path;
use std::time::Duration;

use capspec::upstream::{PinnedTool, UpstreamModule, Upstreams};
use capspec::{Annotations, Category, Mode, Module, Spec};
use capspec_codegen::ModuleSpec;
use capspec_codegen::render::{SpecConst, Targets, runtime_module};
use capspec_codegen::upstream::Start;

use crate::args::ServeArgs;
use crate::live::client::{open, server};

/// `serve`; the exit code.
pub(crate) fn serve(root: &Path, args: &ServeArgs) -> u8 {
    match run(root, args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// The upstream modules of the capspec project at `root` (those named in
/// `only`, or all), ready for [`Upstreams::start`]: their specs built as
/// `sync` writes them into bindings, their servers resolved from
/// `capspec.toml`. A host that mounts upstreams beside its own Rust
/// modules (`agent-host serve --upstreams DIR`) calls this too.
pub fn upstream_modules(root: &Path, only: &[String]) -> Result<Vec<UpstreamModule>, String> {
    modules_of(root, &open(root)?, only)
}

fn modules_of(root: &Path, project: &capspec_codegen::Project, only: &[String]) -> Result<Vec<UpstreamModule>, String> {
    let config = project.config.as_ref().expect("open checked it");
    if project.loaded.findings.iter().any(|f| f.severity == capspec_codegen::Severity::Error) {
        return Err("the specs have errors; `cargo capspec check` shows them".into());
    }
    let targets = Targets::from_config(config);
    let wanted = |name: &str| only.is_empty() || only.iter().any(|m| m == name);
    let mut modules = Vec::new();
    for module in project.loaded.set.modules.iter().filter(|m| wanted(&m.name)) {
        let Some((name, _)) = &module.upstream else { continue };
        let upstream = config.upstreams.get(name).ok_or_else(|| format!("module `{}` names `[upstream.{name}]`, which capspec.toml lacks", module.name))?;
        modules.push(upstream_module(module, &targets, server(root, upstream), upstream.start == Start::Lazy));
    }
    for asked in only {
        if !modules.iter().any(|m| m.module.name == asked) {
            return Err(format!("`--modules {asked}`: the project has no upstream module `{asked}`"));
        }
    }
    Ok(modules)
}

/// The first upstream served that says `credentials = "per-user"`.
fn per_user_upstream<'a>(upstreams: &'a std::collections::BTreeMap<String, capspec_codegen::upstream::Upstream>, modules: &[UpstreamModule]) -> Option<&'a capspec_codegen::upstream::Upstream> {
    modules.iter().filter_map(|m| upstreams.get(&m.server.name)).find(|u| {
        matches!(&u.transport, capspec_codegen::upstream::Transport::Http { oauth: Some(o), .. } if o.credentials == capspec_codegen::upstream::Credentials::PerUser)
    })
}

/// A `credentials = "per-user"` upstream calls as each caller (DESIGN §12):
/// over HTTP that needs callers known by name, so `--oauth-issuer` (a
/// shared `--token-file` makes everyone one principal). On stdio the caller
/// is `local`, whose credentials are the operator's log-in.
fn per_user_needs_callers(upstreams: &std::collections::BTreeMap<String, capspec_codegen::upstream::Upstream>, modules: &[UpstreamModule], args: &ServeArgs) -> Result<(), String> {
    if args.http.is_none() || args.oauth_issuer.is_some() {
        return Ok(());
    }
    match per_user_upstream(upstreams, modules) {
        Some(upstream) => Err(format!(
            "[upstream.{}] has `credentials = \"per-user\"`: each caller acts upstream as themselves, so `serve --http` needs `--oauth-issuer` to know who calls (a `--token-file` makes every caller the one principal `token`)",
            upstream.name
        )),
        None => Ok(()),
    }
}

/// `--max-rounds` and `--max-state-bytes`, else the runtime's defaults.
fn replay_bounds(args: &ServeArgs) -> capspec::mcp::ReplayBounds {
    let default = capspec::mcp::ReplayBounds::default();
    capspec::mcp::ReplayBounds { max_rounds: args.max_rounds.unwrap_or(default.max_rounds), max_state_bytes: args.max_state_bytes.unwrap_or(default.max_state_bytes) }
}

fn run(root: &Path, args: &ServeArgs) -> Result<(), String> {
    let project = open(root)?;
    let modules = modules_of(root, &project, &args.modules)?;
    let targets = Targets::from_config(project.config.as_ref().expect("open checked it"));
    if modules.is_empty() {
        return Err("the project has no upstream module to serve: add `[upstream.NAME]` to capspec.toml, then `cargo capspec import mcp --upstream NAME`".into());
    }
    per_user_needs_callers(&project.config.as_ref().expect("open checked it").upstreams, &modules, args)?;
    let mode = Mode::parse(&args.mode).expect("clap checked the mode");
    let surface = capspec::mcp::Surface::parse(&args.surface).expect("clap checked the surface");
    let key = match &args.state_key_file {
        Some(file) => capspec::mcp::StateKey::read_file(file)?,
        None => capspec::mcp::StateKey::random(),
    }
    .with_ttl(Duration::from_secs(args.state_ttl));
    let audit_key = key.audit_key();
    let auth = match (&args.token_file, &args.oauth_issuer, &args.resource) {
        (Some(file), _, _) => Some(capspec::mcp::HttpAuth::TokenFile(file.clone())),
        (None, Some(issuer), Some(resource)) => Some(capspec::mcp::HttpAuth::OAuth(capspec::mcp::oauth::OAuthOptions {
            issuer: issuer.clone(),
            resource: resource.clone(),
            groups_claim: args.groups_claim.clone(),
            jwks_file: args.jwks_file.clone(),
        })),
        _ => None,
    };
    let listen = match (args.http, auth) {
        (Some(addr), Some(auth)) => capspec::mcp::Listen::Http { addr, auth, allowed_origins: args.allowed_origin.clone() },
        _ => capspec::mcp::Listen::Stdio,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async move {
        #[cfg(feature = "otlp")]
        let otlp = export_spans()?;
        #[cfg(feature = "store")]
        let (vault, authorizer) = per_user_vault(root, &project, &modules, args, &key).await?;
        #[cfg(not(feature = "store"))]
        let (vault, authorizer): (_, Option<std::sync::Arc<capspec::upstream::Authorizer>>) = (None, None);
        let upstreams = Upstreams::start_with_vault(modules, vault).await;
        for left in upstreams.unmounted() {
            eprintln!("capspec serve: module `{}` is not mounted: {}", left.module, left.reason);
        }
        for line in served_summary(&upstreams.modules(), surface) {
            eprintln!("capspec serve: {line}");
        }
        let registry = capspec::Registry::with_forwards(&upstreams.modules(), [], [], upstreams.forwards()).map_err(|e| e.problems.join("\n"))?;
        #[cfg(feature = "store")]
        let log = {
            let log = audit_log(root, args, audit_key).await?;
            if let Some(authorizer) = &authorizer {
                authorizer.record_to(log.clone());
            }
            log
        };
        #[cfg(not(feature = "store"))]
        let _ = audit_key;
        // One host per surface, all alike but for what they mount and their mode.
        let identity = identity(root, &project.config.as_ref().expect("open checked it").identity);
        let host = |mounted: capspec::Mounted, mode: Mode| -> Result<capspec::mcp::McpHost, String> {
            let guest = capspec::guest::Guest::new(mounted).specifier(&targets.specifier).bridge(&targets.bridge);
            let host = capspec::mcp::McpHost::new(guest, surface, mode).with_identity(identity.clone());
            let host = with_policies(host, root, &project, args)?.with_state_key(key.clone())
                .with_replay_bounds(replay_bounds(args))
                .with_unmounted(upstreams.unmounted().to_vec());
            let host = match authorizer.clone() {
                Some(authorizer) => host.with_browser_pages(authorizer),
                None => host,
            };
            #[cfg(feature = "store")]
            let host = host.with_audit(log.clone());
            Ok(if args.no_result_receipts { host.without_result_receipts() } else { host })
        };
        let config = project.config.as_ref().expect("open checked it");
        let mut named = Vec::new();
        for surface in config.surfaces.values() {
            let mode = surface.mode.as_deref().map_or(mode, |m| Mode::parse(m).expect("the config reader checked the mode"));
            let served = named_mount(&registry, surface)?;
            let host = host(served, mode)?.limited_to(&surface.capabilities.iter().map(|(g, _)| g.clone()).collect::<Vec<_>>());
            named.push(capspec::mcp::Named { name: surface.name.clone(), path: surface.path.clone(), host, groups: surface.groups.iter().map(|(g, _)| g.clone()).collect() });
        }
        let default = match &args.surface_name {
            None => host(registry.mount_all(), mode)?,
            Some(name) => match named.iter().position(|n| &n.name == name) {
                Some(at) => named.remove(at).host,
                None => {
                    let known: Vec<&str> = config.surfaces.keys().map(String::as_str).collect();
                    return Err(format!("`--surface-name {name}`: capspec.toml has no `[surface.{name}]`{}", capspec_codegen::rules::did_you_mean(name, known.iter().copied())));
                }
            },
        };
        let served = capspec::mcp::serve_with(default, named, listen, "capspec serve").await.map_err(|e| e.to_string());
        upstreams.shutdown().await;
        #[cfg(feature = "otlp")]
        if let Some(otlp) = otlp {
            // The last batch goes out before the process ends (the exporter may need this runtime).
            if let Ok(Err(e)) = tokio::task::spawn_blocking(move || otlp.shutdown()).await {
                eprintln!("capspec serve: {e}");
            }
        }
        served
    })
}

/// The OTLP export the `OTEL_*` variables ask for (DESIGN §10), installed
/// as this process's `tracing` subscriber; `None` when they ask for none.
#[cfg(feature = "otlp")]
fn export_spans() -> Result<Option<capspec::otlp::Otlp>, String> {
    use tracing_subscriber::prelude::*;
    let Some(otlp) = capspec::otlp::Otlp::from_env("capspec-serve").map_err(|e| e.to_string())? else { return Ok(None) };
    tracing_subscriber::registry().with(otlp.layer()).try_init().map_err(|e| format!("cannot install the OTLP export: {e}"))?;
    eprintln!("capspec serve: exporting every call's span over OTLP to {}", otlp.describe());
    Ok(Some(otlp))
}

/// What `serve` serves, once at start (on stderr: stdout may be the MCP
/// channel): per module, which capabilities are listed as tools and which
/// are deferred (callable by name, found by `tool_search`), so a deferred
/// module is never a surprise.
/// The served server's identity (DESIGN §10): `[serve]`'s keys, else the
/// root package's name and version (its `Cargo.toml`), else the root
/// directory's name.
fn identity(root: &Path, config: &capspec_codegen::ServeIdentity) -> capspec::mcp::ServerIdentity {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).ok().and_then(|t| t.parse::<toml::Table>().ok());
    let package = manifest.as_ref().and_then(|m| m.get("package")).and_then(|p| p.as_table());
    let field = |key: &str| package.and_then(|p| p.get(key)).and_then(|v| v.as_str()).map(str::to_owned);
    let directory = root.canonicalize().ok().and_then(|r| r.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_else(|| "capspec".into());
    let name = config.name.clone().or_else(|| field("name")).unwrap_or(directory);
    let version = config.version.clone().or_else(|| field("version")).unwrap_or_else(|| "0.0.0".into());
    let mut identity = capspec::mcp::ServerIdentity::new(name, version);
    if let Some(title) = &config.title {
        identity = identity.with_title(title.clone());
    }
    if let Some(instructions) = &config.instructions {
        identity = identity.with_instructions(instructions.clone());
    }
    identity
}

fn served_summary(modules: &[Module], surface: capspec::mcp::Surface) -> Vec<String> {
    let mut lines = Vec::new();
    for m in modules {
        let listed: Vec<&str> = m
            .specs
            .iter()
            .filter(|s| match surface {
                capspec::mcp::Surface::Tools => !s.deferred,
                capspec::mcp::Surface::Code => s.direct,
            })
            .map(|s| s.wire_name)
            .collect();
        let deferred = m.specs.iter().filter(|s| s.deferred).count();
        let as_tools = match (surface, listed.is_empty()) {
            (_, true) => "none as its own tool".to_string(),
            // A long list is cut: `tools/list` has the rest.
            (_, false) if listed.len() > 8 => format!("{} as tools ({}, …)", listed.len(), listed[..8].join(", ")),
            (_, false) => format!("{} as tools ({})", listed.len(), listed.join(", ")),
        };
        let rest = match surface {
            capspec::mcp::Surface::Code => "every one callable from `execute_code`".to_string(),
            capspec::mcp::Surface::Tools if deferred == 0 => "none deferred".to_string(),
            capspec::mcp::Surface::Tools => format!(
                "{deferred} deferred: callable by name and found by `tool_search`, not listed (the module file's `deferred: false` lists one)"
            ),
        };
        lines.push(format!("module `{}` ({} capabilities): {as_tools}; {rest}", m.name, m.specs.len()));
    }
    lines
}

/// What a named surface mounts: its `modules` that are served (all when it
/// names none). One whose server did not start is left out, as it is from
/// `/mcp`; one the project does not have is an error (`check` says where).
fn named_mount(registry: &std::sync::Arc<capspec::Registry>, surface: &capspec_codegen::NamedSurface) -> Result<capspec::Mounted, String> {
    if surface.modules.is_empty() {
        return Ok(registry.mount_all());
    }
    let served: Vec<&str> = registry.modules().iter().map(|m| m.name).collect();
    let names: Vec<&str> = surface.modules.iter().map(|(m, _)| m.as_str()).filter(|m| served.contains(m)).collect();
    registry.mount(&names).map_err(|e| format!("[surface.{}]: {}", surface.name, e.problems.join("; ")))
}

/// The host with the project's policies on every run (`[policy] dir`);
/// a project that has policies is not served without them.
fn with_policies(host: capspec::mcp::McpHost, root: &Path, project: &capspec_codegen::Project, args: &ServeArgs) -> Result<capspec::mcp::McpHost, String> {
    let Some(policy) = project.config.as_ref().and_then(|c| c.policy.as_ref()) else { return Ok(host) };
    #[cfg(feature = "policy")]
    {
        let mode = capspec::policy::PolicyMode::parse(&args.policy_mode).expect("clap checked the policy mode");
        let gate = std::sync::Arc::new(capspec::policy::PolicyGate::load(&root.join(&policy.dir), mode).map_err(|e| format!("[policy] dir = {:?}: {e}", policy.dir))?);
        Ok(host.prepare_run(move |run_gate| capspec::Run::new(run_gate).with_policies(gate.clone())))
    }
    #[cfg(not(feature = "policy"))]
    {
        let _ = (host, root, args);
        Err(format!("the project has policies (`{}/`), and this capspec was built without its `policy` feature: it would serve them unenforced, so it does not serve", policy.dir))
    }
}

/// The runtime's view of one pinned upstream module: its specs (leaked:
/// they live as long as the process, as generated ones do), and per
/// capability its tool and pin.
fn upstream_module(module: &ModuleSpec, targets: &Targets, server: capspec::upstream::Server, lazy: bool) -> UpstreamModule {
    let rendered = runtime_module(module, targets);
    let specs: &'static [Spec] = Vec::leak(rendered.specs.iter().map(spec).collect());
    let tools = module
        .capabilities
        .iter()
        .zip(specs)
        .map(|(cap, spec)| PinnedTool { spec, tool: cap.tool.clone().unwrap_or_else(|| cap.name.clone()), pin: cap.pin.clone() })
        .collect();
    let module = Module { name: leak(&module.name), description: leak(&module.description), specs, facade: leak(&rendered.facade), catalog: leak(&rendered.catalog) };
    UpstreamModule { server, lazy, module, tools }
}

fn leak(text: &str) -> &'static str {
    String::leak(text.to_string())
}

fn spec(values: &SpecConst) -> Spec {
    let a = values.annotations;
    Spec {
        module: leak(&values.module),
        name: leak(&values.name),
        wire_name: leak(&values.wire_name),
        title: values.title.as_deref().map(leak),
        annotations: Annotations { read_only: a.read_only, destructive: a.destructive, idempotent: a.idempotent, open_world: a.open_world },
        category: match values.category {
            "Read" => Category::Read,
            "Write" => Category::Write,
            "Execute" => Category::Execute,
            _ => Category::External,
        },
        description: leak(&values.description),
        summary: leak(&values.summary),
        signature: leak(&values.signature),
        input_schema: leak(&values.input_schema),
        output_schema: values.output_schema.as_deref().map(leak),
        user_message: values.user_message.as_deref().map(leak),
        deferred: values.deferred,
        direct: values.direct,
        aliases: Vec::leak(values.aliases.iter().map(|a| leak(a)).collect()),
        deprecated: values.deprecated.as_deref().map(leak),
        fingerprint: leak(&values.fingerprint),
    }
}

/// Where a `per-user` upstream's callers' credentials are kept (DESIGN §12):
/// the vault of the project's serve store, with the pages where each person
/// authorizes; `None` when no upstream served is `per-user`, or on stdio.
#[cfg(feature = "store")]
async fn per_user_vault(
    root: &Path,
    project: &capspec_codegen::Project,
    modules: &[UpstreamModule],
    args: &ServeArgs,
    key: &capspec::mcp::StateKey,
) -> Result<(Option<std::sync::Arc<dyn capspec::upstream::CredentialVault>>, Option<std::sync::Arc<capspec::upstream::Authorizer>>), String> {
    let upstreams = &project.config.as_ref().expect("open checked it").upstreams;
    let per_user = per_user_upstream(upstreams, modules).is_some();
    // On stdio the one caller is `local`, whose credential is the operator's log-in.
    if !per_user || args.http.is_none() {
        return Ok((None, None));
    }
    let store = capspec_store::Store::open(&crate::audit::store_url(root, args.store.as_deref())).await.map_err(|e| e.0)?;
    if args.state_key_file.is_none() {
        eprintln!("capspec serve: without --state-key-file, per-user credentials are sealed with a key of this run's: after a restart each person authorizes again");
    }
    let vault = std::sync::Arc::new(capspec_store::Vault::new(store, key.vault_key()));
    // Where each person authorizes: the gateway's own pages, on --resource's origin.
    let Some(resource) = &args.resource else { return Ok((Some(vault), None)) };
    let options = capspec::upstream::AuthorizeOptions { base: resource.clone(), client_id: args.oauth_client_id.clone(), key: key.clone() };
    let upstreams = modules.iter().filter_map(|m| m.server.oauth().map(|(url, oauth)| (m.server.name.clone(), url.to_string(), oauth.clone())));
    let authorizer = std::sync::Arc::new(capspec::upstream::Authorizer::new(options, vault, upstreams).map_err(|e| format!("--resource: {e}"))?);
    Ok((Some(authorizer.clone()), Some(authorizer)))
}

/// The audit log every served call is recorded in (DESIGN §15): the
/// project's serve store, this instance's chain in it.
#[cfg(feature = "store")]
async fn audit_log(root: &Path, args: &ServeArgs, key: [u8; 32]) -> Result<std::sync::Arc<capspec_store::AuditLog>, String> {
    let url = crate::audit::store_url(root, args.store.as_deref());
    let store = capspec_store::Store::open(&url).await.map_err(|e| e.0)?;
    let instance = args.instance.clone().unwrap_or_else(|| capspec_store::default_instance(&args.http.map_or_else(|| "stdio".to_string(), |a| a.to_string())));
    let url = store.url().to_string();
    let options = capspec_store::AuditOptions { instance, named: args.instance.is_some(), key, keep_arguments: args.audit_arguments };
    let log = capspec_store::AuditLog::start(store, options).await.map_err(|e| e.0)?;
    eprintln!("capspec serve: recording every call in the audit log at `{url}` (instance `{}`)", log.instance());
    if args.state_key_file.is_none() {
        eprintln!("capspec serve: without --state-key-file, the audit log's keyed hashes change at every start (`audit query --arguments` matches only this run's)");
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &'static str, deferred: bool, direct: bool) -> Spec {
        Spec {
            module: "m",
            name,
            wire_name: name,
            title: None,
            annotations: Annotations { read_only: true, destructive: false, idempotent: true, open_world: false },
            category: Category::Read,
            description: "D.",
            summary: "D.",
            signature: "",
            input_schema: "{}",
            output_schema: None,
            user_message: None,
            deferred,
            direct,
            aliases: &[],
            deprecated: None,
            fingerprint: "",
        }
    }

    #[test]
    fn the_summary_says_what_is_listed_and_what_is_deferred() {
        let specs: &'static [Spec] = Vec::leak(vec![spec("read_graph", false, true), spec("search_nodes", true, false), spec("open_nodes", true, false)]);
        let modules = [Module { name: "memory", description: "M.", specs, facade: "", catalog: "" }];
        assert_eq!(
            served_summary(&modules, capspec::mcp::Surface::Tools),
            ["module `memory` (3 capabilities): 1 as tools (read_graph); 2 deferred: callable by name and found by `tool_search`, not listed (the module file's `deferred: false` lists one)"]
        );
        assert_eq!(
            served_summary(&modules, capspec::mcp::Surface::Code),
            ["module `memory` (3 capabilities): 1 as tools (read_graph); every one callable from `execute_code`"]
        );
    }
}
