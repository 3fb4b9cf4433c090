//! `auth login|status|logout` (DESIGN §12): log-ins to upstream servers
//! behind OAuth 2.1. The protocol and the credentials store are the
//! runtime's (`capspec::upstream::oauth`); this resolves `[upstream.NAME]`
//! and talks to the person logging in.

use crate::args::AuthCommand;

/// Run an `auth` command; the exit code.
#[cfg(not(feature = "live"))]
pub(crate) fn run(_command: AuthCommand) -> u8 {
    eprintln!("error: this build of capspec-cli has no OAuth client, which `auth` needs: \
         `cargo install capspec-cli` has it; in an xtask, depend on capspec-cli with `features = [\"live\"]`");
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
