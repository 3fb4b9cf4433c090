//! Who writes which chain (DESIGN §15): a chain has one live writer. A
//! process that starts an audit log claims its instance name in
//! `audit_writers` (a lease it renews every [`BEAT`]) and gives it up when
//! its log ends. A name is free when nobody holds it, when its holder gave
//! it up, when its holder's lease was not renewed for [`STALE`], or when its
//! holder ran on this machine and its process is gone (a killed server's
//! chain is continued by its restart at once).
//!
//! A default name (`HOST:stdio`) held by a live process is not shared: this
//! process takes `HOST:stdio#2` (or the first free one after it). A name
//! the operator chose (`--instance`) is refused, naming its holder.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::Row;

use crate::{Store, StoreError, fail};

/// How often a holder renews its lease.
pub(crate) const BEAT: Duration = Duration::from_secs(3);

/// A lease not renewed for this long is taken to be its holder's no more.
pub(crate) const STALE: Duration = Duration::from_secs(15);

/// The holders of this process whose log still runs: a lease of this
/// process's own pid is live only while its holder is in here.
static LIVE: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn live_here(holder: &str) -> bool {
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_some_and(|set| set.contains(holder))
}

fn set_live(holder: &str, live: bool) {
    let mut set = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let set = set.get_or_insert_with(HashSet::new);
    if live {
        set.insert(holder.to_string());
    } else {
        set.remove(holder);
    }
}

/// This machine's name, as leases and default instance names carry it.
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "localhost".into())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// Whether process `pid` runs on this machine, where that can be told.
fn process_runs(pid: i64) -> Option<bool> {
    let proc = std::path::Path::new("/proc");
    proc.join("self").exists().then(|| proc.join(pid.to_string()).exists())
}

/// A lease as stored.
struct Held {
    holder: String,
    host: String,
    pid: i64,
    seen_ms: i64,
}

impl Held {
    fn live(&self, host: &str) -> bool {
        if self.host == host && self.pid == i64::from(std::process::id()) {
            return live_here(&self.holder);
        }
        let fresh = now_ms() - self.seen_ms < STALE.as_millis() as i64;
        if self.host == host {
            return fresh && process_runs(self.pid).unwrap_or(true);
        }
        fresh
    }

    fn describe(&self) -> String {
        let ago = (now_ms() - self.seen_ms).max(0) / 1000;
        format!("process {} on `{}`, last seen {ago} s ago", self.pid, self.host)
    }
}

/// A claimed chain: renewed while the log runs, given up when it ends.
pub(crate) struct Lease {
    pub(crate) instance: String,
    holder: String,
    /// Set when another process took the chain (this one's lease had gone
    /// stale): from then on nothing more is written to it.
    pub(crate) lost: Arc<AtomicBool>,
}

/// Claim `base` (a name the operator chose: refused when held), or the
/// first of `base`, `base#2`, … that no live process holds.
pub(crate) async fn claim(store: &Store, base: &str, named: bool) -> Result<Lease, StoreError> {
    let host = hostname();
    let holder = format!("{host}/{}/{}", std::process::id(), token());
    for n in 1..=1000 {
        let instance = if n == 1 { base.to_string() } else { format!("{base}#{n}") };
        match try_claim(store, &instance, &holder, &host).await? {
            None => {
                set_live(&holder, true);
                return Ok(Lease { instance, holder, lost: Arc::new(AtomicBool::new(false)) });
            }
            Some(other) if named => {
                return Err(StoreError(format!(
                    "the audit chain `{instance}` in `{}` is being written by another live process ({}); a chain has one writer: give this instance another name with `--instance`, or stop that process first",
                    store.url(),
                    other.describe()
                )));
            }
            Some(_) => {}
        }
    }
    Err(StoreError(format!("every audit chain from `{base}` to `{base}#1000` in `{}` has a live writer", store.url())))
}

/// `None` once `instance` is this holder's; else the live lease in the way.
async fn try_claim(store: &Store, instance: &str, holder: &str, host: &str) -> Result<Option<Held>, StoreError> {
    let what = || format!("cannot claim the audit chain `{instance}` in `{}`", store.url());
    let pid = i64::from(std::process::id());
    // Another process may claim the same name between the read and the
    // write: the write is conditional, and a lost race reads again.
    for _ in 0..8 {
        let row = sqlx::query("SELECT holder, host, pid, seen_ms FROM audit_writers WHERE instance = $1").bind(instance).fetch_optional(store.pool()).await.map_err(|e| fail(&what(), e))?;
        let taken = match row {
            None => sqlx::query("INSERT INTO audit_writers (instance, holder, host, pid, seen_ms) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (instance) DO NOTHING")
                .bind(instance)
                .bind(holder)
                .bind(host)
                .bind(pid)
                .bind(now_ms())
                .execute(store.pool())
                .await
                .map_err(|e| fail(&what(), e))?
                .rows_affected(),
            Some(row) => {
                let held = Held {
                    holder: row.try_get(0).map_err(|e| fail(&what(), e))?,
                    host: row.try_get(1).map_err(|e| fail(&what(), e))?,
                    pid: row.try_get(2).map_err(|e| fail(&what(), e))?,
                    seen_ms: row.try_get(3).map_err(|e| fail(&what(), e))?,
                };
                if held.live(host) {
                    return Ok(Some(held));
                }
                sqlx::query("UPDATE audit_writers SET holder = $1, host = $2, pid = $3, seen_ms = $4 WHERE instance = $5 AND holder = $6")
                    .bind(holder)
                    .bind(host)
                    .bind(pid)
                    .bind(now_ms())
                    .bind(instance)
                    .bind(&held.holder)
                    .execute(store.pool())
                    .await
                    .map_err(|e| fail(&what(), e))?
                    .rows_affected()
            }
        };
        if taken == 1 {
            return Ok(None);
        }
    }
    Err(StoreError(format!("{}: other processes kept claiming it at the same time", what())))
}

/// Renew `lease` every [`BEAT`] until `done` is set (the log ended).
pub(crate) async fn keep(store: Store, instance: String, holder: String, lost: Arc<AtomicBool>, mut done: tokio::sync::watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(BEAT) => {}
            _ = done.wait_for(|d| *d) => return,
        }
        let renewed = sqlx::query("UPDATE audit_writers SET seen_ms = $1 WHERE instance = $2 AND holder = $3").bind(now_ms()).bind(&instance).bind(&holder).execute(store.pool()).await;
        match renewed {
            Ok(done) if done.rows_affected() == 0 => {
                tracing::error!(
                    "the audit chain `{instance}` in `{}` was taken over by another process (this one's lease went unrenewed for {} s): this process records no more calls, and refuses them",
                    store.url(),
                    STALE.as_secs()
                );
                lost.store(true, Ordering::SeqCst);
                return;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("could not renew the lease of the audit chain `{instance}` in `{}`: {e}", store.url()),
        }
    }
}

impl Lease {
    /// A renewing task for this lease.
    pub(crate) fn keeper(&self, store: &Store, done: tokio::sync::watch::Receiver<bool>) -> impl std::future::Future<Output = ()> + Send + 'static {
        keep(store.clone(), self.instance.clone(), self.holder.clone(), self.lost.clone(), done)
    }

    /// Give the chain up: the next process that starts continues it.
    pub(crate) async fn release(&self, store: &Store) {
        set_live(&self.holder, false);
        if !self.lost.load(Ordering::SeqCst) {
            if let Err(e) = sqlx::query("DELETE FROM audit_writers WHERE instance = $1 AND holder = $2").bind(&self.instance).bind(&self.holder).execute(store.pool()).await {
                tracing::warn!("could not give up the audit chain `{}` in `{}` (the next start waits {} s for it): {e}", self.instance, store.url(), STALE.as_secs());
            }
        }
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }
}

/// 16 random bytes, hex: what tells two holders of one process apart.
fn token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system gives random bytes");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
