//! `auth login|status|logout|users|revoke` (DESIGN §12): log-ins to upstream servers
//! behind OAuth 2.1. The protocol and the credentials store are the
//! runtime's (`capspec::upstream::oauth`); this resolves `[upstream.NAME]`
//! and talks to the person logging in.

use crate::args::AuthCommand;

/// Run an `auth` command; the exit code.
#[cfg(not(feature = "live"))]
pub(crate) fn run(_command: AuthCommand) -> u8 {
    eprintln!("error: this build of capspec-cli has no OAuth client, which `auth` needs: \
         `cargo install --locked capspec-cli` has it; in an xtask, depend on capspec-cli with `features = [\"live\"]`");
    2
}

/// Run an `auth` command; the exit code.
#[cfg(feature = "live")]
pub(crate) fn run(command: AuthCommand) -> u8 {
    match live::run(command) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            2
        }
    }
}

#[cfg(feature = "live")]
mod live {
    use std::io::Write;
    use std::path::Path;
    use std::time::Duration;

    use capspec::upstream::oauth::{self, Login};
    use capspec::upstream::Server;
    use capspec_codegen::Project;

    use crate::args::AuthCommand;
    use crate::live::client::{open, server};

    /// How long `auth login` waits for the browser.
    const WAIT: Duration = Duration::from_secs(300);

    pub(super) fn run(command: AuthCommand) -> Result<u8, String> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a current-thread runtime starts");
        match command {
            AuthCommand::Login { name, no_browser, root } => {
                let root = root.resolve()?;
                let server = oauth_server(&root, &open(&root)?, &name)?;
                let (url, client) = server.oauth().expect("oauth_server checked it");
                let login = runtime.block_on(oauth::login(url, client, WAIT, |url| {
                    println!("Open this URL to log in to [upstream.{name}]:\n{url}");
                    let _ = std::io::stdout().flush();
                    if !no_browser && !open_browser(url) {
                        eprintln!("(no browser could be opened: open the URL yourself)");
                    }
                    eprintln!("waiting for the authorization server to redirect to this machine …");
                }));
                let logged_in = login.map_err(|e| format!("[upstream.{name}]: {e}"))?;
                println!("logged in to [upstream.{name}]: {}", describe(&logged_in.login));
                for (client, revoked) in &logged_in.replaced {
                    let token = match revoked {
                        oauth::Revoked::Yes => "its refresh token revoked".to_string(),
                        oauth::Revoked::NoToken => "it kept no refresh token".to_string(),
                        oauth::Revoked::NotOffered => "the authorization server offers no revocation, so its refresh token lives until it expires there".to_string(),
                        oauth::Revoked::Failed(why) => format!("its refresh token could not be revoked: {why}"),
                    };
                    println!("replaced the earlier log-in (client {client}): {token}");
                }
                Ok(0)
            }
            AuthCommand::Status { root } => {
                let root = root.resolve()?;
                let project = open(&root)?;
                let config = project.config.as_ref().expect("open checked it");
                let mut any = false;
                for upstream in config.upstreams.values() {
                    let server = server(&root, upstream);
                    let Some((url, client)) = server.oauth() else { continue };
                    any = true;
                    let logins = oauth::logins_for(url, client)?;
                    match logins.first() {
                        Some(login) => println!("[upstream.{}] {}", upstream.name, describe(login)),
                        None => println!("[upstream.{}] not logged in: `{}`", upstream.name, oauth::login_command(&upstream.name)),
                    }
                }
                if !any {
                    println!("no [upstream.NAME] in capspec.toml says `auth = \"oauth\"`");
                }
                Ok(0)
            }
            AuthCommand::Logout { name, root } => {
                let root = root.resolve()?;
                let server = oauth_server(&root, &open(&root)?, &name)?;
                let (url, client) = server.oauth().expect("oauth_server checked it");
                match oauth::logout(url, client)? {
                    0 => println!("[upstream.{name}] was not logged in"),
                    n => println!("logged out of [upstream.{name}] ({n} stored log-in{} removed)", if n == 1 { "" } else { "s" }),
                }
                Ok(0)
            }
            AuthCommand::Users { name, store } => {
                let root = store.root.resolve()?;
                per_user_server(&root, &open(&root)?, &name)?;
                let holders = runtime.block_on(vault::holders(&root, store.store.as_deref(), &name))?;
                if holders.is_empty() {
                    println!("nobody holds a credential of their own for [upstream.{name}]");
                }
                let now = oauth::now() as i64 * 1000;
                for (principal, scopes, expires_ms, updated_ms) in holders {
                    let scopes = if scopes.is_empty() { "no scopes named".to_string() } else { format!("scopes {}", scopes.join(" ")) };
                    let expiry = match expires_ms {
                        None => "no expiry given".to_string(),
                        Some(at) if at > now => format!("access token expires in {} s", (at - now) / 1000),
                        Some(_) => "access token expired (refreshed at the next call)".to_string(),
                    };
                    println!("{principal}: {scopes}, {expiry}, last stored {}", crate::audit::format_time(updated_ms));
                }
                Ok(0)
            }
            AuthCommand::Revoke { name, user, store } => {
                let root = store.root.resolve()?;
                per_user_server(&root, &open(&root)?, &name)?;
                match runtime.block_on(vault::forget(&root, store.store.as_deref(), &name, &user))? {
                    true => println!("forgot `{user}`'s credential for [upstream.{name}]: their next call asks them to authorize again"),
                    false => println!("`{user}` held no credential for [upstream.{name}]"),
                }
                Ok(0)
            }
        }
    }

    /// The vault of per-user credentials in the serve store (`auth users`
    /// and `auth revoke`): who holds one, and forgetting one.
    #[cfg(feature = "store")]
    mod vault {
        use std::path::Path;

        async fn open(root: &Path, flag: Option<&str>) -> Result<capspec_store::Store, String> {
            // Never created here: a mistyped --store is named, not made.
            capspec_store::Store::open_existing(&crate::audit::store_url(root, flag)).await.map_err(|e| e.0)
        }

        /// (principal, scopes, expiry in ms, last stored in ms) of each holder.
        pub(super) async fn holders(root: &Path, flag: Option<&str>, name: &str) -> Result<Vec<(String, Vec<String>, Option<i64>, i64)>, String> {
            let holders = open(root, flag).await?.credential_holders(name).await.map_err(|e| e.0)?;
            Ok(holders.into_iter().map(|h| (h.principal, h.scopes, h.expires_ms, h.updated_ms)).collect())
        }

        /// Forget `user`'s credential, recorded first in the store's audit
        /// log (a `revocation` record, on this machine's `HOST:cli` chain):
        /// a revoke that cannot be recorded does not happen.
        pub(super) async fn forget(root: &Path, flag: Option<&str>, name: &str, user: &str) -> Result<bool, String> {
            use capspec::audit::AuditSink;
            let store = open(root, flag).await?;
            let held = store.credential_holders(name).await.map_err(|e| e.0)?.iter().any(|h| h.principal == user);
            if !held {
                return Ok(false);
            }
            // The record carries no arguments or results, so no key of the server's is needed.
            let options = capspec_store::AuditOptions { instance: capspec_store::default_instance("cli"), named: false, key: [0; 32], keep_arguments: false };
            let log = capspec_store::AuditLog::start(store.clone(), options).await.map_err(|e| e.0)?;
            let recorded = log.decision(capspec::audit::event(capspec::audit::RecordKind::Revocation, user, name, "cli")).await;
            log.close().await;
            recorded.map_err(|why| format!("the revocation could not be recorded in the audit log, so `{user}`'s credential was kept: {why}"))?;
            store.forget_credential(name, user).await.map_err(|e| e.0)
        }
    }

    #[cfg(not(feature = "store"))]
    mod vault {
        use std::path::Path;

        const NO_STORE: &str = "this build of capspec-cli has no serve store, where per-user credentials are kept: `cargo install --locked capspec-cli` has it";

        pub(super) async fn holders(_: &Path, _: Option<&str>, _: &str) -> Result<Vec<(String, Vec<String>, Option<i64>, i64)>, String> {
            Err(NO_STORE.into())
        }

        pub(super) async fn forget(_: &Path, _: Option<&str>, _: &str, _: &str) -> Result<bool, String> {
            Err(NO_STORE.into())
        }
    }

    /// `[upstream.NAME]`, which must say `credentials = "per-user"`.
    fn per_user_server(root: &Path, project: &Project, name: &str) -> Result<Server, String> {
        let server = oauth_server(root, project, name)?;
        match server.oauth() {
            Some((_, o)) if o.per_user => Ok(server),
            _ => Err(format!("[upstream.{name}] is called with the operator's log-in (`credentials = \"operator\"`, the default): nobody holds a credential of their own for it; `credentials = \"per-user\"` gives each caller theirs")),
        }
    }

    /// `[upstream.NAME]`, which must say `auth = "oauth"`.
    fn oauth_server(root: &Path, project: &Project, name: &str) -> Result<Server, String> {
        let config = project.config.as_ref().expect("open checked it");
        let Some(upstream) = config.upstreams.get(name) else {
            let known: Vec<String> = config.upstreams.keys().map(|k| format!("`{k}`")).collect();
            let known = if known.is_empty() { "none is configured".to_string() } else { format!("configured: {}", known.join(", ")) };
            return Err(format!("capspec.toml has no `[upstream.{name}]` ({known})"));
        };
        let server = server(root, upstream);
        match server.oauth() {
            Some(_) => Ok(server),
            None => Err(format!("[upstream.{name}] does not say `auth = \"oauth\"`: it needs no log-in")),
        }
    }

    /// A log-in as one line: never the token.
    fn describe(login: &Login) -> String {
        let scopes = if login.scopes.is_empty() { "no scopes named".to_string() } else { format!("scopes {}", login.scopes.join(" ")) };
        let expiry = match login.expires_at {
            None => "no expiry given".to_string(),
            Some(at) => {
                let now = oauth::now();
                if at > now { format!("access token expires in {} s", at - now) } else { "access token expired".to_string() }
            }
        };
        let refresh = if login.refreshable { ", refreshed as it expires" } else { ", not refreshable (log in again when it expires)" };
        format!("issuer {}, client {}, {scopes}, {expiry}{refresh}", login.issuer, login.client_id)
    }

    /// Ask the desktop to open `url`; whether a program took it.
    fn open_browser(url: &str) -> bool {
        let mut command = if cfg!(target_os = "macos") {
            std::process::Command::new("open")
        } else if cfg!(windows) {
            let mut c = std::process::Command::new("cmd");
            c.args(["/C", "start", ""]);
            c
        } else {
            std::process::Command::new("xdg-open")
        };
        command.arg(url).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        command.status().is_ok_and(|s| s.success())
    }
}
