//! The HTTP surface as an OAuth 2.1 resource server (DESIGN §13), over
//! real HTTP on 127.0.0.1: the RFC 9728 metadata, the 401 a missing or bad
//! token gets (every kind of bad token), the principal a good one makes, and
//! category scopes — a 403 step-up on the tools surface, `permission_denied`
//! inside `execute_code`. Tokens are signed here with the fixture keys in
//! tests/fixtures/oauth; the issuer's metadata and keys are served by a
//! small HTTP responder, as an identity provider serves them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use agent_host::capabilities::memory::SessionMemory;
use agent_host::workspace::Workspace;
use capspec::Mode;
use capspec::mcp::oauth::{OAuthOptions, ResourceServer};
use capspec::mcp::{Auth, HttpOptions, McpHost, Surface};
use capspec_testkit::{TempDir, repo_root};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ISSUER: &str = "http://127.0.0.1:1/issuer";

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(repo_root().join("tests/fixtures/oauth").join(name)).expect("the OAuth fixtures")
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A token signed with the issuer's RSA key, for `resource`, with `scope`;
/// `change` edits its claims first.
fn token(resource: &str, scope: &str, change: impl FnOnce(&mut Value)) -> String {
    let mut claims = json!({ "iss": ISSUER, "sub": "alice", "aud": resource, "exp": now() + 300, "iat": now(), "scope": scope, "groups": ["support"] });
    change(&mut claims);
    sign(Algorithm::RS256, "rsa-1", &EncodingKey::from_rsa_pem(&fixture("rsa.pem")).unwrap(), &claims)
}

fn sign(alg: Algorithm, kid: &str, key: &EncodingKey, claims: &Value) -> String {
    let header = Header { kid: Some(kid.to_string()), ..Header::new(alg) };
    jsonwebtoken::encode(&header, claims, key).expect("signs")
}

fn host(dir: &TempDir, surface: Surface) -> McpHost {
    let mounted = agent_host::registry().expect("registry").mount_all();
    let workspace = Workspace::new(dir.path()).expect("workspace");
    let memory = SessionMemory::default();
    McpHost::new(capspec::guest::Guest::new(mounted), surface, Mode::Auto)
        .prepare_run(move |gate| capspec::Run::new(gate).with(workspace.clone()).with(memory.clone()))
}

/// A resource server at a fresh loopback port, its keys from the fixture JWKS file.
async fn serve(dir: &TempDir, surface: Surface) -> (std::net::SocketAddr, String, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("listen on loopback");
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let jwks = dir.path().join("jwks.json");
    std::fs::write(&jwks, fixture("jwks.json")).unwrap();
    let options = OAuthOptions { issuer: ISSUER.into(), resource: resource.clone(), groups_claim: "groups".into(), jwks_file: Some(jwks) };
    let server = ResourceServer::discover(options).await.expect("a resource server");
    let task = tokio::spawn(capspec::mcp::serve_http(host(dir, surface), listener, HttpOptions::with_auth(Auth::OAuth(Arc::new(server)))));
    (addr, resource, task)
}

/// A response: status, headers (lower-cased names), body.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request to `addr`, read to its end.
async fn request(addr: std::net::SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(format!("{head}\r\n{body}").as_bytes()).await.expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines.next().unwrap()["HTTP/1.1 ".len()..][..3].parse().unwrap();
    let headers = lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string())).collect();
    Reply { status, headers, body: body.to_string() }
}

/// A JSON-RPC POST to /mcp with `bearer` (and a session, once there is one).
async fn post(addr: std::net::SocketAddr, bearer: &str, session: Option<&str>, message: Value) -> Reply {
    let auth = format!("Bearer {bearer}");
    let mut headers = vec![("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    request(addr, "POST", "/mcp", &headers, &message.to_string()).await
}

/// Initialize a session with `bearer`; its id.
async fn session(addr: std::net::SocketAddr, bearer: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "oauth-test", "version": "1"}}});
    let reply = post(addr, bearer, None, init).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let id = reply.header("mcp-session-id").expect("a session id").to_string();
    let initialized = post(addr, bearer, Some(&id), json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    assert_eq!(initialized.status, 202, "{}", initialized.body);
    id
}

/// `tools/call` of `name`; the reply (its body holds the result's SSE event).
async fn call(addr: std::net::SocketAddr, bearer: &str, session: &str, name: &str, args: Value) -> Reply {
    post(addr, bearer, Some(session), json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": args}})).await
}

/// The JSON-RPC message an SSE reply carries.
fn message(reply: &Reply) -> Value {
    let data = reply.body.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).find(|d| !d.is_empty()).unwrap_or_else(|| panic!("no event: {}", reply.body));
    serde_json::from_str(data).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metadata_says_where_tokens_come_from_and_a_request_without_one_is_told() {
    let dir = TempDir::new("oauth-metadata");
    let (addr, resource, server) = serve(&dir, Surface::Tools).await;
    let metadata_url = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    for path in ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] {
        let reply = request(addr, "GET", path, &[], "").await;
        assert_eq!(reply.status, 200, "{path}");
        let metadata: Value = serde_json::from_str(&reply.body).unwrap();
        assert_eq!(
            metadata,
            json!({
                "resource": resource,
                "authorization_servers": [ISSUER],
                "scopes_supported": ["capspec:read", "capspec:write", "capspec:execute", "capspec:external"],
                "bearer_methods_supported": ["header"],
            })
        );
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let reply = request(addr, "POST", "/mcp", &[("Content-Type", "application/json")], &init.to_string()).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.header("www-authenticate"), Some(format!("Bearer resource_metadata=\"{metadata_url}\", scope=\"capspec:read\"").as_str()));
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_bad_token_is_a_401_and_processes_nothing() {
    let dir = TempDir::new("oauth-refused");
    let (addr, resource, server) = serve(&dir, Surface::Tools).await;
    let rsa = EncodingKey::from_rsa_pem(&fixture("rsa.pem")).unwrap();
    let claims = |change: &dyn Fn(&mut Value)| {
        let mut claims = json!({ "iss": ISSUER, "sub": "mallory", "aud": resource, "exp": now() + 300, "scope": "capspec:write" });
        change(&mut claims);
        claims
    };
    let b64 = |v: Value| {
        use std::fmt::Write;
        // base64url without padding, as JWTs spell their parts.
        let bytes = v.to_string().into_bytes();
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                let _ = write!(out, "{}", alphabet[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        out
    };
    let refused = [
        ("expired", sign(Algorithm::RS256, "rsa-1", &rsa, &claims(&|c| c["exp"] = json!(now() - 120))), "expired"),
        ("not yet valid", sign(Algorithm::RS256, "rsa-1", &rsa, &claims(&|c| c["nbf"] = json!(now() + 120))), "not valid yet"),
        ("another audience", sign(Algorithm::RS256, "rsa-1", &rsa, &claims(&|c| c["aud"] = json!("http://127.0.0.1:9/mcp"))), "another resource"),
        ("another issuer", sign(Algorithm::RS256, "rsa-1", &rsa, &claims(&|c| c["iss"] = json!("http://127.0.0.1:2/issuer"))), "another issuer"),
        ("an unknown key", sign(Algorithm::RS256, "stranger", &EncodingKey::from_rsa_pem(&fixture("stranger.pem")).unwrap(), &claims(&|_| ())), "not one of the issuer's"),
        ("a known kid, another key", sign(Algorithm::RS256, "rsa-1", &EncodingKey::from_rsa_pem(&fixture("stranger.pem")).unwrap(), &claims(&|_| ())), "signature"),
        ("alg none", format!("{}.{}.", b64(json!({"alg": "none", "typ": "JWT"})), b64(claims(&|_| ()))), "not a JWT"),
        ("HS256 keyed with the public key", sign(Algorithm::HS256, "rsa-1", &EncodingKey::from_secret(&fixture("rsa.pub.pem")).unwrap(), &claims(&|_| ())), "asymmetric"),
        ("no sub", sign(Algorithm::RS256, "rsa-1", &rsa, &claims(&|c| { c.as_object_mut().unwrap().remove("sub"); })), "sub"),
        ("garbage", "not-a-token".to_string(), "not a JWT"),
    ];
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}});
    for (what, bearer, why) in refused {
        let reply = post(addr, &bearer, None, init.clone()).await;
        assert_eq!(reply.status, 401, "{what}: {}", reply.body);
        let challenge = reply.header("www-authenticate").unwrap_or_default();
        assert!(challenge.starts_with("Bearer error=\"invalid_token\""), "{what}: {challenge}");
        assert!(challenge.contains("resource_metadata=") && challenge.contains("scope=\"capspec:read\""), "{what}: {challenge}");
        assert!(reply.body.contains(why), "{what}: {}", reply.body);
        assert!(reply.header("mcp-session-id").is_none(), "{what}: no session");
    }
    // The same claims, rightly signed: admitted (so the refusals above are the tokens' faults).
    assert_eq!(post(addr, &sign(Algorithm::ES256, "ec-1", &EncodingKey::from_ec_pem(&fixture("ec.pem")).unwrap(), &claims(&|_| ())), None, init).await.status, 200);
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_token_steps_up_to_write_and_the_principal_is_on_every_receipt() {
    let dir = TempDir::new("oauth-step-up");
    std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    let (addr, resource, server) = serve(&dir, Surface::Tools).await;
    let read_only = token(&resource, "openid capspec:read", |_| ());
    let id = session(addr, &read_only).await;
    // A read runs, as alice.
    let listed = call(addr, &read_only, &id, "list_files", json!({})).await;
    assert_eq!(listed.status, 200);
    let result = &message(&listed)["result"];
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(result["_meta"]["io.capspec/receipts"][0]["principal"], "alice", "{result}");
    // A write is a 403 naming the scope: MCP's step-up.
    let args = json!({"path": "b.txt", "content": "two\n"});
    let refused = call(addr, &read_only, &id, "write_file", args.clone()).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let challenge = refused.header("www-authenticate").unwrap();
    assert!(challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"capspec:write\", resource_metadata=\"http://"), "{challenge}");
    assert!(!dir.path().join("b.txt").exists(), "nothing ran");
    // Authorized again with the wider scope, the same call runs.
    let wider = token(&resource, "capspec:read capspec:write", |_| ());
    let written = call(addr, &wider, &id, "write_file", args).await;
    assert_eq!(written.status, 200, "{}", written.body);
    assert_eq!(message(&written)["result"]["isError"], json!(false));
    assert_eq!(std::fs::read_to_string(dir.path().join("b.txt")).unwrap(), "two\n");
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inside_execute_code_a_missing_scope_is_permission_denied_naming_it() {
    let dir = TempDir::new("oauth-code");
    let (addr, resource, server) = serve(&dir, Surface::Code).await;
    let read_only = token(&resource, "capspec:read", |_| ());
    let id = session(addr, &read_only).await;
    let code = r#"
        import workspace from "@capspec/host/workspace";
        export default async () => {
          const listed = await workspace.list_files({});
          let refused;
          try { await workspace.write_file({ path: "c.txt", content: "x" }); } catch (e) { refused = { code: e.code, message: e.message }; }
          return { listed: listed.entries.length, refused };
        };"#;
    let reply = call(addr, &read_only, &id, "execute_code", json!({ "code": code })).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let result = message(&reply)["result"].clone();
    let value = &result["structuredContent"]["result"];
    assert_eq!(value["refused"]["code"], "permission_denied", "{result}");
    let why = value["refused"]["message"].as_str().unwrap();
    assert!(why.contains("capspec:write") && why.contains("workspace.write_file"), "{why}");
    assert!(!dir.path().join("c.txt").exists());
    server.abort();
}

/// An identity provider's two documents: RFC 8414 metadata and its JWKS,
/// on loopback; counts the JWKS fetches.
async fn issuer(fetches: Arc<AtomicUsize>) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let issuer = format!("{base}/issuer");
    let metadata = json!({ "issuer": issuer, "jwks_uri": format!("{base}/jwks"), "authorization_endpoint": format!("{base}/auth"), "token_endpoint": format!("{base}/token") }).to_string();
    let jwks = String::from_utf8(fixture("jwks.json")).unwrap();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else { return };
            let mut buffer = vec![0u8; 4096];
            let n = stream.read(&mut buffer).await.unwrap_or(0);
            let line = String::from_utf8_lossy(&buffer[..n]).lines().next().unwrap_or_default().to_string();
            let body = if line.starts_with("GET /.well-known/oauth-authorization-server/issuer ") {
                Some(metadata.clone())
            } else if line.starts_with("GET /jwks ") {
                fetches.fetch_add(1, Ordering::SeqCst);
                Some(jwks.clone())
            } else {
                None
            };
            let response = match body {
                Some(body) => format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()),
                None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
            };
            let _ = stream.write_all(response.as_bytes()).await;
        }
    });
    (issuer, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_found_through_the_issuers_metadata_and_an_unknown_kid_does_not_refetch_within_the_minute() {
    let fetches = Arc::new(AtomicUsize::new(0));
    let (issuer_url, idp) = issuer(fetches.clone()).await;
    let resource = "http://127.0.0.1:8931/mcp".to_string();
    let options = OAuthOptions { issuer: issuer_url.clone(), resource: resource.clone(), groups_claim: "roles".into(), jwks_file: None };
    let server = ResourceServer::discover(options).await.expect("discovered");
    assert_eq!(fetches.load(Ordering::SeqCst), 1, "the keys are fetched once at start");
    let rsa = EncodingKey::from_rsa_pem(&fixture("rsa.pem")).unwrap();
    let claims = json!({ "iss": issuer_url, "sub": "bob", "aud": [resource, "other"], "exp": now() + 300, "scp": ["capspec:read"], "roles": ["admins"] });
    let good = sign(Algorithm::RS256, "rsa-1", &rsa, &claims);
    let principal = server.admit(Some(format!("Bearer {good}").as_bytes())).await.expect("admitted");
    assert_eq!((principal.id(), principal.groups()), ("bob", &["admins".to_string()][..]));
    assert!(principal.scopes().allows(capspec::Category::Read) && !principal.scopes().allows(capspec::Category::Write));
    // A rotated-in key the issuer does not list: refused, and the keys
    // were fetched within the minute, so not again.
    let stranger = sign(Algorithm::RS256, "rotated", &EncodingKey::from_rsa_pem(&fixture("stranger.pem")).unwrap(), &claims);
    for _ in 0..3 {
        assert!(server.admit(Some(format!("Bearer {stranger}").as_bytes())).await.is_err());
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 1);
    // An issuer whose metadata names another issuer is refused at start.
    let wrong = OAuthOptions { issuer: format!("{issuer_url}/"), resource, groups_claim: "groups".into(), jwks_file: None };
    let error = ResourceServer::discover(wrong).await.err().expect("refused");
    assert!(error.contains("names the issuer"), "{error}");
    // A non-loopback issuer must be https.
    let plain = OAuthOptions { issuer: "http://idp.example.com".into(), resource: "https://tools.example.com/mcp".into(), groups_claim: "groups".into(), jwks_file: None };
    assert!(ResourceServer::discover(plain).await.err().unwrap().contains("must be https://"));
    idp.abort();
}
