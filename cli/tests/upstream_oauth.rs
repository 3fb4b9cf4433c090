//! A remote MCP server behind OAuth 2.1 as a user meets it (DESIGN §12):
//! `auth = "oauth"` in `[upstream.NAME]`, `cargo capspec auth login NAME
//! --no-browser`, then import, check, a call through `serve` and a refresh;
//! a refused token, logout, a mismatched `iss`. The counterparts are real
//! and on 127.0.0.1 (tests/ts/oauth-upstream.mjs): oidc-provider with
//! dynamic registration, PKCE, resource indicators and access tokens that
//! live 4 s, and an MCP server from the official TypeScript SDK that
//! requires them. The browser step is driven over HTTP by the fixture.
//! Credentials go to the test's own config directory (`XDG_CONFIG_HOME`).
//! Skips with a notice where node or the packages are absent; CI (which
//! installs them) sets CAPSPEC_REQUIRE_NODE_TOOLS and fails instead.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use capspec_testkit::{KillOnDrop, TempDir, repo_root, skip, text};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// The running fixture and its addresses.
struct Remote {
    _node: KillOnDrop,
    issuer: String,
    mcp: String,
    control: String,
    /// A team's issuer, as a gateway's callers sign in.
    team: String,
}

fn remote() -> Option<Remote> {
    let ts = repo_root().join("tests/ts");
    let node = Command::new("node").arg("--version").output().is_ok_and(|o| o.status.success());
    let installed = ["oidc-provider", "jose", "@modelcontextprotocol/sdk"].iter().all(|p| ts.join("node_modules").join(p).is_dir());
    if !(node && installed) {
        skip(Some("CAPSPEC_REQUIRE_NODE_TOOLS"), "node, oidc-provider, jose or the MCP SDK is not installed (run `npm ci --prefix tests/ts`); skipping the OAuth upstream test");
        return None;
    }
    let mut child = Command::new("node").arg(ts.join("oauth-upstream.mjs")).current_dir(&ts).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("node starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    // oidc-provider's notices follow: read on, so the pipe never fills or breaks.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let node = KillOnDrop(child);
    let addresses: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("the fixture printed {line:?}: {e}"));
    let field = |k: &str| addresses[k].as_str().unwrap().to_string();
    Some(Remote { issuer: field("issuer"), mcp: field("mcp"), control: field("control"), team: field("team"), _node: node })
}

/// One HTTP request to the fixture's control endpoint (loopback, no TLS):
/// the response's JSON body.
fn control(remote: &Remote, method: &str, path: &str, body: &Value) -> Value {
    let url = format!("{}/{path}", remote.control);
    let rest = url.strip_prefix("http://").unwrap();
    let (host, target) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    let body = body.to_string();
    write!(stream, "{method} {target} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{response}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{body}: {e}"))
}

/// A project with `[upstream.remote]` behind OAuth, and the user's own
/// config directory, outside it.
struct User {
    project: TempDir,
    home: TempDir,
}

impl User {
    fn new(remote: &Remote, name: &str, extra: &str) -> User {
        User::at(&remote.mcp, name, extra)
    }

    /// [`User::new`] for the MCP server at `url`.
    fn at(url: &str, name: &str, extra: &str) -> User {
        let project = TempDir::new(&format!("oauth-upstream-{name}"));
        project.write("capspec.toml", format!("specs = \"specs\"\n\n[upstream.remote]\nurl = \"{url}\"\nauth = \"oauth\"\ntimeout_ms = 10000\n{extra}"));
        User { project, home: TempDir::new(&format!("oauth-home-{name}")) }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-capspec"));
        command.arg("capspec").args(args).current_dir(self.project.path()).env_remove("CARGO_MANIFEST_DIR");
        command.env("HOME", self.home.path()).env("XDG_CONFIG_HOME", self.home.path().join("config"));
        command
    }

    fn capspec(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("cargo-capspec runs")
    }

    fn credentials_dir(&self) -> PathBuf {
        self.home.path().join("config/capspec/oauth")
    }

    fn credential_files(&self) -> Vec<PathBuf> {
        let Ok(listing) = std::fs::read_dir(self.credentials_dir()) else { return Vec::new() };
        listing.map(|e| e.unwrap().path()).collect()
    }

    /// `auth login remote --no-browser`: the URL it prints is followed by
    /// the fixture's browser (its `iss` replaced when given); what the
    /// loopback answered the browser, and the command's output.
    fn login(&self, remote: &Remote, iss: Option<&str>) -> (Value, Output) {
        let mut child = self.command(&["auth", "login", "remote", "--no-browser"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut printed = String::new();
        let url = loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap() == 0 {
                let out = child.wait_with_output().unwrap();
                panic!("auth login printed no URL: {printed}{}", text(&out));
            }
            printed.push_str(&line);
            if line.starts_with("http://") {
                break line.trim().to_string();
            }
        };
        let mut request = json!({"url": url});
        if let Some(iss) = iss {
            request["iss"] = json!(iss);
        }
        let browsed = control(remote, "POST", "browse", &request);
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let mut out = child.wait_with_output().unwrap();
        out.stdout = format!("{printed}{rest}").into_bytes();
        (browsed, out)
    }
}

impl User {
    /// Logged in, the server's tools pinned and synced.
    fn log_in_and_pin(&self, remote: &Remote) {
        let (_, login) = self.login(remote, None);
        assert_eq!(login.status.code(), Some(0), "{}", text(&login));
        let import = self.capspec(&["import", "mcp", "--upstream", "remote"]);
        assert_eq!(import.status.code(), Some(0), "{}", text(&import));
        assert_eq!(self.capspec(&["sync"]).status.code(), Some(0));
    }
}

/// The query of the authorization URL `auth login` printed, decoded.
fn authorization_query(printed: &str) -> std::collections::BTreeMap<String, String> {
    let url = printed.lines().find(|l| l.starts_with("http://")).unwrap_or_else(|| panic!("no URL in {printed}"));
    let decode = |s: &str| {
        let bytes = s.replace('+', " ").into_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' && i + 2 < bytes.len() {
                out.push(u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap(), 16).unwrap());
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).unwrap()
    };
    url.split_once('?').unwrap().1.split('&').map(|pair| pair.split_once('=').unwrap()).map(|(k, v)| (decode(k), decode(v))).collect()
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

fn check_upstream(user: &User) -> Value {
    let out = user.capspec(&["check", "--upstream", "--format", "json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)))
}

async fn gateway(user: &User) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_cargo-capspec"));
    command.args(["capspec", "serve", "--surface", "tools", "--mode", "auto"]).current_dir(user.project.path()).env_remove("CARGO_MANIFEST_DIR");
    command.env("HOME", user.home.path()).env("XDG_CONFIG_HOME", user.home.path().join("config"));
    ().serve(TokioChildProcess::new(command).unwrap()).await.expect("the gateway answers initialize")
}

async fn shout(client: &RunningService<RoleClient, ()>, text: &str) -> Value {
    let args = json!({"text": text}).as_object().unwrap().clone();
    serde_json::to_value(client.call_tool(CallToolRequestParams::new("shout").with_arguments(args)).await.unwrap()).unwrap()
}

#[test]
fn log_in_once_then_import_check_call_refresh_and_log_out() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "flow", "");

    // Not logged in: status says so and names the command; import refuses.
    let status = user.capspec(&["auth", "status"]);
    assert_eq!(String::from_utf8_lossy(&status.stdout), "[upstream.remote] not logged in: `cargo capspec auth login remote`\n", "{}", text(&status));
    let import = user.capspec(&["import", "mcp", "--upstream", "remote"]);
    assert_eq!(import.status.code(), Some(2), "{}", text(&import));
    assert!(text(&import).contains("not logged in; log in with `cargo capspec auth login remote`"), "{}", text(&import));

    // The log-in: discovery from the 401, registration, PKCE, the resource,
    // the browser, the loopback redirect with the issuer.
    let (browsed, login) = user.login(&remote, None);
    assert_eq!(login.status.code(), Some(0), "{}", text(&login));
    assert_eq!(browsed["redirect"]["iss"], json!(remote.issuer), "RFC 9207: the redirect names the issuer");
    assert_eq!(browsed["page"], "Logged in; you can close this tab.", "{browsed}");
    let said = String::from_utf8_lossy(&login.stdout);
    let asked = authorization_query(&said);
    assert_eq!(asked["code_challenge_method"], "S256", "PKCE: {said}");
    assert_eq!(asked["resource"], remote.mcp, "RFC 8707: the token is asked for this server");
    assert_eq!(asked["scope"], "remote:read", "the scope the 401 named");
    assert!(asked["redirect_uri"].starts_with("http://127.0.0.1:") && asked["redirect_uri"].ends_with("/callback"), "a loopback redirect: {said}");
    assert!(said.contains(&format!("logged in to [upstream.remote]: issuer {}, client ", remote.issuer)) && said.contains("scopes remote:read"), "{said}");
    assert!(said.contains("refreshed as it expires"), "a refresh token is kept: {said}");

    // Kept in the user's config directory, owner-only; never in the project.
    let stored = user.credential_files();
    assert_eq!(stored.len(), 1, "{stored:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&stored[0]).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(user.credentials_dir()).unwrap().permissions().mode() & 0o777, 0o700);
    }
    assert_eq!(files(user.project.path()), ["capspec.toml"]);
    let file: Value = serde_json::from_slice(&std::fs::read(&stored[0]).unwrap()).unwrap();
    let token = file["credentials"]["token_response"]["access_token"].as_str().unwrap().to_string();
    assert_eq!((file["issuer"].as_str(), file["resource"].as_str()), (Some(remote.issuer.as_str()), Some(remote.mcp.as_str())));

    // Status shows the log-in, never the token.
    let status = user.capspec(&["auth", "status"]);
    let shown = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(shown.starts_with(&format!("[upstream.remote] issuer {}", remote.issuer)) && shown.contains("access token expires in"), "{shown}");
    assert!(!shown.contains(&token) && !text(&status).contains(&token), "status never prints the token");

    // Import, sync and check with the stored log-in.
    let import = user.capspec(&["import", "mcp", "--upstream", "remote"]);
    assert_eq!(import.status.code(), Some(0), "{}", text(&import));
    assert!(user.project.read("specs/remote.yaml").contains("  - name: shout\n    category: read\n"), "{}", user.project.read("specs/remote.yaml"));
    assert_eq!(user.capspec(&["sync"]).status.code(), Some(0));
    assert_eq!(check_upstream(&user)["findings"], json!([]));

    // A call through the gateway; the access token expires (4 s) and the
    // next call runs on a refreshed one.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let client = gateway(&user).await;
        let first = shout(&client, "hello").await;
        assert_eq!((first["isError"].clone(), first["content"][0]["text"].clone()), (json!(false), json!("HELLO")), "{first:#}");
        tokio::time::sleep(Duration::from_secs(5)).await;
        let later = shout(&client, "again").await;
        assert_eq!(later["content"][0]["text"], "AGAIN", "after the access token expired: {later:#}");
        let _ = client.cancel().await;
    });
    let stats = control(&remote, "GET", "stats", &json!({}));
    assert!(stats["refreshes"].as_u64().unwrap() >= 1 && stats["accepted"].as_u64().unwrap() >= 2, "the token was refreshed: {stats}");
    let refreshed: Value = serde_json::from_slice(&std::fs::read(&user.credential_files()[0]).unwrap()).unwrap();
    assert_ne!(refreshed["credentials"]["token_response"]["access_token"].as_str(), Some(token.as_str()), "the refreshed token is stored");
    // Besides the generated files, the project holds its config and the
    // serve store's audit log, and neither holds a token.
    assert_eq!(files(user.project.path()).iter().filter(|f| !f.starts_with("specs/") && !f.starts_with("catalog/") && !f.starts_with("guest/") && !f.starts_with("src/") && !f.starts_with(".capspec/store.db-")).collect::<Vec<_>>(), [".capspec/store.db", "capspec.toml"], "nothing of the log-in in the project");
    for file in [".capspec/store.db", ".capspec/store.db-wal"] {
        let bytes = std::fs::read(user.project.path().join(file)).unwrap_or_default();
        for secret in [token.as_str(), refreshed["credentials"]["token_response"]["access_token"].as_str().unwrap()] {
            assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "a token in {file}");
        }
    }

    // The server refuses every token: one refresh, then upstream_unauthorized
    // naming the log-in command; check says upstream/unauthorized.
    let refreshes = runtime.block_on(async {
        let client = gateway(&user).await;
        assert_eq!(shout(&client, "yes").await["content"][0]["text"], "YES");
        control(&remote, "POST", "refuse", &json!({}));
        let refreshes = control(&remote, "GET", "stats", &json!({}))["refreshes"].as_u64().unwrap();
        let refused = shout(&client, "no").await;
        assert_eq!(refused["isError"], true, "{refused:#}");
        let error = &refused["_meta"]["io.capspec/error"];
        assert_eq!(error["error"], "upstream_unauthorized", "{refused:#}");
        assert!(error["message"].as_str().unwrap().contains("log in again with `cargo capspec auth login remote`"), "{refused:#}");
        let _ = client.cancel().await;
        refreshes
    });
    assert_eq!(control(&remote, "GET", "stats", &json!({}))["refreshes"].as_u64().unwrap(), refreshes + 1, "refreshed once before giving up");
    let report = check_upstream(&user);
    assert_eq!(report["findings"][0]["rule"], "upstream/unauthorized", "{report:#}");
    assert!(report["findings"][0]["message"].as_str().unwrap().contains("cargo capspec auth login remote"), "{report:#}");

    // Logout forgets it.
    let logout = user.capspec(&["auth", "logout", "remote"]);
    assert_eq!(String::from_utf8_lossy(&logout.stdout), "logged out of [upstream.remote] (1 stored log-in removed)\n", "{}", text(&logout));
    assert_eq!(user.credential_files(), Vec::<PathBuf>::new());
    let status = user.capspec(&["auth", "status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("not logged in"), "{}", text(&status));
    let report = check_upstream(&user);
    assert_eq!(report["findings"][0]["rule"], "upstream/unauthorized", "{report:#}");
    assert!(report["findings"][0]["message"].as_str().unwrap().contains("not logged in"), "{report:#}");
}

#[test]
fn a_redirect_naming_another_issuer_is_refused_and_nothing_is_stored() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "iss", "");
    let (browsed, login) = user.login(&remote, Some("http://127.0.0.1:9/not-the-issuer"));
    assert_eq!(login.status.code(), Some(2), "{}", text(&login));
    assert!(text(&login).contains("http://127.0.0.1:9/not-the-issuer") && text(&login).contains(&remote.issuer), "the error names both issuers: {}", text(&login));
    assert!(browsed["page"].as_str().unwrap().starts_with("The log-in failed: "), "{browsed}");
    assert_eq!(user.credential_files(), Vec::<PathBuf>::new());
    assert_eq!(files(user.project.path()), ["capspec.toml"]);
}

#[test]
fn a_client_registered_beforehand_logs_in_as_itself() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "preregistered", "client_id = \"capspec-preregistered\"\n");
    let (browsed, login) = user.login(&remote, None);
    assert_eq!(login.status.code(), Some(0), "{}", text(&login));
    assert_eq!(browsed["page"], "Logged in; you can close this tab.", "{browsed}");
    assert_eq!(authorization_query(&String::from_utf8_lossy(&login.stdout))["client_id"], "capspec-preregistered", "no registration: the configured client");
    let status = user.capspec(&["auth", "status"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains(", client capspec-preregistered, "), "{}", text(&status));
}

#[test]
fn an_authorization_server_that_is_down_is_unreachable_not_a_reason_to_log_in_again() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "idp-down", "");
    let (_, login) = user.login(&remote, None);
    assert_eq!(login.status.code(), Some(0), "{}", text(&login));
    let import = user.capspec(&["import", "mcp", "--upstream", "remote"]);
    assert_eq!(import.status.code(), Some(0), "{}", text(&import));
    assert_eq!(user.capspec(&["sync"]).status.code(), Some(0));
    control(&remote, "POST", "idp-down", &json!({}));
    let report = check_upstream(&user);
    let finding = &report["findings"][0];
    assert_eq!(finding["rule"], "upstream/unreachable", "{report:#}");
    assert!(finding["message"].as_str().unwrap().contains("its authorization could not be prepared"), "{report:#}");
    assert!(!finding["message"].as_str().unwrap().contains("auth login"), "the log-in is kept, not blamed: {report:#}");
    assert_eq!(user.credential_files().len(), 1, "the stored log-in is kept");
}

/// Logging in again replaces the earlier log-in: one log-in per upstream,
/// the earlier client's refresh token revoked at the authorization
/// server (RFC 7009), and `status` shows the new one.
#[test]
fn logging_in_again_replaces_the_earlier_log_in_and_revokes_its_refresh_token() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "relogin", "");
    let (_, first) = user.login(&remote, None);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let client = |out: &Output| {
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        said.split(", client ").nth(1).and_then(|rest| rest.split(',').next()).unwrap_or_else(|| panic!("{said}")).to_string()
    };
    let first_client = client(&first);
    for round in 0..2 {
        let (_, again) = user.login(&remote, None);
        assert_eq!(again.status.code(), Some(0), "{}", text(&again));
        let said = String::from_utf8_lossy(&again.stdout).into_owned();
        assert!(said.contains("replaced the earlier log-in (client ") && said.contains("): its refresh token revoked"), "round {round}: {said}");
        assert_eq!(user.credential_files().len(), 1, "exactly one log-in is kept: {:?}", user.credential_files());
        let status = String::from_utf8_lossy(&user.capspec(&["auth", "status"]).stdout).into_owned();
        assert_eq!(status.lines().count(), 1, "{status}");
        assert!(status.contains(&format!(", client {}, ", client(&again))), "status shows the newest log-in: {status}\n{said}");
    }
    assert!(!user.credential_files().iter().any(|f| std::fs::read_to_string(f).unwrap().contains(&first_client)), "the first client's log-in is gone");
    assert_eq!(control(&remote, "GET", "stats", &json!({}))["revocations"], 2, "each earlier refresh token was revoked");
}

/// The grant is revoked while `serve` runs: the call ends
/// `upstream_unauthorized` naming `auth login`; after the person logs in
/// again, the running gateway's next calls use the new log-in (also after
/// its access token expired and was refreshed), with no restart.
#[test]
fn a_running_gateway_uses_a_new_log_in_without_a_restart() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "relogin-serve", "");
    user.log_in_and_pin(&remote);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let client = gateway(&user).await;
        assert_eq!(shout(&client, "before").await["content"][0]["text"], "BEFORE");
        control(&remote, "POST", "revoke-grants", &json!({}));
        let refused = shout(&client, "revoked").await;
        let error = &refused["_meta"]["io.capspec/error"];
        assert_eq!(error["error"], "upstream_unauthorized", "{refused:#}");
        assert!(error["message"].as_str().unwrap().contains("log in again with `cargo capspec auth login remote`"), "{refused:#}");

        // Blocking here is fine: the gateway and its client run on the worker threads.
        let (_, again) = user.login(&remote, None);
        assert_eq!(again.status.code(), Some(0), "{}", text(&again));
        let after = shout(&client, "after").await;
        assert_eq!(after["content"][0]["text"], "AFTER", "the next call uses the new log-in: {after:#}");
        // Past the access token's life (4 s): refreshed as the new client.
        tokio::time::sleep(Duration::from_secs(5)).await;
        let later = shout(&client, "later").await;
        assert_eq!(later["content"][0]["text"], "LATER", "{later:#}");
        let _ = client.cancel().await;
    });
}

/// The authorization server is down when the access token has expired:
/// the call's error names the authorization server (not the MCP server,
/// which is up) and carries no Rust type path; the log-in is kept.
#[test]
fn an_authorization_server_down_with_an_expired_token_is_named_in_the_calls_error() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "idp-down-call", "");
    user.log_in_and_pin(&remote);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let client = gateway(&user).await;
        assert_eq!(shout(&client, "up").await["content"][0]["text"], "UP");
        control(&remote, "POST", "idp-down", &json!({}));
        tokio::time::sleep(Duration::from_secs(5)).await;
        let failed = shout(&client, "down").await;
        let error = &failed["_meta"]["io.capspec/error"];
        let message = error["message"].as_str().unwrap();
        assert_eq!(error["error"], "upstream_unavailable", "{failed:#}");
        assert!(message.contains(&format!("its authorization server ({})", remote.issuer)) && message.contains("did not answer"), "{message}");
        assert!(message.contains("the log-in is kept"), "{message}");
        assert!(!message.contains("::") && !message.contains("auth login"), "no type path, and no blame on the log-in: {message}");
        let _ = client.cancel().await;
    });
    assert_eq!(user.credential_files().len(), 1, "the stored log-in is kept");
}

/// `upstream/unauthorized` leads with capspec's advice; the server's own
/// `WWW-Authenticate` words follow, marked as the server's.
#[test]
fn a_refusal_leads_with_capspecs_advice_and_marks_the_servers_words() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "advice", "");
    user.log_in_and_pin(&remote);
    control(&remote, "POST", "refuse", &json!({}));
    let report = check_upstream(&user);
    let message = report["findings"][0]["message"].as_str().unwrap().to_string();
    assert_eq!(report["findings"][0]["rule"], "upstream/unauthorized", "{report:#}");
    let advice = message.find("log in again with `cargo capspec auth login remote`").unwrap_or_else(|| panic!("{message}"));
    let quoted = message.find("the server's own words").unwrap_or_else(|| panic!("{message}"));
    assert!(advice < quoted, "capspec's advice first: {message}");
    assert!(!message.contains("::"), "{message}");
}

/// An access token of the team's issuer (the fixture key in
/// tests/fixtures/oauth) for `serve --oauth-issuer`, naming `sub`.
fn team_token(sub: &str) -> String {
    token_of(TEAM_ISSUER, GATEWAY, sub)
}

/// An access token of `issuer`'s (signed with the fixture key) for `audience`, naming `sub`.
fn token_of(issuer: &str, audience: &str, sub: &str) -> String {
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(&std::fs::read(repo_root().join("tests/fixtures/oauth/rsa.pem")).unwrap()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let claims = json!({ "iss": issuer, "sub": sub, "aud": audience, "exp": now + 600, "scope": "capspec:read" });
    let header = jsonwebtoken::Header { kid: Some("rsa-1".into()), ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256) };
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

const TEAM_ISSUER: &str = "http://127.0.0.1:1/issuer";
const GATEWAY: &str = "https://gateway.example.com/mcp";

/// `serve --http` for a team, behind the fixture issuer: the child and its address.
fn team_gateway(user: &User) -> (KillOnDrop, String) {
    user.project.write("state.key", [7u8; 32]);
    let jwks = repo_root().join("tests/fixtures/oauth/jwks.json");
    let mut serve = user.command(&["serve", "--surface", "tools", "--mode", "auto", "--http", "127.0.0.1:0", "--oauth-issuer", TEAM_ISSUER, "--resource", GATEWAY, "--state-key-file", "state.key", "--jwks-file"]);
    let mut child = KillOnDrop(serve.arg(&jwks).stderr(Stdio::piped()).spawn().unwrap());
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("serving MCP at") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the gateway ended before listening");
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, line.trim().rsplit_once("http://").unwrap().1.trim_end_matches("/mcp").to_string())
}

#[test]
fn a_per_user_upstream_never_lends_the_operators_log_in_to_a_caller() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "per-user", "credentials = \"per-user\"\n");
    // The operator's log-in pins, as for any OAuth upstream.
    user.log_in_and_pin(&remote);

    // A shared token makes every caller one principal: refused, naming the flag.
    user.project.write("token", "s3cret");
    let shared = user.capspec(&["serve", "--surface", "tools", "--http", "127.0.0.1:0", "--token-file", "token"]);
    assert_eq!(shared.status.code(), Some(2), "{}", text(&shared));
    assert!(text(&shared).contains("[upstream.remote] has `credentials = \"per-user\"`") && text(&shared).contains("needs `--oauth-issuer`"), "{}", text(&shared));

    // On stdio the caller is `local`, whose credential is the operator's log-in.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let client = gateway(&user).await;
        assert_eq!(shout(&client, "local").await["content"][0]["text"], "LOCAL");
        let _ = client.cancel().await;
    });

    // Over HTTP alice holds no credential of her own: the call is refused
    // naming her, and the operator's token is not lent to her.
    let accepted = control(&remote, "GET", "stats", &json!({}))["accepted"].as_u64().unwrap();
    let (_gateway, addr) = team_gateway(&user);
    let (status, reply) = capspec_testkit::http::call_stateless(&addr, &team_token("alice"), "shout", json!({"text": "hi"}));
    assert_eq!(status, 200, "{reply}");
    let result = &reply["result"];
    assert_eq!((&result["isError"], &result["_meta"]["io.capspec/error"]["error"]), (&json!(true), &json!("upstream_unauthorized")), "{reply:#}");
    let message = result["_meta"]["io.capspec/error"]["message"].as_str().unwrap();
    assert!(message.contains("`alice` has not authorized capspec to call it as them"), "{message}");
    assert!(!message.contains("auth login"), "no log-in of the operator's helps alice: {message}");
    // The upstream's answer reached alice nowhere. (Not a scan of the whole
    // reply for "HI": the link's random ticket may hold those letters.)
    assert!(result["structuredContent"].get("result").is_none(), "{reply:#}");
    let texts: Vec<&str> = result["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect();
    assert!(texts.iter().all(|t| *t != "HI" && !t.contains("\"result\"")), "{reply:#}");
    let stats = control(&remote, "GET", "stats", &json!({}));
    assert!(stats["accepted"].as_u64().unwrap() <= accepted + 1, "only the gateway's own start used the operator's token: {stats}");

    // Nobody holds one yet; revoking one nobody holds says so.
    let users = user.capspec(&["auth", "users", "remote"]);
    assert_eq!(String::from_utf8_lossy(&users.stdout), "nobody holds a credential of their own for [upstream.remote]\n", "{}", text(&users));
    let revoke = user.capspec(&["auth", "revoke", "remote", "--user", "alice"]);
    assert_eq!(String::from_utf8_lossy(&revoke.stdout), "`alice` held no credential for [upstream.remote]\n", "{}", text(&revoke));
    // A mistyped store is named, never created empty.
    let mistyped = user.project.path().join("mistyped/x.db");
    let store = format!("sqlite:{}", mistyped.display());
    for args in [&["auth", "users", "remote", "--store", &store][..], &["auth", "revoke", "remote", "--user", "alice", "--store", &store]] {
        let out = user.capspec(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("there is no store at") && text(&out).contains("mistyped/x.db"), "{args:?}: {}", text(&out));
    }
    assert!(!mistyped.parent().unwrap().exists(), "auth created a store");
    // An operator-credential upstream has nobody's own.
    user.project.write("capspec.toml", user.project.read("capspec.toml").replace("credentials = \"per-user\"\n", ""));
    let refused = user.capspec(&["auth", "users", "remote"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("per-user"), "{}", text(&refused));
}

/// The vault of `user`'s project store, under the key `team_gateway`'s state key file gives.
async fn vault(user: &User) -> capspec_store::Vault {
    let url = format!("sqlite:{}", user.project.path().join(".capspec/store.db").display());
    let store = capspec_store::Store::open(&url).await.unwrap();
    capspec_store::Vault::new(store, capspec::mcp::StateKey::new([7u8; 32]).unwrap().vault_key())
}

fn error_of(reply: &Value) -> (String, String) {
    let error = &reply["result"]["_meta"]["io.capspec/error"];
    (error["error"].as_str().unwrap_or_default().to_string(), error["message"].as_str().unwrap_or_default().to_string())
}

#[test]
fn a_callers_own_credential_from_the_vault_is_used_refreshed_kept_across_restarts_and_revoked() {
    let Some(remote) = remote() else { return };
    let user = per_user(&remote, "vault");
    // Alice's own grant: a log-in of hers, moved into the vault (as the
    // browser step stores it); then the operator logs in on a grant of
    // their own (the earlier file gone, nothing of alice's is revoked).
    let file: Value = serde_json::from_slice(&std::fs::read(&user.credential_files()[0]).unwrap()).unwrap();
    let alices = file["credentials"].clone();
    let first_token = alices["token_response"]["access_token"].as_str().unwrap().to_string();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async { vault(&user).await.save("remote", "alice", alices).await.unwrap() });
    std::fs::remove_file(&user.credential_files()[0]).unwrap();
    assert_eq!(user.login(&remote, None).1.status.code(), Some(0));

    let users = user.capspec(&["auth", "users", "remote"]);
    let listed = String::from_utf8_lossy(&users.stdout).to_string();
    assert!(listed.starts_with("alice: scopes remote:read, ") && listed.lines().count() == 1, "{}", text(&users));
    assert!(!listed.contains(&first_token));

    // Alice calls with her credential; bob holds none and is refused by name.
    let (gateway, addr) = team_gateway(&user);
    let (_, reply) = capspec_testkit::http::call_stateless(&addr, &team_token("alice"), "shout", json!({"text": "mine"}));
    assert_eq!(reply["result"]["content"][0]["text"], "MINE", "{reply:#}");
    let (_, reply) = capspec_testkit::http::call_stateless(&addr, &team_token("bob"), "shout", json!({"text": "theirs"}));
    let (code, message) = error_of(&reply);
    assert_eq!(code, "upstream_unauthorized", "{reply:#}");
    assert!(message.contains("`bob` has not authorized"), "{message}");

    // Her access token expires (4 s): the next call refreshes it, and the
    // refreshed credential is what the vault keeps.
    std::thread::sleep(Duration::from_secs(5));
    let (_, reply) = capspec_testkit::http::call_stateless(&addr, &team_token("alice"), "shout", json!({"text": "later"}));
    assert_eq!(reply["result"]["content"][0]["text"], "LATER", "{reply:#}");
    let kept = runtime.block_on(async { vault(&user).await.load("remote", "alice").await.unwrap().unwrap() });
    let refreshed = kept["token_response"]["access_token"].as_str().unwrap().to_string();
    assert_ne!(refreshed, first_token, "the refresh was saved to the vault");
    for file in [".capspec/store.db", ".capspec/store.db-wal"] {
        let bytes = std::fs::read(user.project.path().join(file)).unwrap_or_default();
        for secret in [first_token.as_str(), refreshed.as_str(), kept["token_response"]["refresh_token"].as_str().unwrap()] {
            assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "a token in {file}");
        }
    }

    // After a restart her stored credential is used.
    drop(gateway);
    let (_gateway, addr) = team_gateway(&user);
    let (_, reply) = capspec_testkit::http::call_stateless(&addr, &team_token("alice"), "shout", json!({"text": "again"}));
    assert_eq!(reply["result"]["content"][0]["text"], "AGAIN", "{reply:#}");

    // Revoked by another process while this gateway runs (its connection
    // as alice up): within the vault's recheck, her next call is refused.
    let revoke = user.capspec(&["auth", "revoke", "remote", "--user", "alice"]);
    assert_eq!(String::from_utf8_lossy(&revoke.stdout), "forgot `alice`'s credential for [upstream.remote]: their next call asks them to authorize again\n", "{}", text(&revoke));
    // The revoke is an audit record, on this machine's `cli` chain.
    let query = user.capspec(&["audit", "query", "--capability", "upstream:remote", "--format", "jsonl"]);
    let last: Value = String::from_utf8_lossy(&query.stdout).lines().last().map(|l| serde_json::from_str(l).unwrap()).unwrap_or_default();
    assert_eq!((&last["kind"], &last["principal"], &last["surface"]), (&json!("revocation"), &json!("alice"), &json!("cli")), "{}", text(&query));
    assert!(last["instance"].as_str().is_some_and(|i| i.ends_with(":cli")), "{last}");
    std::thread::sleep(capspec_store::RECHECK + Duration::from_millis(500));
    let (_, reply) = capspec_testkit::http::call_stateless(&addr, &team_token("alice"), "shout", json!({"text": "gone"}));
    assert_eq!(error_of(&reply).0, "upstream_unauthorized", "{reply:#}");
    assert!(!reply.to_string().contains("GONE"), "{reply:#}");
    let users = user.capspec(&["auth", "users", "remote"]);
    assert_eq!(String::from_utf8_lossy(&users.stdout), "nobody holds a credential of their own for [upstream.remote]\n");
}

/// `serve --http` on a port of its own, behind the fixture's team issuer
/// (its keys from the issuer's metadata), `--resource` its own address, so
/// a browser can reach the pages where each person authorizes: the child
/// and the gateway's origin.
fn browser_gateway(user: &User, remote: &Remote, extra: &[&str]) -> (KillOnDrop, String) {
    user.project.write("state.key", [7u8; 32]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let origin = format!("http://127.0.0.1:{port}");
    let (addr, resource) = (format!("127.0.0.1:{port}"), format!("{origin}/mcp"));
    let mut args = vec!["serve", "--mode", "auto", "--http", &addr, "--oauth-issuer", &remote.team, "--resource", &resource, "--state-key-file", "state.key"];
    args.extend_from_slice(extra);
    if !extra.contains(&"--surface") {
        args.extend(["--surface", "tools"]);
    }
    let mut child = KillOnDrop(user.command(&args).stderr(Stdio::piped()).spawn().unwrap());
    let mut stderr = BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    let mut said = String::new();
    while !line.contains("serving MCP at") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the gateway ended before listening: {said}");
        said.push_str(&line);
    }
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (child, origin)
}

/// A project whose `[upstream.remote]` is `per-user`, the operator logged in and its tools pinned.
fn per_user(remote: &Remote, name: &str) -> User {
    let user = User::new(remote, name, "credentials = \"per-user\"\n");
    user.log_in_and_pin(remote);
    user
}

/// A call of `shout` by `sub` through the gateway at `origin`.
fn shout_as(remote: &Remote, origin: &str, sub: &str, text: &str) -> Value {
    let addr = origin.trim_start_matches("http://");
    capspec_testkit::http::call_stateless(addr, &token_of(&remote.team, &format!("{origin}/mcp"), sub), "shout", json!({ "text": text })).1
}

/// The URL a refused call's message gives, where the caller authorizes.
fn authorize_url(reply: &Value) -> String {
    let (code, message) = error_of(reply);
    assert_eq!(code, "upstream_unauthorized", "{reply:#}");
    let at = message.find("/oauth/upstream/start?ticket=").unwrap_or_else(|| panic!("no link in {message}"));
    let start = message[..at].rfind("http://").unwrap();
    message[start..].split_whitespace().next().unwrap().to_string()
}

/// A person's browser from `url`, signing in as `login` wherever asked: the page it ends on.
fn walk(remote: &Remote, url: &str, login: &str) -> (u64, String) {
    let end = control(remote, "POST", "walk", &json!({ "url": url, "login": login }));
    (end["status"].as_u64().unwrap(), end["page"].as_str().unwrap().to_string())
}

fn subs(remote: &Remote) -> Vec<String> {
    control(remote, "GET", "stats", &json!({}))["subs"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

#[test]
fn each_person_authorizes_once_through_the_link_their_call_gave_and_then_acts_as_themselves() {
    let Some(remote) = remote() else { return };
    let user = per_user(&remote, "browser");
    let (gateway, origin) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway"]);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();

    // Alice has no credential: the refusal carries capspec's own link.
    let alices = authorize_url(&shout_as(&remote, &origin, "alice", "hi"));
    assert!(alices.starts_with(&format!("{origin}/oauth/upstream/start?ticket=ct1.")), "{alices}");
    assert!(!alices.contains("alice"), "the ticket is sealed: {alices}");

    // Bob follows alice's link and signs in as himself: 403 naming both, nothing stored.
    let (status, page) = walk(&remote, &alices, "bob");
    assert_eq!(status, 403, "{page}");
    assert!(page.contains("made for `alice`") && page.contains("signed in as `bob`") && page.contains("nothing was stored"), "{page}");
    runtime.block_on(async {
        let vault = vault(&user).await;
        assert_eq!(vault.load("remote", "alice").await.unwrap(), None);
        assert_eq!(vault.load("remote", "bob").await.unwrap(), None);
    });
    // The link was used: refused by name, also for alice.
    let (status, page) = walk(&remote, &alices, "alice");
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("it was used already"), "{page}");

    // Her next call gives a new link; she follows it, signs in at the team's
    // issuer and then at the upstream's authorization server.
    let link = authorize_url(&shout_as(&remote, &origin, "alice", "hi"));
    assert_ne!(link, alices);
    let (status, page) = walk(&remote, &link, "alice");
    assert_eq!((status, page.trim()), (200, "capspec now calls `remote` as `alice`: you can close this tab."));
    let before = subs(&remote).len();
    assert_eq!(shout_as(&remote, &origin, "alice", "mine")["result"]["content"][0]["text"], "MINE");
    let seen = &subs(&remote)[before..];
    assert!(!seen.is_empty() && seen.iter().all(|s| s == "alice"), "the upstream saw alice's own token, only: {seen:?}");

    // Bob, likewise, acts as bob; alice's credential is never his.
    let reply = shout_as(&remote, &origin, "bob", "his");
    assert!(!reply.to_string().contains("HIS"), "{reply}");
    let (status, page) = walk(&remote, &authorize_url(&reply), "bob");
    assert_eq!(status, 200, "{page}");
    let before = subs(&remote).len();
    assert_eq!(shout_as(&remote, &origin, "bob", "his")["result"]["content"][0]["text"], "HIS");
    let seen = subs(&remote)[before..].to_vec();
    assert!(!seen.is_empty() && seen.iter().all(|s| s == "bob"), "bob's calls went as bob: {seen:?}");
    assert_eq!(shout_as(&remote, &origin, "alice", "hers")["result"]["content"][0]["text"], "HERS");
    assert_eq!(subs(&remote)[before + seen.len()..], ["alice"], "alice's connection, already up, sent her token once");
    let users = user.capspec(&["auth", "users", "remote"]);
    let listed = String::from_utf8_lossy(&users.stdout).to_string();
    assert!(listed.lines().count() == 2 && listed.starts_with("alice: ") && listed.contains("\nbob: "), "{}", text(&users));
    // Each authorization is an audit record, naming the person and the upstream.
    let query = user.capspec(&["audit", "query", "--capability", "upstream:remote", "--format", "jsonl"]);
    let authorized: Vec<(String, String)> = String::from_utf8_lossy(&query.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| (r["kind"].as_str().unwrap_or_default().to_string(), r["principal"].as_str().unwrap_or_default().to_string()))
        .collect();
    assert_eq!(authorized, [("authorization".to_string(), "alice".to_string()), ("authorization".to_string(), "bob".to_string())], "{}", text(&query));
    // When each was last stored, as a UTC time `audit query --since` reads.
    assert!(listed.lines().all(|l| l.rsplit_once(", last stored ").is_some_and(|(_, at)| at.len() == 20 && at.ends_with('Z') && at.as_bytes()[10] == b'T')), "{listed}");

    // The store's bytes hold no token of theirs.
    let tokens: Vec<String> = runtime.block_on(async {
        let vault = vault(&user).await;
        let mut tokens = Vec::new();
        for who in ["alice", "bob"] {
            let kept = vault.load("remote", who).await.unwrap().unwrap();
            tokens.push(kept["token_response"]["access_token"].as_str().unwrap().to_string());
            tokens.push(kept["token_response"]["refresh_token"].as_str().unwrap().to_string());
        }
        tokens
    });
    for file in [".capspec/store.db", ".capspec/store.db-wal"] {
        let bytes = std::fs::read(user.project.path().join(file)).unwrap_or_default();
        assert!(tokens.iter().all(|t| !bytes.windows(t.len()).any(|w| w == t.as_bytes())), "a token in {file}");
    }
    drop(gateway);

    // A link past its time is refused by name (a state TTL of one second
    // makes tickets last that long); this gateway registers its sign-in
    // client at the issuer itself.
    let (_gateway, origin) = browser_gateway(&user, &remote, &["--state-ttl", "1"]);
    let link = authorize_url(&shout_as(&remote, &origin, "carol", "late"));
    std::thread::sleep(Duration::from_millis(2100));
    let (status, page) = walk(&remote, &link, "carol");
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("this link has expired"), "{page}");
    // In time, the registered client signs carol in.
    let link = authorize_url(&shout_as(&remote, &origin, "carol", "now"));
    let (status, page) = walk(&remote, &link, "carol");
    assert_eq!(status, 200, "{page}");
    assert_eq!(shout_as(&remote, &origin, "carol", "now")["result"]["content"][0]["text"], "NOW");
}

/// `per-user-client.mjs`: the TypeScript SDK's client, declaring URL
/// elicitation, calling `shout` as `sub` through the gateway at `origin`;
/// it follows a URL it is asked to open as `sub` (or declines). What it printed.
fn sdk_shout(remote: &Remote, origin: &str, sub: &str, text_: &str, decline: bool) -> Value {
    sdk_call(remote, origin, sub, "shout", &json!({ "text": text_ }), if decline { "decline" } else { "" })
}

/// [`sdk_shout`], calling `tool` with `arguments`.
fn sdk_call(remote: &Remote, origin: &str, sub: &str, tool: &str, arguments: &Value, mode: &str) -> Value {
    let ts = repo_root().join("tests/ts");
    let token = token_of(&remote.team, &format!("{origin}/mcp"), sub);
    let mut command = Command::new("node");
    let script = if mode.starts_with("v2") { "per-user-client-v2.mjs" } else { "per-user-client.mjs" };
    command.arg(ts.join(script)).args([&format!("{origin}/mcp"), &token, &remote.control, sub, tool, &arguments.to_string()]).current_dir(&ts);
    match mode {
        "" | "v2" => {}
        "v2-decline" => {
            command.arg("decline");
        }
        other => {
            command.arg(other);
        }
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)))
}

#[test]
fn a_client_that_follows_links_is_asked_by_url_elicitation_and_its_call_goes_on_once_authorized() {
    let Some(remote) = remote() else { return };
    let user = per_user(&remote, "elicit");
    let (_gateway, origin) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway"]);

    // Declined: the call ends `upstream_unauthorized`, saying so, with the link.
    let declined = sdk_shout(&remote, &origin, "dana", "no", true);
    assert_eq!(declined["elicitations"].as_array().unwrap().len(), 1, "{declined:#}");
    let message = declined["result"]["_meta"]["io.capspec/error"]["message"].as_str().unwrap_or_default();
    assert!(declined["result"]["isError"] == json!(true) && message.contains("the person declined to open the link"), "{declined:#}");
    assert!(message.contains("/oauth/upstream/start?ticket="), "{message}");

    // Accepted: the person authorizes at the link; the same call goes on
    // with their credential, and the session is told the elicitation completed.
    let before = subs(&remote).len();
    let done = sdk_shout(&remote, &origin, "dana", "yes", false);
    assert_eq!(done["protocol"], "2025-11-25", "{done:#}");
    let asked = &done["elicitations"][0];
    assert_eq!(asked["mode"], "url", "{done:#}");
    assert!(asked["url"].as_str().unwrap().starts_with(&format!("{origin}/oauth/upstream/start?ticket=ct1.")), "{done:#}");
    assert!(asked["message"].as_str().unwrap().contains("`remote` is called as each person"), "{done:#}");
    assert_eq!(asked["walked"]["status"], 200, "{done:#}");
    assert_eq!(done["result"]["content"][0]["text"], "YES", "{done:#}");
    assert_eq!(done["completed"], json!([asked["elicitationId"]]), "{done:#}");
    let seen = &subs(&remote)[before..];
    assert!(!seen.is_empty() && seen.iter().all(|s| s == "dana"), "{seen:?}");

    // Authorized once: the next call asks nothing.
    let again = sdk_shout(&remote, &origin, "dana", "again", false);
    assert_eq!((&again["elicitations"], &again["result"]["content"][0]["text"]), (&json!([]), &json!("AGAIN")), "{again:#}");

    drop(_gateway);

    // In code mode the action's call asks the same way, and goes on.
    let (_gateway, origin) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway", "--surface", "code"]);
    let code = "import remote from '@capspec/host/remote';\nexport default async () => (await remote.shout({ text: 'in code' }));";
    let done = sdk_call(&remote, &origin, "erin", "execute_code", &json!({ "code": code }), "");
    assert_eq!(done["elicitations"][0]["walked"]["status"], 200, "{done:#}");
    assert_eq!(done["result"]["structuredContent"]["result"], "IN CODE", "{done:#}");
    assert_eq!(done["completed"], json!([done["elicitations"][0]["elicitationId"]]), "{done:#}");

    // On 2026-07-28 (the SDK v2 client) the action suspends on that call,
    // the `input_required` carries the link, and the retry resumes the
    // action by replay, making the call again with the new credential.
    let resumed = sdk_call(&remote, &origin, "jo", "execute_code", &json!({ "code": code.replace("in code", "resumed") }), "v2");
    assert_eq!(resumed["protocol"], "2026-07-28", "{resumed:#}");
    assert_eq!((&resumed["elicitations"][0]["mode"], &resumed["elicitations"][0]["walked"]["status"]), (&json!("url"), &json!(200)), "{resumed:#}");
    assert_eq!(resumed["result"]["structuredContent"]["result"], "RESUMED", "{resumed:#}");
    // A person who declines the link, in an action on 2026-07-28: asked
    // once, and the action's call ends refused (the SDK gives up after ten
    // rounds when each retry asks again).
    let declined = sdk_call(&remote, &origin, "lou", "execute_code", &json!({ "code": code.replace("in code", "declined") }), "v2-decline");
    assert_eq!(declined["elicitations"].as_array().map(Vec::len), Some(1), "{declined:#}");
    assert_eq!(declined["result"]["isError"], true, "{declined:#}");
    assert!(declined["result"].to_string().contains("`lou` declined to authorize capspec"), "{declined:#}");

    // The upstream revokes every grant it gave (erin's too): her token and
    // its refresh are refused, so her next call asks her again, and goes
    // on with the new grant.
    control(&remote, "POST", "revoke-grants", &json!({}));
    let renewed = sdk_call(&remote, &origin, "erin", "execute_code", &json!({ "code": code.replace("in code", "renewed") }), "");
    assert_eq!(renewed["elicitations"].as_array().map(Vec::len), Some(1), "{renewed:#}");
    assert_eq!(renewed["elicitations"][0]["walked"]["status"], 200, "{renewed:#}");
    assert_eq!(renewed["result"]["structuredContent"]["result"], "RENEWED", "{renewed:#}");
}

#[test]
fn a_client_that_cannot_be_asked_mid_call_gets_the_link_in_its_reply_on_both_revisions() {
    let Some(remote) = remote() else { return };
    let user = per_user(&remote, "no-url");
    // Links last as long as the state TTL (at most ten minutes), and say so.
    let (_gateway, origin) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway", "--state-ttl", "120"]);

    // 2025-11-25, no URL elicitation declared: URLElicitationRequiredError
    // (−32042) carrying the link; once the person authorized there, the
    // same call goes through.
    let first = sdk_call(&remote, &origin, "frank", "shout", &json!({ "text": "a" }), "nourl");
    assert_eq!(first["error"]["code"], -32042, "{first:#}");
    let asked = &first["error"]["data"]["elicitations"][0];
    assert_eq!(asked["mode"], "url", "{first:#}");
    assert!(asked["elicitationId"].as_str().is_some_and(|id| !id.is_empty()), "{first:#}");
    let url = asked["url"].as_str().unwrap();
    assert!(url.starts_with(&format!("{origin}/oauth/upstream/start?ticket=ct1.")), "{first:#}");
    assert_eq!(walk(&remote, url, "frank").0, 200);
    let second = sdk_call(&remote, &origin, "frank", "shout", &json!({ "text": "a" }), "nourl");
    assert_eq!(second["result"]["content"][0]["text"], "A", "{second:#}");

    // 2026-07-28, URL elicitation declared: `input_required` carrying the
    // link; the retry, once the person authorized, goes through.
    let addr = origin.trim_start_matches("http://");
    let token = token_of(&remote.team, &format!("{origin}/mcp"), "gina");
    let mut meta = capspec_testkit::http::stateless_meta("capspec-tests");
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({ "elicitation": { "url": {} } });
    let headers = [format!("Authorization: Bearer {token}"), "MCP-Protocol-Version: 2026-07-28".into(), "Mcp-Method: tools/call".into(), "Mcp-Name: shout".into()];
    let call = |params: Value| capspec_testkit::http::post_mcp(addr, &headers, &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params })).2;
    let asked = call(json!({ "name": "shout", "arguments": { "text": "b" }, "_meta": meta }));
    let result = &asked["result"];
    assert_eq!(result["resultType"], "input_required", "{asked:#}");
    let request = &result["inputRequests"]["io.capspec/authorize"];
    assert_eq!((&request["method"], &request["params"]["mode"]), (&json!("elicitation/create"), &json!("url")), "{asked:#}");
    assert!(request["params"]["message"].as_str().unwrap().contains("(`gina`)"), "{asked:#}");
    assert!(request["params"]["message"].as_str().unwrap().contains("within 2 minutes"), "the link's wording follows --state-ttl: {asked:#}");
    assert_eq!(walk(&remote, request["params"]["url"].as_str().unwrap(), "gina").0, 200);
    let done = call(json!({ "name": "shout", "arguments": { "text": "b" }, "_meta": meta, "inputResponses": { "io.capspec/authorize": { "action": "accept" } } }));
    assert_eq!(done["result"]["content"][0]["text"], "B", "{done:#}");
    // A person who declines the link: the retry ends the call, as a
    // decline does on 2025-11-25, rather than asking again with a new link.
    let kim = [format!("Authorization: Bearer {}", token_of(&remote.team, &format!("{origin}/mcp"), "kim")), headers[1].clone(), headers[2].clone(), headers[3].clone()];
    let call_as_kim = |params: Value| capspec_testkit::http::post_mcp(addr, &kim, &json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params })).2;
    let asked = call_as_kim(json!({ "name": "shout", "arguments": { "text": "k" }, "_meta": meta }));
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked:#}");
    let declined = call_as_kim(json!({ "name": "shout", "arguments": { "text": "k" }, "_meta": meta, "inputResponses": { "io.capspec/authorize": { "action": "decline" } } }));
    assert_ne!(declined["result"]["resultType"], "input_required", "a decline asks no more: {declined:#}");
    let (code, message) = error_of(&declined);
    assert_eq!(code, "upstream_unauthorized", "{declined:#}");
    assert!(message.contains("`kim` declined to authorize capspec"), "{message}");

    // The TypeScript SDK v2 client, on 2026-07-28, follows the link from
    // `input_required` and retries by itself.
    let v2 = sdk_call(&remote, &origin, "ivy", "shout", &json!({ "text": "v2" }), "v2");
    assert_eq!(v2["protocol"], "2026-07-28", "{v2:#}");
    assert_eq!((&v2["elicitations"][0]["mode"], &v2["elicitations"][0]["walked"]["status"]), (&json!("url"), &json!(200)), "{v2:#}");
    assert_eq!(v2["result"]["content"][0]["text"], "V2", "{v2:#}");

    // Without URL elicitation declared, the refusal's message carries the link.
    let (_, refused) = capspec_testkit::http::call_stateless(addr, &token_of(&remote.team, &format!("{origin}/mcp"), "hal"), "shout", json!({ "text": "c" }));
    let (code, message) = error_of(&refused);
    assert_eq!(code, "upstream_unauthorized", "{refused:#}");
    assert!(message.contains("`hal` has not authorized capspec to call it as them") && message.contains(&format!("{origin}/oauth/upstream/start?ticket=")), "{message}");
}

#[test]
fn two_instances_sharing_postgres_share_the_vault_and_the_used_tickets() {
    let Some(remote) = remote() else { return };
    let Some(pg) = capspec_testkit::postgres::Postgres::start() else { return };
    let user = per_user(&remote, "shared");
    let store = pg.url("per_user");
    let (_east, east) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway", "--store", &store, "--instance", "east"]);
    let (_west, west) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway", "--store", &store, "--instance", "west"]);

    let registered = control(&remote, "GET", "stats", &json!({}))["registrations"].as_u64().unwrap();
    // Alice is given a link by east and authorizes there.
    let (_, reply) = capspec_testkit::http::call_stateless(east.trim_start_matches("http://"), &token_of(&remote.team, &format!("{east}/mcp"), "alice"), "shout", json!({ "text": "x" }));
    let link = authorize_url(&reply);
    let (status, page) = walk(&remote, &link, "alice");
    assert_eq!(status, 200, "{page}");
    // The same ticket at west: used already, by name.
    let (status, page) = walk(&remote, &link.replacen(&east, &west, 1), "alice");
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("it was used already"), "{page}");

    // She calls through west, with the credential east stored.
    let before = subs(&remote).len();
    assert_eq!(shout_as(&remote, &west, "alice", "west")["result"]["content"][0]["text"], "WEST");
    let seen = &subs(&remote)[before..];
    assert!(!seen.is_empty() && seen.iter().all(|s| s == "alice"), "{seen:?}");
    let users = user.capspec(&["auth", "users", "remote", "--store", &store]);
    assert!(String::from_utf8_lossy(&users.stdout).starts_with("alice: "), "{}", text(&users));

    // Bob begins on east; the upstream's authorization server sends his
    // browser back to west (a balancer without affinity), and west
    // completes it: the PKCE state is in the shared store, not in east.
    let (_, reply) = capspec_testkit::http::call_stateless(east.trim_start_matches("http://"), &token_of(&remote.team, &format!("{east}/mcp"), "bob"), "shout", json!({ "text": "y" }));
    let link = authorize_url(&reply);
    let end = control(&remote, "POST", "walk", &json!({ "url": link, "login": "bob", "reroute": { "from": east, "to": west, "skip": 1 } }));
    assert_eq!((end["status"].as_u64(), end["page"].as_str().map(str::trim)), (Some(200), Some("capspec now calls `remote` as `bob`: you can close this tab.")), "{end}");
    assert_eq!(shout_as(&remote, &east, "bob", "east")["result"]["content"][0]["text"], "EAST");
    // One client at the upstream's authorization server for both people and
    // both instances: registered once, kept in the store.
    let registrations = control(&remote, "GET", "stats", &json!({}))["registrations"].as_u64().unwrap();
    assert_eq!(registrations - registered, 1, "alice's and bob's authorizations, on east and west");
}

/// `tests/py/tracker_upstream.py`: FastMCP behind its own authorization
/// server, the MCP SDK's scope checks on. The child, the MCP URL and the
/// stats URL; `None` with a skip notice where the venv lacks FastMCP.
fn tracker() -> Option<(KillOnDrop, String, String)> {
    let python = repo_root().join("tests/py/.venv/bin/python");
    let installed = Command::new(&python).args(["-c", "import fastmcp"]).output().is_ok_and(|o| o.status.success());
    if !installed {
        skip(Some("CAPSPEC_REQUIRE_PYTHON_TOOLS"), "FastMCP is not installed (python3 -m venv tests/py/.venv && tests/py/.venv/bin/pip install -r tests/py/requirements.txt); skipping the per-user sign-in against its authorization server");
        return None;
    }
    let mut child = Command::new(python).arg(repo_root().join("tests/py/tracker_upstream.py")).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("python starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let child = KillOnDrop(child);
    let printed: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("the fixture printed {line:?}: {e}"));
    let mcp = printed["mcp"].as_str().unwrap().to_string();
    // Listening once its 401 names the scope it requires.
    let addr = mcp.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    for _ in 0..100 {
        if std::net::TcpStream::connect(&addr).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((child, mcp, printed["stats"].as_str().unwrap().to_string()))
}

/// One plain HTTP request (loopback, no TLS): the status, the head and the body.
fn http(method: &str, url: &str, content_type: &str, body: &str) -> (u16, String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, target) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(stream, "{method} {target} HTTP/1.1\r\nhost: {host}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    (head[9..12].parse().unwrap(), head.to_ascii_lowercase(), body.to_string())
}

/// A call of `search_issues` by `sub` through the gateway at `origin`.
fn search_as(remote: &Remote, origin: &str, sub: &str, query: &str) -> Value {
    let addr = origin.trim_start_matches("http://");
    let (status, reply) = capspec_testkit::http::call_stateless(addr, &token_of(&remote.team, &format!("{origin}/mcp"), sub), "search_issues", json!({ "query": query }));
    assert_eq!(status, 200, "{reply}");
    reply
}

/// The tag of the token the upstream saw answer `query` (its answer is
/// "searched '<query>' as <tag>").
fn token_tag(reply: &Value, query: &str) -> String {
    let answer = reply["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{reply:#}"));
    let said = format!("searched '{query}' as ");
    let at = answer.find(&said).unwrap_or_else(|| panic!("{answer}")) + said.len();
    answer[at..at + 12].to_string()
}

/// Per-user sign-in against an authorization server that checks scopes as
/// the MCP SDK does (DESIGN §12): the client capspec registers for its
/// callers carries the scope the upstream's challenge names, so the
/// server's `validate_scope` lets the authorization through. First call,
/// link, sign-in, the call as the person, a second person, a refresh. The
/// fixture fills in nothing: a client registered without the scope is
/// refused there.
#[test]
fn per_user_sign_in_passes_an_authorization_server_that_checks_the_registered_scopes() {
    let Some(remote) = remote() else { return };
    let Some((_tracker, mcp, stats)) = tracker() else { return };
    let stats = || serde_json::from_str::<Value>(&http("GET", &stats, "application/json", "").2).unwrap();

    // The server's checks are on: a client registered without `tracker`
    // is refused when it asks for it.
    let base = mcp.trim_end_matches("/mcp");
    let (status, _, registered) = http("POST", &format!("{base}/register"), "application/json", &json!({"redirect_uris": ["http://127.0.0.1:9/callback"], "client_name": "no scope", "token_endpoint_auth_method": "none"}).to_string());
    assert_eq!(status, 201, "{registered}");
    let id: Value = serde_json::from_str(&registered).unwrap();
    let authorize = format!("{base}/authorize?response_type=code&client_id={}&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback&scope=tracker&state=s&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256", id["client_id"].as_str().unwrap());
    let (status, head, _) = http("GET", &authorize, "text/plain", "");
    assert_eq!(status, 302, "{head}");
    assert!(head.contains("error=invalid_scope"), "a client registered without the scope is refused it: {head}");

    let user = User::at(&mcp, "fastmcp", "credentials = \"per-user\"\n");
    user.log_in_and_pin(&remote);
    let (_gateway, origin) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway"]);

    // The store keeps a client registered without the scope (as a release
    // that registered none kept it): it lacks `tracker`, so capspec
    // registers a new one rather than be refused with it.
    let callback = format!("{origin}/oauth/upstream/callback");
    let (status, _, old) = http("POST", &format!("{base}/register"), "application/json", &json!({"redirect_uris": [callback], "client_name": "capspec"}).to_string());
    assert_eq!(status, 201, "{old}");
    let old: Value = serde_json::from_str(&old).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let kept_id = format!("remote {base}/ {callback}");
    runtime.block_on(async { vault(&user).await.keep("client", &kept_id, &json!({"id": old["client_id"], "secret": old["client_secret"]}), None, false).await.unwrap() });

    // Alice's first call gives her link; she signs in and the upstream's
    // server authorizes capspec's client for `tracker`.
    let link = authorize_url(&search_as(&remote, &origin, "alice", "one"));
    let (status, page) = walk(&remote, &link, "alice");
    assert_eq!((status, page.trim()), (200, "capspec now calls `remote` as `alice`: you can close this tab."));
    let registered = stats()["clients"].as_array().unwrap().clone();
    assert!(registered.iter().any(|c| c["scope"] == "tracker"), "capspec's client was registered with the scope: {registered:?}");
    let kept = runtime.block_on(async { vault(&user).await.kept("client", &kept_id, false).await.unwrap().unwrap() });
    assert_ne!(kept["id"], old["client_id"], "the client without the scope was replaced");
    assert_eq!(kept["scopes"], json!(["tracker"]));
    let alice_tag = token_tag(&search_as(&remote, &origin, "alice", "two"), "two");

    // Bob, likewise, with a token of his own; the same registered client.
    let link = authorize_url(&search_as(&remote, &origin, "bob", "three"));
    let (status, page) = walk(&remote, &link, "bob");
    assert_eq!(status, 200, "{page}");
    let bob_tag = token_tag(&search_as(&remote, &origin, "bob", "four"), "four");
    assert_ne!(alice_tag, bob_tag, "each person calls with their own token");
    assert_eq!(stats()["clients"].as_array().unwrap().len(), registered.len(), "one client for every person");
    assert_eq!(token_tag(&search_as(&remote, &origin, "alice", "again"), "again"), alice_tag);

    // Tokens live 3 s: past that, alice's call refreshes hers.
    std::thread::sleep(Duration::from_millis(3500));
    let refreshed = token_tag(&search_as(&remote, &origin, "alice", "five"), "five");
    assert!(refreshed != alice_tag && refreshed != bob_tag, "a new token of alice's after the refresh");
    assert!(stats()["refreshes"].as_u64().unwrap() >= 1, "{}", stats());
}

/// A per-user upstream whose authorization server is used with a client
/// registered there beforehand (`client_id`): every person signs in with
/// it, and capspec registers nothing (DESIGN §12).
#[test]
fn per_user_sign_in_uses_a_configured_client_and_registers_none() {
    let Some(remote) = remote() else { return };
    let user = User::new(&remote, "per-user-preregistered", "credentials = \"per-user\"\nclient_id = \"capspec-preregistered\"\n");
    user.log_in_and_pin(&remote);
    let registrations = control(&remote, "GET", "stats", &json!({}))["registrations"].as_u64().unwrap();
    let (_gateway, origin) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway"]);
    let link = authorize_url(&shout_as(&remote, &origin, "dana", "hi"));
    let (status, page) = walk(&remote, &link, "dana");
    assert_eq!((status, page.trim()), (200, "capspec now calls `remote` as `dana`: you can close this tab."));
    assert_eq!(shout_as(&remote, &origin, "dana", "mine")["result"]["content"][0]["text"], "MINE");
    assert_eq!(control(&remote, "GET", "stats", &json!({}))["registrations"].as_u64().unwrap(), registrations, "no client was registered");
}

/// An authorization server that takes no registration, and no `client_id`
/// configured: the person's sign-in fails naming what the operator must
/// configure (DESIGN §12).
#[test]
fn per_user_sign_in_at_a_server_taking_no_registration_names_the_client_to_configure() {
    let Some(remote) = remote() else { return };
    let user = per_user(&remote, "per-user-no-registration");
    control(&remote, "POST", "registration-off", &json!({}));
    let (_gateway, origin) = browser_gateway(&user, &remote, &["--oauth-client-id", "capspec-gateway"]);
    let link = authorize_url(&shout_as(&remote, &origin, "erin", "hi"));
    let (status, page) = walk(&remote, &link, "erin");
    assert!(status >= 400, "{status}: {page}");
    assert!(page.contains("if it offers no registration, set `client_id` (or `client_metadata_url`) in [upstream.remote]"), "{page}");
}
