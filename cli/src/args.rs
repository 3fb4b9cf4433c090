//! The flags: clap's derive types for every command, and their help.

use std::path::{Path, PathBuf};

use capspec_codegen::code_first::{CodeFirstInput, ExportFailure};
use clap::{Parser, Subcommand, ValueEnum};

/// The config keys (from the one key table) and the exit codes, after a
/// command's own help.
pub(crate) fn config_help() -> String {
    format!(
        "{}\n\nEXIT CODES:\n  0  nothing to report (warnings allowed)\n  1  at least one error finding\n  2  the command could not run (no config, unreadable root, bad flag)",
        capspec_codegen::config_keys::help()
    )
}

/// `check --help`: the rule table, then the config keys and exit codes.
pub(crate) fn check_help() -> String {
    format!("{}\n\n{}", capspec_codegen::rules::help(), config_help())
}

#[derive(Parser)]
#[command(
    name = "cargo capspec",
    about = "capspec: keep capabilities in one declarative place and fail CI when anything drifts from it",
    after_help = "`--help` after a command explains it; `explain RULE` explains a finding."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum ImportSource {
    /// MCP `tools/list` entries: files holding one tool object each, a `{"tools": [...]}`
    /// document, or directories of such files. Category: `_meta["io.capspec/category"]` when
    /// present; else readOnlyHint: true → read; else openWorldHint (absent means true) →
    /// external; else write. Hints that differ from the category's defaults are kept in
    /// `hints`, so a tool without annotations imports as external, never looser.
    ///
    /// With --upstream NAME instead of files: start the server `[upstream.NAME]` of
    /// capspec.toml, list every tool (all pages) and write the pinned module
    /// `<specs>/NAME.yaml` (`upstream: NAME`, each tool's `pin`; every capability
    /// `deferred: true` when the server lists more than 20 tools). An existing module is
    /// not overwritten without --update, which
    /// rewrites descriptions, schemas and pins, keeps the project's categories, hints,
    /// deferred, direct, titles and aliases, and prints every change.
    Mcp {
        /// Files or directories to import.
        #[arg(required_unless_present = "upstream", conflicts_with = "upstream")]
        paths: Vec<PathBuf>,
        /// The module name (and file stem) of the spec to write.
        #[arg(long, required_unless_present = "upstream", conflicts_with = "upstream")]
        module: Option<String>,
        /// Directory to write `<module>.yaml` into.
        #[arg(long, default_value = ".", conflicts_with = "upstream")]
        out: PathBuf,
        /// Pin the tools of the configured server `[upstream.NAME]` (needs the feature `live`).
        #[arg(long, value_name = "NAME")]
        upstream: Option<String>,
        /// With --upstream: update the existing module, keeping the project's decisions.
        #[arg(long, requires = "upstream")]
        update: bool,
        #[command(flatten)]
        root: RootArg,
    },
}

#[derive(Subcommand)]
pub(crate) enum PolicyCommand {
    /// Run the policy tests (`<[policy] dir>/tests.yaml`) alone and print each request's
    /// decision — allow, ask or deny — with the policies that made it (or "mode × category"
    /// when none applied). `check` runs the same tests; a decision that differs from the
    /// test's `expect` is a policy/test finding, and the exit code is 1.
    #[command(after_help = config_help())]
    Test {
        #[command(flatten)]
        root: RootArg,
    },
}

/// Which serve store: `--store`, else `[serve] store`, else SQLite under
/// the project's `.capspec/`.
#[derive(clap::Args)]
pub(crate) struct StoreArg {
    #[command(flatten)]
    pub(crate) root: RootArg,
    /// The store: `sqlite:PATH` or `postgres://…` (default: `[serve] store` in
    /// capspec.toml, else `sqlite:.capspec/store.db` in the project).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum AuditFormat {
    Table,
    Json,
    Jsonl,
}

#[derive(Subcommand)]
pub(crate) enum AuditCommand {
    /// Print the records that match every filter given, oldest first.
    ///
    /// Each record is as stored: a decision record (before the call ran, or instead of it)
    /// or an outcome record (after it), with arguments and results as keyed hashes.
    /// A query that cannot be answered as asked (--arguments without the key, a capability
    /// neither the project nor the log knows, a decision no record can have) exits 1 saying
    /// why, rather than printing nothing.
    Query {
        #[command(flatten)]
        store: StoreArg,
        /// Calls of this principal (an access token's `sub`, `token`, `local`).
        #[arg(long)]
        principal: Option<String>,
        /// Calls of this capability (`module.name`).
        #[arg(long)]
        capability: Option<String>,
        /// Decision records with this decision: allowed, approved, declined (a person was
        /// asked and said no), denied_policy, denied_scope, denied_gate (refused unasked: plan
        /// mode, or a client that could not be asked), invalid_arguments, unknown_capability,
        /// limit_exceeded, replay_diverged, replayed.
        #[arg(long)]
        decision: Option<String>,
        /// At or after this date (`2026-12-01`) or UTC time (`2026-12-01T09:30:00Z`).
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Before this date or UTC time.
        #[arg(long, value_name = "TIME")]
        until: Option<String>,
        /// Calls made with these arguments (JSON): as the client sent them, or as they ran
        /// once the capability's spec coerced them and applied its defaults (through
        /// --capability's spec, else each capability of the project they fit). Matched by
        /// keyed hash, so it needs the server's --state-key-file.
        #[arg(long, value_name = "JSON")]
        arguments: Option<String>,
        /// The key file the server was started with (for --arguments).
        #[arg(long, value_name = "FILE")]
        state_key_file: Option<PathBuf>,
        /// How to print them.
        #[arg(long, value_enum, default_value_t = AuditFormat::Table)]
        format: AuditFormat,
        /// At most this many records (the newest).
        #[arg(long, value_name = "N")]
        limit: Option<i64>,
    },
    /// Walk every instance's chain and report the first record that breaks it (exit 1).
    Verify {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Drop the records before a date, keeping a checkpoint so `verify` still holds.
    Purge {
        #[command(flatten)]
        store: StoreArg,
        /// Drop the records before this date (`2026-12-01`) or UTC time.
        #[arg(long, value_name = "TIME")]
        before: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum AuthCommand {
    /// Log in to `[upstream.NAME]` (`auth = "oauth"`) once, in the browser.
    ///
    /// The server's 401 names its authorization server, the client is `client_id`, else the `client_metadata_url`
    /// document where the server supports one, else dynamically registered; then the
    /// authorization code flow with PKCE S256, the `resource` and a redirect to a loopback
    /// port here, the response's `iss` checked. The credentials are kept in the user's
    /// config directory (`capspec/oauth/`, owner-only), never in the project, and refreshed
    /// before they expire by import, check --upstream and serve.
    Login {
        /// The server, as `[upstream.NAME]` names it in capspec.toml.
        name: String,
        /// Do not try to open a browser: only print the authorization URL (which is always
        /// printed), to open elsewhere; the redirect must still reach this machine's loopback.
        #[arg(long)]
        no_browser: bool,
        #[command(flatten)]
        root: RootArg,
    },
    /// Each `auth = "oauth"` upstream's log-in: its authorization server, scopes and when
    /// its access token expires (never a token).
    Status {
        #[command(flatten)]
        root: RootArg,
    },
    /// Forget the stored log-in of `[upstream.NAME]`.
    Logout {
        /// The server, as `[upstream.NAME]` names it in capspec.toml.
        name: String,
        #[command(flatten)]
        root: RootArg,
    },
    /// Who holds their own credential for a `credentials = "per-user"` upstream.
    ///
    /// Each principal with a credential for `[upstream.NAME]` in the serve store's vault:
    /// their scopes, when the access token expires and when it was last stored (never a
    /// token; the credentials are sealed there).
    Users {
        /// The server, as `[upstream.NAME]` names it in capspec.toml.
        name: String,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Forget one person's credential for a `credentials = "per-user"` upstream.
    ///
    /// Their next call to `[upstream.NAME]` asks them to authorize again. An instance
    /// that is serving sees the revoke within 5 seconds (it reads each credential from
    /// the store again after that long) and ends the connection it opened with it. The
    /// upstream's own grant is not revoked: revoke it there too if the tokens may leak.
    Revoke {
        /// The server, as `[upstream.NAME]` names it in capspec.toml.
        name: String,
        /// The principal (the team issuer's `sub`).
        #[arg(long, value_name = "SUB")]
        user: String,
        #[command(flatten)]
        store: StoreArg,
    },
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Adopt capspec in an existing Cargo package or workspace member.
    ///
    /// Adopt capspec in an existing Cargo package (or a member of a workspace): write
    /// capspec.toml, an example spec module with its impl and a test, the xtask crate and
    /// its `cargo xtask` alias, a freshness test, a GitHub Actions workflow and the
    /// dev-profile override for the generator, then generate the bindings. Never overwrites
    /// an existing file, alias or xtask: it adds entries to manifests and says what it kept.
    ///
    /// The xtask goes at the workspace root, and `cargo xtask check` finds the member's
    /// capspec.toml from there. A project whose xtask has tasks of its own keeps them: init
    /// adds capspec-cli to that xtask's manifest and prints the one line its `main` starts
    /// with (`capspec_cli::run_subcommand();`); the commands are then `cargo xtask capspec
    /// check` and so on, and the workflow init writes runs them that way.
    ///
    /// The capspec dependencies come from the checkout this binary was installed from: when it
    /// is a git clone with a remote on another machine, that remote's URL and the commit checked
    /// out (said, with a warning when the clone has uncommitted changes); else path dependencies
    /// (relative when the project lies in the same tree); else --capspec-path or --capspec-git.
    /// init says "done" only once `cargo metadata` resolves the result; otherwise it names the
    /// flag that fixes it, and running it again with another source rewrites the source keys of
    /// capspec's own dependency entries (their features, default-features and optional stay),
    /// and nothing else, reporting each change.
    ///
    /// A project with a capspec.toml or modules of its own in specs/ (an adopted project, a
    /// server pinned as an upstream) gets no example, and a re-run never writes it back: init
    /// says which example files it skipped.
    Init {
        /// The Cargo package that will host the capabilities. Defaults to the current directory.
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Depend on this capspec checkout (path dependencies). Without a source flag, init
        /// depends on the checkout the running binary was installed from (its git remote and
        /// commit when it has a remote on another machine), else on crates.io.
        #[arg(long, value_name = "DIR", conflicts_with = "capspec_git")]
        capspec_path: Option<PathBuf>,
        /// Depend on capspec's git repository (git dependencies, which a CI runner can fetch).
        #[arg(long, value_name = "URL")]
        capspec_git: Option<String>,
        /// With --capspec-git: the commit, tag or branch to pin.
        #[arg(long, value_name = "REV", requires = "capspec_git")]
        rev: Option<String>,
    },
    /// Report every finding: specs, drift, coverage, breaking changes.
    ///
    /// Validate specs and config, compare every generated file with what the specs produce,
    /// and report every finding (never writes). Run `cargo test` first: a capability counts
    /// as tested only when the last `cargo test` ran it (its record in .capspec/coverage/).
    #[command(after_help = check_help())]
    Check {
        #[command(flatten)]
        root: RootArg,
        #[command(flatten)]
        build: BuildArg,
        /// Output format: rustc-like text, one JSON object, GitHub workflow commands, or SARIF 2.1.0.
        /// Paths are relative to the root; in `github` and `sarif`, a root below the current
        /// directory (a workspace member's project, checked from the repository root) is
        /// prefixed, so annotations land on the right files.
        #[arg(long, value_enum, default_value_t = FormatArg::Human)]
        format: FormatArg,
        /// Also compare the specs with those at this git ref (branch, tag, commit, `origin/main`):
        /// report breaking changes (`breaking/*`), and every capability whose contract changed
        /// (or that is new) while the diff touches no test that exercises it
        /// (`coverage/contract-unchecked`). Read from git; nothing is checked out.
        #[arg(long, value_name = "GIT_REF")]
        base: Option<String>,
        /// With --format json: add "suggested_allow", the [[allow]] entries (TOML) that would
        /// suppress every coverage/* and breaking/* finding — to adopt capspec on an existing
        /// surface. Each entry needs a real reason before check accepts it.
        #[arg(long, requires = "format")]
        suggest_allow: bool,
        /// Also start every upstream server and compare its tools with their pins
        /// (`upstream/changed`, `upstream/removed`, `upstream/added`, `upstream/unreachable`,
        /// `upstream/unauthorized` for an `auth = "oauth"` server without a usable log-in;
        /// needs the feature `live`). Without it, check never starts a server.
        #[arg(long)]
        upstream: bool,
    },
    /// Regenerate every artifact from the specs; write only what changed.
    ///
    /// Regenerate every artifact from the specs; write only what changed, remove orphaned
    /// generated files. With spec errors nothing is written.
    ///
    /// Code-first specs are exported by building the [code_first] packages' lib tests; a
    /// package that does not build keeps its recorded specs, the rest is still regenerated,
    /// and sync exits 1.
    #[command(after_help = config_help())]
    Sync {
        #[command(flatten)]
        root: RootArg,
        #[command(flatten)]
        build: BuildArg,
    },
    /// Show each capability's impl and the tests that ran it.
    ///
    /// Print the coverage table: one row per capability with its category, the fn that
    /// implements it (file:line), the tests that ran it (as the last `cargo test` recorded
    /// them in .capspec/coverage/; none when that record is missing or stale), and the reason
    /// of its `coverage/untested` [[allow]] entry where no test did. Never writes.
    #[command(after_help = config_help())]
    Coverage(CoverageArgs),
    /// Write impl stubs for the capabilities that have none.
    ///
    /// Append a ready-to-fill #[capability] fn for every capability without an impl to
    /// <first coverage source>/capabilities/<module>.rs (never touching existing code).
    #[command(after_help = config_help())]
    Scaffold {
        #[command(flatten)]
        root: RootArg,
    },
    /// Turn an MCP server's tools into a spec module.
    ///
    /// Turn another tool surface into a capspec spec file.
    #[command(subcommand)]
    Import(ImportSource),
    /// Serve the project's upstream modules over MCP, as a gateway.
    ///
    /// Serve the project's upstream modules over MCP — a gateway with no Rust code: start
    /// the [upstream.*] servers (eager ones now, lazy ones on their first call), check each
    /// tool against its pin, and serve them as agent-host serve serves its modules (needs
    /// the feature `live`). Every call passes the gate with the pinned category; a tool that
    /// no longer matches its pin is refused (`upstream_changed`); a server that does not
    /// start leaves its module out, with the reason in the capabilities resource. On
    /// protocol 2026-07-28 an `execute_code` action that asks is resumed by replay: its
    /// calls so far travel, encrypted, in the `requestState`, and none runs twice.
    #[command(after_help = SERVE_ENV)]
    Serve(Box<ServeArgs>),
    /// Log in to OAuth upstream servers; show or forget the log-ins.
    ///
    /// OAuth log-ins to upstream servers behind OAuth 2.1 (`auth = "oauth"` in
    /// `[upstream.NAME]`; needs the feature `live`): `auth login NAME`, `auth status`,
    /// `auth logout NAME`; with `credentials = "per-user"`, each person's own in the serve
    /// store: `auth users NAME`, `auth revoke NAME --user SUB`.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Query, verify and purge the audit log of served calls.
    ///
    /// Every call `serve` serves is recorded in the serve store: a decision record before
    /// it runs (a call the store cannot record does not run) and an outcome record after,
    /// each chained to its instance's previous record, so an edit or a gap shows.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Test the project's Cedar policies and print each decision.
    ///
    /// The project's Cedar policies: `policy test` runs <dir>/tests.yaml alone.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Explain a rule: a project that reports it, and the same one fixed.
    ///
    /// Like `rustc --explain`: why the rule exists, what to do, then a small project that
    /// produces the finding and the same project fixed, as files and the commands to run.
    /// Without a rule, every rule with its one-line summary. Every finding `check` prints
    /// ends with the command that explains it.
    Explain {
        /// The rule, as findings name it (e.g. `spec/unknown-field`).
        rule: Option<String>,
    },
}

/// What the environment changes in `serve`.
const SERVE_ENV: &str = "Tracing: with OTEL_EXPORTER_OTLP_ENDPOINT (or its TRACES_ variant)\n\
set, every call's execute_tool span, under its MCP request's span, is exported\n\
over OTLP. OTEL_EXPORTER_OTLP_PROTOCOL is http/protobuf (the default) or grpc;\n\
OTEL_EXPORTER_OTLP_HEADERS and OTEL_SERVICE_NAME (default: capspec-serve) apply.\n\
A request's _meta traceparent parents its spans. No argument value is exported.";

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("auth").args(["token_file", "oauth_issuer"])))]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) root: RootArg,
    /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8931) instead of stdio;
    /// needs --token-file or --oauth-issuer.
    #[arg(long, value_name = "ADDR", requires = "auth")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// A file holding the one bearer token every HTTP request must carry
    /// (`Authorization: Bearer <token>`; principal `token`); surrounding whitespace is ignored.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub(crate) token_file: Option<PathBuf>,
    /// Serve HTTP as an OAuth 2.1 resource server: every request carries an access token
    /// (a JWT) from this issuer, for --resource; its `sub` is the principal and its
    /// `capspec:<category>` scopes say which categories it may call. Keys come from the
    /// issuer's metadata (RFC 8414 or OpenID) unless --jwks-file.
    #[arg(long, value_name = "URL", requires_all = ["http", "resource"])]
    pub(crate) oauth_issuer: Option<String>,
    /// This server's URL as clients reach it (e.g. https://tools.example.com/mcp): an
    /// access token's `aud` must hold it.
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub(crate) resource: Option<String>,
    /// The access token's claim listing the caller's groups (policies read them).
    #[arg(long, value_name = "NAME", default_value = "groups", requires = "oauth_issuer")]
    pub(crate) groups_claim: String,
    /// The issuer's keys (a JWKS document) from this file instead of its metadata.
    #[arg(long, value_name = "FILE", requires = "oauth_issuer")]
    pub(crate) jwks_file: Option<PathBuf>,
    /// The client registered at the issuer that signs a person's browser in when they
    /// authorize a `credentials = "per-user"` upstream (a public client: code + PKCE; its
    /// redirect is <--resource's origin>/oauth/upstream/callback). Without it capspec
    /// registers one at the issuer (RFC 7591) where the issuer allows it.
    #[arg(long, value_name = "ID", requires = "oauth_issuer")]
    pub(crate) oauth_client_id: Option<String>,
    /// Admit HTTP requests from this origin besides loopback ones; repeatable. Any other
    /// Origin (or, without one, Host) gets 403, token or not.
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub(crate) allowed_origin: Vec<String>,
    /// A file holding the key that seals the `requestState` of a 2026-07-28 approval
    /// round: its bytes as they are, at least 32 (make one with
    /// `head -c 32 /dev/urandom > FILE`); instances behind one load balancer share it.
    /// Without it, a random key per process.
    #[arg(long, value_name = "FILE")]
    pub(crate) state_key_file: Option<PathBuf>,
    /// How long (in seconds) a 2026-07-28 approval round's `requestState` stays valid.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub(crate) state_ttl: u64,
    /// On 2026-07-28 an `execute_code` action that asks is resumed by replay: at most
    /// this many asks per action (default 32), then it ends with `limit_exceeded`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_rounds: Option<u32>,
    /// The most bytes a resumed action's `requestState` (its journal, results included)
    /// may have (default 262144, 256 KiB); past it the action ends with `limit_exceeded`.
    #[arg(long, value_name = "N")]
    pub(crate) max_state_bytes: Option<usize>,
    /// `code`: `execute_code` over every mounted module plus capabilities marked
    /// `direct: true`; `tools`: one tool per non-deferred capability, and `tool_search`.
    #[arg(long, default_value = "code", value_parser = ["code", "tools"])]
    pub(crate) surface: String,
    /// On stdio, serve the named surface `[surface.NAME]` of capspec.toml (its modules,
    /// capabilities and mode) instead of every module. Over HTTP each named surface is
    /// served at its own path (`/mcp/NAME`) beside `/mcp`, open to its `groups`.
    #[arg(long, value_name = "NAME", conflicts_with = "http")]
    pub(crate) surface_name: Option<String>,
    /// The project's policies (`[policy] dir`) decide every call: `enforce`
    /// them, or only `log` what they would decide (receipts, the `capspec.policy` span
    /// field) while mode × category decides.
    #[arg(long, default_value = "enforce", value_parser = ["enforce", "log"])]
    pub(crate) policy_mode: String,
    /// Permission mode: plan (read only), default (ask for write, execute, external),
    /// accept-edits (also allow write), auto (allow everything).
    #[arg(long, default_value = "default", value_parser = ["plan", "default", "accept-edits", "auto"])]
    pub(crate) mode: String,
    /// The serve store the audit log goes to: `sqlite:PATH` or `postgres://…` (default:
    /// `[serve] store` in capspec.toml, else `sqlite:.capspec/store.db` in the project).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// Record argument values in the audit log too, not only their keyed hashes.
    #[arg(long)]
    pub(crate) audit_arguments: bool,
    /// This instance's name in the audit log: its records form one chain, continued after
    /// a restart under the same name (default: the host name and the address served).
    #[arg(long, value_name = "NAME")]
    pub(crate) instance: Option<String>,
    /// Serve only these modules (comma-separated); default: every upstream module.
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub(crate) modules: Vec<String>,
    /// Leave the receipts out of tool results (`_meta["io.capspec/receipts"]`), for
    /// clients that do not read them: every call builds, sends and parses them otherwise.
    /// Calls are gated, traced and audited alike, and execute_code's structured content
    /// keeps its receipts.
    #[arg(long)]
    pub(crate) no_result_receipts: bool,
}

#[derive(clap::Args)]
pub(crate) struct CoverageArgs {
    #[command(flatten)]
    pub(crate) root: RootArg,
    /// Output format: a Markdown table, or JSON (for a CI job or a dashboard).
    #[arg(long, value_enum, default_value_t = TableFormat::Md)]
    pub(crate) format: TableFormat,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum TableFormat {
    Md,
    Json,
}

#[derive(clap::Args)]
pub(crate) struct RootArg {
    /// The project root: a directory holding capspec.toml (need not be a Cargo project, unless
    /// [code_first] lists packages: cargo builds them from here). Defaults to the nearest
    /// directory holding capspec.toml at or above the current one; failing that, the one member
    /// of the current Cargo workspace that holds one (several: an error naming them).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

impl RootArg {
    /// `--root`, else the default (DESIGN §5); `Err` when there is none to
    /// choose or several.
    pub(crate) fn resolve(&self) -> Result<PathBuf, String> {
        if let Some(root) = &self.root {
            return Ok(root.clone());
        }
        let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
        let xtask_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
        crate::root::default_root(&cwd, xtask_dir.as_deref())
    }
}

#[derive(clap::Args)]
pub(crate) struct BuildArg {
    /// Take code-first specs from the record file instead of building the [code_first]
    /// packages (their specs are then not compared with the code).
    #[arg(long)]
    no_build: bool,
}

impl BuildArg {
    /// Export the code-first specs unless `--no-build`: the input for
    /// `open_with` and the packages that failed. Without a readable config
    /// or packages there is nothing to build (the library reports the rest).
    pub(crate) fn export(&self, root: &Path) -> (Option<CodeFirstInput>, Vec<ExportFailure>) {
        let plan = if self.no_build { None } else { capspec_codegen::code_first::ExportPlan::of(root) };
        let Some(plan) = plan else { return (None, Vec::new()) };
        eprintln!("exporting code-first specs of {}: cargo test --workspace --no-run, then their export tests", plan.packages().join(", "));
        let (input, failures) = plan.run();
        (Some(input), failures)
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum FormatArg {
    Human,
    Json,
    Github,
    Sarif,
}
