//! capspec's serve store (DESIGN §15): what a served deployment keeps past
//! a restart or shares between its instances, in embedded SQLite or in a
//! Postgres every instance reaches. Today that is the audit log: every
//! call's decision record (stored before the call runs) and outcome
//! record, arguments and results as keyed hashes, each record chained to
//! its instance's previous one; and the vault of each person's own
//! credentials for `per-user` upstreams, sealed.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let dir = std::env::temp_dir().join(format!("capspec-store-doc-{}", std::process::id()));
//! let store = capspec_store::Store::open(&format!("sqlite:{}/store.db", dir.display())).await.unwrap();
//! // Nothing recorded yet, and every chain (none) verifies.
//! assert!(store.verify().await.unwrap().is_none());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # });
//! ```

#![warn(missing_docs)]

mod lease;
mod log;
mod query;
mod schema;
mod vault;

use std::str::FromStr;

pub use log::{AuditLog, AuditOptions, keyed_hash};
pub use query::{Broken, Query};
pub use vault::{Holder, RECHECK, Vault};

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};

/// A store that could not be opened or used: what failed, for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

pub(crate) fn fail(what: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError(format!("{what}: {err}"))
}

/// Which database a store is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// Embedded SQLite, one file.
    Sqlite,
    /// A Postgres server, shared by every instance that names it.
    Postgres,
}

/// An open store, its schema migrated to this version.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    driver: Driver,
    url: String,
    /// A SQLite store's file.
    path: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.url)
    }
}

impl Store {
    /// Open the store at `url` (`sqlite:PATH`, created with its directory
    /// if absent, or `postgres://…`) and migrate its schema. A store whose
    /// schema is newer than this capspec is refused by name.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        Store::open_with(url, true).await
    }

    /// Open the store at `url` only if it exists: what a command that reads
    /// or edits a store (`audit`, `auth users`, `auth revoke`) opens, so a
    /// mistyped `--store` is named rather than created empty. Only `serve`
    /// creates a store.
    pub async fn open_existing(url: &str) -> Result<Store, StoreError> {
        Store::open_with(url, false).await
    }

    async fn open_with(url: &str, create: bool) -> Result<Store, StoreError> {
        sqlx::any::install_default_drivers();
        let mut file = None;
        let (driver, connect) = if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.trim_start_matches("//");
            if path.is_empty() {
                return Err(StoreError(format!("the store `{url}` names no file; write `sqlite:PATH`")));
            }
            if !create && !std::path::Path::new(path).is_file() {
                return Err(StoreError(format!(
                    "there is no store at `{url}`: `serve` creates a project's store on its first start (default `sqlite:.capspec/store.db`); check --store, or `[serve] store` in capspec.toml"
                )));
            }
            if let Some(dir) = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| fail(&format!("cannot create the store's directory `{}`", dir.display()), e))?;
            }
            file = Some(std::path::PathBuf::from(path));
            (Driver::Sqlite, format!("sqlite://{path}?mode=rwc"))
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (Driver::Postgres, url.to_string())
        } else {
            return Err(StoreError(format!("the store `{url}` is neither `sqlite:PATH` nor `postgres://…`")));
        };
        let options = AnyConnectOptions::from_str(&connect).map_err(|e| fail(&format!("the store `{url}`"), e))?;
        let pool = AnyPoolOptions::new()
            .max_connections(if driver == Driver::Sqlite { 4 } else { 8 })
            .acquire_timeout(std::time::Duration::from_secs(5))
            // A file has no connection to lose: no ping before each commit.
            // A Postgres connection is checked, so a restarted server is met
            // by a new connection rather than a failed call.
            .test_before_acquire(driver != Driver::Sqlite)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if driver == Driver::Sqlite {
                        // WAL: readers never block the writer; NORMAL: a
                        // commit is in the OS's hands before it returns, so
                        // a killed process loses nothing it committed.
                        conn.execute("PRAGMA journal_mode = WAL").await?;
                        conn.execute("PRAGMA synchronous = NORMAL").await?;
                        conn.execute("PRAGMA busy_timeout = 5000").await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await
            .map_err(|e| fail(&format!("cannot open the store `{}`", redact(url)), e))?;
        let store = Store { pool, driver, url: redact(url), path: file };
        schema::migrate(&store).await?;
        Ok(store)
    }

    /// The database behind it.
    pub fn driver(&self) -> Driver {
        self.driver
    }

    /// Its URL, without a password.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A SQLite store's file.
    pub(crate) fn sqlite_path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }
}

/// An instance's default name in the audit log: this host's name and what
/// it serves (`HOST:127.0.0.1:8931`, `HOST:stdio`), so it is the same after
/// a restart and differs between instances on one machine.
/// When a live process already writes that chain (a second stdio server
/// in one project), the log takes the next free one (`HOST:stdio#2`).
pub fn default_instance(served: &str) -> String {
    format!("{}:{served}", lease::hostname())
}

/// `url` without the password a Postgres URL may carry.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => match url[scheme + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:…{}", &url[..scheme + 3], &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_password_never_reaches_a_message() {
        assert_eq!(super::redact("postgres://alice:s3cret@db:5432/capspec"), "postgres://alice:…@db:5432/capspec");
        assert_eq!(super::redact("sqlite:.capspec/store.db"), "sqlite:.capspec/store.db");
    }
}
