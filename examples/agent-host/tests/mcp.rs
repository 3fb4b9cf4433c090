//! The MCP server in process, with rmcp's own client over an in-memory
//! transport: both surfaces, the resources, the one ladder, the gate as an
//! elicitation, and sessions that never share approvals.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_host::capabilities::memory::SessionMemory;
use agent_host::workspace::Workspace;
use capspec::Mode;
use capspec::mcp::{McpHost, Surface};
use capspec_testkit::TempDir;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, ReadResourceRequestParams};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};

fn host(dir: &TempDir, surface: Surface, mode: Mode) -> McpHost {
    let mounted = agent_host::registry().expect("registry").mount_all();
    let workspace = Workspace::new(dir.path()).expect("workspace");
    let memory = SessionMemory::default();
    McpHost::new(capspec::guest::Guest::new(mounted), surface, mode)
        .prepare_run(move |gate| capspec::Run::new(gate).with(workspace.clone()).with(memory.clone()))
}

/// A client that answers elicitations with `answer` (None: declares no
/// elicitation at all) and counts them.
#[derive(Clone)]
struct TestClient {
    answer: Option<Value>,
    asked: Arc<AtomicUsize>,
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = match self.answer {
            Some(_) => ClientCapabilities::builder().enable_elicitation().build(),
            None => ClientCapabilities::default(),
        };
        ClientConfig::new(capabilities, Implementation::new("capspec-test", "1"))
    }

    async fn create_elicitation(&self, request: ElicitRequestParams, _: RequestContext<RoleClient>) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else { panic!("a form elicitation") };
        assert!(message.contains("notes.create_note"), "the question names the capability: {message}");
        let answer = self.answer.clone().expect("asked only when declared");
        let action = if answer.is_null() { ElicitationAction::Decline } else { ElicitationAction::Accept };
        let mut result = ElicitResult::new(action);
        result.content = (!answer.is_null()).then_some(answer);
        Ok(result)
    }
}

async fn connect(host: &McpHost, client: TestClient) -> RunningService<RoleClient, TestClient> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let session = host.session();
    tokio::spawn(async move {
        let running = session.serve(server_io).await.expect("server starts");
        let _ = running.waiting().await;
    });
    client.serve(client_io).await.expect("client connects")
}

fn plain() -> TestClient {
    TestClient { answer: None, asked: Arc::default() }
}

async fn call(client: &RunningService<RoleClient, TestClient>, name: &str, args: Value) -> rmcp::model::CallToolResult {
    let Value::Object(args) = args else { panic!("arguments are an object") };
    client.call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(args)).await.expect("a tool result, not a protocol error")
}

fn structured(result: &rmcp::model::CallToolResult) -> &Value {
    result.structured_content.as_ref().expect("structuredContent")
}

/// A refused or failed call's error object: in `_meta`, the same as the
/// text, and the structured content only when there is one.
fn error_of(result: &rmcp::model::CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let meta = serde_json::to_value(&result.meta).unwrap()[capspec::mcp::META_ERROR].clone();
    let text = serde_json::to_value(&result.content[0]).unwrap();
    assert_eq!(serde_json::from_str::<Value>(text["text"].as_str().unwrap()).unwrap(), meta, "the text is the error object");
    if let Some(structured) = &result.structured_content {
        assert_eq!(structured, &meta);
    }
    meta
}

fn repo_catalog() -> Value {
    let text = std::fs::read_to_string(capspec_testkit::repo_root().join("catalog/capabilities.json")).expect("catalog");
    serde_json::from_str(&text).expect("JSON")
}

#[tokio::test]
async fn the_tools_surface_lists_every_non_deferred_capability_as_capabilities_json_describes_it() {
    let dir = TempDir::new("mcp-tools-surface");
    let client = connect(&host(&dir, Surface::Tools, Mode::Auto), plain()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let catalog = repo_catalog();
    let entries: Vec<&Value> = catalog["modules"].as_array().unwrap().iter().flat_map(|m| m["capabilities"].as_array().unwrap()).collect();
    let listed: Vec<&Value> = entries.iter().copied().filter(|e| e["deferred"] == false).collect();
    assert!(entries.iter().any(|e| e["deferred"] == true), "the reference catalog has a deferred capability");
    // Every non-deferred capability, plus `tool_search`, which finds the deferred ones.
    assert_eq!(tools.len(), listed.len() + 1);
    let search = tools.iter().find(|t| t.name == "tool_search").expect("tool_search is listed");
    assert_eq!(serde_json::to_value(search).unwrap()["annotations"]["readOnlyHint"], true);
    let found = call(&client, "tool_search", json!({"query": "list the environment variables"})).await;
    assert_eq!(found.is_error, Some(false));
    let deferred: Vec<&str> = entries.iter().filter(|e| e["deferred"] == true).map(|e| e["wire_name"].as_str().unwrap()).collect();
    let hit = structured(&found)["matches"].as_array().unwrap().iter().find(|m| deferred.contains(&m["wire_name"].as_str().unwrap())).cloned();
    let hit = hit.unwrap_or_else(|| panic!("no deferred capability found: {found:?}"));
    // Found, then called by the wire name the search gave, though not listed.
    let called = call(&client, hit["wire_name"].as_str().unwrap(), json!({})).await;
    assert_eq!(called.is_error, Some(false), "{called:?}");
    // An alias (`cat_file`, of `read_file`) is callable and never listed.
    std::fs::write(dir.path().join("a.txt"), "hi\n").unwrap();
    let by_alias = call(&client, "cat_file", json!({"path": "a.txt"})).await;
    assert_eq!((by_alias.is_error, structured(&by_alias)["content"].clone()), (Some(false), json!("hi\n")), "{by_alias:?}");
    assert!(tools.iter().all(|t| t.name != "cat_file"), "an alias is never listed");
    let mounted = agent_host::registry().expect("registry").mount_all();
    for entry in listed {
        let tool = tools.iter().find(|t| t.name == entry["wire_name"].as_str().unwrap()).unwrap_or_else(|| panic!("no tool for {entry}"));
        let tool = serde_json::to_value(tool).unwrap();
        // The full description; capabilities.json's is its first sentence.
        let spec = mounted.modules().flat_map(|m| m.specs.iter()).find(|s| s.wire_name == tool["name"]).expect("a spec");
        assert_eq!(tool["description"], spec.description);
        let folded = spec.description.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(folded.starts_with(entry["description"].as_str().unwrap()), "{}", entry["wire_name"]);
        assert_eq!(tool["inputSchema"], entry["input_schema"]);
        assert_eq!(tool["annotations"], entry["annotations"]);
        assert_eq!(tool["_meta"], entry["_meta"]);
        // The output schema, with `type: object` at the root as MCP requires
        // (a root `$ref` gains it beside the reference); none for binary
        // content, which is returned as content blocks.
        let mut output = entry["output_schema"].clone();
        if output.get("$ref").is_some() {
            output["type"] = json!("object");
        }
        if output.to_string().contains("contentEncoding") {
            output = Value::Null;
        }
        assert_eq!(tool.get("outputSchema").unwrap_or(&Value::Null), &output, "{}", entry["wire_name"]);
    }
}

#[tokio::test]
async fn the_code_surface_lists_execute_code_with_the_catalog_and_the_direct_tools() {
    let dir = TempDir::new("mcp-code-surface");
    let client = connect(&host(&dir, Surface::Code, Mode::Auto), plain()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["execute_code", "read_file", "view_image"], "execute_code and the `direct: true` capabilities");
    assert!(tools[2].output_schema.is_none(), "binary content is content blocks, not structured content");
    let description = tools[0].description.as_deref().unwrap();
    assert!(description.contains("default export is the action"), "{description}");
    assert!(description.contains("`import workspace from \"@capspec/host/workspace\";`"), "the catalog follows the contract");
    // A capability that is not direct is not a tool here: an unknown tool is
    // the protocol error the MCP spec gives (-32602, "Unknown tool: …").
    let Value::Object(args) = json!({"path": "a.txt", "content": "x"}) else { unreachable!() };
    let refused = client.call_tool(CallToolRequestParams::new("write_file").with_arguments(args)).await.expect_err("a protocol error");
    let rmcp::service::ServiceError::McpError(error) = refused else { panic!("{refused:?}") };
    assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert_eq!(error.message, "Unknown tool: write_file (this server's code surface lists `execute_code`, `read_file`, `view_image`)");
    assert_eq!(error.data.as_ref().unwrap()["error"], "unknown_capability");
    assert!(!dir.path().join("a.txt").exists());
}

/// A PNG's first bytes: the signature and an IHDR chunk header.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01";

#[tokio::test]
async fn view_image_returns_an_image_block_typed_by_its_bytes() {
    let dir = TempDir::new("mcp-view-image");
    // The name says JPEG, the bytes say PNG: the bytes win.
    std::fs::write(dir.path().join("photo.jpg"), PNG).unwrap();
    std::fs::write(dir.path().join("notes.png"), "not an image").unwrap();
    std::fs::write(dir.path().join("huge.png"), [PNG, &vec![0u8; 5 * 1024 * 1024]].concat()).unwrap();
    let client = connect(&host(&dir, Surface::Code, Mode::Default), plain()).await;
    let result = call(&client, "view_image", json!({"path": "photo.jpg"})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(result.structured_content, None);
    let blocks = serde_json::to_value(&result.content).unwrap();
    assert_eq!(blocks[1], json!({"type": "image", "mimeType": "image/png", "data": capspec::content::encode(PNG)}));
    let rest: Value = serde_json::from_str(blocks[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(rest, json!({"image": {"mimeType": "image/png"}, "size": PNG.len()}), "the rest of the output, as text");
    let not_image = error_of(&call(&client, "view_image", json!({"path": "notes.png"})).await);
    assert_eq!(not_image["error"], "failed");
    assert!(not_image["message"].as_str().unwrap().contains("not a PNG, JPEG, GIF or WebP"), "{not_image}");
    let too_big = error_of(&call(&client, "view_image", json!({"path": "huge.png"})).await);
    assert!(too_big["message"].as_str().unwrap().contains("limited to 5242880 bytes"), "{too_big}");
    // A guest action gets the same image as `{mimeType, data}`.
    let code = "import workspace from '@capspec/host/workspace'; \
        export default async () => { const { image, size } = await workspace.view_image({ path: 'photo.jpg' }); return { type: image.mimeType, length: image.data.length, size }; }";
    let action = call(&client, "execute_code", json!({"code": code})).await;
    assert_eq!(structured(&action)["result"], json!({"type": "image/png", "length": capspec::content::encode(PNG).len(), "size": PNG.len()}), "{action:?}");
}

#[tokio::test]
async fn both_resources_are_the_mounts_catalogs() {
    let dir = TempDir::new("mcp-resources");
    let client = connect(&host(&dir, Surface::Code, Mode::Auto), plain()).await;
    let listed = client.list_all_resources().await.expect("resources/list");
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["capspec://capabilities", "capspec://catalog"]);
    let read = |uri: &str| {
        let client = &client;
        let uri = uri.to_string();
        async move {
            let result = client.read_resource(ReadResourceRequestParams::new(uri)).await.expect("resources/read");
            let value = serde_json::to_value(&result.contents[0]).unwrap();
            (value["mimeType"].as_str().unwrap().to_string(), value["text"].as_str().unwrap().to_string())
        }
    };
    let (mime, json) = read("capspec://capabilities").await;
    assert_eq!(mime, "application/json");
    // Everything mounted: the resource is the generated file, marker aside —
    // but for the upstream module `kg`, mounted only with `--upstreams`.
    let mut file = repo_catalog()["modules"].clone();
    file.as_array_mut().unwrap().retain(|m| m["name"] != "kg");
    assert_eq!(serde_json::from_str::<Value>(&json).unwrap()["modules"], file);
    let (mime, markdown) = read("capspec://catalog").await;
    assert_eq!(mime, "text/markdown");
    assert!(markdown.contains("## notes") && markdown.contains("## workspace"), "{markdown}");
    let missing = client.read_resource(ReadResourceRequestParams::new("capspec://nope")).await;
    assert!(missing.is_err(), "an unknown resource is a protocol error");
}

#[tokio::test]
async fn execute_code_returns_the_run_report_and_calls_go_through_the_gate() {
    let dir = TempDir::new("mcp-execute");
    let client = connect(&host(&dir, Surface::Code, Mode::AcceptEdits), plain()).await;
    let action = r#"
        import workspace from "@capspec/host/workspace";
        export default async () => {
          await workspace.write_file({ path: "hello.txt", content: "hi\n" });
          console.log("written");
          return (await workspace.read_file({ path: "hello.txt" })).content;
        };"#;
    let result = call(&client, "execute_code", json!({ "code": action })).await;
    assert_eq!(result.is_error, Some(false));
    let report = structured(&result);
    assert_eq!(report["result"], "hi\n");
    assert_eq!(report["error"], Value::Null);
    assert_eq!(report["logs"], json!(["written"]));
    let receipts: Vec<(&str, &str)> = report["receipts"].as_array().unwrap().iter().map(|r| (r["capability"].as_str().unwrap(), r["decision"].as_str().unwrap())).collect();
    assert_eq!(receipts, [("workspace.write_file", "auto"), ("workspace.read_file", "auto")]);
    // The same report is the text, and the receipts are in `_meta`.
    let text = serde_json::to_value(&result.content[0]).unwrap();
    assert_eq!(serde_json::from_str::<Value>(text["text"].as_str().unwrap()).unwrap(), *report);
    assert_eq!(serde_json::to_value(&result.meta).unwrap()["io.capspec/receipts"], report["receipts"]);

    let thrown = call(&client, "execute_code", json!({ "code": "export default () => { throw new Error('boom'); };" })).await;
    assert_eq!(thrown.is_error, Some(true));
    assert_eq!(structured(&thrown)["error"]["kind"], "threw");
    let missing = call(&client, "execute_code", json!({})).await;
    assert_eq!(error_of(&missing)["error"], "invalid_arguments");
}

#[tokio::test]
async fn refusals_are_tool_errors_with_the_named_reason() {
    let dir = TempDir::new("mcp-refusals");
    let client = connect(&host(&dir, Surface::Tools, Mode::Default), plain()).await;
    // Without elicitation, an ask is a denial that says why.
    let denied = call(&client, "create_note", json!({"title": "t", "body": "b"})).await;
    assert_eq!(denied.is_error, Some(true));
    // create_note declares an output schema: the error is text and `_meta`, not structured content.
    assert_eq!(denied.structured_content, None, "{denied:?}");
    let error = error_of(&denied);
    assert_eq!(error["error"], "permission_denied");
    assert_eq!(error["capability"], "notes.create_note");
    assert!(error["message"].as_str().unwrap().contains("did not declare elicitation"), "{error}");
    assert!(!dir.path().join(".notes").exists() && std::fs::read_dir(dir.path()).unwrap().next().is_none(), "the impl did not run");
    // Invalid arguments are a tool error, not a protocol error.
    let invalid = call(&client, "read_file", json!({"path": ""})).await;
    assert_eq!(error_of(&invalid)["error"], "invalid_arguments");
    let receipts = serde_json::to_value(&invalid.meta).unwrap()["io.capspec/receipts"].clone();
    assert_eq!(receipts[0]["status"], "refused");
    // A successful call: its value, checked against the output schema.
    let listed = call(&client, "list_files", json!({})).await;
    assert_eq!(listed.is_error, Some(false));
    assert_eq!(structured(&listed)["entries"], json!([]));
}

#[tokio::test]
async fn a_host_without_result_receipts_leaves_them_out_of_results_and_gates_alike() {
    let dir = TempDir::new("mcp-no-receipts");
    let receipts_of = |result: &rmcp::model::CallToolResult| serde_json::to_value(&result.meta).unwrap().get("io.capspec/receipts").cloned();
    let client = connect(&host(&dir, Surface::Tools, Mode::Default).without_result_receipts(), plain()).await;
    let listed = call(&client, "list_files", json!({})).await;
    assert_eq!(structured(&listed)["entries"], json!([]));
    assert_eq!(receipts_of(&listed), None, "{listed:?}");
    // Refused alike, and the error object is still in `_meta`.
    let denied = call(&client, "create_note", json!({"title": "t", "body": "b"})).await;
    assert_eq!(error_of(&denied)["error"], "permission_denied");
    assert_eq!(receipts_of(&denied), None, "{denied:?}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "the impl did not run");
    // The code surface: the report keeps its receipts (they are its content).
    let client = connect(&host(&dir, Surface::Code, Mode::Default).without_result_receipts(), plain()).await;
    let action = r#"import workspace from "@capspec/host/workspace"; export default async () => (await workspace.list_files({})).entries.length;"#;
    let result = call(&client, "execute_code", json!({ "code": action })).await;
    assert_eq!(structured(&result)["receipts"][0]["capability"], "workspace.list_files", "{result:?}");
    assert_eq!(receipts_of(&result), None, "{result:?}");
    // Without the option, the same call's receipts are in `_meta` (the default).
    let client = connect(&host(&dir, Surface::Tools, Mode::Default), plain()).await;
    assert_eq!(receipts_of(&call(&client, "list_files", json!({})).await).unwrap()[0]["capability"], "workspace.list_files");
}

#[tokio::test]
async fn plan_mode_blocks_everything_but_read() {
    let dir = TempDir::new("mcp-plan");
    let client = connect(&host(&dir, Surface::Tools, Mode::Plan), plain()).await;
    let blocked = call(&client, "write_file", json!({"path": "a.txt", "content": "x"})).await;
    assert_eq!(error_of(&blocked)["error"], "blocked_in_plan_mode");
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(call(&client, "list_files", json!({})).await.is_error, Some(false));
}

#[tokio::test]
async fn an_ask_is_an_elicitation_and_session_approvals_stay_in_their_session() {
    let dir = TempDir::new("mcp-elicit");
    let host = host(&dir, Surface::Tools, Mode::Default);
    let note = || json!({"title": "t", "body": "b"});
    // A session that declared no elicitation, on the same server, calls
    // first; each session's way of asking is its own.
    let silent = connect(&host, plain()).await;
    assert_eq!(call(&silent, "list_files", json!({})).await.is_error, Some(false));
    // Declined: denied, with the reason.
    let declining = TestClient { answer: Some(Value::Null), asked: Arc::default() };
    let client = connect(&host, declining.clone()).await;
    let declined = call(&client, "create_note", note()).await;
    assert_eq!(error_of(&declined)["error"], "permission_denied");
    assert!(error_of(&declined)["message"].as_str().unwrap().contains("declined"));
    assert_eq!(declining.asked.load(Ordering::SeqCst), 1);
    // Allowed for the session: asked once, then approved without asking.
    let approving = TestClient { answer: Some(json!({"scope": "session"})), asked: Arc::default() };
    let client = connect(&host, approving.clone()).await;
    for _ in 0..3 {
        let created = call(&client, "create_note", note()).await;
        assert_eq!(created.is_error, Some(false), "{created:?}");
        let receipts = serde_json::to_value(&created.meta).unwrap()["io.capspec/receipts"].clone();
        assert_eq!(receipts[0]["decision"], "approved");
    }
    assert_eq!(approving.asked.load(Ordering::SeqCst), 1);
    // Another session of the same server is asked again.
    let other = TestClient { answer: Some(json!({"scope": "once"})), asked: Arc::default() };
    let client = connect(&host, other.clone()).await;
    call(&client, "create_note", note()).await;
    call(&client, "create_note", note()).await;
    assert_eq!(other.asked.load(Ordering::SeqCst), 2, "`once` asks every time, and the first session's allow did not carry over");
    // The silent session is still not asked: denied, saying why.
    let denied = call(&silent, "create_note", note()).await;
    assert!(error_of(&denied)["message"].as_str().unwrap().contains("did not declare elicitation"), "{denied:?}");
}

/// One raw HTTP/1.1 POST of an `initialize` to `addr` with these extra
/// header lines; the status code.
async fn post_initialize(addr: std::net::SocketAddr, headers: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.expect("a status line");
    let line = String::from_utf8_lossy(&head).into_owned();
    line["HTTP/1.1 ".len()..].trim().parse().unwrap_or_else(|_| panic!("status line: {line}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_foreign_origins_and_hosts_with_403_token_or_not() {
    let dir = TempDir::new("mcp-origin");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listen on loopback");
    let addr = listener.local_addr().unwrap();
    let options = capspec::mcp::HttpOptions::new("s3cret").with_allowed_origins(["https://app.example.com"]);
    let server = tokio::spawn(capspec::mcp::serve_http(host(&dir, Surface::Tools, Mode::Default), listener, options));
    let token = "Authorization: Bearer s3cret\r\n";
    let local = format!("Host: {addr}\r\n");
    // Loopback and the listed origin pass; without a token that is 401.
    for (headers, status) in [
        (format!("{local}{token}"), 200),
        (format!("{local}Origin: http://localhost:5173\r\n{token}"), 200),
        (format!("Host: app.example.com\r\nOrigin: https://app.example.com\r\n{token}"), 200),
        (format!("Host: [::1]:{}\r\n{token}", addr.port()), 200),
        (local.clone(), 401),
    ] {
        assert_eq!(post_initialize(addr, &headers).await, status, "{headers}");
    }
    // A page elsewhere (DNS rebinding: its Host or Origin is its own name): 403, token or not.
    for headers in [
        format!("{local}Origin: http://evil.example\r\n{token}"),
        format!("{local}Origin: http://evil.example\r\n"),
        format!("Host: evil.example:{}\r\n{token}", addr.port()),
        format!("Host: evil.example:{}\r\n", addr.port()),
        format!("{local}Origin: null\r\n{token}"),
    ] {
        assert_eq!(post_initialize(addr, &headers).await, 403, "{headers}");
    }
    server.abort();
}
