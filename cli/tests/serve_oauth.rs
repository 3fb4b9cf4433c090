//! `cargo capspec serve --oauth-issuer`: a gateway over an upstream server,
//! behind an identity provider (DESIGN §13). The upstream is the SDK's HTTP
//! fixture (tests/ts/http-server.mjs), which refuses every request not
//! carrying its own token: a call through the gateway with an access token
//! succeeds only because the gateway sends the upstream its configured
//! token, never the caller's. Tokens are signed with the fixture issuer key
//! (tests/fixtures/oauth) and checked against its JWKS file.

use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use capspec_testkit::{KillOnDrop, TempDir, repo_root, skip, text};
use serde_json::{Value, json};

const ISSUER: &str = "http://127.0.0.1:1/issuer";
const RESOURCE: &str = "https://gateway.example.com/mcp";

fn token(scope: &str) -> String {
    token_for("carol", "ops", scope)
}

fn token_for(sub: &str, group: &str, scope: &str) -> String {
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(&std::fs::read(repo_root().join("tests/fixtures/oauth/rsa.pem")).unwrap()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({ "iss": ISSUER, "sub": sub, "aud": RESOURCE, "exp": now + 600, "scope": scope, "groups": [group] });
    let header = jsonwebtoken::Header { kid: Some("rsa-1".into()), ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256) };
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

/// One HTTP/1.1 exchange: status, headers (lower-cased names), body.
fn exchange(addr: &str, method: &str, headers: &[(&str, &str)], path: &str, body: &str) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    stream.write_all(format!("{request}\r\n{body}").as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string())).collect();
    (status, headers, body.to_string())
}

fn post(addr: &str, bearer: &str, session: Option<&str>, message: Value) -> (u16, Vec<(String, String)>, String) {
    let auth = format!("Bearer {bearer}");
    let mut headers = vec![("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    exchange(addr, "POST", &headers, "/mcp", &message.to_string())
}


/// `command` (`cargo capspec` in a project) serving the project at `root`
/// on the tools surface over HTTP behind the fixture issuer: the child, the
/// address it listens at, and what it printed until then.
fn gateway(mut command: Command, root: &std::path::Path) -> (KillOnDrop, String, String) {
    let jwks = repo_root().join("tests/fixtures/oauth/jwks.json");
    command.args(["serve", "--surface", "tools", "--mode", "auto", "--http", "127.0.0.1:0", "--oauth-issuer", ISSUER, "--resource", RESOURCE, "--jwks-file"]);
    let mut gateway = KillOnDrop(command.arg(&jwks).arg("--root").arg(root).stderr(Stdio::piped()).spawn().unwrap());
    let mut stderr = std::io::BufReader::new(gateway.0.stderr.take().unwrap());
    let (mut printed, mut line) = (String::new(), String::new());
    while !line.contains("serving MCP at") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the gateway ended before listening: {printed}");
        printed.push_str(&line);
    }
    let addr = line.trim().rsplit_once("http://").unwrap().1.trim_end_matches("/mcp").to_string();
    (gateway, addr, printed)
}

#[test]
fn a_gateway_behind_an_identity_provider_admits_access_tokens_and_never_forwards_them() {
    let ts = repo_root().join("tests/ts");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !ts.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node or the pinned MCP SDK is not installed (run `npm ci --prefix tests/ts`); skipping the gateway behind OAuth");
        return;
    }
    let mut fixture = Command::new("node");
    fixture.arg(ts.join("http-server.mjs")).env("CAPSPEC_FIXTURE_TOKEN", "upstream-s3cret").stderr(Stdio::piped());
    let mut remote = KillOnDrop(fixture.spawn().unwrap());
    let mut line = String::new();
    std::io::BufReader::new(remote.0.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("the fixture printed {line:?}")).to_string();
    let project = TempDir::new("serve-oauth");
    project.write("capspec.toml", format!("specs = \"specs\"\n\n[upstream.remote]\nurl = \"{url}\"\ntoken_env = \"CAPSPEC_TEST_REMOTE_TOKEN\"\ntimeout_ms = 10000\n"));
    let capspec = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-capspec"));
        command.arg("capspec").args(args).current_dir(project.path()).env("CAPSPEC_TEST_REMOTE_TOKEN", "upstream-s3cret").env_remove("CARGO_MANIFEST_DIR");
        command
    };
    for args in [&["import", "mcp", "--upstream", "remote"][..], &["sync"]] {
        let out = capspec(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    }
    let (_gateway, addr, _) = gateway(capspec(&[]), project.path());

    // The metadata names the issuer; without a token, a 401 pointing at it.
    let (status, _, metadata) = exchange(&addr, "GET", &[], "/.well-known/oauth-protected-resource/mcp", "");
    assert_eq!(status, 200);
    let metadata: Value = serde_json::from_str(&metadata).unwrap();
    assert_eq!((&metadata["resource"], &metadata["authorization_servers"]), (&json!(RESOURCE), &json!([ISSUER])));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (status, headers, _) = post(&addr, "", None, init.clone());
    assert_eq!(status, 401);
    let challenge = &headers.iter().find(|(n, _)| n == "www-authenticate").unwrap().1;
    assert!(challenge.contains("resource_metadata=\"https://gateway.example.com/.well-known/oauth-protected-resource/mcp\""), "{challenge}");

    // With an access token: the upstream's tool runs, as carol; the
    // upstream admitted the call, so it got its own token, not hers.
    let bearer = token("capspec:read");
    let (status, headers, body) = post(&addr, &bearer, None, init);
    assert_eq!(status, 200, "{body}");
    let session = headers.iter().find(|(n, _)| n == "mcp-session-id").unwrap().1.clone();
    assert_eq!(post(&addr, &bearer, Some(&session), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).0, 202);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "shout", "arguments": {"text": "hi"}}});
    let (status, _, body) = post(&addr, &bearer, Some(&session), call);
    assert_eq!(status, 200, "{body}");
    let data = body.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).find(|d| !d.is_empty()).unwrap_or_else(|| panic!("{body}"));
    let result = &serde_json::from_str::<Value>(data).unwrap()["result"];
    assert_eq!((&result["content"][0]["text"], result.get("structuredContent")), (&json!("HI"), None), "{result:#}");
    let receipt = &result["_meta"]["io.capspec/receipts"][0];
    assert_eq!((&receipt["principal"], &receipt["upstream"]), (&json!("carol"), &json!("remote")), "{receipt}");
}

/// Named surfaces (DESIGN §10) over two real upstream servers from npm
/// (server-memory and server-filesystem): `check` finds each broken
/// `[surface.NAME]` at its line; `serve` serves `/mcp/support` (the memory
/// module's reads, in plan mode, to the group `support`) and `/mcp/ops`
/// (both modules, to `ops`) beside `/mcp`. A caller outside a surface's
/// groups gets 403; inside, its tools list is the surface's, a tool outside
/// it is an unknown tool, and on stdio `--surface-name` serves it alone,
/// where an action importing a module outside it is refused by name: seen
/// through the TypeScript SDK's client (tests/ts/surfaces-client.mjs).
#[test]
fn named_surfaces_are_checked_against_the_specs_and_served_to_their_groups() {
    let ts = repo_root().join("tests/ts/node_modules/@modelcontextprotocol");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    if !node || !ts.join("server-memory").is_dir() || !ts.join("server-filesystem").is_dir() {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node or the pinned MCP servers are not installed (run `npm ci --prefix tests/ts`); skipping named surfaces");
        return;
    }
    let project = TempDir::new("serve-surfaces");
    let data = project.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let quoted = |p: &std::path::Path| serde_json::to_string(&p.to_string_lossy()).unwrap();
    let upstreams = format!(
        "specs = \"specs\"\n\n[upstream.memory]\ncommand = [\"node\", {}]\nenv = {{ MEMORY_FILE_PATH = {} }}\ntimeout_ms = 20000\n\n[upstream.fs]\ncommand = [\"node\", {}, {}]\ntimeout_ms = 20000\n",
        quoted(&ts.join("server-memory/dist/index.js")),
        quoted(&data.join("memory.jsonl")),
        quoted(&ts.join("server-filesystem/dist/index.js")),
        quoted(&data),
    );
    project.write("capspec.toml", &upstreams);
    let capspec = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-capspec"));
        command.arg("capspec").args(args).current_dir(project.path()).env_remove("CARGO_MANIFEST_DIR");
        command
    };
    for args in [&["import", "mcp", "--upstream", "memory"][..], &["import", "mcp", "--upstream", "fs"], &["sync"]] {
        let out = capspec(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    }

    // `check`: each broken surface, at its line.
    let broken = format!(
        "{upstreams}\n[surface.a]\nmodules = [\"memroy\"]\n\n[surface.b]\nmodules = [\"memory\"]\ncapabilities = [\"fs.*\"]\npath = \"/mcp/a\"\ngroups = [\"nobody\"]\n"
    );
    let lines = upstreams.lines().count();
    project.write("capspec.toml", &broken);
    let out = capspec(&["check"]).output().unwrap();
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    for (rule, line) in [("surface/unknown-module", lines + 3), ("surface/no-match", lines + 7), ("surface/path-taken", lines + 8), ("surface/unknown-group", lines + 9)] {
        assert!(report.contains(&format!("[{rule}]")) && report.contains(&format!("capspec.toml:{line}:")), "{rule} at line {line}:\n{report}");
    }
    assert!(report.contains("did you mean `memory`?"), "{report}");

    let surfaces = format!(
        "{upstreams}\n[surface.support]\nmodules = [\"memory\"]\ncapabilities = [\"memory.read_*\", \"memory.search_*\"]\ngroups = [\"support\"]\nmode = \"plan\"\n\n[surface.ops]\nmodules = [\"memory\", \"fs\"]\ngroups = [\"ops\"]\n"
    );
    project.write("capspec.toml", &surfaces);
    let out = capspec(&["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let (gateway, addr, printed) = gateway(capspec(&[]), project.path());
    assert!(printed.contains(&format!("serving surface support at http://{addr}/mcp/support")), "{printed}");

    let all = "capspec:read capspec:write capspec:execute capspec:external";
    let (sam, carol) = (token_for("sam", "support", all), token_for("carol", "ops", all));
    let base = format!("http://{addr}");
    let args = [base.as_ref(), sam.as_ref(), carol.as_ref(), env!("CARGO_BIN_EXE_cargo-capspec").as_ref(), project.path().as_os_str()];
    let Some(last) = capspec_testkit::node_script("surfaces-client.mjs", "@modelcontextprotocol/sdk", &args) else { return };
    let seen: Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("no JSON summary ({e}): {last}"));
    // Outside the surface's groups: 403, and no session.
    assert_eq!(seen["outside"], 403, "{seen}");
    assert_eq!(seen["support"]["tools"], json!(["read_graph", "search_nodes"]), "{seen}");
    assert!(seen["support"]["openNodes"].as_str().unwrap().starts_with("error -32602"), "a tool outside the surface is an unknown tool: {seen}");
    let ops = seen["ops"]["tools"].as_array().unwrap();
    assert!(ops.contains(&json!("open_nodes")) && ops.contains(&json!("read_text_file")), "{seen}");
    assert_eq!(seen["ops"]["openNodes"], "ok", "{seen}");
    assert_eq!(seen["default"]["tools"], seen["ops"]["tools"], "the default surface serves every module to everyone: {seen}");
    // On stdio, `--surface-name support` alone; an action may not import `fs`.
    assert_eq!((&seen["stdio"]["tools"], &seen["stdio"]["isError"]), (&json!(["execute_code"]), &json!(true)), "{seen}");
    assert!(seen["stdio"]["error"].as_str().unwrap_or_default().contains("@capspec/host/fs"), "the refusal names the module: {seen}");
    drop(gateway);
}
