//! The audit log: a sink for the runtime's records that seals arguments
//! and results as keyed hashes, chains each record to its instance's
//! previous one, and commits records in groups. One writer task per
//! instance assigns sequence numbers, so the chain is the commit order;
//! a record's caller waits until the group holding it is committed.
//!
//! On SQLite the writer's connection never checkpoints the WAL itself: a
//! checkpoint copies the WAL into the database and syncs it, which would
//! stall every call waiting on that commit (tens of milliseconds). A task
//! beside the writer checkpoints instead, after commits, without blocking
//! it; only a WAL that outgrows [`WAL_BOUND`] is checkpointed in a way that
//! makes the writer wait.

use std::sync::Arc;

use capspec::audit::{AuditRecord, AuditSink};
use capspec::BoxFuture;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::Row;
use tokio::sync::{mpsc, oneshot};

use crate::{Driver, Store, StoreError, fail};

/// The hash before an instance's first record.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Most records one commit takes.
const GROUP: usize = 256;

/// The least time between two checkpoints of a SQLite store's WAL.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// WAL pages a passive checkpoint may leave behind before the next one
/// restarts the WAL, waiting for the writer (32 MiB of 4 KiB pages): under
/// a load that never pauses, passive checkpoints alone would let it grow.
pub(crate) const WAL_BOUND: i64 = 8192;

/// How the log records.
#[derive(Clone)]
pub struct AuditOptions {
    /// This instance's name: its records form one chain, continued after a
    /// restart under the same name. A chain has one live writer (see
    /// `named`).
    pub instance: String,
    /// The operator chose `instance` (`--instance`): when a live process
    /// already writes that chain, the log does not start, naming it. Else
    /// (a default name) the log takes the first of `instance`,
    /// `instance#2`, … that no live process writes.
    pub named: bool,
    /// The key of the keyed hashes (`StateKey::audit_key`).
    pub key: [u8; 32],
    /// Keep argument values too, not only their keyed hash
    /// (`--audit-arguments`).
    pub keep_arguments: bool,
}

type Pending = (AuditRecord, oneshot::Sender<Result<(), String>>);

/// A running audit log: hand it to runs as their [`AuditSink`].
pub struct AuditLog {
    sender: mpsc::Sender<Pending>,
    instance: String,
    ended: tokio::sync::watch::Receiver<bool>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AuditLog({})", self.instance)
    }
}

impl AuditLog {
    /// Start the log of `options.instance` in `store`, continuing its chain
    /// once it has claimed it (a chain has one live writer). Must be called
    /// inside a Tokio runtime (the writer is a task on it).
    pub async fn start(store: Store, mut options: AuditOptions) -> Result<Arc<AuditLog>, StoreError> {
        let lease = crate::lease::claim(&store, &options.instance, options.named).await?;
        options.instance = lease.instance.clone();
        let (seq, hash) = match head(&store, &options.instance).await {
            Ok(head) => head,
            Err(e) => {
                lease.release(&store).await;
                return Err(e);
            }
        };
        let (ended_tx, ended) = tokio::sync::watch::channel(false);
        let instance = options.instance.clone();
        let (sender, receiver) = mpsc::channel(4 * GROUP);
        let committed = match store.driver() {
            Driver::Sqlite => {
                let (poke, poked) = mpsc::channel(1);
                tokio::spawn(checkpoints(store.clone(), poked));
                Some(poke)
            }
            Driver::Postgres => None,
        };
        let (done_tx, done) = tokio::sync::watch::channel(false);
        let keeper = tokio::spawn(lease.keeper(&store, done));
        let writer = Writer { store, connection: None, instance: options.instance.clone(), committed, lease };
        tokio::spawn(async move {
            let writer = writer.run(Chain { options, seq, hash }, receiver).await;
            let _ = done_tx.send(true);
            let _ = keeper.await;
            writer.lease.release(&writer.store).await;
            let _ = ended_tx.send(true);
        });
        Ok(Arc::new(AuditLog { sender, instance, ended }))
    }

    /// The chain this log writes: the name asked for, or the first free
    /// one after it (`HOST:stdio#2`) when that was a default name.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Let this handle go and wait until the log has ended: every record
    /// handed to it committed (or refused) and its chain given up, so the
    /// next start continues it. Other handles keep the log running until
    /// they are dropped too.
    pub async fn close(self: Arc<Self>) {
        let mut ended = self.ended.clone();
        drop(self);
        let _ = ended.wait_for(|e| *e).await;
    }

    async fn send(&self, record: AuditRecord) -> Result<(), String> {
        let (done, wait) = oneshot::channel();
        self.sender.send((record, done)).await.map_err(|_| "the audit log's writer has stopped".to_string())?;
        wait.await.map_err(|_| "the audit log's writer has stopped".to_string())?
    }
}

impl AuditSink for AuditLog {
    fn decision(&self, record: AuditRecord) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(self.send(record))
    }

    fn outcome(&self, record: AuditRecord) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Err(why) = self.send(record).await {
                tracing::warn!("the audit log did not take an outcome record: {why}");
            }
        })
    }
}

/// The last sequence number and hash of `instance`'s chain: its newest
/// record, else its checkpoint, else the genesis.
pub(crate) async fn head(store: &Store, instance: &str) -> Result<(i64, String), StoreError> {
    let what = || format!("cannot read the audit chain of `{instance}` in `{}`", store.url());
    let last = sqlx::query("SELECT seq, hash FROM audit_records WHERE instance = $1 ORDER BY seq DESC LIMIT 1").bind(instance).fetch_optional(store.pool()).await.map_err(|e| fail(&what(), e))?;
    if let Some(row) = last {
        return Ok((row.try_get(0).map_err(|e| fail(&what(), e))?, row.try_get(1).map_err(|e| fail(&what(), e))?));
    }
    let checkpoint = sqlx::query("SELECT seq, hash FROM audit_checkpoints WHERE instance = $1").bind(instance).fetch_optional(store.pool()).await.map_err(|e| fail(&what(), e))?;
    match checkpoint {
        Some(row) => Ok((row.try_get(0).map_err(|e| fail(&what(), e))?, row.try_get(1).map_err(|e| fail(&what(), e))?)),
        None => Ok((0, GENESIS.to_string())),
    }
}

/// RFC 8785 canonical JSON: the bytes hashes are taken over.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    capspec_dialects::pin::canonical(value, &mut out);
    out
}

/// The keyed hash (HMAC-SHA-256, hex) of a value's canonical JSON.
pub fn keyed_hash(key: &[u8; 32], value: &Value) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(canonical(value).as_bytes());
    hex(&mac.finalize().into_bytes())
}

/// SHA-256 (hex) of `prev_hash` followed by `body`: a record's link.
pub(crate) fn link(prev_hash: &str, body: &str) -> String {
    let mut sha = Sha256::new();
    sha.update(prev_hash.as_bytes());
    sha.update(body.as_bytes());
    hex(&sha.finalize())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)] as char, DIGITS[usize::from(b & 15)] as char]).collect()
}

/// One stored record: its columns and its body.
struct Record {
    seq: i64,
    time_ms: i64,
    kind: String,
    principal: String,
    capability: String,
    decision: Option<String>,
    status: Option<String>,
    args_hmac: Option<String>,
    sent_hmac: Option<String>,
    body: String,
    prev: String,
    hash: String,
}

/// The chain as the writer extends it: how a record becomes its row, and
/// the head the next row links to (the last row committed).
struct Chain {
    options: AuditOptions,
    seq: i64,
    hash: String,
}

impl Chain {
    /// Rows for the records of `group` that have none yet, each linked to
    /// the row before it in `rows`, the first to the committed head.
    fn extend(&self, rows: &mut Vec<Record>, group: &[Pending]) {
        for (record, _) in &group[rows.len()..] {
            let row = self.row(record, rows.last());
            rows.push(row);
        }
    }

    /// `record`'s row after `before` (else after the committed head).
    fn row(&self, record: &AuditRecord, before: Option<&Record>) -> Record {
        let (seq, prev) = match before {
            Some(row) => (row.seq + 1, row.hash.clone()),
            None => (self.seq + 1, self.hash.clone()),
        };
        let args_hmac = record.args.as_ref().map(|a| keyed_hash(&self.options.key, a));
        let sent_hmac = record.sent_args.as_ref().map(|a| keyed_hash(&self.options.key, a));
        let body = self.body(record, seq, args_hmac.as_deref(), sent_hmac.as_deref());
        let hash = link(&prev, &body);
        Record {
            seq,
            time_ms: record.time_ms as i64,
            kind: json!(record.kind).as_str().unwrap_or_default().to_string(),
            principal: record.principal.clone(),
            capability: record.capability.clone(),
            decision: record.decision.map(|d| d.as_str().to_string()),
            status: record.status.clone(),
            args_hmac,
            sent_hmac,
            body,
            prev,
            hash,
        }
    }

    /// The record as stored: arguments and result replaced by their keyed
    /// hashes (argument values kept only when asked), with its instance and
    /// sequence number, as canonical JSON.
    fn body(&self, record: &AuditRecord, seq: i64, args_hmac: Option<&str>, sent_hmac: Option<&str>) -> String {
        let mut value = serde_json::to_value(record).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            let args = map.remove("args").filter(|a| !a.is_null());
            let result = map.remove("result").filter(|r| !r.is_null());
            let sent = map.remove("sent_args").filter(|a| !a.is_null());
            if map.get("reason").is_some_and(Value::is_null) {
                map.remove("reason");
            }
            if let (Some(sent), Some(hmac)) = (sent, sent_hmac) {
                map.insert("sent_hmac".into(), Value::String(hmac.to_string()));
                if self.options.keep_arguments {
                    map.insert("sent_args".into(), sent);
                }
            }
            if let (Some(args), Some(hmac)) = (args, args_hmac) {
                map.insert("args_hmac".into(), Value::String(hmac.to_string()));
                if self.options.keep_arguments {
                    map.insert("args".into(), args);
                }
            }
            if let Some(result) = result {
                map.insert("result_hmac".into(), Value::String(keyed_hash(&self.options.key, &result)));
            }
            map.insert("instance".into(), Value::String(self.options.instance.clone()));
            map.insert("seq".into(), json!(seq));
        }
        canonical(&value)
    }
}

struct Writer {
    store: Store,
    /// The connection commits go through, kept between groups: on SQLite
    /// its page cache stays warm (a connection that did not write the last
    /// commit rereads the pages it holds).
    connection: Option<sqlx::pool::PoolConnection<sqlx::Any>>,
    instance: String,
    /// Told after each commit (SQLite): the checkpointer's cue.
    committed: Option<mpsc::Sender<()>>,
    /// This process's claim on the chain.
    lease: crate::lease::Lease,
}

impl Writer {
    /// Commit groups in order, pipelined: while one group commits, the
    /// records that arrive meanwhile are gathered and chained on from its
    /// last row, so the next commit starts as soon as this one ends. A
    /// commit that fails leaves the chain at what the store holds, and the
    /// rows chained on it are made again.
    async fn run(mut self, mut chain: Chain, mut receiver: mpsc::Receiver<Pending>) -> Writer {
        let (mut group, mut rows) = (Vec::new(), Vec::new());
        loop {
            if group.is_empty() {
                match receiver.recv().await {
                    Some(first) => group.push(first),
                    None => return self,
                }
            }
            while group.len() < GROUP {
                match receiver.try_recv() {
                    Ok(next) => group.push(next),
                    Err(_) => break,
                }
            }
            chain.extend(&mut rows, &group);
            let (mut next, mut next_rows) = (Vec::new(), Vec::<Record>::new());
            let outcome = {
                let commit = self.commit(&rows);
                tokio::pin!(commit);
                loop {
                    tokio::select! {
                        biased;
                        outcome = &mut commit => break outcome,
                        Some(pending) = receiver.recv(), if next.len() < GROUP => {
                            let row = chain.row(&pending.0, next_rows.last().or(rows.last()));
                            next_rows.push(row);
                            next.push(pending);
                        }
                    }
                }
            };
            if outcome.is_ok() {
                let last = rows.last().expect("a group holds a record");
                (chain.seq, chain.hash) = (last.seq, last.hash.clone());
            } else {
                next_rows.clear();
                if let Ok(stored) = head(&self.store, &self.instance).await {
                    // A commit whose answer was lost may have landed: the
                    // chain goes on from what the store holds.
                    (chain.seq, chain.hash) = stored;
                }
            }
            for (_, done) in group {
                let _ = done.send(outcome.clone());
            }
            if let Some(committed) = &self.committed {
                let _ = committed.try_send(());
            }
            (group, rows) = (next, next_rows);
        }
    }

    /// The group in one statement (one round trip to the database, and
    /// atomic by itself), on the connection the writer keeps: its rows go
    /// as one JSON array bound once, which the database unpacks, so the
    /// statement is the same for every group (prepared once) and binding
    /// costs the same for one row or 256. A failed commit lets the
    /// connection go; the next takes a fresh one.
    async fn commit(&mut self, rows: &[Record]) -> Result<(), String> {
        if self.lease.is_lost() {
            return Err(format!(
                "another process took over this server's audit chain `{}`, so this one records nothing more; restart it",
                self.instance
            ));
        }
        let cells: Vec<_> = rows
            .iter()
            .map(|r| (r.seq, &r.kind, r.time_ms, &r.principal, &r.capability, &r.decision, &r.status, &r.args_hmac, &r.body, &r.prev, &r.hash, &r.sent_hmac))
            .collect();
        let cells = serde_json::to_string(&cells).expect("strings and numbers serialize");
        let sql = match self.store.driver() {
            Driver::Sqlite => INSERT_SQLITE,
            Driver::Postgres => INSERT_POSTGRES,
        };
        // A kept connection may have died while idle (a restarted Postgres):
        // then the group goes again once, on a fresh connection.
        let reused = self.connection.is_some();
        match self.execute(sql, &cells).await {
            Err(_) if reused => self.execute(sql, &cells).await,
            done => done,
        }
        .map_err(|e| self.unavailable(&e))
    }

    /// Why a commit failed, in capspec's words, for the caller whose call
    /// did not run; the driver's own text goes to the server's log.
    fn unavailable(&self, e: &sqlx::Error) -> String {
        tracing::warn!("the audit store `{}` did not take a group of records of the chain `{}`: {e}", self.store.url(), self.instance);
        let kind = match self.store.driver() {
            Driver::Sqlite => "SQLite",
            Driver::Postgres => "Postgres",
        };
        let why = match e {
            sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolClosed => "the store could not be reached".to_string(),
            sqlx::Error::Database(db) if db.is_unique_violation() => format!("a record of the chain `{}` was already there (something else writes this chain)", self.instance),
            sqlx::Error::Database(db) if db.message().contains("locked") || db.message().contains("busy") => "the store stayed busy".to_string(),
            _ => "the store refused the write".to_string(),
        };
        format!("the audit store ({kind}) did not take the call's record: {why}. Try again; if it persists, the server's operator finds the detail in its log")
    }

    async fn execute(&mut self, sql: &'static str, cells: &str) -> Result<(), sqlx::Error> {
        let connection = match &mut self.connection {
            Some(connection) => connection,
            none => {
                let mut connection = self.store.pool().acquire().await?;
                if self.committed.is_some() {
                    // The checkpointer does it (see the module's comment).
                    // The setting stays with the connection, so it never
                    // goes back to the pool, where a connection that
                    // writes (the vault's) would leave the WAL to grow: a
                    // failed commit or the log's end closes it.
                    connection.close_on_drop();
                    sqlx::query("PRAGMA wal_autocheckpoint = 0").execute(&mut *connection).await?;
                }
                none.insert(connection)
            }
        };
        let done = sqlx::query(sql).bind(&self.instance).bind(cells).execute(&mut **connection).await;
        if done.is_err() {
            self.connection = None;
        }
        done.map(|_| ())
    }
}

/// Checkpoint a SQLite store's WAL beside the writer, at most every
/// [`CHECKPOINT_EVERY`] while it commits, until it stops. A passive
/// checkpoint copies what it can without waiting for the writer; when it
/// leaves more than [`WAL_BOUND`] pages behind (a load with no pause for it
/// to catch up), a restarting one waits for the writer's commit in progress
/// and starts the WAL over.
async fn checkpoints(store: Store, mut committed: mpsc::Receiver<()>) {
    while committed.recv().await.is_some() {
        tokio::time::sleep(CHECKPOINT_EVERY).await;
        while committed.try_recv().is_ok() {}
        let passive = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)").fetch_one(store.pool()).await;
        let behind = passive.and_then(|row| Ok(row.try_get::<i64, _>(1)? - row.try_get::<i64, _>(2)?));
        match behind {
            Ok(pages) if pages > WAL_BOUND => {
                if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(RESTART)").execute(store.pool()).await {
                    tracing::warn!("could not checkpoint the store `{}`: {e}", store.url());
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("could not checkpoint the store `{}`: {e}", store.url()),
        }
    }
}

/// A group's rows from the JSON array bound as `$2`, each row an array
/// of its cells in the order of the column list.
const INSERT_SQLITE: &str = "WITH r AS MATERIALIZED (SELECT jsonb(value) AS v FROM json_each($2)) \
    INSERT INTO audit_records (instance, seq, kind, time_ms, principal, capability, decision, status, args_hmac, body, prev_hash, hash, sent_hmac) \
    SELECT $1, v ->> 0, v ->> 1, v ->> 2, v ->> 3, v ->> 4, v ->> 5, v ->> 6, v ->> 7, v ->> 8, v ->> 9, v ->> 10, v ->> 11 FROM r";
const INSERT_POSTGRES: &str = "INSERT INTO audit_records (instance, seq, kind, time_ms, principal, capability, decision, status, args_hmac, body, prev_hash, hash, sent_hmac) \
    SELECT $1, (r ->> 0)::bigint, r ->> 1, (r ->> 2)::bigint, r ->> 3, r ->> 4, r ->> 5, r ->> 6, r ->> 7, r ->> 8, r ->> 9, r ->> 10, r ->> 11 FROM json_array_elements($2::text::json) AS r";

#[cfg(test)]
mod tests {
    use capspec::audit::{AuditRecord, AuditSink, RecordKind};
    use capspec_testkit::TempDir;
    use sqlx::Row;

    use super::{AuditLog, AuditOptions};
    use crate::Store;

    fn record() -> AuditRecord {
        AuditRecord {
            kind: RecordKind::Decision,
            time_ms: 0,
            call: 1,
            principal: "ann".into(),
            groups: Vec::new(),
            surface: "tools".into(),
            request: None,
            trace_id: None,
            capability: "notes.list_notes".into(),
            category: Some("read".into()),
            mode: "default".into(),
            decision: None,
            reason: None,
            policies: Vec::new(),
            answered_by: None,
            upstream: None,
            args: None,
            sent_args: None,
            status: None,
            duration_ms: None,
            result: None,
        }
    }

    /// The writer's connection checkpoints nothing itself; once the log
    /// ends, every connection the pool hands out checkpoints as SQLite's
    /// default has it (every 1,000 pages), so later writes keep the WAL
    /// bounded.
    #[test]
    fn no_connection_goes_back_to_the_pool_without_its_checkpoints() {
        let dir = TempDir::new("audit-sqlite-release");
        let url = format!("sqlite:{}", dir.path().join("store.db").display());
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap().block_on(async {
            let store = Store::open(&url).await.unwrap();
            let log = AuditLog::start(store.clone(), AuditOptions { instance: "host-r".into(), named: true, key: [1; 32], keep_arguments: false }).await.unwrap();
            log.decision(record()).await.unwrap();
            drop(log);
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            // As many connections as the pool holds, at once: the writer's,
            // had it gone back, is among them.
            let mut held = Vec::new();
            for _ in 0..4 {
                let mut connection = store.pool().acquire().await.unwrap();
                let pages: i64 = sqlx::query("PRAGMA wal_autocheckpoint").fetch_one(&mut *connection).await.unwrap().get(0);
                assert_eq!(pages, 1000, "a connection of the pool checkpoints never");
                held.push(connection);
            }
        });
    }
}
