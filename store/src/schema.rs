//! The store's schema: versioned, migrated at open (one transaction per
//! step), refused by name when newer than this binary.

use sqlx::Row;

use crate::{Driver, Store, StoreError, fail};

/// The migrations, in order: version `i + 1` is `MIGRATIONS[i]`. Plain SQL
/// both SQLite and Postgres run.
const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE audit_records (
        instance TEXT NOT NULL,
        seq BIGINT NOT NULL,
        kind TEXT NOT NULL,
        time_ms BIGINT NOT NULL,
        principal TEXT NOT NULL,
        capability TEXT NOT NULL,
        decision TEXT,
        status TEXT,
        args_hmac TEXT,
        body TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (instance, seq)
    )",
    "CREATE INDEX audit_by_principal ON audit_records (principal, time_ms)",
    "CREATE INDEX audit_by_capability ON audit_records (capability, time_ms)",
    "CREATE INDEX audit_by_time ON audit_records (time_ms)",
    "CREATE INDEX audit_by_arguments ON audit_records (args_hmac)",
    "CREATE TABLE audit_checkpoints (
        instance TEXT PRIMARY KEY,
        seq BIGINT NOT NULL,
        hash TEXT NOT NULL,
        time_ms BIGINT NOT NULL
    )",
], &[
    // Version 2: the vault of per-user upstream credentials (DESIGN §12).
    "CREATE TABLE upstream_credentials (
        upstream TEXT NOT NULL,
        principal TEXT NOT NULL,
        sealed TEXT NOT NULL,
        scopes TEXT NOT NULL,
        expires_ms BIGINT,
        updated_ms BIGINT NOT NULL,
        PRIMARY KEY (upstream, principal)
    )",
], &[
    // Version 3: the tickets of the browser step already used (DESIGN §12),
    // so a ticket is used once whichever instance it comes back to.
    "CREATE TABLE upstream_tickets (
        id TEXT PRIMARY KEY,
        expires_ms BIGINT NOT NULL
    )",
], &[
    // Version 4: who writes which chain (a chain has one live writer).
    "CREATE TABLE audit_writers (
        instance TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        host TEXT NOT NULL,
        pid BIGINT NOT NULL,
        seen_ms BIGINT NOT NULL
    )",
    // The keyed hash of the arguments as the client sent them, where they
    // differ from the validated ones: a call is found by what was typed.
    "ALTER TABLE audit_records ADD COLUMN sent_hmac TEXT",
    "CREATE INDEX audit_by_sent_arguments ON audit_records (sent_hmac)",
], &[
    // Version 5: what the browser step of a `per-user` upstream keeps
    // besides credentials, sealed: the client registered at each upstream's
    // authorization server (one, shared by every instance) and each
    // authorization under way (its PKCE state, so any instance completes it).
    "CREATE TABLE upstream_kept (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        sealed TEXT NOT NULL,
        expires_ms BIGINT,
        PRIMARY KEY (kind, id)
    )",
], &[
    // Version 6: the argument hashes indexed only where a row has one (most
    // rows, outcomes and refusals, have none), so a commit writes fewer
    // index pages. A query by `args_hmac = …` or `sent_hmac = …` implies
    // the condition, so both stores still answer it from the index.
    "DROP INDEX audit_by_arguments",
    "CREATE INDEX audit_by_arguments ON audit_records (args_hmac) WHERE args_hmac IS NOT NULL",
    "DROP INDEX audit_by_sent_arguments",
    "CREATE INDEX audit_by_sent_arguments ON audit_records (sent_hmac) WHERE sent_hmac IS NOT NULL",
]];

/// The schema version this binary writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

pub(crate) async fn migrate(store: &Store) -> Result<(), StoreError> {
    let what = || format!("cannot migrate the store `{}`", store.url());
    let mut tx = store.pool().begin().await.map_err(|e| fail(&what(), e))?;
    if store.driver() == Driver::Postgres {
        // Instances starting together migrate one at a time.
        sqlx::query("SELECT pg_advisory_xact_lock(5432001)").execute(&mut *tx).await.map_err(|e| fail(&what(), e))?;
    }
    sqlx::query("CREATE TABLE IF NOT EXISTS capspec_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)").execute(&mut *tx).await.map_err(|e| fail(&what(), e))?;
    let row = sqlx::query("SELECT value FROM capspec_meta WHERE key = 'schema_version'").fetch_optional(&mut *tx).await.map_err(|e| fail(&what(), e))?;
    let current: i64 = match row {
        Some(row) => row.try_get::<String, _>(0).ok().and_then(|v| v.parse().ok()).ok_or_else(|| StoreError(format!("the store `{}` has an unreadable schema version", store.url())))?,
        None => 0,
    };
    if current > VERSION {
        return Err(StoreError(format!(
            "the store `{}` has schema version {current}, newer than this capspec's {VERSION}: a newer capspec wrote it; run that one (or a store of its own)",
            store.url()
        )));
    }
    for (i, steps) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        for step in *steps {
            sqlx::query(step).execute(&mut *tx).await.map_err(|e| fail(&format!("{} (to version {})", what(), i + 1), e))?;
        }
    }
    if current < VERSION {
        let set = if current == 0 { "INSERT INTO capspec_meta (key, value) VALUES ('schema_version', $1)" } else { "UPDATE capspec_meta SET value = $1 WHERE key = 'schema_version'" };
        sqlx::query(set).bind(VERSION.to_string()).execute(&mut *tx).await.map_err(|e| fail(&what(), e))?;
    }
    tx.commit().await.map_err(|e| fail(&what(), e))
}
