//! agent-host: the reference host for the repo's `specs/`.
//!
//! `run` runs a guest JavaScript action; `catalog` prints the prompt catalog
//! of the mounted modules; `call` runs one capability through the gate, the
//! way a provider tool loop would; `serve` serves them over MCP.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agent_host::capabilities::memory::SessionMemory;
use agent_host::workspace::Workspace;
use capspec::{Approval, ApprovalRequest, Approver, BoxFuture, Gate, HeadlessApprover, Mode, Run, SessionAllow};
use clap::{Parser, Subcommand};

/// The reference host for this repo's `specs/`.
#[derive(Parser)]
#[command(
    name = "agent-host",
    about = "The reference capspec host: run guest JavaScript actions and single capability calls through the gate",
    after_help = "Exit codes: run: 0 the action completed (even if it caught denied calls), 1 it threw or hit a limit;\n\
                  call: 0 the call succeeded, 1 it was refused or failed; 2 a usage error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Write every span — each capability call's `execute_tool` span, under the guest action
    /// or MCP request that made it — to FILE, one JSON object per line. Logs go to stderr,
    /// filtered by RUST_LOG (default: warn). With OTEL_EXPORTER_OTLP_ENDPOINT set, the
    /// spans are exported over OTLP too (OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf or grpc).
    #[arg(long, value_name = "FILE", global = true)]
    trace_file: Option<PathBuf>,
}

mod trace;

/// The OTLP export and the runtime its gRPC connection runs on, kept until
/// the process ends.
struct Exporting {
    otlp: capspec::otlp::Otlp,
    _runtime: tokio::runtime::Runtime,
}

/// Logs to stderr (RUST_LOG); with `--trace-file` every span to the file;
/// with the standard `OTEL_*` variables every span over OTLP.
fn init_tracing(trace_file: Option<&std::path::Path>) -> Result<Option<Exporting>, String> {
    use tracing_subscriber::prelude::*;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_filter(filter);
    let file = trace_file.map(trace::TraceFile::create).transpose().map_err(|e| format!("cannot write the trace file: {e}"))?;
    let exporting = match capspec::otlp::requested() {
        None => None,
        Some(_) => {
            let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().map_err(|e| format!("cannot start the async runtime: {e}"))?;
            let otlp = {
                let _inside = runtime.enter();
                capspec::otlp::Otlp::from_env("agent-host").map_err(|e| e.to_string())?
            };
            otlp.map(|otlp| Exporting { otlp, _runtime: runtime })
        }
    };
    tracing_subscriber::registry().with(logs).with(file).with(exporting.as_ref().map(|e| e.otlp.layer())).init();
    Ok(exporting)
}

// Parsed once per process: `serve`'s many flags make it the large variant,
// and boxing it would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run a guest JavaScript action (an ES module whose default export is the action,
    /// usually an async function) in QuickJS against the mounted modules. Prints the
    /// result and a receipts table, or with --json one object
    /// {"result", "error", "receipts": [{capability, decision, status, ms}], "logs"}.
    Run {
        /// The action's source file.
        file: PathBuf,
        #[command(flatten)]
        session: SessionArgs,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Serve the mounted modules over MCP: stdio by default, Streamable HTTP at /mcp with
    /// --http. Every call goes through the gate; `ask` becomes an elicitation when the
    /// client declared it, and is denied with a named reason otherwise. On protocol
    /// 2026-07-28 an `execute_code` action that asks is resumed by replay: its calls so far
    /// travel, encrypted, in the `requestState`, and none runs twice.
    #[command(group(clap::ArgGroup::new("auth").args(["token_file", "oauth_issuer"])))]
    Serve {
        /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8931) instead of stdio;
        /// needs --token-file or --oauth-issuer.
        #[arg(long, value_name = "ADDR", requires = "auth")]
        http: Option<std::net::SocketAddr>,
        /// A file holding the one bearer token every HTTP request must carry
        /// (`Authorization: Bearer <token>`; principal `token`); surrounding whitespace
        /// is ignored.
        #[arg(long, value_name = "FILE", requires = "http")]
        token_file: Option<PathBuf>,
        /// Serve HTTP as an OAuth 2.1 resource server: every request carries an access
        /// token (a JWT) from this issuer, for --resource; its `sub` is the principal and
        /// its `capspec:<category>` scopes say which categories it may call. Keys come
        /// from the issuer's metadata (RFC 8414 or OpenID) unless --jwks-file.
        #[arg(long, value_name = "URL", requires_all = ["http", "resource"])]
        oauth_issuer: Option<String>,
        /// This server's URL as clients reach it (e.g. https://tools.example.com/mcp):
        /// an access token's `aud` must hold it.
        #[arg(long, value_name = "URL", requires = "oauth_issuer")]
        resource: Option<String>,
        /// The access token's claim listing the caller's groups (policies read them).
        #[arg(long, value_name = "NAME", default_value = capspec::mcp::oauth::OAuthOptions::DEFAULT_GROUPS_CLAIM, requires = "oauth_issuer")]
        groups_claim: String,
        /// The issuer's keys (a JWKS document) from this file instead of its metadata.
        #[arg(long, value_name = "FILE", requires = "oauth_issuer")]
        jwks_file: Option<PathBuf>,
        /// Admit HTTP requests from this origin (e.g. https://app.example.com) besides
        /// loopback ones; repeatable. Any other Origin (or, without one, Host) gets 403,
        /// token or not, so a web page cannot reach the server through DNS rebinding.
        #[arg(long, value_name = "ORIGIN", requires = "http")]
        allowed_origin: Vec<String>,
        /// Serve the MCP endpoint inside an HTTP app with routes of its own (`GET
        /// /health`), as a host does with `capspec::mcp::router`: same admission, same
        /// protocol, one port.
        #[arg(long, requires = "http")]
        app: bool,
        /// A file holding the key that seals the `requestState` of a 2026-07-28
        /// approval round: its bytes as they are, at least 32 (make one with
        /// `head -c 32 /dev/urandom > FILE`); instances serving one client behind a load
        /// balancer share it. Without it, a random key per process.
        #[arg(long, value_name = "FILE")]
        state_key_file: Option<PathBuf>,
        /// How long (in seconds) a 2026-07-28 approval round's `requestState` stays valid:
        /// the time a user has to answer.
        #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        state_ttl: u64,
        /// On 2026-07-28 an `execute_code` action that asks is resumed by replay: at most
        /// this many asks per action, then it ends with `limit_exceeded`.
        #[arg(long, value_name = "N", default_value_t = capspec::mcp::MAX_ROUNDS, value_parser = clap::value_parser!(u32).range(1..))]
        max_rounds: u32,
        /// The most bytes a resumed action's `requestState` (its journal, results
        /// included) may have; past it the action ends with `limit_exceeded`.
        #[arg(long, value_name = "N", default_value_t = capspec::mcp::MAX_STATE_BYTES)]
        max_state_bytes: usize,
        /// `code`: the `execute_code` tool plus capabilities marked `direct: true`;
        /// `tools`: one tool per non-deferred capability, named by its wire name.
        #[arg(long, value_parser = parse_surface, default_value = "code")]
        surface: capspec::mcp::Surface,
        /// Also mount the upstream modules of the capspec project at DIR (its
        /// capspec.toml's [upstream.*] servers and their pinned specs) beside the Rust
        /// modules, as `cargo capspec serve` mounts them. This repository's root has one.
        #[arg(long, value_name = "DIR")]
        upstreams: Option<PathBuf>,
        /// Record every call in the audit log of this serve store (`sqlite:PATH` or
        /// `postgres://…`): a decision record before it runs, an outcome after.
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        /// With --store: record argument values too, not only their keyed hashes.
        #[arg(long, requires = "store")]
        audit_arguments: bool,
        #[command(flatten)]
        session: SessionArgs,
    },
    /// Print the prompt catalog of the mounted modules.
    Catalog {
        #[command(flatten)]
        modules: ModulesArg,
    },
    /// Call one capability by name or alias through the gate and print {"result": …} or
    /// {"error", "message", "capability"}, then the receipt on stderr. In `ask` cases it
    /// prompts y / n / a (allow for the session) on stderr when stdin is a terminal, and
    /// denies with a named reason when it is not.
    Call {
        /// The capability: `module.name`, its wire name, or a bare name or alias.
        name: String,
        /// Its arguments as a JSON object.
        #[arg(default_value = "{}")]
        args_json: String,
        #[command(flatten)]
        session: SessionArgs,
    },
}

#[derive(clap::Args)]
struct ModulesArg {
    /// Mount only these modules (comma-separated); default: all.
    #[arg(long, value_delimiter = ',')]
    modules: Option<Vec<String>>,
}

#[derive(clap::Args)]
struct SessionArgs {
    /// The permission mode the gate applies.
    #[arg(long, value_parser = parse_mode, default_value = "default")]
    mode: Mode,
    /// The directory file capabilities are confined to. Default: <temp dir>/agent-host-workspace.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    modules: ModulesArg,
    /// Decide calls by the Cedar policies (`*.cedar`) in DIR too (DESIGN §14): a forbid
    /// denies in every mode, an `@ask` permit asks, a permit allows (plan still blocks
    /// non-reads); check them against the specs with `cargo xtask check`.
    #[arg(long, value_name = "DIR")]
    policies: Option<PathBuf>,
    /// `enforce` the policies, or only `log` what they would decide (in receipts and the
    /// `capspec.policy` span field) while mode × category decides.
    #[arg(long, value_parser = parse_policy_mode, default_value = "enforce", requires = "policies")]
    policy_mode: capspec::policy::PolicyMode,
}

fn parse_policy_mode(text: &str) -> Result<capspec::policy::PolicyMode, String> {
    capspec::policy::PolicyMode::parse(text).ok_or_else(|| format!("unknown policy mode `{text}`; use enforce or log"))
}

/// The policies `--policies` names, loaded; `Err` (reported) when they do not parse.
fn load_policies(options: &SessionArgs) -> Result<Option<Arc<capspec::policy::PolicyGate>>, ()> {
    let Some(dir) = &options.policies else { return Ok(None) };
    match capspec::policy::PolicyGate::load(dir, options.policy_mode) {
        Ok(gate) => Ok(Some(Arc::new(gate))),
        Err(e) => {
            eprintln!("agent-host: --policies {}: {e}", dir.display());
            Err(())
        }
    }
}

/// `run` with the policies on it, if any.
fn with_policies(run: Run, policies: &Option<Arc<capspec::policy::PolicyGate>>) -> Run {
    match policies {
        Some(policies) => run.with_policies(policies.clone()),
        None => run,
    }
}

fn parse_surface(text: &str) -> Result<capspec::mcp::Surface, String> {
    capspec::mcp::Surface::parse(text).ok_or_else(|| format!("unknown surface `{text}`; use code or tools"))
}

fn parse_mode(text: &str) -> Result<Mode, String> {
    Mode::parse(text).ok_or_else(|| format!("unknown mode `{text}`; use plan, default, accept-edits or auto"))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { 2 } else { 0 });
        }
    };
    let exporting = match init_tracing(cli.trace_file.as_deref()) {
        Ok(exporting) => exporting,
        Err(e) => {
            eprintln!("agent-host: {e}");
            return ExitCode::from(2);
        }
    };
    let code = command(cli);
    if let Some(exporting) = exporting {
        // The last batch goes out before the process ends.
        if let Err(e) = exporting.otlp.shutdown() {
            eprintln!("agent-host: {e}");
        }
    }
    code
}

fn command(cli: Cli) -> ExitCode {
    let modules = match &cli.command {
        Command::Run { session, .. } | Command::Call { session, .. } | Command::Serve { session, .. } => &session.modules.modules,
        Command::Catalog { modules } => &modules.modules,
    };
    let registry = match agent_host::registry() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("agent-host: {e}");
            return ExitCode::from(2);
        }
    };
    let names: Vec<String> = modules.clone().unwrap_or_else(|| registry.modules().iter().map(|m| m.name.to_string()).collect());
    let mounted = match registry.mount(&names.iter().map(String::as_str).collect::<Vec<_>>()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("agent-host: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Run { file, json, session } => {
            let Some(run) = session_run(&session, &mounted) else { return ExitCode::from(2) };
            let source = match std::fs::read_to_string(&file) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("agent-host: cannot read `{}`: {e}", file.display());
                    return ExitCode::from(2);
                }
            };
            let outcome = capspec::guest::Guest::new(mounted.clone()).run(&run, &source);
            let receipts = run.receipts();
            if json {
                println!("{}", outcome.report(&run));
            } else {
                for line in &outcome.logs {
                    println!("{line}");
                }
                match (&outcome.result, &outcome.error) {
                    (Some(result), _) => println!("result: {}", serde_json::to_string_pretty(result).unwrap_or_default()),
                    (None, Some(error)) => println!("error: {error}"),
                    (None, None) => {}
                }
                println!("\n{:<28} {:<9} {:<8} {:>9}", "capability", "decision", "status", "ms");
                for r in &receipts {
                    let decision = r.decision.map(|d| format!("{d:?}").to_lowercase()).unwrap_or_else(|| "-".into());
                    let status = format!("{:?}", r.status).to_lowercase();
                    println!("{:<28} {:<9} {:<8} {:>9.3}", r.capability, decision, status, r.duration.as_secs_f64() * 1000.0);
                }
            }
            if outcome.error.is_none() { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Command::Call { name, args_json, session } => {
            let Some(run) = session_run(&session, &mounted) else { return ExitCode::from(2) };
            let Ok(arguments) = serde_json::from_str::<serde_json::Value>(&args_json) else {
                eprintln!("agent-host: ARGS_JSON is not JSON: {args_json}");
                return ExitCode::from(2);
            };
            let request = serde_json::json!({ "name": name, "arguments": arguments }).to_string();
            let reply = capspec::testing::block_on(mounted.invoke_json(&run, &request));
            println!("{reply}");
            for receipt in run.receipts() {
                eprintln!("receipt: {}", serde_json::to_string(&receipt).expect("receipts serialize"));
            }
            let ok = serde_json::from_str::<serde_json::Value>(&reply).is_ok_and(|v| v.get("result").is_some());
            if ok { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Command::Catalog { .. } => {
            print!("{}", mounted.catalog());
            ExitCode::SUCCESS
        }
        Command::Serve { http, token_file, oauth_issuer, resource, groups_claim, jwks_file, allowed_origin, app, state_key_file, state_ttl, max_rounds, max_state_bytes, surface, upstreams, store, audit_arguments, session } => {
            let key = match state_key_file.as_deref().map(capspec::mcp::StateKey::read_file).transpose() {
                Ok(key) => key.unwrap_or_else(capspec::mcp::StateKey::random).with_ttl(std::time::Duration::from_secs(state_ttl)),
                Err(e) => {
                    eprintln!("agent-host: {e}");
                    return ExitCode::from(2);
                }
            };
            let bounds = capspec::mcp::ReplayBounds { max_rounds, max_state_bytes };
            let auth = match (token_file, oauth_issuer.zip(resource)) {
                (Some(file), _) => Some(capspec::mcp::HttpAuth::TokenFile(file)),
                (None, Some((issuer, resource))) => {
                    Some(capspec::mcp::HttpAuth::OAuth(capspec::mcp::oauth::OAuthOptions { issuer, resource, groups_claim, jwks_file }))
                }
                (None, None) => None,
            };
            let store = store.map(|url| (url, audit_arguments, http.map_or_else(|| "stdio".to_string(), |a| a.to_string())));
            serve(Mount { mounted, upstreams, store }, http.zip(auth).map(|(addr, auth)| (addr, auth, app)), allowed_origin, (key, bounds), surface, &session)
        }
    }
}

/// `serve --app`: the app's own route and capspec's endpoint, merged into
/// one axum app, as a host that already has an HTTP app serves MCP.
async fn serve_app(host: capspec::mcp::McpHost, addr: std::net::SocketAddr, auth: capspec::mcp::HttpAuth, allowed_origins: Vec<String>) -> std::io::Result<()> {
    let options = capspec::mcp::HttpOptions::with_auth(auth.load().await?).with_allowed_origins(allowed_origins);
    let endpoint = capspec::mcp::McpEndpoint::new(host, options);
    let app = axum::Router::new().route("/health", axum::routing::get(|| async { "ok\n" })).merge(capspec::mcp::router(endpoint));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| std::io::Error::other(format!("cannot listen on {addr}: {e}")))?;
    let at = listener.local_addr()?;
    eprintln!("agent-host: serving MCP at http://{at}{}", capspec::mcp::MCP_PATH);
    eprintln!("agent-host: the app's own route: http://{at}/health");
    axum::serve(listener, app).await
}

/// The audit log of the store at `url`, this instance's chain in it.
async fn audit_log(url: &str, keep_arguments: bool, served: &str, key: [u8; 32]) -> Result<std::sync::Arc<capspec_store::AuditLog>, String> {
    let store = capspec_store::Store::open(url).await.map_err(|e| e.0)?;
    let url = store.url().to_string();
    let options = capspec_store::AuditOptions { instance: capspec_store::default_instance(served), named: false, key, keep_arguments };
    let log = capspec_store::AuditLog::start(store, options).await.map_err(|e| e.0)?;
    eprintln!("agent-host: recording every call in the audit log at `{url}` (instance `{}`)", log.instance());
    Ok(log)
}

/// What `serve` mounts: the Rust modules, and the upstream modules of a
/// capspec project.
struct Mount {
    mounted: capspec::Mounted,
    upstreams: Option<PathBuf>,
    /// `--store`: the audit log's store, whether argument values are kept,
    /// and what the instance serves (its name in the log).
    store: Option<(String, bool, String)>,
}

/// `agent-host serve`: every MCP call runs with the workspace and memory
/// of this process, in the fixed mode.
#[allow(clippy::too_many_arguments)]
fn serve(
    mount: Mount,
    http: Option<(std::net::SocketAddr, capspec::mcp::HttpAuth, bool)>,
    allowed_origins: Vec<String>,
    (state_key, bounds): (capspec::mcp::StateKey, capspec::mcp::ReplayBounds),
    surface: capspec::mcp::Surface,
    options: &SessionArgs,
) -> ExitCode {
    let Some(workspace) = open_workspace(options) else { return ExitCode::from(2) };
    let Ok(policies) = load_policies(options) else { return ExitCode::from(2) };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("agent-host: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let (mounted, upstreams) = match mount.upstreams {
        None => (mount.mounted, None),
        Some(dir) => match runtime.block_on(with_upstreams(&mount.mounted, &dir)) {
            Ok((mounted, upstreams)) => (mounted, Some(upstreams)),
            Err(e) => {
                eprintln!("agent-host: --upstreams {}: {e}", dir.display());
                return ExitCode::from(2);
            }
        },
    };
    let memory = SessionMemory::default();
    let for_runs = mounted.clone();
    // The server is agent-host at its version, not capspec (DESIGN §10).
    let host = capspec::mcp::McpHost::new(capspec::guest::Guest::new(mounted), surface, options.mode)
        .with_identity(capspec::server_identity!())
        .prepare_run(move |gate| with_policies(Run::new(gate).with(workspace.clone()).with(memory.clone()).with(for_runs.clone()), &policies));
    let audit_key = state_key.audit_key();
    let host = match mount.store.map(|(url, keep_arguments, served)| runtime.block_on(audit_log(&url, keep_arguments, &served, audit_key))) {
        None => host,
        Some(Ok(log)) => host.with_audit(log),
        Some(Err(e)) => {
            eprintln!("agent-host: --store: {e}");
            return ExitCode::from(2);
        }
    };
    let host = host.with_state_key(state_key).with_replay_bounds(bounds).with_unmounted(upstreams.iter().flat_map(|u| u.unmounted().to_vec()));
    let served = runtime.block_on(async move {
        let served = match http {
            None => capspec::mcp::serve(host, capspec::mcp::Listen::Stdio, "agent-host").await,
            Some((addr, auth, true)) => serve_app(host, addr, auth, allowed_origins).await,
            Some((addr, auth, false)) => capspec::mcp::serve(host, capspec::mcp::Listen::Http { addr, auth, allowed_origins }, "agent-host").await,
        };
        if let Some(upstreams) = upstreams {
            upstreams.shutdown().await;
        }
        served
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agent-host: {e}");
            ExitCode::from(2)
        }
    }
}

/// `mounted` plus the upstream modules of the capspec project at `dir`,
/// started (a server that does not start leaves its module out, with the
/// reason for the capabilities resource).
async fn with_upstreams(mounted: &capspec::Mounted, dir: &std::path::Path) -> Result<(capspec::Mounted, capspec::upstream::Upstreams), String> {
    let upstreams = capspec::upstream::Upstreams::start(capspec_cli::upstream_modules(dir, &[])?).await;
    for left in upstreams.unmounted() {
        eprintln!("agent-host: module `{}` is not mounted: {}", left.module, left.reason);
    }
    let mut modules: Vec<capspec::Module> = agent_host::generated::MODULES.to_vec();
    modules.extend(upstreams.modules());
    let registry = capspec::Registry::with_upstreams(&modules, upstreams.forwards()).map_err(|e| e.to_string())?;
    let mut names: Vec<&str> = mounted.module_names();
    names.extend(upstreams.modules().iter().map(|m| m.name));
    let mounted = registry.mount(&names).map_err(|e| e.to_string())?;
    Ok((mounted, upstreams))
}

/// A run for this invocation: the workspace, session memory, the mounted
/// modules (for `run_plan`), and an approver that asks on the terminal when
/// there is one and denies with a named reason when there is not.
fn session_run(options: &SessionArgs, mounted: &capspec::Mounted) -> Option<Run> {
    let workspace = open_workspace(options)?;
    let approver: Arc<dyn Approver> = if std::io::stdin().is_terminal() {
        Arc::new(TerminalApprover)
    } else {
        Arc::new(HeadlessApprover::new("agent-host (stdin is not a terminal)"))
    };
    let policies = load_policies(options).ok()?;
    let run = Run::new(Gate::new(options.mode, approver, SessionAllow::new())).with(workspace).with(SessionMemory::default()).with(mounted.clone());
    Some(with_policies(run, &policies))
}

/// The workspace `--workspace` names, or the default; `None` (reported) when unusable.
fn open_workspace(options: &SessionArgs) -> Option<Workspace> {
    let dir = options.workspace.clone().unwrap_or_else(|| std::env::temp_dir().join("agent-host-workspace"));
    match Workspace::new(&dir) {
        Ok(w) => Some(w),
        Err(e) => {
            eprintln!("agent-host: cannot use workspace `{}`: {e}", dir.display());
            None
        }
    }
}

/// Asks on the terminal: y (once) / n / a (allow for the session).
struct TerminalApprover;

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let what = request.message.clone().unwrap_or_else(|| format!("call {}", request.capability));
            let mut stderr = std::io::stderr();
            let _ = write!(stderr, "{what} — allow {} ({}) for `{}`? [y]es / [n]o / [a]lways this session: ", request.capability, request.category, request.principal);
            let _ = stderr.flush();
            let mut line = String::new();
            let _ = std::io::stdin().lock().read_line(&mut line);
            match line.trim() {
                "y" | "yes" => Approval::AllowOnce,
                "a" | "always" => Approval::AllowForSession,
                _ => Approval::Deny("the user declined".into()),
            }
        })
    }
}
