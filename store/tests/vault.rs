//! The vault of per-user upstream credentials, in SQLite and in a real
//! Postgres server: a credential kept is found again by another instance
//! (or after a restart) with the same key, the store's bytes hold no token,
//! a sealed credential moved onto another person's row does not open for
//! them, `auth users` shows who holds one (never the token), and `auth
//! revoke` forgets one; a browser step's ticket is used once.

use capspec_store::{Store, Vault};
use capspec_testkit::TempDir;
use capspec_testkit::postgres::Postgres;
use serde_json::{Value, json};

const KEY: [u8; 32] = [9; 32];

/// rmcp's stored credentials, as the vault keeps them.
fn credential(who: &str) -> Value {
    json!({
        "client_id": "capspec-gateway",
        "token_response": {"access_token": format!("at-{who}-0123456789"), "token_type": "Bearer", "expires_in": 3600, "refresh_token": format!("rt-{who}-0123456789")},
        "granted_scopes": ["issues:read", "issues:write"],
        "token_received_at": 1_800_000_000u64
    })
}

async fn sql(url: &str, statement: &str) -> Vec<String> {
    use sqlx::Row;
    sqlx::any::install_default_drivers();
    let url = match url.strip_prefix("sqlite:") {
        Some(path) => format!("sqlite://{path}"),
        None => url.to_string(),
    };
    let pool = sqlx::AnyPool::connect(&url).await.unwrap();
    let rows = sqlx::query(statement).fetch_all(&pool).await.unwrap();
    pool.close().await;
    rows.iter().filter_map(|r| r.try_get::<String, _>(0).ok()).collect()
}

async fn exercise(url: &str) {
    let store = Store::open(url).await.unwrap();
    let vault = Vault::new(store.clone(), KEY);
    assert_eq!(vault.load("tracker", "alice").await.unwrap(), None);
    vault.save("tracker", "alice", credential("alice")).await.unwrap();
    vault.save("tracker", "bob", credential("bob")).await.unwrap();
    vault.save("docs", "alice", credential("alice-docs")).await.unwrap();
    assert_eq!(vault.load("tracker", "alice").await.unwrap(), Some(credential("alice")));

    // Another instance (or this one after a restart), same key file.
    let other = Vault::new(Store::open(url).await.unwrap(), KEY);
    assert_eq!(other.load("tracker", "bob").await.unwrap(), Some(credential("bob")));
    assert_eq!(other.load("tracker", "carol").await.unwrap(), None);
    // What the database holds: no token, only sealed credentials.
    let sealed = sql(url, "SELECT sealed FROM upstream_credentials ORDER BY upstream, principal").await;
    assert_eq!(sealed.len(), 3);
    for s in &sealed {
        assert!(s.starts_with("cv1.") && !s.contains("0123456789"), "{s}");
    }
    // `auth users tracker`: who, scopes, expiry; `auth revoke tracker --user bob`.
    let holders = store.credential_holders("tracker").await.unwrap();
    let shown: Vec<(&str, Vec<String>, Option<i64>)> = holders.iter().map(|h| (h.principal.as_str(), h.scopes.clone(), h.expires_ms)).collect();
    let scopes = vec!["issues:read".to_string(), "issues:write".to_string()];
    assert_eq!(shown, [("alice", scopes.clone(), Some(1_800_003_600_000)), ("bob", scopes, Some(1_800_003_600_000))]);
    assert!(!serde_json::to_string(&holders).unwrap().contains("0123456789"));
    assert!(store.forget_credential("tracker", "bob").await.unwrap());
    assert!(!store.forget_credential("tracker", "bob").await.unwrap());
    assert_eq!(store.credential_holders("tracker").await.unwrap().len(), 1);
    assert_eq!(Vault::new(store.clone(), KEY).load("tracker", "bob").await.unwrap(), None);

    // A ticket of the browser step is used once, whichever instance sees it again.
    let later = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64 + 600_000;
    assert!(store.spend_ticket("t-1", later).await.unwrap(), "the first use");
    assert!(!Store::open(url).await.unwrap().spend_ticket("t-1", later).await.unwrap(), "another instance sees it used");
    assert!(store.spend_ticket("t-2", later).await.unwrap(), "another ticket is its own");
    // Expired ones are dropped (their tickets are refused before this, by their own expiry).
    assert!(store.spend_ticket("t-3", 1).await.unwrap());
    store.spend_ticket("t-4", later).await.unwrap();
    assert_eq!(sql(url, "SELECT id FROM upstream_tickets ORDER BY id").await, ["t-1", "t-2", "t-4"]);

    // What the browser step keeps besides credentials, sealed: the client
    // registered at an authorization server (the first kept stays, and
    // every instance reads it) and an authorization under way (taken once,
    // by whichever instance the browser comes back to; gone once expired).
    assert!(vault.keep("client", "remote https://as cb", &json!({"id": "client-1", "secret": "s3cret-1"}), None, true).await.unwrap());
    assert!(!vault.keep("client", "remote https://as cb", &json!({"id": "client-2"}), None, true).await.unwrap(), "a second registration does not replace the first");
    assert_eq!(other.kept("client", "remote https://as cb", false).await.unwrap(), Some(json!({"id": "client-1", "secret": "s3cret-1"})));
    vault.keep("pending", "state-1", &json!({"principal": "alice"}), Some(later), false).await.unwrap();
    vault.keep("pending", "state-2", &json!({"principal": "bob"}), Some(1), false).await.unwrap();
    assert_eq!(other.kept("pending", "state-1", true).await.unwrap(), Some(json!({"principal": "alice"})));
    assert_eq!(vault.kept("pending", "state-1", true).await.unwrap(), None, "taken once");
    assert_eq!(vault.kept("pending", "state-2", false).await.unwrap(), None, "expired");
    let kept = sql(url, "SELECT sealed FROM upstream_kept").await;
    assert!(!kept.is_empty() && kept.iter().all(|s| s.starts_with("cv1.") && !s.contains("s3cret") && !s.contains("client-1")), "{kept:?}");
    // A value sealed under one id does not open under another.
    sql(url, "UPDATE upstream_kept SET id = 'remote https://other cb' WHERE kind = 'client'").await;
    assert_eq!(vault.kept("client", "remote https://other cb", false).await.unwrap(), None);

    // Alice's sealed credential copied onto bob's row does not open as
    // bob's: it is forgotten (bob is asked to authorize again), and alice's
    // own still opens.
    vault.save("tracker", "bob", credential("bob")).await.unwrap();
    sql(url, "UPDATE upstream_credentials SET sealed = (SELECT sealed FROM upstream_credentials WHERE upstream = 'tracker' AND principal = 'alice') WHERE upstream = 'tracker' AND principal = 'bob'").await;
    let fresh = Vault::new(Store::open(url).await.unwrap(), KEY);
    assert_eq!(fresh.load("tracker", "bob").await.unwrap(), None, "a credential sealed for alice opened for bob");
    assert_eq!(fresh.load("tracker", "alice").await.unwrap(), Some(credential("alice")));
    // Under another state key (a new key file, or none: a random key each
    // start) nothing opens: each credential is forgotten as it is met, so
    // its person is asked again rather than stuck, and nothing names the
    // store to the caller.
    let wrong = Vault::new(store.clone(), [1; 32]);
    assert_eq!(wrong.load("tracker", "alice").await.unwrap(), None);
    assert!(store.credential_holders("tracker").await.unwrap().is_empty(), "the credentials that no longer open are forgotten");
    wrong.save("tracker", "alice", credential("alice-again")).await.unwrap();
    assert_eq!(Vault::new(store.clone(), [1; 32]).load("tracker", "alice").await.unwrap(), Some(credential("alice-again")));
    // A store that cannot be read: the message names what failed, not where.
    sql(url, "DROP TABLE upstream_credentials").await;
    let failed = Vault::new(store.clone(), [2; 32]).load("tracker", "carol").await.unwrap_err().to_string();
    assert!(failed.contains("`carol`'s credential") && !failed.contains(url.trim_start_matches("sqlite:").trim_start_matches("postgres://")), "{failed}");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn the_sqlite_vault_keeps_each_persons_credential_sealed() {
    let dir = TempDir::new("vault-sqlite");
    let path = dir.path().join("store.db");
    runtime().block_on(exercise(&format!("sqlite:{}", path.display())));
    // The file itself (and its write-ahead log) holds no token.
    for file in ["store.db", "store.db-wal"] {
        if let Ok(bytes) = std::fs::read(dir.path().join(file)) {
            assert!(!bytes.windows(10).any(|w| w == b"0123456789"), "{file} holds a token");
        }
    }
}

#[test]
fn the_postgres_vault_keeps_each_persons_credential_sealed() {
    let Some(pg) = Postgres::start() else { return };
    runtime().block_on(exercise(&pg.url("vault")));
}
