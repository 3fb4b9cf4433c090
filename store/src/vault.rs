//! The vault (DESIGN §12, §15): each person's own credential for each
//! `per-user` upstream, kept in the serve store so that every instance
//! sharing it, and a restart, find it. A credential is sealed with
//! XChaCha20-Poly1305 under a key of its own (derived from the state key
//! file, `StateKey::vault_key`), bound to its upstream and principal: the
//! store holds no token in plaintext, and a sealed credential copied onto
//! another person's row does not open. Who holds one, their scopes and
//! when it expires are kept beside it in the clear, for `auth users`.
//! Opened credentials are kept in memory, so a call with a stored
//! credential costs no decryption and no round trip; each is read again
//! from the store after [`RECHECK`], so a credential revoked (`auth
//! revoke`) or replaced by another instance is seen within that time.

use std::collections::BTreeMap;
use std::sync::Mutex;

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::Serialize;
use serde_json::Value;
use sqlx::Row;

use crate::{Store, StoreError, fail};

/// A sealed credential starts with this, then URL-safe base64 of nonce ‖ ciphertext.
const PREFIX: &str = "cv1.";
const NONCE_BYTES: usize = 24;
/// How long an opened credential is used from memory before the store is read again.
pub const RECHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// Who holds a credential for an upstream, as `auth users` shows it: never a token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// The principal (the team issuer's `sub`).
    pub principal: String,
    /// The scopes the upstream granted.
    pub scopes: Vec<String>,
    /// When the access token expires (milliseconds since the epoch), if it said.
    pub expires_ms: Option<i64>,
    /// When the credential was last stored (a log-in or a refresh).
    pub updated_ms: i64,
}

/// The vault in a store, with the key that seals its credentials.
pub struct Vault {
    store: Store,
    cipher: XChaCha20Poly1305,
    /// (upstream, principal) → the opened credential, and when it was read.
    opened: Mutex<BTreeMap<(String, String), (Value, std::time::Instant)>>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Vault({})", self.store.url())
    }
}

fn aad(upstream: &str, principal: &str) -> Vec<u8> {
    format!("capspec upstream credential\0{upstream}\0{principal}").into_bytes()
}

/// What a kept value is bound to: its kind and id.
fn kept_aad(kind: &str, id: &str) -> Vec<u8> {
    format!("capspec kept\0{kind}\0{id}").into_bytes()
}

impl Vault {
    /// The store this vault keeps its credentials in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The vault of `store`, sealing with `key` (`StateKey::vault_key`).
    pub fn new(store: Store, key: [u8; 32]) -> Vault {
        Vault { store, cipher: XChaCha20Poly1305::new_from_slice(&key).expect("a 32-byte key"), opened: Mutex::new(BTreeMap::new()) }
    }

    /// `principal`'s credential for `upstream` (rmcp's stored credentials,
    /// as JSON), if one is kept and opens under this key.
    pub async fn load(&self, upstream: &str, principal: &str) -> Result<Option<Value>, StoreError> {
        let key = (upstream.to_string(), principal.to_string());
        if let Some((found, _)) = self.opened.lock().unwrap_or_else(|e| e.into_inner()).get(&key).filter(|(_, at)| at.elapsed() < RECHECK) {
            return Ok(Some(found.clone()));
        }
        let what = || format!("cannot read `{principal}`'s credential for `{upstream}`");
        let row = sqlx::query("SELECT sealed FROM upstream_credentials WHERE upstream = $1 AND principal = $2")
            .bind(upstream)
            .bind(principal)
            .fetch_optional(self.store.pool())
            .await
            .map_err(|e| self.hidden(&what(), e))?;
        let Some(row) = row else {
            // Revoked since it was read (by `auth revoke`, perhaps on another machine).
            self.opened.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
            return Ok(None);
        };
        let sealed: String = row.try_get(0).map_err(|e| self.hidden(&what(), e))?;
        let Some(value) = self.open(&sealed, &aad(upstream, principal)) else {
            // Sealed under another state key (a new or a missing
            // `--state-key-file`): nobody can open it again, so it is
            // forgotten and the person is asked to authorize again. Only
            // this row as read: a credential stored meanwhile stays.
            tracing::warn!(
                "`{principal}`'s credential for `{upstream}` in `{}` does not open under this server's state key (another --state-key-file sealed it): forgotten, and `{principal}` is asked to authorize again",
                self.store.url()
            );
            sqlx::query("DELETE FROM upstream_credentials WHERE upstream = $1 AND principal = $2 AND sealed = $3")
                .bind(upstream)
                .bind(principal)
                .bind(&sealed)
                .execute(self.store.pool())
                .await
                .map_err(|e| self.hidden(&what(), e))?;
            self.opened.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
            return Ok(None);
        };
        self.opened.lock().unwrap_or_else(|e| e.into_inner()).insert(key, (value.clone(), std::time::Instant::now()));
        Ok(Some(value))
    }

    /// Keep `principal`'s credential for `upstream`, replacing theirs.
    pub async fn save(&self, upstream: &str, principal: &str, credential: Value) -> Result<(), StoreError> {
        let sealed = self.seal(&credential, &aad(upstream, principal));
        let scopes = credential["granted_scopes"].as_array().map(|s| s.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")).unwrap_or_default();
        let expires_ms = credential["token_received_at"].as_i64().zip(credential["token_response"]["expires_in"].as_i64()).map(|(at, ttl)| (at + ttl) * 1000);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default();
        sqlx::query(
            "INSERT INTO upstream_credentials (upstream, principal, sealed, scopes, expires_ms, updated_ms) VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (upstream, principal) DO UPDATE SET sealed = excluded.sealed, scopes = excluded.scopes, expires_ms = excluded.expires_ms, updated_ms = excluded.updated_ms",
        )
        .bind(upstream)
        .bind(principal)
        .bind(sealed)
        .bind(scopes)
        .bind(expires_ms)
        .bind(now)
        .execute(self.store.pool())
        .await
        .map_err(|e| self.hidden(&format!("cannot store `{principal}`'s credential for `{upstream}`"), e))?;
        self.opened.lock().unwrap_or_else(|e| e.into_inner()).insert((upstream.to_string(), principal.to_string()), (credential, std::time::Instant::now()));
        Ok(())
    }

    /// Keep `value` sealed as `kind`/`id` (a client registered at an
    /// upstream's authorization server, an authorization under way), until
    /// `expires_ms` if given. With `only_new`, a value already kept stays
    /// and the answer is `false`.
    pub async fn keep(&self, kind: &str, id: &str, value: &Value, expires_ms: Option<i64>, only_new: bool) -> Result<bool, StoreError> {
        let what = format!("cannot keep the {kind} `{id}`");
        let sealed = self.seal(value, &kept_aad(kind, id));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default();
        sqlx::query("DELETE FROM upstream_kept WHERE expires_ms < $1").bind(now).execute(self.store.pool()).await.map_err(|e| self.hidden(&what, e))?;
        let on_conflict = if only_new { "DO NOTHING" } else { "DO UPDATE SET sealed = excluded.sealed, expires_ms = excluded.expires_ms" };
        let done = sqlx::query(&format!("INSERT INTO upstream_kept (kind, id, sealed, expires_ms) VALUES ($1, $2, $3, $4) ON CONFLICT (kind, id) {on_conflict}"))
            .bind(kind)
            .bind(id)
            .bind(sealed)
            .bind(expires_ms)
            .execute(self.store.pool())
            .await
            .map_err(|e| self.hidden(&what, e))?;
        Ok(done.rows_affected() == 1)
    }

    /// What [`Vault::keep`] kept as `kind`/`id`, unexpired and opening
    /// under this key; with `take`, it is removed (whichever instance asks
    /// first gets it).
    pub async fn kept(&self, kind: &str, id: &str, take: bool) -> Result<Option<Value>, StoreError> {
        let what = format!("cannot read the {kind} `{id}`");
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default();
        let sql = if take {
            "DELETE FROM upstream_kept WHERE kind = $1 AND id = $2 AND (expires_ms IS NULL OR expires_ms >= $3) RETURNING sealed"
        } else {
            "SELECT sealed FROM upstream_kept WHERE kind = $1 AND id = $2 AND (expires_ms IS NULL OR expires_ms >= $3)"
        };
        let row = sqlx::query(sql).bind(kind).bind(id).bind(now).fetch_optional(self.store.pool()).await.map_err(|e| self.hidden(&what, e))?;
        let Some(row) = row else { return Ok(None) };
        let sealed: String = row.try_get(0).map_err(|e| self.hidden(&what, e))?;
        Ok(self.open(&sealed, &kept_aad(kind, id)))
    }

    /// A failure a caller reads (the call that needed the credential): what
    /// failed, without the store's location or the driver's text, which go
    /// to the server's log.
    fn hidden(&self, what: &str, e: impl std::fmt::Display) -> StoreError {
        tracing::warn!("{what} in `{}`: {e}", self.store.url());
        StoreError(format!("{what}: the serve store could not be read or written (the server's log has the detail)"))
    }

    fn seal(&self, credential: &Value, aad: &[u8]) -> String {
        let mut nonce = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce).expect("the system has a random source");
        let plaintext = serde_json::to_vec(credential).expect("JSON serializes");
        let sealed = self.cipher.encrypt(&XNonce::from(nonce), Payload { msg: &plaintext, aad }).expect("encryption of a bounded message does not fail");
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        format!("{PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    fn open(&self, sealed: &str, aad: &[u8]) -> Option<Value> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(sealed.strip_prefix(PREFIX)?).ok()?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let nonce: [u8; NONCE_BYTES] = nonce.try_into().ok()?;
        let plaintext = self.cipher.decrypt(&XNonce::from(nonce), Payload { msg: ciphertext, aad }).ok()?;
        serde_json::from_slice(&plaintext).ok()
    }
}

impl Store {
    /// Who holds a credential for `upstream`, by principal (`auth users`).
    pub async fn credential_holders(&self, upstream: &str) -> Result<Vec<Holder>, StoreError> {
        let what = || format!("cannot list the credentials for `{upstream}` in `{}`", self.url());
        let rows = sqlx::query("SELECT principal, scopes, expires_ms, updated_ms FROM upstream_credentials WHERE upstream = $1 ORDER BY principal")
            .bind(upstream)
            .fetch_all(self.pool())
            .await
            .map_err(|e| fail(&what(), e))?;
        rows.iter()
            .map(|row| {
                let scopes: String = row.try_get(1)?;
                Ok(Holder {
                    principal: row.try_get(0)?,
                    scopes: scopes.split(' ').filter(|s| !s.is_empty()).map(str::to_string).collect(),
                    expires_ms: row.try_get(2)?,
                    updated_ms: row.try_get(3)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(|e| fail(&what(), e))
    }

    /// Mark the browser step's ticket `id` (valid until `expires_ms`) used:
    /// `true` the first time, `false` when it was used before, by any
    /// instance sharing this store. Tickets past their expiry are dropped.
    pub async fn spend_ticket(&self, id: &str, expires_ms: i64) -> Result<bool, StoreError> {
        let what = || format!("cannot record a used ticket in `{}`", self.url());
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or_default();
        sqlx::query("DELETE FROM upstream_tickets WHERE expires_ms < $1").bind(now).execute(self.pool()).await.map_err(|e| fail(&what(), e))?;
        let done = sqlx::query("INSERT INTO upstream_tickets (id, expires_ms) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING")
            .bind(id)
            .bind(expires_ms)
            .execute(self.pool())
            .await
            .map_err(|e| fail(&what(), e))?;
        Ok(done.rows_affected() == 1)
    }

    /// Forget `principal`'s credential for `upstream` (`auth revoke`);
    /// whether there was one.
    pub async fn forget_credential(&self, upstream: &str, principal: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM upstream_credentials WHERE upstream = $1 AND principal = $2")
            .bind(upstream)
            .bind(principal)
            .execute(self.pool())
            .await
            .map_err(|e| fail(&format!("cannot forget `{principal}`'s credential for `{upstream}` in `{}`", self.url()), e))?;
        Ok(done.rows_affected() > 0)
    }
}

/// The vault as a `per-user` upstream's callers' credentials are loaded and
/// saved by the runtime (`Upstreams::start_with_vault`), and the used
/// tickets of the browser step.
#[cfg(feature = "upstream")]
impl capspec::upstream::CredentialVault for Vault {
    fn load<'a>(&'a self, upstream: &'a str, principal: &'a str) -> capspec::BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move { Vault::load(self, upstream, principal).await.map_err(|e| e.0) })
    }

    fn save<'a>(&'a self, upstream: &'a str, principal: &'a str, credential: Value) -> capspec::BoxFuture<'a, Result<(), String>> {
        Box::pin(async move { Vault::save(self, upstream, principal, credential).await.map_err(|e| e.0) })
    }

    fn spend_ticket<'a>(&'a self, id: &'a str, expires_ms: i64) -> capspec::BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move { self.store.spend_ticket(id, expires_ms).await.map_err(|e| e.0) })
    }

    fn keep<'a>(&'a self, kind: &'a str, id: &'a str, value: Value, expires_ms: Option<i64>, only_new: bool) -> capspec::BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move { Vault::keep(self, kind, id, &value, expires_ms, only_new).await.map_err(|e| e.0) })
    }

    fn kept<'a>(&'a self, kind: &'a str, id: &'a str, take: bool) -> capspec::BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move { Vault::kept(self, kind, id, take).await.map_err(|e| e.0) })
    }
}
