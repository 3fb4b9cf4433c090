//! The audit log: a sink for the runtime's records that seals arguments
//! and results as keyed hashes, chains each record to its instance's
//! previous one, and commits records in groups. One committer per chain
//! assigns sequence numbers, so the chain is the commit order; a record's
//! caller waits until the group holding it is committed. On SQLite the
//! committer is whichever caller finds nobody committing ([`inline`]); on
//! Postgres, a task the callers hand their records to ([`task`]).

mod body;
mod chain;
mod inline;
mod task;

use std::sync::Arc;

use capspec::BoxFuture;
use capspec::audit::{AuditRecord, AuditSink};
use tokio::sync::{mpsc, oneshot};

pub use chain::{AuditOptions, keyed_hash};
pub(crate) use chain::{GENESIS, canonical, link};
use chain::{Chain, GROUP, Pending, head};

use crate::{Store, StoreError, fail};

/// A running audit log: hand it to runs as their [`AuditSink`].
pub struct AuditLog {
    writes: Writes,
    instance: String,
    ended: tokio::sync::watch::Receiver<bool>,
}

/// Where a record goes to be committed.
enum Writes {
    /// To the Postgres writer task.
    Task(mpsc::Sender<Pending>),
    /// Into the SQLite queue, committed by its caller when nobody else is.
    Inline(Arc<inline::Inline>),
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        // The task's end follows its channel's; the inline committer is told.
        if let Writes::Inline(inline) = &self.writes {
            inline.close();
        }
    }
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
        let chain = Chain { options, seq, hash };
        let writes = match store.sqlite_path() {
            Some(path) => match inline::open(path) {
                Ok(connection) => Writes::Inline(inline::Inline::start(store, connection, chain, lease, ended_tx)),
                Err(e) => {
                    lease.release(&store).await;
                    return Err(fail(&format!("cannot open the store `{}` to write its audit log", store.url()), e));
                }
            },
            None => {
                let (sender, receiver) = mpsc::channel(4 * GROUP);
                let (done_tx, done) = tokio::sync::watch::channel(false);
                let keeper = tokio::spawn(lease.keeper(&store, done));
                let writer = task::Writer { store, connection: None, instance: instance.clone(), lease };
                tokio::spawn(async move {
                    let writer = writer.run(chain, receiver).await;
                    let _ = done_tx.send(true);
                    let _ = keeper.await;
                    writer.lease.release(&writer.store).await;
                    let _ = ended_tx.send(true);
                });
                Writes::Task(sender)
            }
        };
        Ok(Arc::new(AuditLog { writes, instance, ended }))
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
        match &self.writes {
            Writes::Task(sender) => sender.send((record, done)).await.map_err(|_| "the audit log's writer has stopped".to_string())?,
            Writes::Inline(inline) => inline.send((record, done)),
        }
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

    /// The log's own connection checkpoints nothing itself; while it runs
    /// and after it ends, every connection the pool hands out checkpoints
    /// as SQLite's default has it (every 1,000 pages), so other writes (the
    /// vault's) keep the WAL bounded.
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
