//! `McpHost` (what every session shares) and `McpSession` (one MCP
//! session, an rmcp `ServerHandler`).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::error::ErrorCode;
use crate::gate::{Approver, Gate, Mode, SessionAllow};
#[cfg(feature = "quickjs")]
use crate::guest::Guest;
use crate::registry::Mounted;
use crate::run::Run;
use crate::spec::Spec;

use super::approve;
use super::mrtr;
use super::bounds::ReplayBounds;
use super::state_key::StateKey;
use crate::principal::Principal;
use super::tools::{self, CAPABILITIES_URI, CATALOG_URI, EXECUTE_CODE};
use super::view::{self, Shown, View, Views};
use super::view::Surface;

/// Builds each call's [`Run`] from the session's gate: where a host adds
/// the extensions its impls need (a workspace, a database handle).
pub type PrepareRun = Arc<dyn Fn(Gate) -> Run + Send + Sync>;

/// What every session of one server shares. Cheap to clone.
#[derive(Clone)]
pub struct McpHost {
    inner: Arc<Shared>,
    /// Seals the `requestState` of a 2026-07-28 ask.
    pub(super) state_key: StateKey,
    /// Bounds of an action resumed by replay (2026-07-28).
    #[cfg_attr(not(feature = "quickjs"), allow(dead_code))]
    pub(super) bounds: ReplayBounds,
    /// Where every call's audit records go (DESIGN §15), if anywhere.
    audit: Option<Arc<dyn crate::audit::AuditSink>>,
    /// The browser step of `per-user` upstreams (DESIGN §12), served over
    /// HTTP beside MCP, if the host has such upstreams.
    #[cfg(feature = "oauth")]
    pub(super) pages: Option<Arc<dyn super::oauth::BrowserPages>>,
    /// Results carry their receipts in `_meta` (unless
    /// [`McpHost::without_result_receipts`]).
    pub(super) result_receipts: bool,
    /// A failure that names a JSON-RPC code is answered as that error ([`McpHost::with_json_rpc_errors`]).
    pub(super) json_rpc_errors: bool,
    /// What `initialize` says the server is ([`McpHost::with_identity`]).
    pub(super) identity: Option<Arc<super::identity::ServerIdentity>>,
}

struct Shared {
    mounted: Mounted,
    surface: Surface,
    mode: Mode,
    prepare: PrepareRun,
    /// What runs `execute_code`'s actions (code mode).
    engine: Engine,
    /// What each principal is shown: the tools list, the catalog and the
    /// capabilities resource (everyone's, or one per key under policies).
    views: Views,
    /// The globs a named surface serves, if it is one ([`McpHost::limited_to`]).
    limit: Vec<String>,
    unmounted: Vec<Value>,
    /// Wire name → what `tools/call` runs, for every listed tool.
    callable: BTreeMap<String, Callable>,
    /// What `initialize` (and every stateless request) tells the client.
    instructions: String,
    /// The mount forwards a capability to an upstream server (§12): a
    /// capability call's run collects the content blocks one returns.
    forwards: bool,
}

/// What runs `execute_code`'s actions: the guest host, in a build with
/// code mode (feature `code-mode`); a tools surface has none.
#[cfg(feature = "quickjs")]
type Engine = Option<Guest>;
#[cfg(not(feature = "quickjs"))]
#[derive(Clone)]
struct Engine;
/// A host without a guest: the tools surface.
#[cfg(feature = "quickjs")]
const NO_ENGINE: Engine = None;
#[cfg(not(feature = "quickjs"))]
const NO_ENGINE: Engine = Engine;

/// The import specifier a catalog names modules by when no guest says
/// another (the guest host's default).
const DEFAULT_SPECIFIER: &str = "@capspec/host";

enum Callable {
    #[cfg(feature = "quickjs")]
    ExecuteCode,
    Capability {
        qualified: String,
        #[cfg_attr(not(feature = "oauth"), allow(dead_code))]
        category: crate::spec::Category,
        output: tools::Output,
    },
}

impl McpHost {
    /// A host serving the session `guest` runs actions against, on
    /// `surface` (the code surface, or the tools), gating in `mode`; each
    /// call's run is `Run::new(gate)` until [`McpHost::prepare_run`] says
    /// otherwise. Code mode: the feature `code-mode`.
    #[cfg(feature = "quickjs")]
    pub fn new(guest: Guest, surface: Surface, mode: Mode) -> McpHost {
        let mounted = guest.mounted().clone();
        McpHost::with_engine(mounted, Some(guest), surface, mode)
    }

    /// A host serving every capability of `mounted` as a tool (the tools
    /// surface), gating in `mode`; each call's run is `Run::new(gate)` until
    /// [`McpHost::prepare_run`] says otherwise. Builds without QuickJS.
    pub fn tools_surface(mounted: Mounted, mode: Mode) -> McpHost {
        McpHost::with_engine(mounted, NO_ENGINE, Surface::Tools, mode)
    }

    fn with_engine(mounted: Mounted, engine: Engine, surface: Surface, mode: Mode) -> McpHost {
        let inner = McpHost::build(mounted, engine, surface, mode, Arc::new(Run::new), Vec::new(), Vec::new());
        McpHost {
            inner,
            state_key: StateKey::random(),
            bounds: ReplayBounds::default(),
            audit: None,
            #[cfg(feature = "oauth")]
            pages: None,
            result_receipts: true,
            json_rpc_errors: false,
            identity: None,
        }
    }

    /// Leave the receipts out of every tool result's `_meta`
    /// (`io.capspec/receipts`), for clients that do not read them: each call
    /// is gated, traced and audited alike, and `execute_code`'s structured
    /// content keeps its receipts. Building, sending and parsing them costs
    /// 5–8 % of a plain call's throughput (BENCHMARKS.md).
    pub fn without_result_receipts(self) -> McpHost {
        McpHost { result_receipts: false, ..self }
    }

    /// Record every call in `sink` (DESIGN §15): a call whose decision
    /// record it cannot take does not run and ends `audit_unavailable`.
    pub fn with_audit(self, sink: Arc<dyn crate::audit::AuditSink>) -> McpHost {
        McpHost { audit: Some(sink), ..self }
    }

    /// Serve `pages` beside MCP, on an HTTP surface behind
    /// `--oauth-issuer`: a `per-user` upstream's `Authorizer`, where its
    /// callers authorize it (`/oauth/upstream/start` and `/callback`).
    #[cfg(feature = "oauth")]
    pub fn with_browser_pages(self, pages: Arc<dyn super::oauth::BrowserPages>) -> McpHost {
        McpHost { pages: Some(pages), ..self }
    }

    /// The category of the capability the tool `name` calls; `None` for
    /// `execute_code` and names this surface does not list.
    #[cfg(feature = "oauth")]
    pub(super) fn tool_category(&self, name: &str) -> Option<crate::spec::Category> {
        match self.inner.callable.get(name) {
            Some(Callable::Capability { category, .. }) => Some(*category),
            _ => None,
        }
    }

    /// Build each call's run with `prepare` (add the host's extensions).
    pub fn prepare_run(self, prepare: impl Fn(Gate) -> Run + Send + Sync + 'static) -> McpHost {
        let shared = &self.inner;
        McpHost { inner: McpHost::build(shared.mounted.clone(), shared.engine.clone(), shared.surface, shared.mode, Arc::new(prepare), shared.unmounted.clone(), shared.limit.clone()), ..self }
    }

    /// Seal the `requestState` of 2026-07-28 asks with `key` (instances
    /// that serve one client behind a load balancer share it); without
    /// this, a random key per process.
    pub fn with_state_key(self, key: StateKey) -> McpHost {
        McpHost { state_key: key, ..self }
    }

    /// Bound the actions resumed by replay on 2026-07-28 (`--max-rounds`,
    /// `--max-state-bytes`).
    pub fn with_replay_bounds(self, bounds: ReplayBounds) -> McpHost {
        McpHost { bounds, ..self }
    }

    /// Say in the capabilities resource which modules are not mounted and
    /// why (an upstream server that did not start): its `unmounted` list.
    pub fn with_unmounted<T: serde::Serialize>(self, unmounted: impl IntoIterator<Item = T>) -> McpHost {
        let unmounted: Vec<Value> = unmounted.into_iter().map(|u| serde_json::to_value(u).expect("serializes")).collect();
        if unmounted.is_empty() {
            return self;
        }
        let shared = &self.inner;
        McpHost { inner: McpHost::build(shared.mounted.clone(), shared.engine.clone(), shared.surface, shared.mode, shared.prepare.clone(), unmounted, shared.limit.clone()), ..self }
    }

    /// Serve only the capabilities whose qualified names one of `globs`
    /// matches (`notes.*`, `*.read_*`: a named surface's `capabilities`,
    /// DESIGN §10); the rest are shown to nobody and answered as unknown.
    /// Empty: all of them.
    pub fn limited_to(self, globs: &[String]) -> McpHost {
        let shared = &self.inner;
        McpHost { inner: McpHost::build(shared.mounted.clone(), shared.engine.clone(), shared.surface, shared.mode, shared.prepare.clone(), shared.unmounted.clone(), globs.to_vec()), ..self }
    }

    fn build(mounted: Mounted, engine: Engine, surface: Surface, mode: Mode, prepare: PrepareRun, unmounted: Vec<Value>, limit: Vec<String>) -> Arc<Shared> {
        let mut callable = BTreeMap::new();
        #[cfg(feature = "quickjs")]
        if surface == Surface::Code && engine.is_some() {
            callable.insert(EXECUTE_CODE.to_string(), Callable::ExecuteCode);
        }
        // Listed: the direct tools (code), the mount's tool surface (tools).
        // Callable on the tools surface: every mounted capability too — a
        // deferred one is called by the wire name `tool_search` gave.
        let listed = view::listed(&mounted, surface);
        let unlisted: Vec<&'static Spec> = match surface {
            Surface::Code => Vec::new(),
            Surface::Tools => mounted.modules().flat_map(|m| m.specs.iter()).filter(|s| s.deferred).collect(),
        };
        let callable_specs: Vec<&'static Spec> = listed.into_iter().chain(unlisted).collect();
        let entry = |spec: &Spec| {
            let qualified = format!("{}.{}", spec.module, spec.name);
            let output = tools::Output::of(spec, mounted.upstream_of(&qualified).is_some());
            Callable::Capability { qualified, category: spec.category, output }
        };
        for spec in &callable_specs {
            callable.insert(spec.wire_name.to_string(), entry(spec));
        }
        // Aliases (§3): callable by `tools/call`, never listed. An alias that
        // is a tool's name, or belongs to two callable capabilities, names
        // none of them.
        let mut aliases: BTreeMap<&str, Vec<&'static Spec>> = BTreeMap::new();
        for spec in &callable_specs {
            for alias in spec.aliases {
                aliases.entry(alias).or_default().push(spec);
            }
        }
        for (alias, specs) in aliases {
            if let ([spec], false) = (specs.as_slice(), callable.contains_key(alias)) {
                callable.insert(alias.to_string(), entry(spec));
            }
        }
        // The views come from the policies every call's run carries.
        let probe = prepare(Gate::new(mode, Arc::new(crate::gate::HeadlessApprover::new("a view")), SessionAllow::new()));
        // A named surface's capabilities outside its globs: shown to nobody.
        let outside = match limit.is_empty() {
            true => crate::view::Hidden::default(),
            false => {
                let qualified = mounted.modules().flat_map(|m| m.specs.iter()).map(|s| format!("{}.{}", s.module, s.name));
                crate::view::Hidden::new(qualified.filter(|q| !limit.iter().any(|g| capspec_names::glob_matches(g, q))))
            }
        };
        #[cfg(feature = "quickjs")]
        let specifier = engine.as_ref().map_or(DEFAULT_SPECIFIER, |guest| guest.import_specifier()).to_string();
        #[cfg(not(feature = "quickjs"))]
        let specifier = DEFAULT_SPECIFIER.to_string();
        let views = Views::new(mounted.clone(), surface, &specifier, unmounted.clone(), &probe, outside);
        let modules = mounted.module_names().join(", ");
        let instructions = match surface {
            Surface::Code => format!("capspec host (modules: {modules}). Write an action with `{EXECUTE_CODE}`; the catalog is in its description and at {CATALOG_URI}."),
            Surface::Tools => format!("capspec host (modules: {modules}). Every capability is a tool; the catalog is at {CATALOG_URI}."),
        };
        // Only an upstream's result has blocks beside its value.
        let forwards = mounted.modules().flat_map(|m| m.specs.iter()).any(|s| mounted.upstream_of(&format!("{}.{}", s.module, s.name)).is_some());
        Arc::new(Shared { mounted, surface, mode, prepare, engine, views, limit, unmounted, callable, instructions, forwards })
    }

    /// The guest `execute_code` runs actions in (only a host made with
    /// one lists the tool).
    #[cfg(feature = "quickjs")]
    pub(super) fn guest(&self) -> Guest {
        self.inner.engine.clone().expect("only a host with a guest lists execute_code")
    }

    /// A new session: its own allow-set, the shared mount.
    pub fn session(&self) -> McpSession {
        McpSession { host: self.clone(), allow: SessionAllow::new(), shown: self.inner.views.per_principal().then(Shown::default), askers: OnceLock::new() }
    }

    /// The tools a session lists when no policy hides any.
    pub fn tools(&self) -> &[Tool] {
        self.inner.views.all()
    }

    /// The tools a session of `principal` lists (`tools/list`): those no
    /// policy denies it whatever the input and mode. The view is worked out
    /// the first time its key is seen, then kept.
    pub fn tools_for(&self, principal: &Principal) -> Vec<Tool> {
        let views = &self.inner.views;
        views.tools(&views.of(principal))
    }

    /// The mount's capabilities.json (the `capspec://capabilities` resource)
    /// when no policy hides any capability.
    pub fn capabilities_json(&self) -> &str {
        let views = &self.inner.views;
        views.capabilities(views.everyone())
    }
}

/// One MCP session: an rmcp server handler over the host's mount, with its
/// own session allow-set.
#[derive(Clone)]
pub struct McpSession {
    pub(super) host: McpHost,
    allow: SessionAllow,
    /// What the session was last shown, where views are per principal.
    shown: Option<Shown>,
    /// How a 2025-11-25 session's calls ask its client (`approve::Askers::of`).
    askers: OnceLock<Box<approve::Askers>>,
}

impl McpSession {
    /// What the caller of this request is shown; a 2025-11-25 session that
    /// was shown something else before is told its tools list changed.
    async fn view(&self, context: &RequestContext<RoleServer>) -> Arc<View> {
        let view = self.host.inner.views.of(&principal_of(context));
        if let Some(shown) = &self.shown {
            if shown.changed(&view) && context.protocol_version().is_none_or(|v| v.has_initialize()) {
                // A client that has gone is no reason to fail the request.
                // Boxed, as it is seldom sent: every request's future stays small.
                let _ = Box::pin(context.peer.notify_tool_list_changed()).await;
            }
        }
        view
    }
}

impl McpSession {
    /// The run of one `tools/call`: the host's mode, and either (2025-11-25)
    /// this session's allow-set and an approver that elicits when the
    /// client can answer, or (2026-07-28, `stateless`) the request's own
    /// approver and no allow-set to remember anything in.
    ///
    /// A client that follows links is asked to open the one where a
    /// `per-user` upstream's caller authorizes it (2025-11-25 sessions that
    /// declared URL elicitation); else `links`, if given, keeps it for the
    /// reply (−32042, or `input_required` on 2026-07-28).
    pub(super) fn run(&self, context: &RequestContext<RoleServer>, stateless: Option<Arc<dyn Approver>>, links: Option<&Arc<approve::Links>>) -> Run {
        let (approver, allow, url) = match stateless {
            Some(approver) => (approver, SessionAllow::new(), None),
            None => {
                let approve::Askers { approver, url } = approve::Askers::of(&context.peer, &self.askers);
                (approver, self.allow.clone(), url)
            }
        };
        let principal = principal_of(context);
        // What this principal is not shown, no call of theirs reaches.
        let hidden = self.host.inner.views.hidden(&principal);
        let run = (self.host.inner.prepare)(Gate::new(self.host.inner.mode, approver, allow)).with_principal(principal);
        let run = match hidden {
            Some(hidden) => run.with(hidden),
            None => run,
        };
        let asker = url.or_else(|| links.map(|l| l.clone() as Arc<dyn crate::gate::AskUrl>));
        let run = match asker {
            Some(asker) => run.with(asker),
            None => run,
        };
        match &self.host.audit {
            Some(sink) => {
                let surface = match self.host.inner.surface {
                    Surface::Code => "code",
                    Surface::Tools => "tools",
                };
                let audit = crate::audit::Audit::new(sink.clone(), surface).with_request(request_label(context));
                // Inside the request's span: its trace id, when the spans are exported.
                #[cfg(feature = "otlp")]
                let audit = audit.with_trace(crate::otlp::trace_id(&tracing::Span::current()));
                run.with_audit(audit)
            }
            None => run,
        }
    }

    /// One `tools/call`, in its `mcp.request` span (the parent of its calls' spans).
    async fn call(&self, name: &str, callable: &Callable, arguments: Value, context: &RequestContext<RoleServer>, stateless: Option<Arc<dyn Approver>>, links: Option<&Arc<approve::Links>>) -> rmcp::model::CallToolResult {
        // Boxed: the call's state lives on the heap, so the handler's
        // future, which rmcp moves into a task per request, stays small.
        Box::pin(tracing::Instrument::instrument(self.call_in_span(callable, arguments, context, stateless, links), request_span(name, context))).await
    }

    /// The call of `callable`, the tool `tools/call` named (looked up once,
    /// by [`ServerHandler::call_tool`]).
    async fn call_in_span(&self, callable: &Callable, arguments: Value, context: &RequestContext<RoleServer>, stateless: Option<Arc<dyn Approver>>, links: Option<&Arc<approve::Links>>) -> rmcp::model::CallToolResult {
        let shared = &self.host.inner;
        match callable {
            #[cfg(feature = "quickjs")]
            Callable::ExecuteCode => self.execute_code(&arguments, context, stateless).await,
            Callable::Capability { qualified, output, .. } => {
                // Blocks an upstream server returns beside the value pass
                // through; a mount with no upstream collects none.
                let run = self.run(context, stateless, links);
                let run = if shared.forwards { run.with(crate::content::Blocks::default()) } else { run };
                let result = shared.mounted.invoke(&run, qualified, arguments).await;
                let blocks = if shared.forwards { run.get::<crate::content::Blocks>().map(|b| b.take()).unwrap_or_default() } else { Vec::new() };
                tools::with_blocks(tools::call_result(result, output, qualified, &run, self.host.result_receipts), blocks)
            }
        }
    }
}

/// The protocol error for a `tools/call` naming no tool of this surface,
/// or one its caller is not shown: the tools `view` lists are named (an
/// alias or a deferred tool never is).
fn unknown_tool(shared: &Shared, view: &View, name: &str) -> ErrorData {
    let listed = shared.views.names(view).map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ");
    let message = format!("Unknown tool: {name} (this server's {} surface lists {listed})", surface_name(shared.surface));
    let data = json!({"error": ErrorCode::UnknownCapability, "message": message, "capability": name});
    ErrorData::invalid_params(message, Some(data))
}

/// The span of one `tools/call` (the parent of its calls' spans), under the
/// W3C trace context its `_meta` carried when the spans are exported.
fn request_span(name: &str, context: &RequestContext<RoleServer>) -> tracing::Span {
    let span = crate::trace::mcp_tools_call(name);
    #[cfg(feature = "otlp")]
    crate::otlp::parent(&span, context.meta.get_traceparent(), context.meta.get_tracestate());
    #[cfg(not(feature = "otlp"))]
    let _ = context;
    span
}

/// The principal of a request: what the HTTP transport admitted it as
/// (DESIGN §13), else `local` (stdio).
fn principal_of(context: &RequestContext<RoleServer>) -> Principal {
    context.extensions.get::<http::request::Parts>().and_then(|parts| parts.extensions.get::<Principal>()).cloned().unwrap_or_default()
}

/// What the audit records name a request by: `SESSION/ID` within a
/// 2025-11-25 HTTP session (its `Mcp-Session-Id`), else the JSON-RPC id.
fn request_label(context: &RequestContext<RoleServer>) -> String {
    let session = context.extensions.get::<http::request::Parts>().and_then(|parts| parts.headers.get("mcp-session-id")).and_then(|v| v.to_str().ok());
    match session {
        Some(session) => format!("{session}/{}", context.id),
        None => context.id.to_string(),
    }
}

/// The client declared form elicitation on this (2026-07-28) request.
pub(super) fn can_ask(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().and_then(|c| c.elicitation).is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Whether a 2026-07-28 request's client declared URL elicitation.
pub(super) fn can_open_links(context: &RequestContext<RoleServer>) -> bool {
    context.client_capabilities().and_then(|c| c.elicitation).is_some_and(|e| e.url.is_some())
}

fn surface_name(surface: Surface) -> &'static str {
    match surface {
        Surface::Code => "code",
        Surface::Tools => "tools",
    }
}

impl ServerHandler for McpSession {
    fn get_info(&self) -> ServerConfig {
        // Where each caller has its view, a session is told when its view changes.
        let capabilities = match self.host.inner.views.per_principal() {
            true => ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_resources().build(),
            false => ServerCapabilities::builder().enable_tools().enable_resources().build(),
        };
        let (server_info, instructions) = super::identity::info(self.host.identity.as_deref(), &self.host.inner.instructions);
        ServerConfig::new(capabilities).with_server_info(server_info).with_instructions(instructions)
    }

    async fn list_tools(&self, _request: Option<PaginatedRequestParams>, context: RequestContext<RoleServer>) -> Result<ListToolsResult, ErrorData> {
        let listed = ListToolsResult::with_all_items(self.host.inner.views.tools(&*self.view(&context).await));
        // A list that depends on who asks is the caller's alone (2026-07-28's cache scope).
        Ok(if self.host.inner.views.per_principal() { listed.with_cache_scope(rmcp::model::CacheScope::Private) } else { listed })
    }

    async fn call_tool(&self, request: CallToolRequestParams, context: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        // An unknown tool is a protocol error, as the MCP spec's tools
        // chapter says (-32602, "Unknown tool: NAME"); `data` carries the
        // error object a refused call carries in `_meta`.
        // A capability its caller is not shown is answered alike (DESIGN §10).
        let shared = &self.host.inner;
        let Some(callable) = shared.callable.get(request.name.as_ref()) else {
            return Err(unknown_tool(shared, &shared.views.of(&principal_of(&context)), &request.name));
        };
        match callable {
            Callable::Capability { qualified, .. } if shared.views.filters() => {
                let view = self.view(&context).await;
                if view.hides(qualified) {
                    return Err(unknown_tool(shared, &view, &request.name));
                }
            }
            _ => {}
        }
        let arguments = request.arguments.map(Value::Object).unwrap_or_else(|| json!({}));
        // A place for the link a `per-user` upstream's call may need its
        // caller to open; no other call pays for one.
        let links = match callable {
            Callable::Capability { qualified, .. } if shared.forwards && shared.mounted.may_ask_link(qualified) => Some(Arc::new(approve::Links::default())),
            _ => None,
        };
        // 2025-11-25 and earlier: sessions, and asks as elicitation requests.
        if context.protocol_version().is_none_or(|v| v.has_initialize()) {
            let result = self.call(&request.name, callable, arguments, &context, None, links.as_ref()).await;
            // A caller who must authorize a `per-user` upstream, on a client
            // that cannot be asked to open the link: URLElicitationRequired.
            return match links.and_then(|l| l.take()) {
                Some(link) => Err(approve::url_elicitation_required(&link)),
                None => self.answer(result),
            };
        }
        // 2026-07-28: stateless; an ask is an input_required round, and an
        // action that asks is resumed by replay.
        #[cfg(feature = "quickjs")]
        if matches!(callable, Callable::ExecuteCode) {
            return Ok(Box::pin(tracing::Instrument::instrument(self.action_round(&arguments, request.request_state.as_deref(), request.input_responses.as_ref(), &context), request_span(EXECUTE_CODE, &context))).await);
        }
        // The person declined the link a round before asked them to open
        // (a `per-user` upstream's authorization): the call ends, as on
        // 2025-11-25, rather than asking again with a new link.
        let link_answer = request.input_responses.as_ref().and_then(|r| r.get(mrtr::AUTHORIZE_INPUT));
        if link_answer.is_some_and(|a| a.get("action").and_then(Value::as_str) != Some("accept")) {
            let principal = principal_of(&context);
            let called = match callable {
                Callable::Capability { qualified, .. } => qualified.clone(),
                #[cfg(feature = "quickjs")]
                Callable::ExecuteCode => request.name.to_string(),
            };
            return Ok(tools::refused(ErrorCode::UpstreamUnauthorized, &request.name, &crate::gate::declined_link(principal.id(), &called)).into());
        }
        let key = &self.host.state_key;
        let answer = match mrtr::verify(key, request.request_state.as_deref(), request.input_responses.as_ref()) {
            Ok(answer) => answer,
            Err(reason) => return Ok(tools::refused(ErrorCode::PermissionDenied, &request.name, &reason).into()),
        };
        let approver = Arc::new(mrtr::Mrtr::new(answer, can_ask(&context)));
        // A link goes into `input_required` where the request declared URL
        // elicitation; else the call's refusal carries it.
        let result = self.call(&request.name, callable, arguments, &context, Some(approver.clone()), links.as_ref().filter(|_| can_open_links(&context))).await;
        let asked = approver.asked.lock().unwrap_or_else(|e| e.into_inner()).take();
        match (asked, links.and_then(|l| l.take())) {
            (Some(request), _) => Ok(mrtr::input_required(key, &request).into()),
            // The retry, once the person authorized, finds their credential.
            (None, Some(link)) => Ok(mrtr::open_link(&link).into()),
            (None, None) => self.answer(result),
        }
    }

    async fn list_resources(&self, _request: Option<PaginatedRequestParams>, _context: RequestContext<RoleServer>) -> Result<ListResourcesResult, ErrorData> {
        Ok(tools::resource_list())
    }

    async fn read_resource(&self, request: ReadResourceRequestParams, context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData> {
        let view = self.view(&context).await;
        let (text, mime) = match request.uri.as_str() {
            CAPABILITIES_URI => (self.host.inner.views.capabilities(&view), "application/json"),
            CATALOG_URI => (self.host.inner.views.catalog(&view), "text/markdown"),
            other => {
                return Err(ErrorData::resource_not_found(format!("no resource `{other}`; this server has {CAPABILITIES_URI} and {CATALOG_URI}"), None));
            }
        };
        let contents = tools::resource_contents(&request.uri, mime, text);
        Ok(if self.host.inner.views.per_principal() { contents.with_cache_scope(rmcp::model::CacheScope::Private) } else { contents }.into())
    }
}
